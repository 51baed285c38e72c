# mps.sh - MPS for the pool (issue 28) on a host without a GPU, against a
# FAKE nvidia-cuda-mps-control (tests/fixtures/mps: a script standing in for
# NVIDIA's control program, recording each call): kloop doctor's line,
# `--mps` refused clearly where it cannot work, a daemon of kloop's own
# started in a private directory and stopped when kloop ends, and the
# daemon's pipe directory reaching a sandboxed runner's environment.
. tests/e2e/lib.sh
FAKE=$(pwd)/tests/fixtures/mps
export FAKE_MPS_RECORD="$T/record"
: >"$FAKE_MPS_RECORD"
B="--budget 0.2 --trials 2"

# ---- doctor ----
CUDA_MPS_PIPE_DIRECTORY="$T/none" $KLOOP doctor >"$T/d0" 2>&1
check "doctor: no daemon running: MPS not available, and why, or available ($(grep '^mps' "$T/d0"))" \
	grep -Eq "^mps +(-- +not available: (no usable GPU here|nvidia-cuda-mps-control is not on PATH)|ok +available, not running \(no daemon at $T/none\))" "$T/d0"
mkdir -p "$T/sys"
mkfifo "$T/sys/control"
sleep 300 </dev/null >/dev/null 2>&1 &
daemon=$!
echo $daemon >"$T/sys/nvidia-cuda-mps-control.pid"
PATH="$FAKE:$PATH" CUDA_MPS_PIPE_DIRECTORY="$T/sys" $KLOOP doctor >"$T/d1" 2>&1
check "doctor: a running daemon is available, not used by default ($(grep '^mps' "$T/d1"))" \
	grep -Eq "^mps +ok +available: a daemon runs at $T/sys; not used unless asked" "$T/d1"
mkdir -p "$XDG_CONFIG_HOME/kloop"
echo "mps = on" >"$XDG_CONFIG_HOME/kloop/config"
PATH="$FAKE:$PATH" CUDA_MPS_PIPE_DIRECTORY="$T/sys" $KLOOP doctor >"$T/d1m" 2>&1
rm "$XDG_CONFIG_HOME/kloop/config"
check "doctor with mps = on: the running daemon is in use ($(grep '^mps' "$T/d1m"))" \
	grep -Eq "^mps +ok +in use: a daemon runs at $T/sys" "$T/d1m"
PATH="$FAKE:$PATH" CUDA_MPS_PIPE_DIRECTORY="$T/sys" $KLOOP doctor --json >"$T/dj" 2>&1
check "doctor --json has the mps check" python3 -c "
import json; d = json.load(open('$T/dj')); assert d['mps']['ok'] and 'not used unless asked' in d['mps']['detail'], d['mps']"
mkdir -p "$XDG_CONFIG_HOME/kloop"
echo "mps = off" >"$XDG_CONFIG_HOME/kloop/config"
PATH="$FAKE:$PATH" CUDA_MPS_PIPE_DIRECTORY="$T/sys" $KLOOP doctor >"$T/d2" 2>&1
check "doctor: mps = off in the configuration is said" grep -Eq "^mps +-- +off in the configuration" "$T/d2"
echo "mps = sometimes" >"$XDG_CONFIG_HOME/kloop/config"
run badcfg eval softmax tasks/softmax/seed.c --backend host $B
check "a bad mps value in the configuration is refused with the line (rc $rc)" \
	sh -c "test $rc -eq 2 && grep -q \"config:1: mps: expected on, off or auto, got 'sometimes'\" '$T/badcfg.err'"
rm -f "$XDG_CONFIG_HOME/kloop/config"

# ---- --mps where it cannot work ----
run host eval softmax tasks/softmax/seed.c --backend host --mps $B
check "--mps on the host backend: a clear error (rc $rc: $(head -c 200 "$T/host.err"))" \
	sh -c "test $rc -eq 2 && grep -q -- '--mps: MPS shares a GPU between processes; the backend is host' '$T/host.err'"
CUDA_MPS_PIPE_DIRECTORY="$T/none" CUDA_VISIBLE_DEVICES=0 PATH="$FAKE:$PATH" \
	$KLOOP eval softmax tasks/softmax/seed.cu --backend cuda --mps --workers "ssh:gpu1" $B >"$T/ssh.out" 2>"$T/ssh.err"
rc=$?
check "--mps with workers on another host: a clear error (rc $rc)" \
	sh -c "test $rc -eq 2 && grep -q -- \"--mps: kloop starts MPS for this host's GPUs, and the workers 'ssh:gpu1' run elsewhere\" '$T/ssh.err'"
mkdir -p "$T/emptybin"
CUDA_MPS_PIPE_DIRECTORY="$T/none" CUDA_VISIBLE_DEVICES=0 PATH="$T/emptybin" \
	$KLOOP eval softmax tasks/softmax/seed.cu --backend cuda --mps $B >"$T/nt.out" 2>"$T/nt.err"
rc=$?
check "--mps without nvidia-cuda-mps-control: a clear error (rc $rc)" \
	sh -c "test $rc -eq 2 && grep -q -- '--mps: nvidia-cuda-mps-control is not on PATH' '$T/nt.err'"
check "no daemon was started for those" sh -c "! grep -q '^start' '$FAKE_MPS_RECORD'"

# ---- a daemon of kloop's own: started, stopped when kloop ends ----
# (CUDA_VISIBLE_DEVICES names a GPU this host does not have: the daemon
# starts, the worker then finds no usable device and the eval fails)
TMPDIR="$T" CUDA_MPS_PIPE_DIRECTORY="$T/none" CUDA_VISIBLE_DEVICES=0 PATH="$FAKE:$PATH" \
	$KLOOP eval softmax tasks/softmax/seed.cu --backend cuda --mps $B >"$T/own.out" 2>"$T/own.err"
pipe=$(sed -n 's/^start \([^ ]*\) .*/\1/p' "$FAKE_MPS_RECORD" | head -1)
check "--mps: kloop started a daemon in a private directory ($pipe)" \
	sh -c "case '$pipe' in '$T'/kloop-mps-*/pipe) exit 0;; esac; exit 1"
check "with a private log directory beside it" grep -q "^start $pipe ${pipe%/pipe}/log" "$FAKE_MPS_RECORD"
check "and sent it quit when it ended" grep -q "^quit $pipe\$" "$FAKE_MPS_RECORD"
check "its private directory is gone" test ! -e "${pipe%/pipe}"
check "the daemon kloop did not start was never told to quit" sh -c "! grep -q 'quit $T/sys' '$FAKE_MPS_RECORD'"
check "... and still runs" kill -0 $daemon

# ---- the pipe directory reaches the runner (sandboxed and not) ----
cat >"$T/envcrash.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in; (void)n_in; (void)out; (void)n_out; (void)stream;
	const char *p = getenv("CUDA_MPS_PIPE_DIRECTORY");
	fprintf(stderr, "mps-pipe=%s\n", p ? p : "(unset)");
	fflush(stderr);
	abort();
}
C
for sb in --sandbox --no-sandbox; do
	CUDA_MPS_PIPE_DIRECTORY="$T/sys" $KLOOP eval softmax "$T/envcrash.c" --backend host $sb $B --json >"$T/env$sb.json" 2>&1
	check "the runner ($sb) has CUDA_MPS_PIPE_DIRECTORY from kloop's environment" grep -q "mps-pipe=$T/sys" "$T/env$sb.json"
done
kill $daemon 2>/dev/null
wait $daemon 2>/dev/null
echo "# done"
[ "$NFAIL" -eq 0 ]
