# orphans.sh - no process a candidate's runner start creates outlives it
# (issue 14): not bubblewrap, not its pid namespace's init, not the runner,
# whatever way the candidate ends: a normal end, a timeout, a candidate that
# kills its parent, SIGKILL of the worker (also while a runner is being set
# up), SIGKILL, SIGTERM or SIGHUP of kloop.  And a process of the job
# stopped from outside (SIGTERM, as Slurm's scancel sends to each process
# of a step) is no verdict: the job runs again.  A spare runner (started
# ahead for the next candidate) gives each candidate its own verdict, dies
# with kloop, and is replaced when it died before its turn.
# kloop runs from a copy in $T/bin: every process of this test's runners
# (the worker, each runner's keeper, bubblewrap and its pid namespace's init,
# which share bubblewrap's command line) names $T in its command line; the
# runner and what the candidate starts live in that init's pid namespace,
# which dies with it.  Other suites' processes never match.
. tests/e2e/lib.sh
if ! ./bin/kloop doctor | grep -q '^sandbox *ok'; then
	fail "bubblewrap runs here (kloop doctor: $(./bin/kloop doctor | grep '^sandbox'))"
	exit 0
fi
mkdir -p "$T/bin"
cp bin/kloop bin/kloop-worker "$T/bin/"
ln -s "$(pwd)/tasks" "$T/tasks"
ln -s "$(pwd)/include" "$T/include"
K="$T/bin/kloop"
B="--backend host --budget 0.05 --trials 2"
cat >"$T/hang.c" <<'C'
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in; (void)n_in; (void)out; (void)n_out; (void)stream;
	for (volatile int i = 0;; i++)
		;
}
C
{
	grep -v '#include "softmax_body.h"' tests/fixtures/evil/softmax_body.h
	grep -v '#include "softmax_body.h"' tests/fixtures/evil/kill_parent.c
} >"$T/kill_parent.c"

# ours: "pid comm start" of each live process of this test (its command line
# names $T, or it is in the pid namespace of one that does; zombies have
# ended), "runner" added for the runners; ours FILE: those of the processes
# listed in FILE still alive (the same pid and start time)
ours() {
	python3 - "$T/" "${1:-}" <<'PY'
import os, sys
mark, only = sys.argv[1].encode(), sys.argv[2]
def ns(p):
    try: return os.readlink("/proc/%s/ns/pid" % p)
    except OSError: return None
host, procs = ns("self"), []
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) == os.getpid():
        continue
    try:
        cl = open("/proc/%s/cmdline" % d, "rb").read()
        f = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()
        comm = open("/proc/%s/comm" % d).read().strip()
    except OSError:
        continue
    if f[0] != "Z":
        # a runner: not the clock's twin (--twin), which runs no candidate
        procs.append((d, comm, f[19], mark in cl, ns(d),
                      b"\0--runner\0" in cl and b"\0--twin\0" not in cl))
spaces = {n for d, c, t, m, n, r in procs if m and n != host}
keep = {tuple(l.split()[:3]) for l in open(only)} if only else None
for d, comm, t, m, n, r in procs:
    if keep is not None and (d, comm, t) not in keep:
        continue
    if m or (n in spaces and n != host):
        print(d, comm, t, "runner" if r else "")
PY
}
# gone [FILE]: wait (at most 10 s) until none of ours (of FILE) is left
gone() {
	n=0
	while [ $n -lt 100 ]; do
		[ -z "$(ours "$1")" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}
# runners N: wait (at most 30 s) until N runners of ours run
runners() {
	n=0
	while [ $n -lt 300 ]; do
		[ "$(ours | grep -c ' runner$')" -ge "$1" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}
# kill_at_start N: wait (at most 30 s) for the Nth bubblewrap of ours to
# start, and SIGKILL the worker that started it (its keeper's parent) at once
kill_at_start() {
	python3 - "$T/bin/kloop-worker" "$1" <<'PY'
import os, signal, sys, time
mark, n = sys.argv[1].encode(), int(sys.argv[2])
def stat(p):
    return open("/proc/%s/stat" % p).read().rsplit(")", 1)
seen, end = set(), time.time() + 30
while time.time() < end:
    for d in os.listdir("/proc"):
        if not d.isdigit() or d in seen:
            continue
        try:
            cl = open("/proc/%s/cmdline" % d, "rb").read()
            if not cl.startswith(b"bwrap\0") or mark not in cl:
                continue
            keeper = stat(d)[1].split()[1]
            if stat(keeper)[0].endswith("(bwrap"):
                continue  # the one inside: its pid namespace's init
            worker = int(stat(keeper)[1].split()[1])
        except (OSError, IndexError):
            continue
        seen.add(d)
        if len(seen) == n:
            os.kill(worker, signal.SIGKILL)
            sys.exit(0)
PY
}
# race_once KILLER...: KILLER kills the worker of kloop $kp (started by the
# caller) at its moment; then kloop's SIGKILL; 0 when nothing is left
race_once() {
	"$@"
	sleep 0.2
	kill -KILL $kp
	wait $kp 2>/dev/null
	gone
}
ppid() { cut -d' ' -f4 "/proc/$1/stat" 2>/dev/null; }
left() { ours | cut -d' ' -f1,2 | tr '\n' ' '; }

# 1. a normal end: the seed evaluated, kloop done, nothing left
$K eval softmax tasks/softmax/seed.c $B --json >"$T/n.json" 2>"$T/n.err"
check "a normal end: the seed is correct ($(json status "$T/n.json"))" \
	test "$(json status "$T/n.json")" = correct
check "a normal end leaves no process behind ($(left))" gone

# 2. a timeout of a hanging candidate
$K eval softmax "$T/hang.c" $B --timeout 2 --json >"$T/t.json" 2>"$T/t.err"
check "a hanging candidate times out ($(json status "$T/t.json"))" \
	test "$(json status "$T/t.json")" = timeout
check "its timeout leaves no process behind ($(left))" gone

# 3. a candidate that kills its parent (the sandbox's init) and its group
$K eval softmax "$T/kill_parent.c" $B --json >"$T/k.json" 2>"$T/k.err"
check "kill_parent: crashed ($(json status "$T/k.json"))" test "$(json status "$T/k.json")" = crashed
check "kill_parent leaves no process behind ($(left))" gone

# 4. SIGKILL of the worker while the candidate hangs (the reference's
# runner and the candidate's run): kloop goes on with a new worker, and
# nothing the old one started is left
$K eval softmax "$T/hang.c" $B --timeout 60 >/dev/null 2>&1 &
kp=$!
runners 2
w=$(ours | while read -r p c t r; do [ "$c" = kloop-worker ] && [ "$(ppid "$p")" = $kp ] && echo "$p"; done)
ours | grep -v "^$kp " >"$T/before"
kill -KILL $w
check "SIGKILL of the worker while a candidate hangs: none of its $(wc -l <"$T/before") processes is left ($(ours "$T/before" | cut -d' ' -f1,2 | tr '\n' ' '))" \
	gone "$T/before"
kill -KILL $kp
wait $kp 2>/dev/null
check "... and kloop's SIGKILL after it leaves no process behind ($(left))" gone

# 5. SIGKILL of the worker right while bubblewrap sets a runner up (before
# its pid namespace's init is tied to it): ten times, at the start of the
# first to fourth runner of a run, then kloop's SIGKILL
i=0
while [ $i -lt 10 ]; do
	$K eval softmax tasks/softmax/seed.c "$T/hang.c" $B --timeout 60 >/dev/null 2>&1 &
	kp=$!
	race_once kill_at_start $((i % 4 + 1)) || break
	i=$((i + 1))
done
check "SIGKILL of the worker while bubblewrap starts a runner, 10 times, leaves no process behind ($(left))" gone

# 6. kloop itself ends while a candidate hangs: SIGKILL, SIGTERM, SIGHUP
for sig in KILL TERM HUP; do
	$K eval softmax "$T/hang.c" $B --timeout 60 >/dev/null 2>&1 &
	kp=$!
	runners 2
	before=$(ours | wc -l)
	kill -$sig $kp
	wait $kp 2>/dev/null
	check "SIG$sig of kloop while a candidate hangs (its $before processes) leaves no process behind ($(left))" gone
done

# 7. SIGKILL of the worker right while bubblewrap sets a sandboxed compile
# up (the same window as 5): ten times, each a source not compiled before
# kill_at_compile [term]: at once SIGKILL the worker that started it; with
# term, SIGTERM that bubblewrap alone, 0.3 s later (the compiler at work)
kill_at_compile() {
	python3 - "$T/" "${1:-}" <<'PY'
import os, signal, sys, time
mark, term = sys.argv[1].encode(), sys.argv[2] == "term"
def stat(p):
    return open("/proc/%s/stat" % p).read().rsplit(")", 1)
end = time.time() + 30
while time.time() < end:
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cl = open("/proc/%s/cmdline" % d, "rb").read()
            if not cl.startswith(b"bwrap\0") or b"\0--unshare-all\0" not in cl or mark not in cl:
                continue
            keeper = stat(d)[1].split()[1]
            if stat(keeper)[0].endswith("(bwrap"):
                continue  # the one inside
            worker = int(stat(keeper)[1].split()[1])
        except (OSError, IndexError):
            continue
        if term:
            time.sleep(0.3)
            os.kill(int(d), signal.SIGTERM)
        else:
            os.kill(worker, signal.SIGKILL)
        sys.exit(0)
sys.exit(1)
PY
}
i=0
while [ $i -lt 10 ]; do
	{ echo "/* compile $i */"; cat tasks/softmax/seed.c; } >"$T/c$i.c"
	$K eval softmax "$T/c$i.c" $B --timeout 60 >/dev/null 2>&1 &
	kp=$!
	race_once kill_at_compile || break
	i=$((i + 1))
done
check "SIGKILL of the worker while bubblewrap starts a compile, 10 times, leaves no process behind ($(left))" gone

# 8. a runner stopped from outside is no verdict on the candidate: Slurm's
# scancel sends SIGTERM to every process of the step in an order of its own,
# and whichever it reaches first (bubblewrap, whose death takes the runner
# with it before the runner can say a word, or the runner itself), the
# worker ends with it and kloop runs the job again; the hanging candidate
# then gets its own verdict, timeout, not "crashed"
# newest KIND: the pid of the runner that runs hangm.c (known by the mark
# it leaves in its maps: the newest runner was as often the reference's
# float64 run's, or a spare, under load) or of the outermost bubblewrap
# above it ("outer", the one outside its pid namespace); "spare": the one runner without
# buffers mapped (no memfd: a spare waiting for its setup) once two with
# them run; "spare N": the N such runners (their pids)
newest() {
	python3 - "$T/bin/kloop-worker" "$1" "${2:-1}" <<'PY'
import os, sys, time
mark, what, nSpare = sys.argv[1].encode(), sys.argv[2], int(sys.argv[3])
def stat(p):
    return open("/proc/%s/stat" % p).read().rsplit(")", 1)
def ours(p):
    # p or one of its three nearest ancestors (the runner sees kloop-worker
    # at another path, inside the sandbox) names kloop-worker of ours
    for _ in range(4):
        if mark in open("/proc/%s/cmdline" % p, "rb").read():
            return True
        p = stat(p)[1].split()[1]
    return False
end = time.time() + 30
while time.time() < end:
    found, bare = [], []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cl = open("/proc/%s/cmdline" % d, "rb").read()
            f = stat(d)[1].split()
            # the clock's twin (--twin) is no candidate's runner
            if b"\0--runner\0" not in cl or b"\0--twin\0" in cl or not ours(d):
                continue
            bw = cl.startswith(b"bwrap\0")
            if what in ("outer", "runner") and not bw and \
                    "memfd:kloop-test-hang" in open("/proc/%s/maps" % d).read():
                # the runner that runs hangm.c (its mark), or the outermost
                # bubblewrap above it
                p = d
                while what == "outer":
                    q = stat(p)[1].split()[1]
                    if not open("/proc/%s/cmdline" % q, "rb").read().startswith(b"bwrap\0"):
                        break
                    p = q
                if what == "runner" or p != d:
                    print(p)
                    sys.exit(0)
            if what == "spare" and not bw:
                maps = open("/proc/%s/maps" % d).read()
                if "memfd:kloop-test-sleepy" in maps:
                    found.append((int(f[19]), d))
                elif "memfd:" not in maps:
                    bare.append((int(f[19]), d))
        except (OSError, IndexError):
            continue
    # the spare: the one runner with no buffers mapped while sleepy.c runs
    # (known by its mark) in another; not the one started for sleepy.c
    # itself, nor for the reference's float64 run
    if what == "spare" and found and len(bare) == nSpare:
        print(" ".join(d for t, d in bare))
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
}
{
	echo '#define _GNU_SOURCE'
	echo '#include <sys/mman.h>'
	echo '#include <unistd.h>'
	echo '#include "kloop.h"'
	echo 'int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)'
	echo '{ (void)in; (void)n_in; (void)out; (void)n_out; (void)stream;'
	echo '  int fd = memfd_create("kloop-test-hang", 0);'
	echo '  if (fd >= 0 && ftruncate(fd, 4096) == 0) mmap(0, 4096, PROT_READ, MAP_SHARED, fd, 0);'
	echo '  for (volatile int i = 0;; i++) ; }'
} >"$T/hangm.c"
for what in outer runner; do
	$K eval softmax "$T/hangm.c" $B --timeout 4 --json >"$T/s$what.json" 2>"$T/s$what.err" &
	kp=$!
	p=$(newest $what)
	# the candidate's run has begun once its runner is there; SIGTERM to
	# that one process, nothing else
	[ -n "$p" ] && kill -TERM "$p"
	wait $kp
	st=$(json status "$T/s$what.json")
	check "SIGTERM to the candidate's $([ $what = outer ] && echo bubblewrap || echo runner) alone is no verdict: the job runs again (requeued $(json worker.requeued "$T/s$what.json")) to its own, timeout ($st)" \
		test "$st" = timeout -a "$(json worker.requeued "$T/s$what.json")" = 1
done
check "... and leaves no process behind ($(left))" gone

# ... nor is a compiler stopped from outside a verdict on the source: SIGTERM
# to the sandboxed compiler's bubblewrap (a source that takes the compiler
# seconds: it is there to be found) and the worker ends with it; its jobs
# go to a fresh worker (none was running yet) and the source is compiled
# again: correct, not a compile_error
{
	cat tasks/softmax/seed.c
	i=0
	while [ $i -lt 1500 ]; do
		echo "float kl_pad_$i(float x) { float y = x; for (int k = 0; k < 8; k++) y = y * 1.0001f + (float)$i; return y; }"
		i=$((i + 1))
	done
} >"$T/slow.c"
$K eval softmax "$T/slow.c" $B --json >"$T/sc.json" 2>"$T/sc.err" &
kp=$!
kill_at_compile term
termed=$?
wait $kp
st=$(json status "$T/sc.json")
check "SIGTERM to the compiler's bubblewrap alone (sent: $termed = 0) is no verdict: the source is compiled again and is correct ($st)" \
	test $termed = 0 -a "$st" = correct
check "... and leaves no process behind ($(left))" gone

# 9. the file size limit is the candidate's (its runner's: 1 GiB), not the
# worker's: the worker's buffers are memfds, whose size counts as a file's,
# and a task's tensors may pass 1 GiB
$K eval softmax "$T/hang.c" $B --timeout 60 >/dev/null 2>&1 &
kp=$!
runners 2
fsize() { awk '/^Max file size/ {print $4}' "/proc/$1/limits" 2>/dev/null; }
w=$(ours | while read -r p c t r; do [ "$c" = kloop-worker ] && [ -z "$r" ] && [ "$(ppid "$p")" = $kp ] && echo "$p"; done)
# a runner's limits (every runner has the same: the reference's, its float64
# run's, which ends at once, and the candidate's), read from one still there
rl=""
for _ in $(seq 1 50); do
	rn=$(ours | while read -r p c t r; do [ "$r" = runner ] && [ "$c" != bwrap ] && echo "$p"; done | tail -1)
	rl=$(fsize "$rn")
	[ -n "$rl" ] && break
	sleep 0.2
done
wl=$(fsize "$w")
mine=$(awk '/^Max file size/ {print $5}' /proc/self/limits)
check "the worker's file size limit is kloop's hard one ($wl, kloop's: $mine)" test "$wl" = "$mine"
check "the candidate's runner has 1 GiB ($rl)" test "$rl" = 1073741824
kill -KILL $kp
wait $kp 2>/dev/null
check "... and leaves no process behind ($(left))" gone

# 10. the spare runner (KLOOP_SPARE_RUNNER=ready: a runner started ahead for
# the next candidate, the cuda backend's default): every candidate gets its
# own verdict from a spare, a spare dies with kloop, and a spare that died
# before its turn is replaced
for i in 1 2 3; do
	{ cat tasks/softmax/seed.c; echo "int kl_spare_copy_$i = $i;"; } >"$T/good$i.c"
done
{
	echo '#define kl_run seed_kl_run'
	cat tasks/softmax/seed.c
	echo '#undef kl_run'
	echo '#define _GNU_SOURCE'
	echo '#include <sys/mman.h>'
	echo '#include <unistd.h>'
	echo 'int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)'
	# a mark in its runner's maps, so the test knows which runner runs it
	echo '{ static void *mark; if (!mark) { int fd = memfd_create("kloop-test-sleepy", 0);'
	echo '  if (fd >= 0 && ftruncate(fd, 4096) == 0) mark = mmap(0, 4096, PROT_READ, MAP_SHARED, fd, 0); }'
	echo '  usleep(150000); return seed_kl_run(in, n_in, out, n_out, stream); }'
} >"$T/sleepy.c"
F=tests/fixtures/host
KLOOP_SPARE_RUNNER=ready $K eval softmax "$T/good1.c" $F/segfault.c "$T/good2.c" $F/exit.c \
	"$T/good3.c" $B --json >"$T/sp.json" 2>"$T/sp.err"
got=$(python3 -c '
import json, sys
print(" ".join("%s/%d" % (r["status"], r.get("runners_ahead", -1)) for r in map(json.loads, open(sys.argv[1]))))' "$T/sp.json")
check "with a spare runner each candidate gets its own verdict, from a runner started ahead ($got)" \
	test "$got" = "correct/1 crashed/1 correct/1 crashed/1 correct/1"
check "... and nothing is left ($(left))" gone
KLOOP_SPARE_RUNNER=ready $K eval softmax "$T/sleepy.c" $B --timeout 60 >/dev/null 2>&1 &
kp=$!
runners 2
sleep 0.5
kill -KILL $kp
wait $kp 2>/dev/null
check "a spare waiting beside a running candidate dies with kloop's SIGKILL ($(left))" gone
# the spare for good1.c: started once sleepy.c's runner was ready, so while
# sleepy.c runs there are two runners with buffers mapped (the reference's,
# kept for the worker's life, and sleepy.c's, known by its mark) and one
# without
KLOOP_SPARE_RUNNER=ready $K eval softmax "$T/sleepy.c" "$T/good1.c" $B --json >"$T/sk.json" 2>"$T/sk.err" &
kp=$!
sp=$(newest spare)
[ -n "$sp" ] && kill -KILL "$sp"
wait $kp
got=$(python3 -c '
import json, sys
print(" ".join("%s/%d" % (r["status"], r.get("runners_ahead", -1)) for r in map(json.loads, open(sys.argv[1]))))' "$T/sk.json")
check "a spare killed before its turn (pid ${sp:-none}) is replaced: the next candidate is correct in a runner of its own ($got)" \
	test -n "$sp" -a "$got" = "correct/1 correct/0"
# (sleepy.c: correct from the spare started after the reference's runner;
# good1.c: its spare killed, so a runner started for it)
check "... and nothing is left ($(left))" gone
out=$(KLOOP_SPARE_RUNNER=soon $K eval softmax "$T/good1.c" $B 2>&1)
check "KLOOP_SPARE_RUNNER=soon is refused, saying what it may be ($(echo "$out" | head -2 | tr '\n' ' '))" \
	sh -c 'echo "$1" | grep -q "KLOOP_SPARE_RUNNER must be off, after or ready"' - "$out"

# 10b. a spare readied while the next candidate compiles: a hand edit's
# request has the worker ready a spare (its buffers mapped, the frames of
# the clock's bound taken: kworker_frame_ahead) before its compile is done,
# a process that takes far longer than the worker's next turn of its loop,
# so the verdict waits for the object's load alone; the same edit with
# KLOOP_FRAME_AHEAD=0 takes its frames at the start.  Two spares, as on the
# GPU: the seed's runner's spare is started once its verdict is out (10c),
# and the edit readies the one started before it
cat >"$T/fed.sh" <<'ED'
#!/bin/sh
# a real edit (other machine code), and a line of this call's own (no compile
# of it in the cache)
sed -i 's/m = fmaxf(m, xr\[c\]);/m = xr[c] > m ? xr[c] : m;/' "$1"
echo "/* $$ $(date +%s%N) */" >>"$1"
ED
chmod +x "$T/fed.sh"
fr_of() {
	python3 -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
rs = [e["result"] for e in evs if e.get("type") == "eval_finished" and e.get("candidate") == 2]
print(" ".join("%s/%s/%s" % (r.get("status"), r.get("runners_framed"),
    "pre" if "frame_before_load_ms" in (r.get("timing") or {}) else "nopre")
    for r in rs) or "none")' "$1"
}
echo "edit 1" >"$T/fr.script"
EDITOR="$T/fed.sh" $K shell softmax $B --spares 2 --session "$T/fr.jsonl" \
	<"$T/fr.script" >"$T/fr.out" 2>"$T/fr.err"
got=$(fr_of "$T/fr.jsonl")
check "a hand edit's runner is readied while it compiles: correct, from a runner framed ahead, timed against the frames taken before its load ($got)" \
	test "$got" = "correct/1/pre"
check "... and nothing is left ($(left))" gone
EDITOR="$T/fed.sh" KLOOP_FRAME_AHEAD=0 $K shell softmax $B --spares 2 \
	--session "$T/fr0.jsonl" <"$T/fr.script" >"$T/fr0.out" 2>"$T/fr0.err"
got=$(fr_of "$T/fr0.jsonl")
check "KLOOP_FRAME_AHEAD=0: its frames taken at its start instead ($got)" \
	test "$got" = "correct/0/pre"

# 10c. a lone candidate's spare is replaced once its verdict is out, not
# beside its check and timing (cand_spare_defer): no spare's start is in
# its seconds; with another candidate behind it, the first one's runner's
# spare is started while it runs (seconds.spares: the spares' fork and
# exec in the job's time)
sp_secs() {
	python3 -c '
import json, sys
print(" ".join("%s/%d/%s" % (r["status"], r.get("runners_ahead", -1),
    "none" if r["seconds"]["spares"] == 0 else "some") for r in map(json.loads, open(sys.argv[1]))))' "$1"
}
for i in 9 10 11; do
	{ cat tasks/softmax/seed.c; echo "int kl_deferred_$i = $i;"; } >"$T/good$i.c"
done
KLOOP_SPARE_RUNNER=ready $K eval softmax "$T/good9.c" $B --json >"$T/df.json" 2>"$T/df.err"
got=$(sp_secs "$T/df.json")
check "a lone candidate runs in a spare, and none is started beside its check and timing ($got)" \
	test "$got" = "correct/1/none"
KLOOP_SPARE_RUNNER=ready $K eval softmax "$T/good10.c" "$T/good11.c" $B --json \
	>"$T/dq.json" 2>"$T/dq.err"
got=$(sp_secs "$T/dq.json")
check "... while with a candidate behind it the next spare is started as it runs ($got)" \
	sh -c 'echo "$1" | grep -Eq "^correct/1/some correct/1/(some|none)$"' - "$got"
check "... and nothing is left ($(left))" gone

# 11. several spares (--spares 2): both wait, started ahead, beside a
# running candidate that has others behind it (its runner's spare is
# replaced as it starts); each candidate takes one and it is replaced
# (every one of four from a runner started ahead); they die with kloop
sp_ahead() {
	python3 -c '
import json, sys
print(" ".join("%s/%d" % (r["status"], r.get("runners_ahead", -1)) for r in map(json.loads, open(sys.argv[1]))))' "$1"
}
$K eval softmax "$T/sleepy.c" "$T/good1.c" "$T/good2.c" "$T/good3.c" $B --spares 2 --json \
	>"$T/s2.json" 2>"$T/s2.err" &
kp=$!
sp=$(newest spare 2)
wait $kp
check "with --spares 2 two spares wait beside a running candidate (pids ${sp:-none})" \
	test "$(echo $sp | wc -w)" = 2
got=$(sp_ahead "$T/s2.json")
check "... each candidate gets one and it is replaced ($got)" \
	test "$got" = "correct/1 correct/1 correct/1 correct/1"
check "... and nothing is left ($(left))" gone
$K eval softmax "$T/sleepy.c" "$T/good1.c" $B --spares 2 --timeout 60 >/dev/null 2>&1 &
kp=$!
sp=$(newest spare 2)
kill -KILL $kp
wait $kp 2>/dev/null
check "two spares (pids ${sp:-none}) die with kloop's SIGKILL ($(left))" gone
# ... and with their worker: its SIGKILL (its runners' keepers kill them)
$K eval softmax "$T/sleepy.c" "$T/good1.c" $B --spares 2 --timeout 60 >/dev/null 2>&1 &
kp=$!
sp=$(newest spare 2)
wk=$(python3 - "$T/bin/kloop" ${sp:-} <<'PY'
import sys
# the worker: the nearest ancestor of a spare whose parent is kloop itself
kloop = sys.argv[1].encode() + b"\0"
def ppid(p):
    return open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1]
p = sys.argv[2] if len(sys.argv) > 2 else None
try:
    while p and p != "1":
        q = ppid(p)
        if open("/proc/%s/cmdline" % q, "rb").read().startswith(kloop):
            print(p)
            break
        p = q
except OSError:
    pass
PY
)
[ -n "$wk" ] && kill -KILL "$wk"
# spares_gone: the spares $sp (two were found, and their worker) are gone
# within 10 s (none alive but as a zombie)
spares_gone() {
	[ -n "$wk" ] && [ "$(echo $sp | wc -w)" = 2 ] || return 1
	n=0
	while [ $n -lt 100 ]; do
		alive=""
		for p in $sp; do
			[ -d /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null &&
				alive="$alive $p"
		done
		[ -z "$alive" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}
check "two spares (pids ${sp:-none}) die with their worker's SIGKILL (worker ${wk:-not found})" \
	spares_gone
kill -KILL $kp
wait $kp 2>/dev/null
check "... and with kloop's after it nothing is left ($(left))" gone
out=$($K eval softmax "$T/good1.c" $B --spares 9 2>&1)
check "--spares 9 is refused, naming the range ($(echo "$out" | head -1))" \
	sh -c 'echo "$1" | grep -q -- "--spares"' - "$out"

# 12. the host's start order (start_order.h): the runners of two workers
# make their contexts one at a time on the lock the pool gives them (here
# $KLOOP_RUNNER_LOCK, whose journal says so): no two takes without a made
# between them, every runner made, spares queued at their levels
KLOOP_RUNNER_LOCK="$T/order.lock" $K eval softmax "$T/good1.c" "$T/good2.c" "$T/good3.c" \
	"$T/sleepy.c" $B --spares 2 --workers local:2 --json >"$T/so.json" 2>"$T/so.err"
# (a runner killed while it holds the lock, a spare dropped, lets it go
# with its death and writes no made line: the next take follows its take)
got=$(python3 - "$T/order.lock" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
made = {w[1] for w in lines if w[0] == "made"}
held, bad, takes, died, workers, levels = None, 0, 0, 0, set(), set()
for w in lines:
    if w[0] == "take":
        if held is not None:
            # another took it while one held it: wrong unless that one died
            bad += held in made
            died += held not in made
        held, takes = w[2], takes + 1
        workers.add(w[2].split(".")[0])
        levels.add(w[1])
    else:
        bad += w[1] != held
        held = None
print("%d takes, %d out of order, %d died holding it, %d workers, levels %s"
      % (takes, bad, died, len(workers), "".join(sorted(levels))))
PY
)
n0=$NFAIL
check "two workers' runners start one at a time, in the order of the lock's journal ($got)" \
	sh -c 'echo "$1" | grep -q " 0 out of order, .* 2 workers, levels 012$"' - "$got"
diag $n0 "$T/order.lock"
check "... and their candidates are correct ($(sp_ahead "$T/so.json"))" \
	test "$(grep -c '"status":"correct"' "$T/so.json")" = 4
# without $KLOOP_RUNNER_LOCK the pool makes the lock in a run directory of
# its own ($TMPDIR/kloop-pool-*), removed when kloop ends
mkdir -p "$T/tmp"
TMPDIR="$T/tmp" $K eval softmax "$T/sleepy.c" $B --workers local:2 >/dev/null 2>&1 &
kp=$!
runners 2
lk=$(ls "$T"/tmp/kloop-pool-*/runners.lock 2>/dev/null)
took=$(grep -c '^take ' "$lk" 2>/dev/null)
wait $kp
check "the pool's own run directory holds the start lock its workers' runners took (${took:-0} takes)" \
	test "${took:-0}" -ge 2
check "... and it is removed when kloop ends ($(ls -d "$T"/tmp/kloop-pool-* 2>/dev/null))" \
	test -z "$(ls -d "$T"/tmp/kloop-pool-* 2>/dev/null)"
