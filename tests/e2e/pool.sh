# tests/e2e/pool.sh - kloop with several workers (issue 13), as a user runs
# it: `kloop eval` over a pool of two local workers, over ssh (a local
# stand-in for ssh, tests/fixtures/fake_ssh.sh, that starts in an empty
# directory as another host would), and through a real single-node Slurm
# cluster (tests/slurm/cluster.sh, as root); `kloop doctor --workers`.
. tests/e2e/lib.sh
PATH="$(pwd)/bin:$PATH"
export PATH
H=tests/fixtures/host
SRCS="tasks/softmax/seed.c $H/off_by_one.c $H/zeros.c $H/slow_correct.c"
verdicts() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["source"].split("/")[-1], r["status"], r.get("worker", {}).get("label", "?"))' "$1"
}

$KLOOP eval softmax $SRCS --backend host --budget 0.1 --workers local:2 --json >"$T/local.json" 2>"$T/local.err"
verdicts "$T/local.json" >"$T/local.txt"
check "two local workers: every verdict as with one (correct, incorrect, incorrect, correct; got $(said "$T/local.json"))" \
	sh -c "cut -d' ' -f1,2 '$T/local.txt' | tr '\n' ' ' | grep -q 'seed.c correct off_by_one.c incorrect zeros.c incorrect slow_correct.c correct'"
check "both workers evaluated (local:0 and local:1 named in the results)" \
	sh -c "grep -q ' local:0$' '$T/local.txt' && grep -q ' local:1$' '$T/local.txt'"

$KLOOP eval softmax tasks/softmax/seed.c --backend host --workers 'local:2;gpu' 2>"$T/bad.err" >/dev/null
rc=$?
check "a bad worker specification is a usage error naming it (exit $rc)" \
	sh -c "[ $rc = 2 ] && grep -q \"'gpu' is not a worker specification\" '$T/bad.err'"

export KLOOP_SSH="$(pwd)/tests/fixtures/fake_ssh.sh" FAKE_SSH_LOG="$T/ssh.log"
$KLOOP eval softmax tasks/softmax/seed.c $H/zeros.c --backend host --budget 0.1 --workers ssh:gpubox:2 --json \
	>"$T/ssh.json" 2>"$T/ssh.err"
verdicts "$T/ssh.json" >"$T/ssh.txt"
check "over ssh: the seed is correct and zeros incorrect on ssh:gpubox workers (got $(said "$T/ssh.json"))" \
	sh -c "grep -q '^seed.c correct ssh:gpubox:' '$T/ssh.txt' && grep -q '^zeros.c incorrect ssh:gpubox:' '$T/ssh.txt'"
check "ssh keeps one connection per host (ControlMaster) and runs kloop-worker there" \
	sh -c "grep -q 'option ControlMaster=auto' '$T/ssh.log' && grep -q 'command .*kloop-worker --backend host' '$T/ssh.log'"
$KLOOP doctor --workers='ssh:gpubox;ssh:unreachable' >"$T/doc.txt" 2>&1
rc=$?
check "doctor --workers: one line per worker, ok for a working host (exit $rc)" \
	sh -c "grep -q '^ssh:gpubox  *ok .*kloop-worker' '$T/doc.txt'"
check "doctor --workers: an unreachable host says why, and the exit status says so" \
	sh -c "[ $rc = 1 ] && grep -q '^ssh:unreachable --.*Connection refused' '$T/doc.txt'"
unset KLOOP_SSH

if [ "$(id -u)" != 0 ] || ! command -v srun >/dev/null 2>&1; then
	skip "Slurm: needs root and Slurm (make deps installs slurmctld, slurmd and munge)"
	exit 0
fi
C="$T/slurm"
mkdir -p "$C"
if ! sh tests/slurm/cluster.sh start "$C" >"$T/cluster.log" 2>&1; then
	fail "a single-node Slurm cluster starts"
	sed 's/^/#| /' "$T/cluster.log"
	exit 0
fi
trap 'sh tests/slurm/cluster.sh stop "$C" >/dev/null 2>&1; rm -rf "$T"' EXIT
export SLURM_CONF="$C/slurm.conf"
unset SLURM_JOB_ID
$KLOOP eval softmax $SRCS --backend host --budget 0.1 --workers 'slurm:--ntasks=2 --time=5' --json \
	>"$T/slurm.json" 2>"$T/slurm.err"
verdicts "$T/slurm.json" >"$T/slurm.txt"
check "through Slurm: the same verdicts, from job steps of one allocation (got $(said "$T/slurm.json"))" \
	sh -c "cut -d' ' -f1,2 '$T/slurm.txt' | tr '\n' ' ' | grep -q 'seed.c correct off_by_one.c incorrect zeros.c incorrect slow_correct.c correct' && [ \$(grep -c ' slurm:[0-9]*\.[01]$' '$T/slurm.txt') = 4 ]"
left=1
for _ in $(seq 1 50); do
	squeue -h -o '%j %T' | grep -q '^kloop RUNNING' || { left=0; break; }
	sleep 0.1
done
check "the allocation is released when kloop ends" [ $left = 0 ]
$KLOOP doctor --workers='slurm:--ntasks=2 --time=5' >"$T/sdoc.txt" 2>&1
check "doctor --workers through Slurm: both steps ok ($(grep -E '^(slurm|kloop)' "$T/sdoc.txt" | tr '\n' ' ' | head -c 500))" sh -c "[ \$(grep -c '^slurm:[0-9]*\.[01]  *ok ' '$T/sdoc.txt') = 2 ]"
