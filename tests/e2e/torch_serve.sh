# torch_serve.sh - KernelBench problem files evaluated through the PyTorch
# helper serving the worker (torchref.py --serve): the reference data never
# touches the disk (only the baselines' timing is cached), in[] order with
# parameters, a 0-dim output, --shapes and --size scaling a problem's
# constants, and one-line errors.  On the host backend (torch on the CPU
# writing into shared memory); skips when python3 has no PyTorch.
. tests/e2e/lib.sh
if ! python3 -c 'import torch' >/dev/null 2>&1; then
	skip "torch_serve: PyTorch is not installed for python3"
	exit 0
fi
export PYTHONDONTWRITEBYTECODE=1
FX=tests/fixtures/torch
B="--backend host --budget 0.2 --trials 3"

$KLOOP eval $FX/softmax.py tasks/softmax/seed.c $B --json >"$T/sm.json" 2>"$T/err"
check "a softmax problem file: the seed is correct against PyTorch" test "$(json status "$T/sm.json")" = correct
check "the baseline is PyTorch eager" test "$(json baseline "$T/sm.json")" = "PyTorch eager (reference.py)"
check "no reference data was written to disk (only the baselines' timing is cached, and torch.compile's own cache)" \
	sh -c "test -z \"\$(find '$XDG_CACHE_HOME' -type f ! -name '*.timing.json' ! -path '*/so/*' ! -path '*/torch/inductor/*')\""
check "the result says how many sets PyTorch made and how long it took" python3 -c "
import json; d=json.load(open('$T/sm.json'))['reference_data']; assert d['trials']==3 and d['seconds']>0, d"
check "the baselines' timing is cached" sh -c "ls '$XDG_CACHE_HOME'/kloop/torch/*.timing.json >/dev/null"
$KLOOP eval $FX/softmax.py tests/fixtures/host/zeros.c $B --json >"$T/z.json" 2>"$T/err"
check "an all-zero softmax is incorrect" test "$(json status "$T/z.json")" = incorrect

$KLOOP eval $FX/layernorm.py tasks/layernorm/seed.c $B --json >"$T/ln.json" 2>"$T/err"
check "layernorm with parameters: in[] = x, weight, bias and the seed is correct" \
	test "$(json status "$T/ln.json")" = correct

$KLOOP eval $FX/sum_scalar.py $FX/sum_scalar.c $B --json >"$T/sc.json" 2>"$T/err"
check "a 0-dim output reaches kl_run as ndim 0 with one element" test "$(json status "$T/sc.json")" = correct

$KLOOP eval $FX/softmax.py tasks/softmax/seed.c $B --shapes batch_size=5,dim=300 --json >"$T/sh.json" 2>"$T/err"
check "--shapes sets a problem file's constants (batch_size=5, dim=300)" test "$(json status "$T/sh.json")" = correct
$KLOOP tasks $FX/softmax.py --shapes batch_size=5,dim=300 >"$T/tasks.txt" 2>&1
check "tasks PROBLEM.py --shapes shows the new shapes" grep -Eq "in\[0\] +x +f32 +\[5, 300\]" "$T/tasks.txt"
$KLOOP tasks $FX/softmax.py --size 4 >"$T/tasks4.txt" 2>&1
check "--size 4 scales dim 64 to 256 (batch_size 16 is below 32 and stays)" \
	grep -Eq "in\[0\] +x +f32 +\[16, 256\]" "$T/tasks4.txt"
check "... and says which constants it changed" grep -q "dim 64 -> 256" "$T/tasks4.txt"

# the compute type: the dtypes that reach its products, traced (issue 36)
$KLOOP tasks $FX/half_inside.py >"$T/half.txt" 2>&1
if grep -q "not implemented for 'Half'" "$T/half.txt"; then
	skip "a problem casting its f32 inputs to f16 before its product: this PyTorch has no f16 product on the CPU ($(grep -o "RuntimeError.*" "$T/half.txt" | head -1))"
else
	check "a problem casting its f32 inputs to f16 before its product computes in fp16 ($(grep compute "$T/half.txt"))" \
		grep -Eq "^  compute +fp16 " "$T/half.txt"
fi
check "... a softmax has no product: no compute type said" sh -c "! grep -q '^  compute' '$T/tasks.txt'"

$KLOOP eval $FX/softmax.py tasks/softmax/seed.c $B --shapes nope=3 >"$T/out" 2>"$T/err"
rc=$?
check "an unknown --shapes name fails with the problem's constants listed" \
	sh -c "test $rc -ne 0 && grep -q 'nope is not a module-level integer of the problem (it has: batch_size, dim)' '$T/err'"

# the prompts name each in[] with its shape (the fake LLM server logs what it was sent)
if fake_llm tests/fake_llm/softmax.json; then
	$KLOOP ideas $FX/layernorm.py --from tasks/layernorm/seed.c --json --provider openai --model fake-gpt \
		--base-url "http://127.0.0.1:$PORT/v1" $B >"$T/ideas.out" 2>"$T/ideas.err"
	check "the ideas prompt for a problem file names in[1] weight f32 [32] and in[2] bias" \
		grep -q 'in\[1\] weight: f32 \[32\] (parameter)\\nin\[2\] bias: f32 \[32\] (parameter)' "$T/server.log"
	check "... and says the parameters come in named_parameters() order" \
		grep -q "a module's own before its submodules'" "$T/server.log"
else
	fail "the fake LLM server starts"
fi

# a forward that changes its input in place (x.mul_(2)): in[] is the input
# forward() was given, so 2*x is correct and a copy of in[] is not
cat >"$T/double.c" <<'C'
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)n_in, (void)n_out, (void)s;
	const float *x = in[0].data;
	float *y = out[0].data;
	for (int64_t i = 0; i < kl_numel(&in[0]); i++)
		y[i] = 2 * x[i];
	return 0;
}
C
cat >"$T/copy.c" <<'C'
#include <string.h>
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)
{
	(void)n_in, (void)n_out, (void)s;
	memcpy(out[0].data, in[0].data, (size_t)kl_numel(&in[0]) * 4);
	return 0;
}
C
$KLOOP eval $FX/inplace_mul.py "$T/double.c" "$T/copy.c" $B --json >"$T/ip.json" 2>"$T/ip.err"
check "an in-place forward: 2*x is correct, a copy of in[] is incorrect" python3 -c "
import json
rs = [json.loads(l) for l in open('$T/ip.json') if l.strip()]
assert [r['status'] for r in rs] == ['correct', 'incorrect'], [(r['status'], r.get('reason')) for r in rs]"
diag 0 "$T/ip.err"

# a forward that never returns (here from its third call: the description
# and the first sets pass) is stopped by --timeout with a line saying where,
# not waited on for the 15-minute setup limit
cat >"$T/hang.py" <<'PY'
import torch
import torch.nn as nn
n = 64
calls = [0]
def get_inputs():
    return [torch.randn(n)]
def get_init_inputs():
    return []
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        calls[0] += 1
        if calls[0] >= 3:
            import time
            time.sleep(1000)
        return x * 2
PY
timeout 300 $KLOOP eval "$T/hang.py" tests/fixtures/host/zeros.c $B --timeout 3 >"$T/hang.out" 2>"$T/hang.err"
rc=$?
check "a forward that hangs: stopped by --timeout, exit 2, the line says so ($(head -c 300 "$T/hang.err"))" sh -c \
	"test $rc -eq 2 && grep -q 'the PyTorch helper sent nothing for 3 s while computing set .* (the --timeout limit): stopped' '$T/hang.err'"

# the worker compiles while its PyTorch helper starts: this problem's model
# is made only once a candidate has compiled in the (fresh) cache
XDG_CACHE_HOME="$T/cache-overlap" $KLOOP eval $FX/waits_for_compile.py tasks/softmax/seed.c $B --json \
	>"$T/ov.json" 2>"$T/ov.err"
check "candidates compile while the PyTorch helper starts ($(head -c 300 "$T/ov.err"))" \
	test "$(json status "$T/ov.json")" = correct
check "the result says where the worker's setup went (helper start, reference data, baselines)" python3 -c "
import json; s=json.load(open('$T/ov.json'))['reference_data']['setup']
assert s['seconds'] >= s['helper'] + s['reference_data'] + s['baselines'] - 1e-6, s
assert s['helper'] > 0 and s['import_torch'] > 0 and s['baselines_cached'] is False, s"
XDG_CACHE_HOME="$T/cache-overlap" $KLOOP eval $FX/waits_for_compile.py tasks/softmax/seed.c $B \
	>"$T/ov.txt" 2>&1
check "kloop eval prints the setup once; the baselines came from the cache the second time" sh -c \
	"test \$(grep -c '^  setup ' '$T/ov.txt') = 1 && grep -q 'setup     the worker was ready after .* s: PyTorch started in .* (importing torch .* s), the reference data took .* the baselines came from the cache' '$T/ov.txt'"

# a row-softmax problem in FILE: its module-level lines on stdin, then the
# model (FAIL_AT=N: its forward raises at its Nth call, the Nth set)
softmax_problem() {
	{
		echo "import torch"
		echo "import torch.nn as nn"
		cat
		cat <<PY
calls = [0]
def get_inputs():
    return [torch.randn(8, 32)]
def get_init_inputs():
    return []
class Model(nn.Module):
    def forward(self, x):
        calls[0] += 1
        if calls[0] == ${FAIL_AT:-0}:
            raise ValueError("set 2 fails")
        return torch.softmax(x, dim=-1)
PY
	} >"$1"
}

# what the helper started (torch.compile's compile workers, here a sleep) is
# gone with it: the helper ends at once after "bye" and its process group
# is killed
spawn_sleep() {
	echo "import subprocess"
	echo "subprocess.Popen(['sleep', '$1'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"
}
spawn_sleep 1234567 | softmax_problem "$T/spawns.py"
$KLOOP eval "$T/spawns.py" tasks/softmax/seed.c $B --json >"$T/sp.json" 2>"$T/sp.err"
check "a problem whose module starts a process is evaluated ($(head -c 200 "$T/sp.err"))" \
	test "$(json status "$T/sp.json")" = correct
check "... and nothing the PyTorch helper started is left running" sh -c "! pgrep -f '[s]leep 1234567'"
# ... and when the task fails while the helper is up (its forward raises at
# the third set), the worker ends it and what it started
spawn_sleep 1234568 | FAIL_AT=3 softmax_problem "$T/spawns_fail.py"
$KLOOP eval "$T/spawns_fail.py" tasks/softmax/seed.c $B --json >"$T/spf.json" 2>"$T/spf.err"
rc=$?
check "a problem that fails at its third set is a task error ($(head -c 200 "$T/spf.err"))" \
	sh -c "test $rc -eq 2 && grep -q 'set 2 fails' '$T/spf.err'"
check "... and nothing the PyTorch helper started is left running" sh -c "! pgrep -f '[s]leep 1234568'"

# torch.compile's cache lives in kloop's cache (not under /tmp, where a
# reboot empties it), unless TORCHINDUCTOR_CACHE_DIR says otherwise
softmax_problem "$T/inductor_dir.py" <<'PY'
import os
d = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
if d != os.path.join(os.environ["XDG_CACHE_HOME"], "kloop", "torch", "inductor"):
    raise RuntimeError("TORCHINDUCTOR_CACHE_DIR is %r" % d)
PY
$KLOOP eval "$T/inductor_dir.py" tasks/softmax/seed.c $B --json >"$T/ind.json" 2>"$T/ind.err"
check "torch.compile's cache is kloop's: CACHE/kloop/torch/inductor ($(head -c 200 "$T/ind.err"))" \
	test "$(json status "$T/ind.json")" = correct
TORCHINDUCTOR_CACHE_DIR=/elsewhere $KLOOP eval "$T/inductor_dir.py" tasks/softmax/seed.c $B --json >"$T/ind2.json" 2>"$T/ind2.err"
check "... unless TORCHINDUCTOR_CACHE_DIR is set: the problem sees /elsewhere" \
	grep -q "TORCHINDUCTOR_CACHE_DIR is '/elsewhere'" "$T/ind2.err"

# the helper's background-compile ops, driven as the worker drives them: on
# the CPU "defer" is not taken (both baselines are timed at once), and
# "compile" then "time_compile" give torch.compile's record (or, with a
# torch that has no torch.compile, the reason)
cat >"$T/bg.py" <<'PY'
import json, subprocess, sys
p = subprocess.Popen([sys.executable, "engine/measure/reference/torchref.py", "--serve", "--problem",
                      sys.argv[1], "--device", "cpu"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, universal_newlines=True)
def ask(o):
    p.stdin.write(json.dumps(o) + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())
assert json.loads(p.stdout.readline())["ev"] == "describe"
t = ask({"op": "time", "seed": 1240, "budget_ms": 50, "compile": "defer"})["timing"]
assert t["eager"]["median_ms"] > 0 and "pending" not in (t["compile"] or {}), t
c = ask({"op": "compile", "seed": 1240})
assert c["ev"] == "compiled", c
if "error" in c:
    assert c["error"].startswith("torch.compile failed: "), c
    print("compile failed:", c["error"])
else:
    assert c["compile_seconds"] > 0 and c["benchmarks"] == 0, c
    r = ask({"op": "time_compile", "budget_ms": 50})
    assert r["ev"] == "timing" and r["compile"]["median_ms"] > 0, r
    assert r["compile"]["compile_seconds"] == c["compile_seconds"], r
    print("compiled in %.2f s, %.4g ms" % (c["compile_seconds"], r["compile"]["median_ms"]))
assert ask({"op": "quit"})["ev"] == "bye"
print("ok")
PY
softmax_problem "$T/bg_problem.py" </dev/null
python3 "$T/bg.py" "$T/bg_problem.py" >"$T/bg.out" 2>"$T/bg.err"
check "the helper's compile and time_compile ops, as the worker drives them (on the CPU no defer)" \
	grep -qx ok "$T/bg.out"
diag 0 "$T/bg.out" "$T/bg.err"

# the BLAS baselines of a GEMM task (issue 36): a forward that reaches a
# matrix product is found by tracing it, one without is not; on the CPU
# there are none to time; with a PyTorch that has the knobs each library is
# timed under its preference and the preference put back, and one without
# them is said so, with no time
check "torchref.py: the BLAS baselines are taken for a GEMM's forward only, and put PyTorch's preference back" \
	python3 - <<'PY'
import sys, types
sys.path.insert(0, "engine/measure/reference")
import torch, torchref
a, b = torch.randn(8, 8), torch.randn(8, 8)
assert torchref.reaches_gemm(torch, lambda: torch.matmul(a, b))
assert not torchref.reaches_gemm(torch, lambda: torch.softmax(a, -1))
m = torch.nn.Linear(8, 8)
assert torchref.time_blas_baselines(torch, m, [a], "cpu", 10, None) is None
# a stand-in for the CUDA knobs: what is chosen while each library is timed
state = {"pref": "default", "tunable": False, "tuning": False}
chosen = []
def pref(x=None):
    if x is not None:
        state["pref"] = x
    return state["pref"]
# PyTorch 2.11's TunableOp: no write_file_on_exit, a set_filename (the H200's)
tun = types.SimpleNamespace(is_enabled=lambda: state["tunable"],
    enable=lambda v: state.update(tunable=v), tuning_enable=lambda v: state.update(tuning=v),
    set_filename=lambda f: state.update(file=f))
fake = types.SimpleNamespace(__version__="x", backends=types.SimpleNamespace(
    cuda=types.SimpleNamespace(preferred_blas_library=pref)),
    cuda=types.SimpleNamespace(tunable=tun, synchronize=lambda: None))
torchref.time_model = lambda t, fn, d, bud, fl: (chosen.append((state["pref"], state["tunable"])),
                                                {"median_ms": 1.0})[1]
for key in ("cublas", "cublaslt", "cublaslt_autotuned"):
    r = torchref._time_blas(fake, key, lambda: None, "cuda", 10, None)
    assert r["median_ms"] == 1.0, r
assert chosen == [("cublas", False), ("cublaslt", False), ("cublaslt", True)], chosen
assert state["pref"] == "default" and state["tunable"] is False, state
import tempfile
assert state["file"].startswith(tempfile.gettempdir()), state
old = types.SimpleNamespace(__version__="1.13", backends=types.SimpleNamespace(
    cuda=types.SimpleNamespace()), cuda=types.SimpleNamespace())
r = torchref._time_blas(old, "cublas", lambda: None, "cuda", 10, None)
assert "median_ms" not in r and "cannot choose its BLAS library" in r["error"], r
PY
