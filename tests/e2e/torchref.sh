# tests/e2e/torchref.sh - engine/measure/reference/torchref.py (PyTorch reference -> kloop
# reference data, docs/TORCH_REFERENCE.md) against real PyTorch: manifest
# fields, in[] order (forward inputs, then parameters and buffers), file
# sizes, outputs equal to running the model again here, error lines, --time
# and --check.  Runs on the CPU, and on CUDA too when torch sees a GPU; skips
# when python3 has no torch.
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import torch' >/dev/null 2>&1; then
	skip "torchref: PyTorch is not installed for python3"
	exit 0
fi

TR=engine/measure/reference/torchref.py
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the fixtures' directory
FX=tests/fixtures/torch

# verify.py PROBLEM DIR DEVICE TRIALS SEED NAMES KINDS: check DIR's manifest
# and files against the problem run again here, independently of torchref.py
cat >"$T/verify.py" <<'EOF'
import hashlib, importlib.util, json, os, sys
import torch

problem, out, device, trials, seed, names, kinds = sys.argv[1:8]
trials, seed = int(trials), int(seed)
names, kinds = names.split(","), kinds.split(",")
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DT = {"f32": (torch.float32, 4), "f16": (torch.float16, 2), "bf16": (torch.bfloat16, 2),
      "f64": (torch.float64, 8), "i32": (torch.int32, 4), "i64": (torch.int64, 8),
      "i8": (torch.int8, 1), "u8": (torch.uint8, 1)}
bad = []


def expect(cond, what):
    if not cond:
        bad.append(what)


def load(fname, entry):
    dt, size = DT[entry["dtype"]]
    n = 1
    for d in entry["shape"]:
        n *= d
    path = os.path.join(out, fname)
    expect(os.path.getsize(path) == n * size, "%s: %d bytes, want %d" % (fname, os.path.getsize(path), n * size))
    data = open(path, "rb").read()
    return torch.frombuffer(bytearray(data), dtype=dt).reshape(entry["shape"])


def same(got, want, what):
    want = want.detach().to("cpu")
    if want.dtype == torch.bool:
        want = want.to(torch.uint8)
    want = want.contiguous()
    ok = got.dtype == want.dtype and list(got.shape) == list(want.shape)
    if ok:
        if device == "cpu" or not want.dtype.is_floating_point:
            ok = torch.equal(got, want)
        else:
            ok = torch.allclose(got, want, rtol=1e-5, atol=1e-6)
    expect(ok, "%s differs from the model run here" % what)


m = json.load(open(os.path.join(out, "manifest.json")))
expect(m["format"] == 1, "format %r" % m["format"])
expect(m["problem"] == os.path.abspath(problem), "problem %r" % m["problem"])
expect(m["problem_sha256"] == hashlib.sha256(open(problem, "rb").read()).hexdigest(), "problem_sha256")
expect(m["torch"] == str(torch.__version__), "torch %r" % m["torch"])
want_dev = torch.cuda.get_device_name(torch.cuda.current_device()) if device == "cuda" else "cpu"
expect(m["device"] == want_dev, "device %r, want %r" % (m["device"], want_dev))
expect(m["seed"] == seed, "seed %r" % m["seed"])
expect([e["name"] for e in m["inputs"]] == names, "input names %r, want %r" % ([e["name"] for e in m["inputs"]], names))
expect([e["kind"] for e in m["inputs"]] == kinds, "input kinds %r, want %r" % ([e["kind"] for e in m["inputs"]], kinds))
expect(len(m["trials"]) == trials + 1, "%d trials, want %d" % (len(m["trials"]), trials + 1))
expect([t["seed"] for t in m["trials"]] == [seed + 1 + t for t in range(trials + 1)], "trial seeds")

spec = importlib.util.spec_from_file_location("verify_problem", problem)
mod = importlib.util.module_from_spec(spec)
sys.path.insert(0, os.path.dirname(os.path.abspath(problem)))
spec.loader.exec_module(mod)
torch.manual_seed(seed)
model = mod.Model(*mod.get_init_inputs()).to(device).eval()
params = [t for _, t in model.named_parameters()] + [t for _, t in model.named_buffers()]
n_fwd = kinds.count("input")
expect(len(m["inputs"]) == n_fwd + len(params), "%d inputs, want %d" % (len(m["inputs"]), n_fwd + len(params)))
expect(len(m["outputs"]) >= 1 and [o["name"] for o in m["outputs"]] == ["out%d" % j for j in range(len(m["outputs"]))],
       "output names")
for t, trial in enumerate(m["trials"]):
    expect(len(trial["inputs"]) == len(m["inputs"]) and len(trial["outputs"]) == len(m["outputs"]),
           "trial %d file counts" % t)
    torch.manual_seed(seed + 1 + t)
    xs = [x.to(device) for x in mod.get_inputs()]
    for i, (fname, entry) in enumerate(zip(trial["inputs"], m["inputs"])):
        want = xs[i] if i < n_fwd else params[i - n_fwd]
        same(load(fname, entry), want, "trial %d input %s (%s)" % (t, entry["name"], fname))
    with torch.no_grad():
        ys = model(*xs)
    if torch.is_tensor(ys):
        ys = [ys]
    expect(len(ys) == len(m["outputs"]), "%d outputs, want %d" % (len(m["outputs"]), len(ys)))
    for j, (fname, entry) in enumerate(zip(trial["outputs"], m["outputs"])):
        same(load(fname, entry), ys[j], "trial %d output %d (%s)" % (t, j, fname))
for b in bad:
    print("verify: " + b)
sys.exit(1 if bad else 0)
EOF

# gen NAME DEVICE ARGS...: run torchref.py on $FX/NAME.py into $T/NAME-DEVICE
# (helpers use their own variable names: lib.sh's check() keeps its in $name)
gen() {
	g_prob=$1 g_dev=$2
	shift 2
	python3 "$TR" --problem "$FX/$g_prob.py" --out "$T/$g_prob-$g_dev" --device "$g_dev" "$@"
}

# one_error NAME RC PATTERN CMD...: CMD exits RC, its last stderr line is
# "torchref: ..." matching PATTERN, and it printed no traceback
one_error() {
	e_name=$1 e_want=$2 e_pat=$3
	shift 3
	"$@" >"$T/err.out" 2>"$T/err.txt"
	e_rc=$?
	e_last=$(tail -n 1 "$T/err.txt")
	if [ "$e_rc" -eq "$e_want" ] && ! grep -q '^Traceback' "$T/err.txt" &&
		printf '%s\n' "$e_last" | grep -q "^torchref: " &&
		printf '%s\n' "$e_last" | grep -q -- "$e_pat"; then
		ok "$e_name"
	else
		fail "$e_name (rc $e_rc, stderr: $(tr '\n' ' ' <"$T/err.txt" | cut -c1-300))"
	fi
}

devices=cpu
if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	devices="cpu cuda"
fi

for dev in $devices; do
	check "torchref: softmax ($dev)" gen softmax "$dev" --trials 3
	check "torchref: softmax manifest and data ($dev)" python3 "$T/verify.py" \
		"$FX/softmax.py" "$T/softmax-$dev" "$dev" 3 1234 x input
	check "torchref: layernorm ($dev)" gen layernorm "$dev" --trials 2 --seed 7
	check "torchref: layernorm in[] is x, weight, bias ($dev)" python3 "$T/verify.py" \
		"$FX/layernorm.py" "$T/layernorm-$dev" "$dev" 2 7 x,weight,bias input,parameter,parameter
	check "torchref: mixed ($dev)" gen mixed "$dev" --trials 2
	check "torchref: mixed: submodule parameters, buffer, 3 outputs ($dev)" python3 "$T/verify.py" \
		"$FX/mixed.py" "$T/mixed-$dev" "$dev" 2 1234 x,offset,proj.weight,proj.bias,scale \
		input,input,parameter,parameter,buffer
done

# the out[] dtypes of mixed: f32, bool as u8, i64
check "torchref: output dtypes f32 u8 i64" test "$(python3 -c 'import json,sys
print(" ".join(o["dtype"] for o in json.load(open(sys.argv[1]))["outputs"]))' "$T/mixed-cpu/manifest.json")" = "f32 u8 i64"
# parameters are written once and named in every trial
check "torchref: parameters written once" test "$(json trials.2.inputs "$T/layernorm-cpu/manifest.json")" = \
	'["t2_in0.bin", "param0.bin", "param1.bin"]'
check "torchref: no timing without --time" test "$(json timing "$T/softmax-cpu/manifest.json")" = None
check "torchref: no temporary files left" test -z "$(ls -A "$T/softmax-cpu" | grep -v '\.bin$' | grep -v '^manifest\.json$')"

# --time on the CPU (wall clock), without torch.compile to keep it quick
if gen softmax cpu --trials 1 --time --no-compile --time-budget-ms 50 2>"$T/time.err"; then
	check "torchref: --time on cpu" python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["timing"]
e = t["eager"]
sys.exit(0 if t["compile"] is None and e["count"] >= 1 and 0 < e["p10_ms"] <= e["median_ms"] <= e["p90_ms"]
         and isinstance(e["converged"], bool) and t["method"] == "cpu-wall-clock" else 1)' "$T/softmax-cpu/manifest.json"
else
	fail "torchref: --time on cpu ($(tr '\n' ' ' <"$T/time.err" | cut -c1-300))"
fi

# --time on CUDA, with torch.compile (its failure is recorded, not fatal)
case "$devices" in
*cuda*)
	if gen softmax cuda --trials 1 --time --time-budget-ms 300 2>"$T/time.err"; then
		check "torchref: --time on cuda (eager and compile)" python3 -c 'import json, sys, torch
t = json.load(open(sys.argv[1]))["timing"]
e, c = t["eager"], t["compile"]
l2 = torch.cuda.get_device_properties(0).L2_cache_size or 50 * 10**6
ok = (e["count"] >= 1 and 0 < e["p10_ms"] <= e["median_ms"] <= e["p90_ms"] and e["rse"] is not None
      and t["method"] == "cuda-events" and t["l2_flush_bytes"] >= 2 * l2
      and isinstance(c, dict) and (("median_ms" in c and c["median_ms"] > 0) or "error" in c))
print("eager %.4f ms (n=%d, rse %.4f, converged %s); compile %s" % (e["median_ms"], e["count"], e["rse"],
      e["converged"], ("%.4f ms" % c["median_ms"]) if "median_ms" in c else c.get("error")))
sys.exit(0 if ok else 1)' "$T/softmax-cuda/manifest.json"
	else
		fail "torchref: --time on cuda ($(tr '\n' ' ' <"$T/time.err" | cut -c1-300))"
	fi
	;;
*)
	one_error "torchref: --device cuda without CUDA is one error line" 1 "CUDA is not available" \
		python3 "$TR" --problem "$FX/softmax.py" --out "$T/nocuda" --device cuda
	;;
esac

# expected errors: one line "torchref: FILE: ...", exit 1, no traceback
cat >"$T/nomodel.py" <<'EOF'
import torch
def get_inputs():
    return [torch.randn(4)]
EOF
cat >"$T/scalar.py" <<'EOF'
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x, k):
        return x * k
def get_inputs():
    return [torch.randn(4), 3]
def get_init_inputs():
    return []
EOF
cat >"$T/importerr.py" <<'EOF'
import torch
import kloop_no_such_module_for_torchref
EOF
cat >"$T/int16.py" <<'EOF'
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x + 1
def get_inputs():
    return [torch.randn(4).to(torch.int16)]
def get_init_inputs():
    return []
EOF
cat >"$T/raises.py" <<'EOF'
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        raise ValueError("deliberate failure in forward")
def get_inputs():
    return [torch.randn(4)]
def get_init_inputs():
    return []
EOF
one_error "torchref: missing Model" 1 "nomodel.py: .*Model" \
	python3 "$TR" --problem "$T/nomodel.py" --out "$T/e1" --device cpu
one_error "torchref: scalar input names the input" 1 "input 1 (k)" \
	python3 "$TR" --problem "$T/scalar.py" --out "$T/e2" --device cpu
one_error "torchref: import error in the problem" 1 "kloop_no_such_module_for_torchref" \
	python3 "$TR" --problem "$T/importerr.py" --out "$T/e3" --device cpu
one_error "torchref: unsupported dtype" 1 "int16" \
	python3 "$TR" --problem "$T/int16.py" --out "$T/e4" --device cpu
one_error "torchref: forward() raising" 1 "forward() failed: ValueError: deliberate failure" \
	python3 "$TR" --problem "$T/raises.py" --out "$T/e5" --device cpu
one_error "torchref: missing problem file" 1 "no such file" \
	python3 "$TR" --problem "$T/absent.py" --out "$T/e6" --device cpu
one_error "torchref: usage error exits 2" 2 "usage" \
	python3 "$TR" --problem "$FX/softmax.py"
check "torchref: no manifest after an error" test ! -e "$T/e2/manifest.json"

# --check: one JSON line that agrees with torch itself
python3 "$TR" --check >"$T/check.json" 2>/dev/null
check "torchref: --check exits 0" test $? -eq 0
check "torchref: --check JSON" python3 -c 'import json, platform, sys, torch
lines = open(sys.argv[1]).read().splitlines()
c = json.loads(lines[0])
cuda = torch.cuda.is_available()
sys.exit(0 if len(lines) == 1 and c["python"] == platform.python_version() and c["torch"] == str(torch.__version__)
         and c["cuda"] is cuda and (c["device"] is not None) == cuda and c["error"] is None else 1)' "$T/check.json"
