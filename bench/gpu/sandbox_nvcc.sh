#!/bin/sh
# bench/gpu/sandbox_nvcc.sh - where the compile sandbox's time goes (issue
# 40, item 2): on the H200's host an edit's device compile took 0.464 s
# bare and 0.524 s in kloop's bubblewrap sandbox while the sandbox's start
# and end alone were 5-6 ms (nineteenth session).  The softmax CUDA seed
# built device-only for sm_90a as kloop builds an edit (`nvcc -fatbin`),
# R rounds, each round every variant once, the order turned by one each
# round (so that a host that slows down slows them all, and no variant
# always follows the same one), the median and the range of each in ms:
#   bare        nvcc as is
#   kloop       bubblewrap as compile_sandboxed() writes it (compile_argv.c)
#   share-net   the same with the network namespace shared
#   host-tmp    the same with a directory of the host's as /tmp, no tmpfs
#   keep-env    the same without --clearenv
#   root        the same binding / read-only whole, not the system's dirs
# Needs nvcc and bwrap, no GPU.  Usage: sh bench/gpu/sandbox_nvcc.sh [R]
set -u
cd "$(dirname "$0")/../.."
R=${1:-7}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/b" "$W/tmp"
cp tasks/softmax/seed.cu "$W/b/"
INC=$(pwd)/include
NVCC=$(command -v nvcc)
CUDA=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(nvcc --version | tail -n 1); $(bwrap --version); kernel $(uname -r)"
flags="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fPIC --cudart shared -Xptxas -v -I$INC"
sys() {
	for d in /usr /lib /lib32 /lib64 /libx32 /bin /sbin /etc/ld.so.cache /etc/ld.so.conf \
		/etc/ld.so.conf.d /etc/alternatives /opt "$CUDA"; do
		printf ' --ro-bind-try %s %s' "$d" "$d"
	done
}
SYS=$(sys)
box() { # $1: extra bwrap options, $2: the /tmp option, $3: the env option
	# shellcheck disable=SC2086
	bwrap --unshare-all $1 --die-with-parent --new-session $3 --setenv PATH "$PATH" \
		${LD_LIBRARY_PATH:+--setenv LD_LIBRARY_PATH "$LD_LIBRARY_PATH"} --setenv HOME /tmp \
		--setenv TMPDIR /tmp $SYS --proc /proc --dev /dev $2 --ro-bind "$INC" "$INC" \
		--bind "$W/b" "$W/b" --chdir "$W/b" -- "$NVCC" $flags -fatbin seed.cu -o x.fatbin \
		>/dev/null 2>&1
}
run() {
	case $1 in
	bare) (cd "$W/b" && TMPDIR=$W/tmp "$NVCC" $flags -fatbin seed.cu -o x.fatbin >/dev/null 2>&1) ;;
	kloop) box "" "--tmpfs /tmp" --clearenv ;;
	share-net) box --share-net "--tmpfs /tmp" --clearenv ;;
	host-tmp) box "" "--bind $W/tmp /tmp" --clearenv ;;
	keep-env) box "" "--tmpfs /tmp" "" ;;
	root)
		# shellcheck disable=SC2086
		bwrap --unshare-all --die-with-parent --new-session --clearenv --setenv PATH "$PATH" \
			${LD_LIBRARY_PATH:+--setenv LD_LIBRARY_PATH "$LD_LIBRARY_PATH"} \
			--setenv HOME /tmp --setenv TMPDIR /tmp --ro-bind / / --proc /proc --dev /dev \
			--tmpfs /tmp --bind "$W/b" "$W/b" --chdir "$W/b" -- "$NVCC" $flags -fatbin seed.cu \
			-o x.fatbin >/dev/null 2>&1
		;;
	esac
}
V="bare kloop share-net host-tmp keep-env root"
for v in $V; do
	run "$v" || { echo "$v: the build failed"; exit 1; }
done
i=0
while [ $i -lt "$R" ]; do
	# shellcheck disable=SC2086
	set -- $V
	k=0
	while [ $k -lt $((i % 6)) ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k + 1))
	done
	for v in "$@"; do
		s=$(date +%s%N)
		run "$v"
		echo "$(( ($(date +%s%N) - s) / 100000 ))" >>"$W/$v"
	done
	i=$((i + 1))
done
for v in $V; do
	sort -n "$W/$v" | awk -v v="$v" '{a[NR] = $1} END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%-10s median %6.1f ms (%.1f-%.1f, %d rounds)\n", v, m / 10, a[1] / 10, a[NR] / 10, NR }'
done
