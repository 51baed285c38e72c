#!/usr/bin/env python3
"""tui.py - the TUI at scale, driven in tmux (100x30):

1. a replay of a synthetic journal of 10,000 candidates with results
   (gen_journal.py): the process's resident memory, and the time of each
   frame (the TUI writes it to $KLOOP_TUI_STATS: from the start of a redraw
   to the end of doupdate(), and from reading a key to the end of the
   redraw it caused) for moving the selection, a full repaint (Ctrl-L),
   re-sorting, re-filtering and stepping back one event;
2. the same journal opened as a live session (memory);
3. a live softmax session evaluating 8 candidates at once (the worker
   compiles them in parallel and runs them one by one), while j/k are
   pressed: the time from reading the key to the screen updated, and from
   tmux send-keys to the change visible in capture-pane (which adds the
   tmux round trips, a few ms each).

0. the first frame (which paints the selected candidate's code) of a fresh
   process, opened 7 times on the 10,000-candidate replay and on a
   20-candidate one (the highlight query compiles on a thread as the TUI
   starts; a frame drawn before it is ready shows the code plain).

Prints a Markdown table.  Usage: python3 bench/tui.py [N] [--first-only]
($KLOOP_BIN: the kloop to measure, e.g. an older build to compare)"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KL = os.environ.get('KLOOP_BIN') or os.path.join(TOP, 'bin/kloop')
ARGS = [a for a in sys.argv[1:] if not a.startswith('--')]
FIRST_ONLY = '--first-only' in sys.argv
N = int(ARGS[0]) if ARGS else 10000
T = tempfile.mkdtemp(prefix='kloop-bench.')
SOCK = os.path.join(T, 'tmux.sock')
ENV = dict(os.environ, XDG_STATE_HOME=os.path.join(T, 'state'), XDG_CACHE_HOME=os.path.join(T, 'cache'))


def tm(*args):
    return subprocess.run(['tmux', '-f', '/dev/null', '-S', SOCK] + list(args), capture_output=True,
                          text=True, env=ENV).stdout


def start(cmd):
    tm('kill-server')
    time.sleep(0.2)
    tm('new-session', '-d', '-s', 'b', '-x', '100', '-y', '30', 'exec ' + cmd)


def screen():
    return tm('capture-pane', '-p', '-t', 'b')


def wait_for(pat, secs=60):
    end = time.time() + secs
    while time.time() < end:
        if re.search(pat, screen(), re.M):
            return True
        time.sleep(0.05)
    sys.exit('timed out waiting for %r; the screen:\n%s' % (pat, screen()))


def keys(*k):
    tm('send-keys', '-t', 'b', *k)


def rss_kib():
    pid = tm('display', '-p', '-t', 'b', '#{pane_pid}').strip()
    for line in open('/proc/%s/status' % pid):
        if line.startswith('VmRSS:'):
            return int(line.split()[1])
    return -1


def mark(stats, name):
    time.sleep(0.3)  # let the last frame be written
    with open(stats, 'a') as f:
        f.write('phase %s\n' % name)


def first_frame(stats):
    for line in open(stats):
        m = re.match(r'frame ([\d.]+) ms', line)
        if m:
            return float(m.group(1))
    return -1


def phases(stats):
    out, cur = {}, None
    for line in open(stats):
        if line.startswith('phase '):
            cur = line.split()[1]
            out.setdefault(cur, {'frame': [], 'key': []})
            continue
        if cur is None:
            continue
        m = re.match(r'frame ([\d.]+) ms(?: key ([\d.]+) ms)?', line)
        if m:
            out[cur]['frame'].append(float(m.group(1)))
            if m.group(2):
                out[cur]['key'].append(float(m.group(2)))
    return out


def first_frames(journal, runs=7):
    """the first frame of `runs` fresh replays of journal, in ms"""
    events = sum(1 for _ in open(journal))
    out = []
    for r in range(runs):
        stats = os.path.join(T, 'first.stats')
        if os.path.exists(stats):
            os.unlink(stats)
        start('env KLOOP_TUI_STATS=%s %s replay %s' % (stats, KL, journal))
        wait_for(r'event %d of %d' % (events, events))
        time.sleep(0.3)
        keys('q')
        time.sleep(0.3)
        out.append(first_frame(stats))
    return out


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def row(name, v):
    if not v:
        return '| %s | - | - | - | 0 |' % name
    return '| %s | %.2f ms | %.2f ms | %.2f ms | %d |' % (name, statistics.median(v), pct(v, 90), max(v), len(v))


def main():
    journal = os.path.join(T, 'big.jsonl')
    subprocess.run([sys.executable, os.path.join(TOP, 'bench/gen_journal.py'), str(N), journal], check=True)
    size = os.path.getsize(journal)
    events = sum(1 for _ in open(journal))
    lines = ['Journal: %d candidates, %d events, %.1f MB.' % (N, events, size / 1e6), '']

    # 0. the first frame of a fresh process (paints the selected candidate's code)
    small = os.path.join(T, 'small.jsonl')
    subprocess.run([sys.executable, os.path.join(TOP, 'bench/gen_journal.py'), '20', small], check=True)
    first_big, first_small = first_frames(journal), first_frames(small)
    first_rows = [row('first frame of a fresh process, %d-candidate replay (code pane: first paint)' % N,
                      first_big),
                  row('first frame of a fresh process, 20-candidate replay (code pane: first paint)',
                      first_small)]
    if FIRST_ONLY:
        print('\n'.join(['| measure | median | p90 | max | samples |', '| --- | ---: | ---: | ---: | ---: |'] +
                        first_rows))
        tm('kill-server')
        shutil.rmtree(T, ignore_errors=True)
        return

    # 1. replay at scale
    stats = os.path.join(T, 'replay.stats')
    t0 = time.time()
    start('env KLOOP_TUI_STATS=%s %s replay %s' % (stats, KL, journal))
    wait_for(r'event %d of %d' % (events, events))
    t_open = time.time() - t0
    rss_replay = rss_kib()
    mark(stats, 'move')
    for i in range(100):
        keys('j' if (i // 25) % 2 == 0 else 'k')
        time.sleep(0.03)
    mark(stats, 'repaint')
    for i in range(30):
        keys('C-l')
        time.sleep(0.05)
    mark(stats, 'sort')
    for i in range(21):
        keys('s')
        time.sleep(0.08)
    mark(stats, 'filter')
    for i in range(10):
        keys('/', 'C-u', 'speedup>3', 'Enter')
        time.sleep(0.1)
        keys('/', 'C-u', 'Enter')
        time.sleep(0.1)
    mark(stats, 'step')
    for i in range(10):
        keys('[')
        time.sleep(0.4)
    mark(stats, 'end')
    keys('q')
    time.sleep(0.5)
    ph = phases(stats)

    # 2. the same journal as a live session (folded by the session, no worker job)
    live_copy = os.path.join(T, 'live.jsonl')
    shutil.copy(journal, live_copy)
    start('%s --session %s --budget 0.2' % (KL, live_copy))
    wait_for(r'%d candidates' % N)
    time.sleep(0.5)
    rss_live = rss_kib()
    keys('q')
    time.sleep(0.5)

    # 3. keystrokes while 8 jobs run
    j8 = os.path.join(T, 'eight.jsonl')
    subprocess.run([sys.executable, os.path.join(TOP, 'bench/gen_journal.py'), '10', j8, '--new', '8'], check=True)
    stats8 = os.path.join(T, 'jobs.stats')
    start('env KLOOP_TUI_STATS=%s %s --session %s --budget 1.0' % (stats8, KL, j8))
    wait_for(r'\| 8 jobs \|')
    mark(stats8, 'jobs')
    ext = []
    jobs_seen = []
    for i in range(40):
        before = screen()
        m = re.search(r'\| (\d+) jobs? \|', before)
        jobs_seen.append(int(m.group(1)) if m else 0)
        sel = re.search(r'Code #(\d+)', before)
        t1 = time.time()
        keys('j' if (i // 8) % 2 == 0 else 'k')
        while True:
            s = screen()
            now = re.search(r'Code #(\d+)', s)
            if now and sel and now.group(1) != sel.group(1):
                break
            if time.time() - t1 > 2:
                break
        ext.append((time.time() - t1) * 1e3)
        time.sleep(0.1)
    mark(stats8, 'end')
    jobs_left = re.search(r'\| (\d+) jobs? \|', screen())
    keys('q', 'y')
    time.sleep(0.5)
    p8 = phases(stats8)

    lines += ['| measure | median | p90 | max | samples |', '| --- | ---: | ---: | ---: | ---: |']
    lines += first_rows
    lines.append(row('replay, move the selection (j/k): key read to screen updated', ph['move']['key']))
    lines.append(row('replay, full repaint (Ctrl-L): one frame', ph['repaint']['frame']))
    lines.append(row('replay, sort by the next column (s): key to screen', ph['sort']['key']))
    lines.append(row('replay, filter speedup>3 and back (/): key to screen', ph['filter']['key']))
    lines.append(row('replay, one event back ([): refold 30k events, key to screen', ph['step']['key']))
    lines.append(row('8 jobs running, j/k: key read to screen updated', p8['jobs']['key']))
    lines.append(row('8 jobs running, j/k: send-keys to capture-pane showing it', ext))
    lines.append(row('8 jobs running, every frame drawn (progress included)', p8['jobs']['frame']))
    lines += ['', 'Jobs in flight while the keys were pressed: %d at first, %d at the end (%s).' %
              (jobs_seen[0], jobs_seen[-1], jobs_left.group(0) if jobs_left else '?'),
              'Opening the %d-candidate replay to its first frame: %.2f s (wall, including tmux).' % (N, t_open),
              'Resident memory at %d candidates: replay %.1f MiB (the journal text is kept for stepping), '
              'live session %.1f MiB.' % (N, rss_replay / 1024, rss_live / 1024)]
    print('\n'.join(lines))
    tm('kill-server')
    shutil.rmtree(T, ignore_errors=True)


main()
