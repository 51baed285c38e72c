# extension.sh - the field's candidates as they are (issue 38) on the host
# backend: a PyTorch C++ extension and a KernelBench ModelNew module with CPU
# cpp_sources are correct candidates of the bundled softmax and of KernelBench
# problem files (a ModelNew passing its parameters too); an output written in
# place or copied (the verdict says which); what kloop refuses, each with its
# words (PyTorch work around forward's call, no ModelNew, an import, sources
# made by code, a name the ATen stand-in lacks, a TORCH_CHECK's message); an
# extension that computes the wrong thing is incorrect; `add` in the shell, and
# export --kernelbench of a ModelNew read back as the same candidate; a problem
# whose Model takes scalars from get_init_inputs() (an extension's number
# parameters and a ModelNew's self.X from __init__ take them).  The CUDA
# forms compile in test_torchext (nvcc, sm_90a); they run in extension_cuda.sh
# on a GPU.  The PyTorch problems skip with one line where python3 has no torch.
. tests/e2e/lib.sh
F=tests/fixtures/torchext
B="--backend host --budget 0.2 --trials 2"

# verdict NAME STATUS NEEDLE: candidate NAME of $T/sm.json has STATUS and a
# reason holding NEEDLE
verdict() {
	st=$(cand_field "$T/sm.json" "$1" status)
	why=$(cand_field "$T/sm.json" "$1" reason)
	if [ "$st" = "$2" ] && { [ -z "$3" ] || printf '%s' "$why" | grep -qF -- "$3"; }; then
		ok "$1: $2 ($why)"
	else
		fail "$1: expected $2 with '$3', got '$st': $why"
	fi
}

$KLOOP eval softmax $F/softmax.cpp $F/modelnew_cpu.py $F/copy.cpp $F/library.cpp $F/wrong.cpp \
	$F/check.cpp $F/gap.cpp $F/modelnew_ops.py $F/modelnew_none.py $F/modelnew_import.py \
	$F/modelnew_fstring.py $B --json >"$T/sm.json" 2>"$T/sm.err"
n0=$NFAIL
verdict softmax.cpp correct ""
check "... a PyTorch extension on kloop's ATen stand-in, its output written in place (nothing copied)" \
	test "$(cand_field "$T/sm.json" softmax.cpp candidate_form)" = \
	'{"form": "extension", "via": "stand-in", "language": "c++", "entry": "forward"}'
verdict modelnew_cpu.py correct ""
check "... a ModelNew whose forward calls softmax_cpu, its load_inline sources as C++" \
	test "$(cand_field "$T/sm.json" modelnew_cpu.py candidate_form)" = \
	'{"form": "modelnew", "via": "stand-in", "language": "c++", "entry": "softmax_cpu"}'
verdict copy.cpp correct ""
check "... its result copied into the output, and the verdict says so" \
	test "$(cand_field "$T/sm.json" copy.cpp candidate_form.copied)" = '["y"]'
verdict library.cpp correct ""
check "... TORCH_LIBRARY's impl writing its out parameter, kloop's own output" \
	test "$(cand_field "$T/sm.json" library.cpp candidate_form.entry)" = softmax_out
verdict wrong.cpp incorrect "output y differs from the reference"
verdict check.cpp incorrect "kl_run returned 1: check.cpp:7: softmax_3d wants a 3-D input, got 2 dimensions ["
# what the stand-in lacks: built against PyTorch's own headers (make deps
# installs Debian's libtorch-dev), or, where there are none, refused saying
# what it uses and why there was no such build
verdict gap.cpp correct ""
check "... built against PyTorch's own headers, the verdict says which and why ($(cand_field "$T/sm.json" gap.cpp candidate_form.pytorch))" \
	test "$(cand_field "$T/sm.json" gap.cpp candidate_form.via) $(cand_field "$T/sm.json" gap.cpp candidate_form.stand_in_lacks) $(cand_field "$T/sm.json" gap.cpp candidate_form.copied)" = 'pytorch torch::softmax ["y"]'
verdict modelnew_ops.py compile_error "modelnew_ops.py:13: forward does more than return mod.fn(...): \`x = torch.softmax(x, dim=-1)\`. kloop runs a ModelNew whose forward is one call of its load_inline module's function"
verdict modelnew_none.py compile_error "modelnew_none.py: defines no class ModelNew"
verdict modelnew_import.py compile_error "modelnew_import.py:4: imports numpy: a ModelNew kloop takes imports only torch"
verdict modelnew_fstring.py compile_error "modelnew_fstring.py:8: cuda_sources is cuda_src, an f-string: kloop reads plain string literals"
diag $n0 "$T/sm.err"

# PyTorch's own operators: a result that is not contiguous (copied by its
# strides), a TORCH_CHECK's words without PyTorch's backtrace, a ModelNew
# whose load_inline C++ calls at::softmax; without PyTorch's headers
# (KLOOP_LIBTORCH=off, or a directory that is no libtorch) the refusal says
# what the code uses and why there was no such build
$KLOOP eval softmax $F/strided.cpp $F/ops_check.cpp $F/modelnew_aten.py $B --json \
	>"$T/sm.json" 2>"$T/pt.err"
n0=$NFAIL
verdict strided.cpp correct ""
verdict ops_check.cpp incorrect "kl_run returned 1: softmax_3d wants a 3-D input, got 2 dimensions"
verdict modelnew_aten.py correct ""
check "... a ModelNew's C++ built against PyTorch's headers, its forward's call the entry point" \
	test "$(cand_field "$T/sm.json" modelnew_aten.py candidate_form.via)/$(cand_field "$T/sm.json" modelnew_aten.py candidate_form.entry)" = pytorch/softmax_aten
diag $n0 "$T/pt.err"
KLOOP_LIBTORCH=off $KLOOP eval softmax $F/gap.cpp $B --json >"$T/sm.json" 2>"$T/off.err"
verdict gap.cpp compile_error "gap.cpp uses torch::softmax, which kloop's ATen stand-in (include/kloop_torch.h) does not provide"
verdict gap.cpp compile_error "not built against PyTorch's own headers either: KLOOP_LIBTORCH=off"
KLOOP_LIBTORCH="$T/nowhere" $KLOOP eval softmax $F/gap.cpp $B --json >"$T/sm.json" 2>"$T/off.err"
verdict gap.cpp compile_error "KLOOP_LIBTORCH=$T/nowhere is no libtorch: it needs include/torch/csrc/api/include/torch/all.h and lib/libtorch.so"
$KLOOP eval softmax $F/gap.cpp $B >"$T/human" 2>&1
check "kloop eval says which PyTorch it was built against, and what the stand-in lacks ($(grep '^  form' "$T/human" | cut -c1-160))" grep -q \
	"^  form      a PyTorch extension (C++), entry point forward, built against PyTorch [0-9][^ ]* of .* (it uses torch::softmax, which kloop's ATen stand-in lacks); output y copied from the tensor it returned (the copy is in its time: PyTorch allocates what it returns" "$T/human"

# what a person reads: the form, and the copy
$KLOOP eval softmax $F/copy.cpp $B >"$T/human" 2>&1
check "kloop eval says the form and the copy ($(grep '^  form' "$T/human"))" grep -q \
	"^  form      a PyTorch extension (C++), entry point forward, on kloop's ATen stand-in; output y copied from the tensor it returned (the copy is in its time" "$T/human"
$KLOOP eval softmax tests/fixtures/torchext/softmax.cu $B >"$T/cu.out" 2>&1
rc=$?
check "a CUDA extension on the host backend is refused before anything runs (exit $rc)" sh -c \
	"test $rc -ne 0 && grep -q 'softmax.cu: a PyTorch extension with CUDA kernels needs the cuda backend (--backend cuda)' '$T/cu.out'"
cp $F/modelnew_cuda.py "$T/mc.py"
$KLOOP eval softmax "$T/mc.py" $B >"$T/mc.out" 2>&1
check "... so is a ModelNew with CUDA kernels" \
	grep -q "mc.py: a ModelNew with CUDA kernels needs the cuda backend (--backend cuda)" "$T/mc.out"

# the shell's add takes a ModelNew
printf 'add %s\nlist\n' $F/modelnew_cpu.py |
	$KLOOP shell softmax $B --session "$T/sh.jsonl" >"$T/sh.out" 2>"$T/sh.err"
check "the shell's add evaluates a ModelNew module ($(said "$T/sh.jsonl"))" sh -c \
	"grep -q 'candidate 2 (modelnew_cpu.py, human) added from $F/modelnew_cpu.py; evaluating' '$T/sh.out' && grep -Eq '^[ *?~!] +2 +- human +correct' '$T/sh.out'"

# export --kernelbench of a ModelNew: the module as it is, the problem after
# it, which kloop reads again as the same candidate
$KLOOP export "$T/sh.jsonl" 2 --kernelbench "$T/kb.py" >"$T/ex.out" 2>&1
check "export --kernelbench of a ModelNew writes the module, then the problem" python3 -c "
src = open('$T/kb.py').read(); mine = open('$F/modelnew_cpu.py').read()
assert mine in src and 'class Model(nn.Module)' in src and 'def get_init_inputs' in src
assert src.index('class ModelNew') < src.index('class Model(')"
$KLOOP eval softmax "$T/kb.py" $B --json >"$T/kb.json" 2>"$T/kb.err"
check "... which kloop evaluates again as the same candidate ($(said "$T/kb.json"))" sh -c \
	"test '$(cand_field "$T/kb.json" kb.py status)' = correct && test '$(cand_field "$T/kb.json" kb.py candidate_form.entry)' = softmax_cpu"

# the search's function crossover of the field's forms (no LLM: sweeps and
# crossover only), on a copy of softmax whose two seeds are the parents: the
# kernel seed and an extension are not crossed, said why; two extensions
# whose row helper's signature differs (and its call with it) give children
# that compile and are correct; a TORCH_LIBRARY block is not taken into a
# PYBIND11_MODULE extension, said why; two ModelNew modules are not crossed
# (their C++ is in Python strings)
# cross NAME SEED1 SEED2: one round on $T/NAME (a task with these seeds),
# its lines in $T/NAME.out, its journal $T/NAME.jsonl
cross() {
	cp -r tasks/softmax "$T/$1"
	cp "$2" "$3" "$T/$1/"
	python3 -c 'import json, os, sys
j = json.load(open(sys.argv[1])); j["name"] = "cross"
j["seeds"] = {"host": [os.path.basename(p) for p in sys.argv[2:]]}
json.dump(j, open(sys.argv[1], "w"))' "$T/$1/task.json" "$2" "$3"
	printf 'set sweep_only 1\nsearch step\n' |
		$KLOOP shell "$T/$1" $B --session "$T/$1.jsonl" >"$T/$1.out" 2>"$T/$1.err"
}
cross xk tasks/softmax/seed.c $F/rows.cpp
# (a crossover needs two parents: on a loaded machine a seed whose time
# was left unverified is none, and the round says so; the check then has
# nothing to judge, and says what the round drew)
if [ "$(grep -c '^  #[12] ' "$T/xk.out")" -lt 2 ]; then
	skip "crossover of the kernel seed and an extension: the round drew fewer than two parents ($(grep -A2 '^round 1 parents' "$T/xk.out" | tr '\n' ' ' | cut -c1-300))"
else
	check "crossover of the kernel seed and an extension: not made, said why ($(grep -m1 '^crossover' "$T/xk.out"); the round: $(grep -A2 '^round 1 parents' "$T/xk.out" | tr '\n' ' ' | cut -c1-300))" \
		grep -Eq '^crossover of #[12] and #[12]: not made: #[12] is (a PyTorch extension|a kernel \(kl_run\)), #[12] (a kernel \(kl_run\)|a PyTorch extension): function crossover takes parents of one form$' "$T/xk.out"
fi
cross xo $F/rows.cpp $F/rows_scaled.cpp
python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
xs = [e["id"] for e in ev if e["type"] == "candidate_added" and e["origin"] == "crossover"]
st = {e["candidate"]: e["result"].get("status") for e in ev if e["type"] == "eval_finished"}
print(len(xs), sum(st.get(i) == "correct" for i in xs), [(i, st.get(i)) for i in xs])' \
	"$T/xo.jsonl" >"$T/xo.py" 2>&1
# (as above: a round that drew fewer than two parents crosses nothing, and
# says what it drew; a fresh clone's full run on the loaded VM drew one)
if [ "$(grep -c '^  #[12] ' "$T/xo.out")" -lt 2 ]; then
	skip "rows.cpp x rows_scaled.cpp: the round drew fewer than two parents ($(grep -A2 '^round 1 parents' "$T/xo.out" | tr '\n' ' ' | cut -c1-300))"
else
	check "rows.cpp x rows_scaled.cpp: 2 crossover children, both correct ($(cat "$T/xo.py"); $(grep '^crossover' "$T/xo.out" | tr '\n' ' '))" \
		grep -q '^2 2 ' "$T/xo.py"
fi
cross xl $F/softmax.cpp $F/library.cpp
if [ "$(grep -c '^  #[12] ' "$T/xl.out")" -lt 2 ]; then
	skip "softmax.cpp x library.cpp: the round drew fewer than two parents ($(grep -A2 '^round 1 parents' "$T/xl.out" | tr '\n' ' ' | cut -c1-300))"
else
	check "softmax.cpp x library.cpp: a registration block of the other kind not taken, said why ($(grep -m1 'not taken' "$T/xl.out"); the round: $(grep -A2 '^round 1 parents' "$T/xl.out" | tr '\n' ' ' | cut -c1-300); $(grep -m2 '^crossover' "$T/xl.out" | tr '\n' ' '))" \
		grep -Eq '^crossover of #[12] and #[12]: (PYBIND11_MODULE|TORCH_LIBRARY|TORCH_LIBRARY_IMPL) from #[12] not taken: the spliced source would register with .* only: an extension registers its functions one way, once$' "$T/xl.out"
	check "... and the round's line counts it ($(grep '^crossover of #[12] and #[12]: [0-9]' "$T/xl.out"))" \
		grep -Eq '^crossover of #[12] and #[12]: [0-9] candidates?, [1-9] functions? not taken$' "$T/xl.out"
fi
sed 's/std::fmax(m, px\[r \* cols + c\])/(m > px[r * cols + c] ? m : px[r * cols + c])/' \
	$F/modelnew_cpu.py >"$T/mn2.py"
cross xm $F/modelnew_cpu.py "$T/mn2.py"
if [ "$(grep -c '^  #[12] ' "$T/xm.out")" -lt 2 ]; then
	skip "two ModelNew parents: the round drew fewer than two parents ($(grep -A2 '^round 1 parents' "$T/xm.out" | tr '\n' ' ' | cut -c1-300))"
else
	check "two ModelNew parents: not crossed, said why ($(grep -m1 '^crossover' "$T/xm.out"))" \
		grep -Eq '^crossover of #[12] and #[12]: not made: #[12] is a KernelBench ModelNew module, whose C\+\+ is in Python strings: function crossover takes C, C\+\+ and CUDA sources$' "$T/xm.out"
	check "... and nothing was made of them" sh -c "! grep -q '\"origin\": \"crossover\"' '$T/xm.jsonl'"
fi

if ! python3 -c 'import torch' >/dev/null 2>&1; then
	skip "extension: PyTorch is not installed for python3, the KernelBench problem files did not run"
	exit 0
fi
KB=tests/fixtures/torch/kb/23_Softmax.py
$KLOOP eval $KB $F/softmax.cpp $F/modelnew_cpu.py $F/copy.cpp $F/gap.cpp --shapes batch_size=16,dim=256 \
	$B --json >"$T/kb23.json" 2>"$T/kb23.err"
n0=$NFAIL
for c in softmax.cpp modelnew_cpu.py copy.cpp gap.cpp; do
	check "$c is correct on KernelBench's 23_Softmax ($(said "$T/kb23.json"))" \
		test "$(cand_field "$T/kb23.json" $c status)" = correct
done
check "... copy.cpp's copy into out0 said there too" test "$(cand_field "$T/kb23.json" copy.cpp candidate_form.copied)" = '["out0"]'
check "... gap.cpp built against PyTorch's own headers there too ($(cand_field "$T/kb23.json" gap.cpp candidate_form.pytorch))" \
	test "$(cand_field "$T/kb23.json" gap.cpp candidate_form.via)" = pytorch
diag $n0 "$T/kb23.err"
$KLOOP eval tests/fixtures/torch/layernorm.py $F/modelnew_layernorm.py $B --json >"$T/ln.json" 2>"$T/ln.err"
check "a ModelNew passing the problem's parameters (self.weight, self.bias) and a number is correct on layernorm.py ($(said "$T/ln.json"))" \
	test "$(json status "$T/ln.json")" = correct

# a problem whose Model takes scalars (get_init_inputs() gives dim = 1, scale
# = 0.5): an extension's number parameters take them in order, a ModelNew's
# self.dim and self.scale set from __init__'s parameters too
$KLOOP eval tests/fixtures/torch/scaled_softmax.py $F/scaled_softmax.cpp $F/modelnew_scaled.py $B --json \
	>"$T/sc.json" 2>"$T/sc.err"
n0=$NFAIL
check "an extension's scalar parameters take get_init_inputs()'s dim and scale: correct ($(said "$T/sc.json"))" \
	test "$(cand_field "$T/sc.json" scaled_softmax.cpp status)" = correct
check "... and a ModelNew's self.dim and self.scale set from __init__'s parameters" \
	test "$(cand_field "$T/sc.json" modelnew_scaled.py status)" = correct
diag $n0 "$T/sc.err"

# related inputs (CUDA-L2's b and b_col_major): get_inputs() gives a and its
# transpose, the candidate (CUDA-L2's form: no module, the output a
# parameter) reads the transpose; varied trials and checking sets vary what
# get_inputs() draws, so the transpose stays a's (issue 37: varying each
# input apart called this honest kernel incorrect)
$KLOOP eval tests/fixtures/torch/transposed.py $F/transposed.cpp --backend host --budget 0.2 \
	--trials 6 --json >"$T/tr.json" 2>"$T/tr.err"
n0=$NFAIL
check "a bare extension reading an input's transpose is correct in varied sets too ($(said "$T/tr.json"))" \
	test "$(json status "$T/tr.json")" = correct
check "... its entry point the file's one function of tensors, its module kloop's" \
	grep -q '"entry": *"twice_from_transpose"' "$T/tr.json"
diag $n0 "$T/tr.err"
# exported for KernelBench: load_inline writes its module (functions=), and
# ModelNew allocates the output it writes; read back as the same candidate
$KLOOP eval tests/fixtures/torch/transposed.py $F/transposed.cpp --backend host --budget 0.2 \
	--trials 2 --session "$T/tr.jsonl" >/dev/null 2>&1
$KLOOP export "$T/tr.jsonl" 1 --kernelbench "$T/trkb.py" >/dev/null 2>"$T/trkb.err"
check "export --kernelbench of a bare extension: load_inline names its function, ModelNew makes its output ($(grep -m1 'load_inline(name' "$T/trkb.py" | cut -c1-200)$(head -c 200 "$T/trkb.err"))" \
	sh -c "grep -q 'functions=\[\"twice_from_transpose\"\]' '$T/trkb.py' && grep -q 'n_out = _KLOOP_PARAMS.count' '$T/trkb.py'"
$KLOOP import "$T/trkb.py" --problem tests/fixtures/torch/transposed.py --backend host --budget 0.2 \
	--trials 2 --session "$T/trkb.jsonl" --json >"$T/trkb.json" 2>>"$T/trkb.err"
check "... which kloop import reads back as the same candidate, correct ($(head -c 300 "$T/trkb.json"))" \
	python3 -c "
import json, sys
c = json.loads(open(sys.argv[1]).readline())['candidate']
assert c['name'] == 'transposed.cpp' and c['status'] == 'correct', c" "$T/trkb.json"
