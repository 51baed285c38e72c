#!/bin/sh
# bench/gpu/nvcc_parts.sh - where an edit's device compile goes on this
# host (issue 40, item 2): the softmax CUDA seed built device-only for
# sm_90a as kloop builds an edit (`nvcc -fatbin`), R times, with nvcc's own
# --time per step (preprocessing, cicc, ptxas, fatbinary), its scratch in
# TMPDIR=/tmp and in /dev/shm; and the sandbox's start alone (bubblewrap as
# the compile's, `true` inside).  Needs nvcc, no GPU.
# Usage: sh bench/gpu/nvcc_parts.sh [R]   (R repetitions, default 5)
set -u
cd "$(dirname "$0")/../.."
R=${1:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(nvcc --version | tail -n 1); /tmp on $(df -T /tmp | awk 'NR == 2 {print $2}')"
flags="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Iinclude"
for tmp in /tmp /dev/shm; do
	i=0
	: >"$W/t.csv"
	while [ $i -lt "$R" ]; do
		s=$(date +%s%N)
		TMPDIR=$tmp nvcc $flags --time "$W/t.csv" -fatbin tasks/softmax/seed.cu -o "$W/x.fatbin" || exit 1
		echo "$(( ($(date +%s%N) - s) / 1000000 ))" >>"$W/wall.$i"
		i=$((i + 1))
	done
	python3 - "$W/t.csv" "$tmp" "$W" "$R" <<'PY'
import csv, glob, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))
by = {}
for r in rows:
    if len(r) >= 7 and r[0].strip() != "source file name":
        by.setdefault(r[1].strip(), []).append(float(r[6]))
walls = [int(open(f).read()) for f in glob.glob(sys.argv[3] + "/wall.*")]
print("TMPDIR=%s: nvcc -fatbin wall median %d ms (%s); steps, median ms: %s" % (
    sys.argv[2], statistics.median(walls), " ".join(map(str, sorted(walls))),
    ", ".join("%s %.1f" % (k, statistics.median(v)) for k, v in by.items())))
PY
	rm -f "$W"/wall.*
done
if command -v bwrap >/dev/null; then
	i=0
	: >"$W/bw"
	while [ $i -lt "$R" ]; do
		s=$(date +%s%N)
		bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --proc /proc \
			--dev /dev --tmpfs /tmp true
		echo "$(( ($(date +%s%N) - s) / 100000 ))" >>"$W/bw"
		i=$((i + 1))
	done
	echo "bubblewrap's start and end (--unshare-all, true inside), 0.1 ms: $(sort -n "$W/bw" | tr '\n' ' ')"
fi
