#!/bin/sh
# bench/gpu/pool.sh - the worker pool measured (issue 28): one GPU
# (--workers local:1) against every GPU (--workers local), without and with
# MPS (--no-mps, --mps), on a batch and on a search.
#
# The batch: N *distinct* softmax kernels (the seed with a different constant
# added to each row's maximum, which softmax does not see: each is compiled
# and timed, none is "same machine code, not timed again"), in one
# `kloop eval`, cold compile cache, at two settings:
#   light  the seed's work, the default timing budget (what a search meets);
#   heavy  HEAVY launches of the kernel per kl_run and --budget BUDGET_GPU:
#          the GPU's time (check + time) is most of a candidate's cost
#          (the `gpu_share` column says whether it was: raise HEAVY if not).
# The search: `kloop search` from the scripted corpus LLM
# (tests/fixtures/search/corpus_llm.py: no model latency), ROUNDS rounds.
# Fidelity: the seed itself timed by REPS separate evals on one GPU, without
# and with MPS (its medians' spread; the runner's start).
#
# Per arm (one line of $OUT/summary.tsv, bench/gpu/pool_stats.py): the
# candidates, how many were timed, correct, wall time, candidates a minute,
# the per-stage medians kloop records in each result's "seconds" (compile,
# load = the runner's start, end = the runner's end, check, time) and their
# shares of the summed cost, the GPU's share, the CPU's busy share over the
# run (all cores: is nvcc keeping them busy), the GPUs' mean utilisation
# (nvidia-smi), and per worker its candidates and median kernel time (the
# kernels differ by a constant: two GPUs' medians should agree within the
# noise).  The CPU column is the busy share over the run (the whole host's),
# then the share of 0.2 s samples in which every core was at least 90% busy
# ("all 71%"), then the cores kloop's own processes used on average (their
# CPU time over the wall time, "kloop 1.6": on a shared host the only one
# of the three that is kloop's: is the compile queue keeping the cores busy).  Raw results: $OUT/<arm>.json
# (batch) or .jsonl (search journal), $OUT/<arm>.err, $OUT/util-<arm>.csv,
# $OUT/cpu-<arm>.txt; $OUT/machine.txt says where and when.
#
# Usage: bench/gpu/pool.sh [--host-smoke] [OUT]   (OUT: /tmp/kloop-pool-bench)
#   --host-smoke  the reduced form on the host backend (no GPU needed):
#                 CPU workers (local:1 against local:2), N=6, HEAVY=8,
#                 ROUNDS=1, no MPS arm (--mps is checked to be refused there)
#   N=32 HEAVY=1000 BUDGET_GPU=2 ROUNDS=3 MPS="off on" REPS=5
#   PHASES="batch search fidelity"
#   WEIGHTS="light heavy" (PHASES and WEIGHTS split it over several calls)
#   SPARES="1 2": an arm per count of spare runners per worker (--spares N,
#                 the arm's name ends -spN); unset: kloop's default, no flag
#   KLOOP=PATH: another build's kloop
set -u
cd "$(dirname "$0")/../.."
SMOKE=0
if [ "${1:-}" = --host-smoke ]; then
	SMOKE=1
	shift
fi
O=${1:-/tmp/kloop-pool-bench}
mkdir -p "$O" || exit 2
O=$(cd "$O" && pwd)
K=${KLOOP:-./bin/kloop}
C=tests/fixtures/search/corpus_llm.py
if [ $SMOKE = 1 ]; then
	BE=host SEED=tasks/softmax/seed.c EXT=c ONE=local:1 ALL=local:2
	N=${N:-6} HEAVY=${HEAVY:-8} BUDGET_GPU=${BUDGET_GPU:-0.5} ROUNDS=${ROUNDS:-1}
	MPS_ARMS=off
	CMD="python3 $C"
	cp tests/fixtures/search/slow.c "$O/from.c"
	gpus="none (host backend: CPU workers stand in for GPUs)"
else
	if ! nvidia-smi -L >/dev/null 2>&1; then
		echo "skip: no GPU (nvidia-smi -L failed); bench/gpu/pool.sh --host-smoke is the reduced form"
		exit 0
	fi
	BE=cuda SEED=tasks/softmax/seed.cu EXT=cu ONE=local:1 ALL=local
	N=${N:-32} HEAVY=${HEAVY:-1000} BUDGET_GPU=${BUDGET_GPU:-2} ROUNDS=${ROUNDS:-3}
	MPS_ARMS=${MPS:-off on}
	CMD="KLOOP_CORPUS_SEED=$SEED python3 $C"
	KLOOP_CORPUS_SEED=$SEED python3 $C --emit slow >"$O/from.cu"
	gpus="$(nvidia-smi -L | wc -l) x $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
fi
PHASES=${PHASES:-batch search fidelity}
export XDG_STATE_HOME="$O/state" XDG_CONFIG_HOME="$O/config" KLOOP_ARCHIVE=off
{
	echo "date: $(date -u '+%F %H:%M UTC')"
	echo "host: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "gpus: $gpus"
	echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "kloop: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with changes)')"
	echo "backend $BE; one: --workers $ONE, all: --workers $ALL; N=$N HEAVY=$HEAVY BUDGET_GPU=$BUDGET_GPU ROUNDS=$ROUNDS; MPS arms: $MPS_ARMS; spares: ${SPARES:-default}"
} >"$O/machine.txt"
cat "$O/machine.txt"

# make_set light|heavy DIR: the N distinct kernels
make_set() {
	rm -rf "$2"
	mkdir -p "$2"
	for i in $(seq 1 "$N"); do
		k=$(printf '%d.0e-4f' "$i")
		f="$2/k$i.$EXT"
		if [ $BE = cuda ]; then
			sed "s/^\tm = red\[0\];/\tm = red[0] + $k;/" "$SEED"
		else
			sed "s/float m = xr\[0\], sum = 0.0f;/float m = xr[0] + $k, sum = 0.0f;/" "$SEED"
		fi >"$f"
		if ! grep -q -- "+ $k" "$f"; then
			echo "pool.sh: $SEED changed: no constant could be put into $f" >&2
			exit 2
		fi
		[ "$1" = heavy ] || continue
		sed -i 's/^extern "C" int kl_run(/static int kl_run_once(/; s/^int kl_run(/static int kl_run_once(/' "$f"
		[ $BE = cuda ] && printf 'extern "C" ' >>"$f"
		cat >>"$f" <<EOF
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	for (int r = 0; r < $HEAVY; r++)
		if (kl_run_once(in, n_in, out, n_out, stream))
			return 1;
	return 0;
}
EOF
	done
}

cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
# cpu_sample FILE: every 0.2 s, each core's busy and total ticks (one line)
cpu_sample() {
	while :; do
		awk '/^cpu[0-9]/{printf "%d %d ", $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8} END {print ""}' /proc/stat
		sleep 0.2
	done >"$1"
}
# all_busy FILE: the share of samples in which every core was >= 90% busy
all_busy() {
	awk 'NR > 1 && NF == np {
		all = 1
		for (i = 1; i < NF; i += 2) {
			t = $(i + 1) - p[i + 1]
			if (t <= 0 || ($i - p[i]) < 0.9 * t) all = 0
		}
		n++; a += all
	}
	{ np = NF; for (i = 1; i <= NF; i++) p[i] = $i }
	END { printf("all %.0f%%", n ? 100 * a / n : 0) }' "$1"
}
now() { date +%s.%N; }

# arm NAME RESULTS KLOOP-ARGS...: one run, cold compile cache; its line
# (@ARM@ in RESULTS and the arguments: NAME)
arm() {
	name=$1
	res=$(printf '%s' "$2" | sed "s|@ARM@|$name|g")
	shift 2
	for a in "$@"; do
		shift
		set -- "$@" "$(printf '%s' "$a" | sed "s|@ARM@|$name|g")"
	done
	export XDG_CACHE_HOME="$O/cache-$name"
	rm -rf "$XDG_CACHE_HOME" "$O/$name.jsonl"
	smi=""
	if [ $BE = cuda ]; then
		nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 250 \
			>"$O/util-$name.csv" 2>/dev/null &
		smi=$!
	fi
	cpu_sample "$O/cpu-$name.txt" &
	cs=$!
	c0=$(cpu_ticks)
	s=$(now)
	# kloop under a parent that reads the CPU time of its whole tree (each
	# process of it is waited for by its parent, so its time adds up)
	python3 -c 'import os, resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.2f\n" % (r.ru_utime + r.ru_stime))
sys.exit(rc)' "$O/rusage-$name.txt" "$K" "$@" >"$O/$name.json" 2>"$O/$name.err"
	rc=$?
	e=$(now)
	c1=$(cpu_ticks)
	[ -n "$smi" ] && kill "$smi" 2>/dev/null
	kill "$cs" 2>/dev/null
	wait "$cs" 2>/dev/null
	busy=$(echo "$c0 $c1" | awk '{t = $4 - $2; printf("%.0f%%", (t > 0) ? 100 * ($3 - $1) / t : 0)}')
	busy="$busy $(all_busy "$O/cpu-$name.txt") kloop $(echo "$(cat "$O/rusage-$name.txt") $s $e" |
		awk '{printf("%.2f", ($3 - $2) > 0 ? $1 / ($3 - $2) : 0)}')"
	wall=$(echo "$s $e" | awk '{print $2 - $1}')
	echo "== $name: exit $rc, $(printf '%.1f' "$wall") s" | tee -a "$O/log.txt"
	python3 bench/gpu/pool_stats.py "$name" "$res" "$wall" "$busy" "$O/util-$name.csv" \
		>>"$O/summary.tsv" 2>>"$O/detail.txt"
	rm -rf "$XDG_CACHE_HOME"
}

mpsflag() { [ "$1" = on ] && echo --mps || echo --no-mps; }
# SPARES' arms: "-" is kloop's default (no flag, no suffix)
spflag() { [ "$1" = - ] || echo "--spares $1"; }
spsuffix() { [ "$1" = - ] || echo "-sp$1"; }

# the "on" arms: a daemon of the benchmark's own, its logs kept in
# $OUT/mps-log (kloop uses a running daemon, as it would a system one, and
# --mps starts none then); after each arm, the server log's client lines
mps_up() {
	export CUDA_MPS_PIPE_DIRECTORY="$O/mps-pipe" CUDA_MPS_LOG_DIRECTORY="$O/mps-log"
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
	nvidia-cuda-mps-control -d
	i=0
	while [ ! -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
mps_down() {
	echo "   MPS server log: $(cat "$CUDA_MPS_LOG_DIRECTORY"/server.log 2>/dev/null | grep -ci client) lines naming a client" |
		tee -a "$O/log.txt"
	echo quit | nvidia-cuda-mps-control
	sleep 1
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
# an "on" arm whose candidates did not run (fewer than half correct) is run
# again with the runners in kloop's pid and IPC namespaces (mps.h)
mps_arm() {
	mps=$1
	shift
	if [ "$mps" = on ]; then
		if ! command -v nvidia-cuda-mps-control >/dev/null; then
			echo "== $1: skipped, nvidia-cuda-mps-control is not on PATH" | tee -a "$O/log.txt"
			return
		fi
		mps_up
	fi
	arm "$@"
	if [ "$mps" = on ]; then
		mps_down
		bad=$(awk -F'\t' -v a="$1" '$1 == a {print ($4 * 2 < $2)}' "$O/summary.tsv")
		if [ "$bad" = 1 ]; then
			n1=$1
			shift
			mps_up
			KLOOP_MPS_NAMESPACES=share arm "$n1-sharens" "$@"
			mps_down
		fi
	fi
}

python3 bench/gpu/pool_stats.py -header >"$O/summary.tsv"
: >"$O/detail.txt"
: >"$O/log.txt"
for phase in $PHASES; do
	case $phase in
	batch)
		make_set light "$O/light"
		make_set heavy "$O/heavy"
		for w in ${WEIGHTS:-light heavy}; do
			bud=""
			[ $w = heavy ] && bud="--budget $BUDGET_GPU"
			for mps in $MPS_ARMS; do
				for g in one all; do
					spec=$ONE
					[ $g = all ] && spec=$ALL
					for sp in ${SPARES:--}; do
						mps_arm $mps "batch-$w-$g-mps$mps$(spsuffix $sp)" "$O/@ARM@.json" \
							eval softmax "$O/$w"/k*.$EXT --backend $BE --workers "$spec" \
							$(mpsflag $mps) $(spflag $sp) $bud --json
					done
				done
			done
		done
		;;
	search)
		for mps in $MPS_ARMS; do
			for g in one all; do
				spec=$ONE
				[ $g = all ] && spec=$ALL
				for sp in ${SPARES:--}; do
					mps_arm $mps "search-$g-mps$mps$(spsuffix $sp)" "$O/@ARM@.jsonl" \
						search softmax --backend $BE --from "$O/from.$EXT" --rounds "$ROUNDS" \
						--suspect 100 --json --command "$CMD" --workers "$spec" $(mpsflag $mps) \
						$(spflag $sp) --session "$O/@ARM@.jsonl"
				done
			done
		done
		;;
	fidelity)
		# the same kernel (the seed) timed by REPS separate evals on one
		# GPU, without and with MPS: its medians' spread, the runner's start
		for mps in $MPS_ARMS; do
			if [ "$mps" = on ]; then
				command -v nvidia-cuda-mps-control >/dev/null || continue
				mps_up
			fi
			f="$O/fidelity-mps$mps.txt"
			: >"$f"
			for i in $(seq 1 "${REPS:-5}"); do
				XDG_CACHE_HOME="$O/cache-fidelity" "$K" eval softmax "$SEED" --backend $BE \
					--workers "$ONE" $(mpsflag $mps) --json 2>>"$O/fidelity-mps$mps.err" |
					python3 -c 'import json, sys
r = json.loads(sys.stdin.readline() or "{}")
print(r.get("time_ms"), (r.get("seconds") or {}).get("load"))' >>"$f"
			done
			[ "$mps" = on ] && mps_down
			python3 - "$f" "$mps" <<'PY' | tee -a "$O/log.txt"
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
t = sorted(float(a) for a, b in rows if a != "None")
ld = [float(b) for a, b in rows if b != "None"]
if t:
    m = st.median(t)
    print("== fidelity, MPS %s: the seed's medians over %d evals: %s ms; spread (max - min) / median %.2f%%; runner start median %.3f s"
          % (sys.argv[2], len(t), " ".join("%.4f" % x for x in t), 100 * (t[-1] - t[0]) / m, st.median(ld) if ld else -1))
else:
    print("== fidelity, MPS %s: no timing (see fidelity-mps%s.err)" % (sys.argv[2], sys.argv[2]))
PY
		done
		rm -rf "$O/cache-fidelity"
		;;
	esac
done
if [ $SMOKE = 1 ]; then
	"$K" eval softmax "$SEED" --backend host --mps >/dev/null 2>"$O/mps-host.err"
	echo "--mps on the host backend (refused, exit $?): $(cat "$O/mps-host.err")" | tee -a "$O/log.txt"
elif echo "$MPS_ARMS" | grep -q on; then
	# kloop's own daemon (none running): started, one kernel, stopped
	s=$(now)
	"$K" eval softmax "$O/light/k1.cu" --backend cuda --mps --json >"$O/mps-own.json" 2>"$O/mps-own.err"
	echo "== kloop --mps with no daemon running: exit $?, $(echo "$s $(now)" | awk '{printf "%.1f", $2 - $1}') s" \
		"(daemon start, one kernel, stop; left running: $(ls -d "${TMPDIR:-/tmp}"/kloop-mps-* 2>/dev/null | wc -l))" |
		tee -a "$O/log.txt"
fi
# the heavy setting is meant to be GPU-bound: say so where it was not
awk -F'\t' '$1 ~ /heavy/ && $17 + 0 < 50 {print "note: " $1 ": the GPU share is " $17 ", under half: raise HEAVY or BUDGET_GPU"}' \
	"$O/summary.tsv" | tee -a "$O/log.txt"
echo
column -t -s "$(printf '\t')" "$O/summary.tsv" 2>/dev/null || cat "$O/summary.tsv"
cat "$O/detail.txt"
