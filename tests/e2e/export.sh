# export.sh - `kloop export SESSION ID`: --source/--cuda write the candidate's
# plain source; --kernelbench writes a ModelNew module that, with PyTorch
# (here on the CPU, a C candidate through ctypes), has Model's constructor and
# forward() signature and matches Model on fresh inputs; errors name what is
# wrong.  The PyTorch part skips with one line where python3 has no torch.
. tests/e2e/lib.sh
B="--backend host --budget 0.2 --trials 2"
$KLOOP eval softmax tasks/softmax/seed.c tests/fixtures/host/zeros.c $B --session "$T/s.jsonl" >/dev/null 2>&1
$KLOOP export "$T/s.jsonl" 1 --source "$T/out.c" --kernelbench "$T/kb.py" >"$T/out" 2>"$T/err"
rc=$?
check "export exits 0 (exit $rc; the verdicts: $(said "$T/s.jsonl"))" test $rc -eq 0
check "... and says what it wrote where ($(cat "$T/out"))" \
	grep -qx "wrote candidate 1 to $T/out.c ([0-9]* bytes), to $T/kb.py as a KernelBench ModelNew module" "$T/out"
check "--source writes the candidate's source as it is" cmp -s "$T/out.c" tasks/softmax/seed.c
check "--kernelbench writes a Python module defining ModelNew for the task's reference.py" python3 -c "
import ast; t=ast.parse(open('$T/kb.py').read())
names=[n.name for n in t.body if isinstance(n, ast.ClassDef)]
assert 'ModelNew' in names, names
src=open('$T/kb.py').read(); assert 'softmax/reference.py' in src and '_FLAGS = [' in src"
$KLOOP export "$T/s.jsonl" 2 --source "$T/zeros.c" 2>"$T/err2"
check "exporting a candidate whose verdict is not correct says so" grep -q "candidate 2's last verdict is incorrect" "$T/err2"
$KLOOP export "$T/s.jsonl" 1 --cuda "$T/x.cu" >"$T/o" 2>"$T/e"
check "--cuda on a C candidate is refused, naming --source" sh -c "test $? -eq 2 && grep -q 'is not CUDA; --source FILE' '$T/e'"
$KLOOP export "$T/s.jsonl" 9 --source "$T/x.c" >"$T/o" 2>"$T/e"
check "a missing candidate id is named with the range there is" grep -q "has no candidate 9 (it has 1..2)" "$T/e"
$KLOOP export "$T/s.jsonl" one --source "$T/x.c" >"$T/o" 2>"$T/e"
check "a non-numeric id is refused, naming best too" grep -q "'one' is not a candidate id (a number from 1, or best)" "$T/e"
# best: the session's best (the seed: zeros.c is incorrect), as every
# front end names it
$KLOOP export "$T/s.jsonl" best --source "$T/best.c" >"$T/o" 2>"$T/e"
check "export SESSION best writes the session's best ($(cat "$T/o"); the verdicts: $(said "$T/s.jsonl"))" sh -c \
	"cmp -s '$T/best.c' tasks/softmax/seed.c && grep -q '^wrote candidate 1 to $T/best.c' '$T/o'"
$KLOOP eval softmax tests/fixtures/host/zeros.c $B --session "$T/z.jsonl" >/dev/null 2>&1
$KLOOP export "$T/z.jsonl" best --source "$T/zb.c" >"$T/o" 2>"$T/e"
rc=$?
check "export best of a session with no correct candidate: exit 2, saying so ($(cat "$T/e"))" \
	sh -c "test $rc -eq 2 && grep -q 'has no best candidate' '$T/e' && test ! -e '$T/zb.c'"

# the workbench's export is the same command (one entry, sessions/driver/cand_export.c):
# in `kloop shell`, --kernelbench writes the module the CLI writes, and the
# same outputs are refused with the same words
printf '%s\n' "export 1 --kernelbench $T/shkb.py --source=$T/shsrc.c" "export 1 --cuda $T/sh.cu" \
	"export 1 $T/s.jsonl" "export 1 --problem tasks/softmax/reference.py" "export 1 --xml $T/a" \
	"export 2 $T/shz.c" |
	$KLOOP shell --session "$T/s.jsonl" --backend host >"$T/sho" 2>"$T/she"
check "shell: export --kernelbench writes the module the CLI wrote, --source the source" sh -c \
	"cmp -s '$T/shkb.py' '$T/kb.py' && cmp -s '$T/shsrc.c' tasks/softmax/seed.c && grep -q 'wrote candidate 1 to $T/shsrc.c ([0-9]* bytes), to $T/shkb.py as a KernelBench ModelNew module$' '$T/sho'"
check "shell: export --cuda on a C candidate is refused, naming --source" \
	grep -q "error: export: candidate 1 (seed.c) is not CUDA; --source FILE writes its source" "$T/she"
check "shell: export onto the session's journal is refused" \
	grep -q "error: export: $T/s.jsonl is the session journal being exported from: not overwritten" "$T/she"
check "shell: export with no output names what to give" \
	grep -q "error: export: nothing to write: give FILE, --source, --cuda or --kernelbench" "$T/she"
check "shell: export with an unknown option names it" grep -q "error: export: unknown option '--xml'" "$T/she"
check "shell: exporting a candidate whose verdict is not correct says so" \
	grep -q "^wrote candidate 2 to $T/shz.c ([0-9]* bytes); note: its last verdict is incorrect$" "$T/sho"

if ! python3 -c 'import torch' >/dev/null 2>&1; then
	skip "export: PyTorch is not installed for python3, the exported ModelNew was not run"
	exit 0
fi
export PYTHONDONTWRITEBYTECODE=1
FX=tests/fixtures/torch
# compare OUT.py: ModelNew(*get_init_inputs()) vs Model under the same seed, on fresh inputs
compare() {
	python3 - "$1" <<'PY'
import importlib.util, inspect, sys, torch
spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
assert inspect.signature(m.ModelNew.__init__) == inspect.signature(m.Model.__init__)
assert inspect.signature(m.ModelNew.forward) == inspect.signature(m.Model.forward)
torch.manual_seed(42)
ref = m.Model(*m.get_init_inputs())
torch.manual_seed(42)
new = m.ModelNew(*m.get_init_inputs())
for trial in range(3):
    torch.manual_seed(1000 + trial)
    x = m.get_inputs()
    a, b = ref(*x), new(*x)
    a = [a] if torch.is_tensor(a) else list(a)
    b = [b] if torch.is_tensor(b) else list(b)
    for p, q in zip(a, b):
        assert p.shape == q.shape and p.dtype == q.dtype, (p.shape, q.shape)
        assert torch.allclose(p.float(), q.float(), atol=1e-2, rtol=1e-2), (p - q).abs().max()
PY
}
for p in "layernorm.py tasks/layernorm/seed.c" "softmax.py tasks/softmax/seed.c" "sum_scalar.py $FX/sum_scalar.c"; do
	set -- $p
	rm -f "$T/p.jsonl"
	$KLOOP eval $FX/$1 $2 $B --session "$T/p.jsonl" >/dev/null 2>&1
	$KLOOP export "$T/p.jsonl" 1 --kernelbench "$T/p.py" 2>"$T/e"
	check "$1: the exported ModelNew has Model's signatures and matches Model on fresh inputs" compare "$T/p.py"
done

# a staged CUDA build's candidate (compile_argv_show: its command is the
# steps, "FLAGS -c SRC -o kl_host.o && (its fatbinary padded ...) && ...
# -shared kl_host.o -o out.so"): the exported module builds it as one
# command with those flags (on the GPU every staged candidate's export
# failed: "nvcc fatal: A single input file is required ...").  Here the
# host's command in the same form, the module built with cc
rm -f "$T/p.jsonl"
$KLOOP eval $FX/softmax.py tasks/softmax/seed.c $B --session "$T/p.jsonl" >/dev/null 2>&1
python3 - "$T/p.jsonl" "$T/st.jsonl" <<'PY'
import json, sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    e = json.loads(line)
    c = (e.get("result") or {}).get("compile") if e.get("type") == "eval_finished" else None
    if c and c.get("command"):
        w = c["command"].split()
        i = w.index("-o")
        flags = [x for k, x in enumerate(w[1:], 1) if k not in (i, i + 1) and x not in ("-shared", "seed.c")]
        f = " ".join(flags)
        c["command"] = ("%s %s -c seed.c -o kl_host.o && (its fatbinary padded to 65536 bytes' grain) "
                        "&& %s %s -shared kl_host.o -o out.so" % (w[0], f, w[0], f))
    out.write(json.dumps(e) + "\n")
PY
$KLOOP export "$T/st.jsonl" 1 --kernelbench "$T/st.py" 2>"$T/e"
check "a staged build's candidate: the exported ModelNew builds and matches Model ($(grep -c 'kl_host.o' "$T/st.jsonl") staged commands; $(head -c 200 "$T/e"))" \
	compare "$T/st.py"

# an output that would overwrite what the export reads is refused, and
# nothing is written: the journal, the problem file, one path given twice
$KLOOP eval softmax tasks/softmax/seed.c $B --session "$T/keep.jsonl" >/dev/null 2>&1
cp "$T/keep.jsonl" "$T/keep.before"
cp tasks/softmax/reference.py "$T/problem.py"
$KLOOP export "$T/keep.jsonl" 1 --source "$T/keep.jsonl" >"$T/o1" 2>"$T/e1"
rc1=$?
$KLOOP export "$T/keep.jsonl" 1 --kernelbench "$T/problem.py" --problem "$T/problem.py" >"$T/o2" 2>"$T/e2"
rc2=$?
$KLOOP export "$T/keep.jsonl" 1 --source "$T/same.c" --kernelbench "$T/same.c" --problem "$T/problem.py" \
	>"$T/o3" 2>"$T/e3"
rc3=$?
check "export --source onto the session journal: exit 2, the journal unchanged" sh -c \
	"test $rc1 -eq 2 && grep -q 'is the session journal being exported from: not overwritten' '$T/e1' && cmp -s '$T/keep.jsonl' '$T/keep.before'"
check "export --kernelbench onto the problem file: exit 2, the problem unchanged" sh -c \
	"test $rc2 -eq 2 && grep -q 'is the KernelBench problem file: not overwritten' '$T/e2' && cmp -s '$T/problem.py' tasks/softmax/reference.py"
check "one path as two outputs: exit 2, nothing written" sh -c \
	"test $rc3 -eq 2 && grep -q 'same.c is given as two outputs' '$T/e3' && test ! -e '$T/same.c'"

# a link is written through (the link stays, its target gets the source);
# a FIFO or a device is not replaced by a file; a --problem that is not a
# KernelBench problem (FILE.py with class Model) is refused
echo old >"$T/target.c"
ln -s "$T/target.c" "$T/link.c"
$KLOOP export "$T/keep.jsonl" 1 --source "$T/link.c" >"$T/o4" 2>"$T/e4"
check "export --source onto a link: the link stays, its target holds the source" sh -c \
	"test -L '$T/link.c' && cmp -s '$T/target.c' tasks/softmax/seed.c"
mkfifo "$T/fifo.c"
$KLOOP export "$T/keep.jsonl" 1 --source "$T/fifo.c" >"$T/o5" 2>"$T/e5"
rc5=$?
check "export --source onto a FIFO: exit 2, it stays a FIFO ($(cat "$T/e5"))" sh -c \
	"test $rc5 -eq 2 && test -p '$T/fifo.c' && grep -q 'fifo.c is not a regular file (a FIFO): not replaced' '$T/e5'"
$KLOOP export "$T/keep.jsonl" 1 --kernelbench "$T/kb2.py" --problem tasks/softmax/seed.c >"$T/o6" 2>"$T/e6"
rc6=$?
check "export --problem with a C file: exit 2, nothing written ($(cat "$T/e6"))" sh -c \
	"test $rc6 -eq 2 && test ! -e '$T/kb2.py' && grep -q 'is not a KernelBench problem file' '$T/e6'"
exit $((NFAIL > 0))
