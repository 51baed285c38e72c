#!/bin/sh
# bench/gpu/rangeprof.sh - CUPTI's Range Profiler against Nsight Compute
# (issue 39: kernels of 3 us and more timed within 3% of ncu's
# gpu__time_duration.sum, --cache-control all --clock-control none).  CUPTI's
# activity records read ~1 us short of ncu for small kernels on an H200 and
# events around one launch 1.4-1.9 us long; the Range Profiler collects ncu's
# own metric, gpu__time_duration.sum, per kernel (auto ranges, kernel
# replay).  bench/gpu/rangeprof.cu times the same six kernels (an empty one,
# bench/gpu/usec's GELU, softmax and sum, GELU over 1M and 8M floats) on
# kloop's loop (the L2 flush, e0, the kernel, e1, a synchronize) by events,
# by activity records and by the Range Profiler, one process each, then
# Nsight Compute reads the same loop run bare ('plain').  Each method's rows
# (median, p10, p90, the Range Profiler's passes, the host's wall time a run
# with the method's own work, a run's wall time, the events under the
# method, the SM clock) come first, then one table: kernel, the three
# methods' medians and ncu's (us), each one's difference from ncu, and the
# host's us a run under events and under the Range Profiler (its cost); a
# line for every kernel of 3 us or more whose Range Profiler figure is over
# 3% from ncu's.  Under a minute on an H200 (ncu the most of it).
# Env: OUT (build and logs, /tmp/rangeprof), CUDA_HOME (/usr/local/cuda),
# RP_RUNS (200 timed runs a kernel), RP_METHODS ("events activity range"),
# RP_NCU (0: no ncu), RP_NCU_RUNS (30), RP_BATCH and RP_REINIT (the Range
# Profiler's batches: rangeprof.cu).  Every timed run's numbers land in
# $OUT/<method>.tsv.
set -u
cd "$(dirname "$0")/../.." || exit 1
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
O=${OUT:-/tmp/rangeprof}
mkdir -p "$O"
B=$O/rangeprof
# CUDA 13 keeps the CUPTI headers in $CUDA/include and libcupti and
# libnvperf_{host,target} (which CUPTI loads itself) in $CUDA/lib64; the
# rpath (an RPATH, not a RUNPATH, so that CUPTI's own loads search it too)
# finds them; LD_LIBRARY_PATH too for the methods' runs, not for ncu's (which
# loads its own)
if ! "$NVCC" -O2 -gencode=arch=compute_90a,code=sm_90a -I"$CUDA/include" -o "$B" \
	bench/gpu/rangeprof.cu -L"$CUDA/lib64" -lcupti -lnvperf_host -lnvperf_target -ldl \
	-Xlinker --disable-new-dtags -Xlinker -rpath -Xlinker "$CUDA/lib64" \
	>"$O/nvcc.log" 2>&1; then
	echo "rangeprof.sh: the build failed:"
	cat "$O/nvcc.log"
	exit 1
fi
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "skip: no GPU"
	exit 0
fi
L=$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
RP_DUMP=$O
export RP_DUMP
N=${RP_RUNS:-200}
# a hung method or ncu stopped: 45 s a method, 90 s for ncu
T=
T2=
command -v timeout >/dev/null 2>&1 && T="timeout 45" && T2="timeout 90"

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u '+%F %H:%M UTC'); $N runs a kernel"
"$B" header
rm -f "$O/events.txt" "$O/activity.txt" "$O/range.txt" "$O/ncu.txt"
rc=0
for m in ${RP_METHODS:-events activity range}; do
	LD_LIBRARY_PATH=$L $T "$B" "$m" "$N" >"$O/$m.txt" 2>"$O/$m.err"
	r=$?
	cat "$O/$m.txt"
	if [ $r -ne 0 ]; then
		echo "$m failed (exit $r): $(tail -n 3 "$O/$m.err")"
		rc=1
	fi
done

# Nsight Compute's duration of the same kernels, the loop run bare
NCU=$(command -v ncu 2>/dev/null || true)
[ -z "$NCU" ] && [ -x "$CUDA/bin/ncu" ] && NCU=$CUDA/bin/ncu
if [ "${RP_NCU:-1}" != 0 ] && [ -n "$NCU" ]; then
	$T2 "$NCU" --metrics gpu__time_duration.sum --csv --cache-control all \
		--clock-control none -k regex:'^rp_' "$B" plain "${RP_NCU_RUNS:-30}" \
		>"$O/ncu.csv" 2>"$O/ncu.err"
	r=$?
	awk -F'","' -f bench/gpu/ncu_times.awk "$O/ncu.csv" >"$O/ncu.all"
	# each kernel's median, its first launch (a warm-up) left out where it
	# has others
	awk 'NR == FNR { if ($2 > c[$1]) c[$1] = $2; next }
		$2 > 1 || c[$1] == 1 { print $1, $3 }' "$O/ncu.all" "$O/ncu.all" |
		sort -k1,1 -k2,2g | awk '
		{ v[$1, ++n[$1]] = $2 }
		END {
			for (k in n)
				printf "ncu %s %d %.3f\n", k, n[k], v[k, int((n[k] + 1) / 2)]
		}' >"$O/ncu.txt"
	if [ ! -s "$O/ncu.txt" ]; then
		echo "ncu gave nothing (exit $r): $(tail -n 3 "$O/ncu.err")"
		rc=1
	fi
elif [ "${RP_NCU:-1}" != 0 ]; then
	echo "# no ncu found (PATH, $CUDA/bin): no ncu column"
fi

# one table: each method's median against ncu's
F=
for f in events activity range ncu; do
	[ -s "$O/$f.txt" ] && F="$F $O/$f.txt"
done
echo
[ -n "$F" ] && awk '
	FNR == 1 {
		f = FILENAME
		sub(/.*\//, "", f)
		sub(/\.txt$/, "", f)
	}
	/^#/ || NF < 4 { next }
	f == "ncu" { ncu[$2] = $4; nn++; next }
	$1 == f && $4 != "-" {
		if (!(($2) in seen)) {
			seen[$2] = 1
			order[++nk] = $2
		}
		v[f, $2] = $4
		h[f, $2] = $8
	}
	function pct(x, k) {
		return x != "" && ncu[k] != "" && ncu[k] > 0 ? sprintf("%+.1f%%", (x / ncu[k] - 1) * 100) : "-"
	}
	function val(x) {
		return x != "" ? sprintf("%.2f", x) : "-"
	}
	END {
		printf "%-16s %9s %9s %9s %9s %8s %8s %8s %9s %9s\n", "kernel", "events", "activity",
		    "range", "ncu", "ev%", "act%", "range%", "ev_host", "rp_host"
		for (i = 1; i <= nk; i++) {
			k = order[i]
			printf "%-16s %9s %9s %9s %9s %8s %8s %8s %9s %9s\n", k, val(v["events", k]),
			    val(v["activity", k]), val(v["range", k]), val(ncu[k]),
			    pct(v["events", k], k), pct(v["activity", k], k), pct(v["range", k], k),
			    h["events", k] != "" ? h["events", k] : "-",
			    h["range", k] != "" ? h["range", k] : "-"
		}
		bad = 0
		for (i = 1; i <= nk; i++) {
			k = order[i]
			if (ncu[k] == "" || ncu[k] < 3)
				continue
			if (v["range", k] == "") {
				printf "%s (ncu %.2f us): no Range Profiler figure\n", k, ncu[k]
				bad++
			} else if ((d = (v["range", k] / ncu[k] - 1) * 100) > 3 || d < -3) {
				printf "%s (ncu %.2f us): the Range Profiler reads %.2f us, %+.1f%% from ncu: over 3%%\n",
				    k, ncu[k], v["range", k], d
				bad++
			}
		}
		if (nk && !bad && nn)
			print "every kernel of 3 us or more: the Range Profiler within 3% of ncu"
	}' $F
echo "(us; medians; ev_host, rp_host: the host's wall time a run under events and under the Range Profiler; logs in $O)"
exit $rc
