# eval_errors.sh - bad input to `kloop eval` and `kloop session` gets a
# clear one-line error and exit status 2, and never a crash.
. tests/e2e/lib.sh
B="--backend host --budget 0.2"

# expect2 NAME NEEDLE CMD...: exit status 2 and NEEDLE in stderr
expect2() {
	name=$1 needle=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$needle" "$T/err"; then
		ok "$name ($(head -c 200 "$T/err" | tr '\n' ' '))"
	else
		fail "$name: rc=$rc, stderr: $(cat "$T/err")"
	fi
}

expect2 "unknown task" "unknown task 'nosuch'" $KLOOP eval nosuch tasks/softmax/seed.c $B
expect2 "missing source" "cannot open" $KLOOP eval softmax "$T/missing.c" $B
: >"$T/empty.c"
expect2 "empty source" "empty" $KLOOP eval softmax "$T/empty.c" $B
head -c 4096 /dev/urandom >"$T/binary.c"
expect2 "binary source" "binary" $KLOOP eval softmax "$T/binary.c" $B
python3 -c "open('$T/huge.c','w').write('/*' + 'x'*(50<<20) + '*/\n')"
expect2 "a 50 MB source" "over the limit" $KLOOP eval softmax "$T/huge.c" $B
expect2 "a source of unknown language" "unknown source language" $KLOOP eval softmax tasks/softmax/task.json $B
expect2 "missing arguments" "usage: kloop eval" $KLOOP eval softmax
expect2 "unknown option" "unknown option" $KLOOP eval softmax tasks/softmax/seed.c --frobnicate
expect2 "bad --trials" "trials" $KLOOP eval softmax tasks/softmax/seed.c --trials zero
expect2 "--trials whose sets cannot fit in memory, refused before any is made" \
	"does not fit: 1000000 trials.*use fewer --trials" $KLOOP eval softmax tasks/softmax/seed.c --trials 1000000 $B
mkdir -p "$T/badtask"
echo '{"name": "bad", "outputs": [' >"$T/badtask/task.json"
expect2 "malformed task.json" "task.json:[0-9]*: not valid JSON" $KLOOP eval "$T/badtask" tasks/softmax/seed.c $B
expect2 "missing task.json" "task.json: cannot open" $KLOOP eval "$T" tasks/softmax/seed.c $B
# a task.json whose output shape disagrees with what its reference writes
mkdir -p "$T/shape"
cp tasks/softmax/reference.c "$T/shape/"
sed 's/"cols": 4096/"cols": 4000/; s/"shape": \["rows", "cols"\]}\]/"shape": ["rows", 100]}]/' tasks/softmax/task.json |
	python3 -c 'import json,sys; t=json.load(sys.stdin); t["outputs"][0]["shape"]=["rows",100]; t["seeds"]={}; t["reference"]={"host":"reference.c"}; print(json.dumps(t))' >"$T/shape/task.json"
expect2 "output shape that does not fit the reference" "the reference reference.c failed" \
	$KLOOP eval "$T/shape" tasks/softmax/seed.c $B
# a reference that crashes: said of the reference, not of a candidate
cp -r tasks/softmax "$T/refsegv"
cat >"$T/refsegv/reference.c" <<'C'
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in, (void)n_in, (void)out, (void)n_out, (void)stream;
	*(volatile int *)0 = 1;
	return 0;
}
C
expect2 "a crashing reference is named as the one killed, not the candidate" \
	"the reference reference.c failed: the reference was killed by SIGSEGV" \
	$KLOOP eval "$T/refsegv" "$T/refsegv/seed.c" $B
mkdir -p "$T/noout"
python3 -c 'import json; t=json.load(open("tasks/softmax/task.json")); t["outputs"]=[]; print(json.dumps(t))' >"$T/noout/task.json"
expect2 "a task.json with no outputs" "outputs: expected at least one tensor" $KLOOP eval "$T/noout" tasks/softmax/seed.c $B
expect2 "an unwritable session path" "cannot open the session journal" \
	$KLOOP eval softmax tasks/softmax/seed.c $B --session /nonexistent/dir/s.jsonl
expect2 "a .cu candidate on the host backend" "needs the cuda backend" $KLOOP eval softmax tasks/softmax/seed.cu $B
expect2 "session of a missing file" "no such session journal" $KLOOP session "$T/none.jsonl"
expect2 "unknown shape set" "no shape set named 'huge'" $KLOOP eval softmax tasks/softmax/seed.c $B --shapes huge
mkdir -p "$T/cfg/kloop"
echo "budget = soon" >"$T/cfg/kloop/config"
XDG_CONFIG_HOME="$T/cfg" expect2 "a bad config line names file and line" "config:1: budget" \
	$KLOOP eval softmax tasks/softmax/seed.c --backend host
if ! python3 -c 'import torch' 2>/dev/null; then
	expect2 "a PyTorch task without PyTorch is one clear line" "PyTorch is not installed for python3" \
		$KLOOP eval tasks/softmax/reference.py tasks/softmax/seed.c $B
	check "... and only one line" test "$(wc -l <"$T/err")" -eq 1
fi
expect2 "a missing Python interpreter" "interpreter '/no/python' cannot be run" \
	$KLOOP eval tasks/softmax/reference.py tasks/softmax/seed.c $B --python /no/python
check "... in one line (no worker output after it)" test "$(wc -l <"$T/err")" -eq 1
expect2 "a missing KernelBench problem file" "no such problem file" $KLOOP eval "$T/nope.py" tasks/softmax/seed.c $B
# a reference that never returns is stopped at --timeout: a task error, exit 2
cp -r tasks/softmax "$T/refhang"
cat >"$T/refhang/reference.c" <<'C'
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in, (void)n_in, (void)out, (void)n_out, (void)stream;
	for (volatile int i = 0;; i++)
		;
}
C
expect2 "a reference that never returns is stopped at --timeout, and not said to crash" \
	"the reference reference.c failed: it did not return within 2 s (the --timeout limit)" \
	timeout 120 $KLOOP eval "$T/refhang" "$T/refhang/seed.c" $B --timeout 2
# a problem file whose code never returns, or crashes, as kloop tasks describes it
mkdir -p "$T/kb"
cat >"$T/kb/sleepy.py" <<'PY'
import time
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    time.sleep(1000)
    return [torch.randn(16)]
def get_init_inputs():
    return []
PY
sed 's/    time.sleep(1000)/    import ctypes; ctypes.string_at(0)/' "$T/kb/sleepy.py" >"$T/kb/segv.py"
if python3 -c 'import torch' >/dev/null 2>&1; then
	expect2 "kloop tasks: a problem that never returns is stopped at --timeout" \
		"sleepy.py: the PyTorch helper did not describe the problem within 2 s" \
		timeout 120 $KLOOP tasks "$T/kb/sleepy.py" --timeout 2
	expect2 "kloop tasks: a problem that crashes is said to have (not a missing interpreter)" \
		"segv.py: the PyTorch helper running the problem killed by signal 11 (SIGSEGV)" \
		$KLOOP tasks "$T/kb/segv.py"
	# in kloop eval the helper runs in the worker: what it printed last comes
	# with the task error (the person has no other way to see it)
	cat >"$T/kb/ex3.py" <<'PY'
import os, sys
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        print("boom in forward: the problem's own message", file=sys.stderr, flush=True)
        os._exit(3)
def get_inputs():
    return [torch.randn(16)]
def get_init_inputs():
    return []
PY
	expect2 "kloop eval: a problem that exits: the helper's status" \
		"ex3.py: the PyTorch helper exited with status 3" \
		$KLOOP eval "$T/kb/ex3.py" tasks/softmax/seed.c $B
	check "... with what it printed last" grep -q "^boom in forward: the problem's own message" "$T/err"
else
	skip "kloop tasks on a problem that hangs or crashes: python3 has no PyTorch"
fi
