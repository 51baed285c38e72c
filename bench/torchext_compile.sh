#!/bin/sh
# bench/torchext_compile.sh - issue 38's target: a PyTorch extension compiles
# in at most 2x a plain candidate's time.  Runs the compile commands kloop
# runs, each R times (default 5), interleaved, and prints per source the
# least CPU time (user + system of the compiler and all its children: on a
# loaded machine the fairest figure) and the median wall time, then the
# ratios.  Host: the commands `kloop eval` reports (compile.command), the
# extension's with and without the precompiled stand-in (compile_pch.c).
# CUDA (where nvcc is): nvcc for sm_90a as compile.c builds it, the softmax
# seed's kernel as a kl_run file and as an extension.  PyTorch's own headers
# (where kloop finds them: Debian's libtorch-dev, --python's torch): an
# extension that calls torch::softmax, which the stand-in lacks, built the
# way kloop builds it then (kloop_torch_real.h; RR times, default 3: about
# 13 s each here).  Figures go to bench/RESULTS.md by hand.
set -u
cd "$(dirname "$0")/.."
R=${R:-5}
RR=${RR:-3}
T=$(mktemp -d "${TMPDIR:-/tmp}/kloop-bench-ext.XXXXXX")
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
KL=./bin/kloop
B="--backend host --budget 0.05 --trials 1 --json"
INC=$(cd include && pwd)

# the compile command kloop ran for FILE on the softmax task (its first word
# the compiler, the source a name in the build directory)
command_of() {
	$KL eval softmax "$1" $B 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        print(json.loads(line)["compile"]["command"]); break
    except (ValueError, KeyError):
        pass'
}

# time NAME DIR CMD...: one run of CMD in DIR, "NAME cpu wall" appended to $T/times
one() {
	name=$1 dir=$2
	shift 2
	(cd "$dir" && rm -f out.so && /usr/bin/time -f "$name %U %S %e" "$@" >/dev/null 2>"$T/err.$name") || true
	tail -n 1 "$T/err.$name" >>"$T/times"
	test -f "$dir/out.so" || { echo "bench: $name did not compile:" >&2; tail -5 "$T/err.$name" >&2; }
}

mkdir -p "$T/c" "$T/e" "$T/x" "$T/p" "$T/cu" "$T/cx" "$T/a"
cp tasks/softmax/seed.c "$T/c/"
# the same row softmax as a plain C++ candidate and as an extension: one
# body, the same loops
LOOPS='	for (int64_t r = 0; r < rows; r++) {
		const float *xr = px + r * cols;
		float *yr = py + r * cols, m = xr[0], s = 0.0f;
		for (int64_t c = 1; c < cols; c++)
			m = xr[c] > m ? xr[c] : m;
		for (int64_t c = 0; c < cols; c++)
			s += (yr[c] = std::exp(xr[c] - m));
		const float inv = 1.0f / s;
		for (int64_t c = 0; c < cols; c++)
			yr[c] *= inv;
	}'
cat >"$T/p/plain_softmax.cpp" <<SRC
#include <cmath>
#include "kloop.h"
extern "C" int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)stream;
	if (n_in != 1 || n_out != 1 || in[0].dtype != KL_F32)
		return 1;
	const float *px = (const float *)in[0].data;
	float *py = (float *)out[0].data;
	const int64_t cols = in[0].shape[in[0].ndim - 1], rows = kl_numel(&in[0]) / cols;
$LOOPS
	return 0;
}
SRC
cat >"$T/e/softmax_ext.cpp" <<SRC
#include <torch/extension.h>
#include <cmath>
torch::Tensor forward(torch::Tensor x)
{
	TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
	auto y = torch::empty_like(x);
	const float *px = x.data_ptr<float>();
	float *py = y.data_ptr<float>();
	const int64_t cols = x.size(-1), rows = x.numel() / cols;
$LOOPS
	return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
SRC
cp "$T/e/softmax_ext.cpp" "$T/x/"
cat >"$T/a/softmax_aten.cpp" <<'SRC'
#include <torch/extension.h>
torch::Tensor forward(torch::Tensor x) { return torch::softmax(x, -1); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
SRC
C_CMD=$(command_of tasks/softmax/seed.c)
P_CMD=$(command_of "$T/p/plain_softmax.cpp")
command_of "$T/e/softmax_ext.cpp" >/dev/null # its first compile starts the stand-in's .gch
sleep 5
E_CMD=$(command_of "$T/e/softmax_ext.cpp")
# the same without the precompiled stand-in: its -I DIR -include kloop_torch.h left out
X_CMD=$(printf '%s\n' "$E_CMD" | sed 's| -I[^ ]*/pch/[^ ]* -include kloop_torch.h||')
# the build against PyTorch's own headers (the stand-in's compile fails first)
A_CMD=$(command_of "$T/a/softmax_aten.cpp")
case "$A_CMD" in *kloop_torch_real.h*) ;; *) A_CMD="" ;; esac
echo "# host commands (kloop's):"
printf '#   %s\n' "$C_CMD" "$P_CMD" "$E_CMD" "${A_CMD:-(no PyTorch headers found: no build against them)}"
ls "$XDG_CACHE_HOME"/kloop/pch/*/kloop_torch.h.gch >/dev/null 2>&1 &&
	echo "# the precompiled stand-in: $(du -h "$XDG_CACHE_HOME"/kloop/pch/*/kloop_torch.h.gch | cut -f1)"

NVCC=${KLOOP_NVCC:-nvcc}
CUDA=0
if command -v "$NVCC" >/dev/null 2>&1; then
	CUDA=1
	cp tasks/softmax/seed.cu "$T/cu/"
	# the seed's kernel as an extension (its kl_run replaced by forward)
	{
		sed -e '/^extern "C" int kl_run/,$d' -e 's|#include "kloop.h"|#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>|' tasks/softmax/seed.cu
		cat <<'EOF'
torch::Tensor forward(torch::Tensor x)
{
	auto y = torch::empty_like(x);
	int cols = (int)x.size(-1), rows = (int)(x.numel() / cols);
	softmax_rows<<<rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
	    x.data_ptr<float>(), y.data_ptr<float>(), cols);
	C10_CUDA_KERNEL_LAUNCH_CHECK();
	return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
EOF
	} >"$T/cx/seed_ext.cu"
	NV_TORCH="-D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr"
	NV="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC --cudart shared -Xptxas -v -Xlinker --build-id=none -Xlinker --discard-all -I$INC"
fi

: >"$T/times"
for r in $(seq "$R"); do
	# shellcheck disable=SC2086
	one plain_c "$T/c" $C_CMD
	# shellcheck disable=SC2086
	one plain_cpp "$T/p" $P_CMD
	# shellcheck disable=SC2086
	one ext_cpp "$T/e" $E_CMD
	# shellcheck disable=SC2086
	one ext_cpp_no_pch "$T/x" $X_CMD
	if [ $CUDA = 1 ]; then
		# shellcheck disable=SC2086
		one plain_cu "$T/cu" "$NVCC" $NV -o out.so seed.cu
		# shellcheck disable=SC2086
		one ext_cu "$T/cx" "$NVCC" $NV -I"$INC/kloop_torch" $NV_TORCH -o out.so seed_ext.cu
	fi
	if [ -n "$A_CMD" ] && [ "$r" -le "$RR" ]; then
		# shellcheck disable=SC2086
		one ext_pytorch "$T/a" $A_CMD
	fi
done
python3 - "$T/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) == 4:
        rows.setdefault(w[0], []).append((float(w[1]) + float(w[2]), float(w[3])))
cpu = {k: min(c for c, _ in v) for k, v in rows.items()}
wall = {k: statistics.median(x for _, x in v) for k, v in rows.items()}
print("| source | runs | least CPU s | median wall s |")
print("| --- | ---: | ---: | ---: |")
for k in ["plain_c", "plain_cpp", "ext_cpp", "ext_cpp_no_pch", "plain_cu", "ext_cu", "ext_pytorch"]:
    if k in rows:
        print("| %s | %d | %.2f | %.2f |" % (k, len(rows[k]), cpu[k], wall[k]))
def ratio(a, b):
    if a in cpu and b in cpu:
        print("%s / %s: CPU %.2fx, wall %.2fx" % (a, b, cpu[a] / cpu[b], wall[a] / wall[b]))
ratio("ext_cpp", "plain_cpp")
ratio("ext_cpp_no_pch", "plain_cpp")
ratio("ext_cpp", "plain_c")
ratio("ext_cu", "plain_cu")
ratio("ext_pytorch", "ext_cpp")
PY
