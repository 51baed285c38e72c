#!/bin/sh
# bench/gpu/cupti_probe.sh - why CUPTI inflates kloop's events (issue 39).
# kloop's microsecond timing by CUPTI (KLOOP_CUPTI=1: activity records of
# the run's kernels) made the events around the same kernels read ~6-10x
# longer: a 2.8 us GELU's e0-e1 went from 4.2 us to ~27 us, and an empty
# launch's grew too.  bench/gpu/cupti_probe.cu repeats kloop's timed run
# (the L2 flush kernel, e0, the kernel, e1, a synchronize, e2) on one stream
# with CUPTI off (V0) and on in several ways (V1 kloop's: a forced flush
# before e0 and after the run; V2 none before; V3 none in the loop; V4
# KIND_KERNEL, which serializes; V5 the settings that might cost less; V6 the
# flush before e0 moved before the L2 flush kernel; V7 latency timestamps,
# where the kernel waited; V8 default flushes), for an empty kernel, GELU over
# 1M and 8M floats, and bench/gpu/usec's softmax and GELU (16 x 16384), one
# process a variant.  A row: the events' median, p10, p90, CUPTI's own
# duration of the kernel, event minus CUPTI, the host's time in the launch
# and in the flush before e0, the GPU's gap from the flush kernel's end to
# the kernel's start, the flush kernel's duration (us); '#' lines under a
# variant: launches over 50 us, CUPTI's p10/p90, records late for their
# window, and V7's latencies.  Where ncu is found, Nsight Compute's
# gpu__time_duration of the same kernels (V0, caches flushed) closes the
# table: CUPTI's durations against ncu's.  Under a minute on an H200.
# Env: OUT (build and logs, /tmp/cupti_probe), CUDA_HOME (/usr/local/cuda),
# PROBE_RUNS (300), PROBE_FLUSH (read: kloop's flush kernel; write),
# PROBE_VARIANTS ("0 1 2 3 4 5 6 7 8"), PROBE_CUPTI (libcupti's path),
# PROBE_V5 (V5's settings, "lat zero pre hw"), PROBE_NCU (0: no ncu).  Every
# timed run's numbers land in $OUT/V<v>.tsv.
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "skip: no GPU"
	exit 0
fi
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
O=${OUT:-/tmp/cupti_probe}
mkdir -p "$O"
B=$O/cupti_probe
N=${PROBE_RUNS:-300}
F=${PROBE_FLUSH:-read}
# CUDA 13 keeps cupti.h in $CUDA/include and libcupti in $CUDA/lib64; older
# toolkits under extras/CUPTI
INC=
[ -d "$CUDA/extras/CUPTI/include" ] && INC="-I$CUDA/extras/CUPTI/include"
if ! "$NVCC" -O2 -gencode=arch=compute_90a,code=sm_90a ${INC:+"$INC"} -o "$B" \
	bench/gpu/cupti_probe.cu -ldl >"$O/nvcc.log" 2>&1; then
	echo "cupti_probe.sh: the build failed:"
	cat "$O/nvcc.log"
	exit 1
fi
PROBE_CUPTI=${PROBE_CUPTI:-}
if [ -z "$PROBE_CUPTI" ]; then
	for l in "$CUDA/lib64/libcupti.so.13" "$CUDA/extras/CUPTI/lib64/libcupti.so.13" \
		"$CUDA/targets/x86_64-linux/lib/libcupti.so.13"; do
		if [ -e "$l" ]; then
			PROBE_CUPTI=$l
			break
		fi
	done
fi
# every timed run's numbers, one file a variant
PROBE_DUMP=$O
export PROBE_CUPTI PROBE_DUMP
T=
command -v timeout >/dev/null 2>&1 && T="timeout 50"

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u '+%F %H:%M UTC'); $N runs a kernel, $F flush"
"$B" header
rc=0
for v in ${PROBE_VARIANTS:-0 1 2 3 4 5 6 7 8}; do
	$T "$B" "$v" "$N" "$F" 2>"$O/V$v.err"
	r=$?
	if [ $r -ne 0 ]; then
		echo "V$v failed (exit $r): $(tail -n 3 "$O/V$v.err")"
		rc=1
	fi
done

# Nsight Compute's duration of the same kernels, outside CUPTI's activity API
if [ "${PROBE_NCU:-1}" != 0 ] && command -v ncu >/dev/null 2>&1; then
	$T ncu --metrics gpu__time_duration.sum --csv --cache-control all --clock-control none \
		-k regex:'^probe_t_' "$B" 0 20 "$F" >"$O/ncu.csv" 2>"$O/ncu.err"
	echo "# ncu gpu__time_duration (V0, 30 launches each, caches flushed; median us):"
	awk -F'","' -f bench/gpu/ncu_times.awk "$O/ncu.csv" | awk '{ print $1, $3 }' | sort -k1,1 -k2,2n | awk '
		{ v[$1, ++n[$1]] = $2 }
		END {
			for (k in n)
				printf "ncu %-16s %5d %8.2f\n", k, n[k], v[k, int((n[k] + 1) / 2)]
		}' | sort
	[ -s "$O/ncu.csv" ] || echo "ncu gave nothing: $(tail -n 3 "$O/ncu.err")"
fi
exit $rc
