#!/bin/sh
# bench/gpu/tui_first.sh - issue 40, item 3: the TUI's first verdict (the
# seed's) in <= 3 s warm on the GPU, and torch.compile's baseline in the
# background never delaying it.  Opens the real TUI (`kloop open TASK
# --session F`, in a pseudo-terminal of 120x40 made by python's pty) on each
# task given, twice: cold (an empty compile cache) and warm (the cache the
# first left, the toolkit and PyTorch in the page cache, and the worker the
# first kept warm, which the second attaches to: `--warm`, 300 s on the
# GPU by default; `kloop warm stop` ends it after each task); one line each:
# seconds from the start to the seed's verdict
# (its eval_finished in the session's journal), the verdict, and where the
# task has one, to torch.compile's baseline (compile_baseline).  Then the TUI is
# sent `q` (and SIGTERM if it lingers).  Prints one "skip" line where there
# is no GPU.
# Usage: sh bench/gpu/tui_first.sh ["TASK FLAGS" ...]   (default: softmax,
# and softmax against its PyTorch reference, "softmax --reference torch",
# whose torch.compile baseline compiles in the background; PYTHON names the
# python3 with PyTorch; BACKEND=host tries it on the CPU)
set -u
cd "$(dirname "$0")/../.."
K=${KLOOP:-./bin/kloop}
O=${OUT:-/tmp/kloop-tui-first}
BACKEND=${BACKEND:-cuda}
mkdir -p "$O"
if [ "$BACKEND" = cuda ] && ! $K doctor --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpu"]["ok"] else 1)'; then
	echo "skip: no GPU (kloop doctor finds no usable CUDA device); tui_first.sh did not run"
	exit 0
fi
[ $# -gt 0 ] || set -- softmax "softmax --reference torch"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); backend $BACKEND; $(date -u '+%F %H:%M UTC'); $(git rev-parse --short HEAD 2>/dev/null)"
printf '%-32s %-5s %7s %7s  %s\n' task run verdict baseline status
export XDG_CACHE_HOME=$O/cache
rm -rf "$XDG_CACHE_HOME"
$K warm stop >/dev/null 2>&1
for task in "$@"; do
	for run in cold warm; do
		S=$O/$(echo "$task" | tr -c 'A-Za-z0-9_\n' _).$run.jsonl
		rm -f "$S"
		python3 - "$K" "$task" "$BACKEND" "$S" "$run" "$O" "${PYTHON:-python3}" <<'PY'
import fcntl, json, os, pty, select, shlex, signal, struct, sys, termios, time
k, task, backend, sess, run, out, py = sys.argv[1:8]
t0 = time.time()
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm-256color"
    os.execvp(k, [k, "open"] + shlex.split(task) +
              ["--backend", backend, "--python", py, "--session", sess])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
os.kill(pid, signal.SIGWINCH)
verdict = base = None
screen = b""
status = "no verdict in 180 s"
torch = "torch" in task
def events():
    try:
        return [json.loads(l) for l in open(sess) if l.strip()]
    except (OSError, ValueError):
        return []
while time.time() - t0 < 180:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try:
            screen = (screen + os.read(fd, 65536))[-16384:]
        except OSError:
            break
    now = time.time() - t0
    for e in events():
        ty = e.get("type", "")
        ts = e.get("ts")
        at = ts - t0 if isinstance(ts, (int, float)) and ts > 1e9 else now
        if verdict is None and ty == "eval_finished":
            verdict = at
            res = e.get("result") or {}
            status = res.get("status", "?")
        if base is None and ty == "compile_baseline":
            base = at
    if verdict is not None and (not torch or base is not None or now > verdict + 60):
        break
os.write(fd, b"q")
for _ in range(40):
    if os.waitpid(pid, os.WNOHANG)[0]:
        break
    time.sleep(0.1)
else:
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)
f = lambda x: "%7.2f" % x if x is not None else "%7s" % "-"
print("%-32s %-5s %s %s  %s" % (task[-32:], run, f(verdict), f(base), status))
with open(os.path.join(out, os.path.basename(sess) + ".screen"), "wb") as w:
    w.write(screen)
with open(os.path.join(out, os.path.basename(sess) + ".types"), "w") as w:
    for e in events():
        w.write("%s\n" % e.get("type"))
PY
	done
	$K warm stop >/dev/null 2>&1
done
