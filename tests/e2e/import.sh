# import.sh - `kloop import` (issue 38) on the host backend: a directory laid
# out as one run's outputs (a correct PyTorch extension, a correct ModelNew,
# an incorrect extension of the same file name in another sample, a C file
# that is no candidate, a log that is no source) put into a session: each
# candidate evaluated and journaled with its verdict, the file that is no
# candidate said with why while the others go on, the summary table and the
# best; the same directory imported again into that session (--session
# continuation: only the new file is evaluated; an evaluation cut short runs
# again), and `kloop search --session`
# going on from it; every candidate exported with `kloop export
# --kernelbench` and the exports imported into a new session: the same
# sources under the same names, with the same verdicts; the refusals of bad
# arguments.  With PyTorch: --problem of a problem whose Model takes scalars
# from get_init_inputs() (an extension's number parameters and a ModelNew's
# self.dim, self.scale), and a problem that does not load stops the import
# before anything is evaluated.
. tests/e2e/lib.sh
F=tests/fixtures/torchext
B="--backend host --budget 0.2 --trials 2"
D="$T/run"
mkdir -p "$D/sample_0" "$D/sample_1"
cp $F/softmax.cpp "$D/sample_0/kernel.cpp"
cp $F/modelnew_cpu.py "$D/sample_0/model_new.py"
cp $F/wrong.cpp "$D/sample_1/kernel.cpp"
printf 'int helper(int x) { return x + 1; }\n' >"$D/sample_1/helper.c"
echo "a run's log" >"$D/log.txt"

# cands JOURNAL: each candidate of a journal as "name|status|sha256 of its
# source", its last verdict, one a line in id order
cands() {
	python3 - "$1" <<'EOF'
import hashlib, json, sys
c = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") == "candidate_added":
        c[e["id"]] = [e["name"], "new", hashlib.sha256(e["source"].encode()).hexdigest()[:12], ""]
    elif e.get("type") == "eval_finished" and e.get("candidate") in c:
        r = e.get("result") or {}
        c[e["candidate"]][1] = r.get("status")
        c[e["candidate"]][3] = str(r.get("reason") or "")
for k in sorted(c):
    print("%s|%s|%s" % (c[k][0], c[k][1], c[k][2]))
EOF
}
# status NAME: candidate NAME's status in $T/s.jsonl
status() { cands "$T/s.jsonl" | awk -F'|' -v n="$1" '$1 == n {print $2}'; }

$KLOOP import "$D" --task softmax --session "$T/s.jsonl" $B >"$T/i.out" 2>"$T/i.err"
rc=$?
n0=$NFAIL
check "import of a run's directory: exit 1, one file being no candidate (exit $rc)" test $rc -eq 1
check "... that file named, with why, while the others went on" grep -q \
	"^kloop: import: $D/sample_1/helper.c: defines no kl_run and is no PyTorch extension (a torch header and PYBIND11_MODULE or TORCH_LIBRARY): nothing kloop can call$" "$T/i.err"
check "... the log, no source, left out with a line (not an error)" \
	grep -q "^kloop: import: 1 file that is no source left out: $D/log.txt$" "$T/i.err"
check "... three candidates journaled, each evaluated ($(said "$T/s.jsonl"))" \
	test "$(cands "$T/s.jsonl" | wc -l)" -eq 3
check "... the extension correct (origin import)" sh -c \
	"test '$(status kernel.cpp)' = correct && grep -q '\"name\":\"kernel.cpp\",\"origin\":\"import\"' '$T/s.jsonl'"
check "... the ModelNew correct" test "$(status model_new.py)" = correct
check "... the wrong extension, of the same file name in another sample, named by its directory and incorrect" \
	test "$(status sample_1-kernel.cpp)" = incorrect
check "... each verdict said as it came, naming its file" grep -q \
	"^  #3 sample_1-kernel.cpp ($D/sample_1/kernel.cpp): incorrect: .*output y differs from the reference" "$T/i.out"
check "the summary table: file, id, form, verdict, time, speedup" \
	grep -Eq '^file +id  form +verdict +time \(ms\) +speedup$' "$T/i.out"
check "... a row for the extension (form, a verdict of kloop's with its precision class, its time)" \
	grep -Eq "^sample_0/kernel.cpp +[0-9]+  extension C\+\+ +correct, (faithful|REDUCED)[^ ]*.* [0-9.e-]+ +[0-9.e+-]+x$" "$T/i.out"
check "... one for the ModelNew" grep -Eq "^sample_0/model_new.py +[0-9]+  ModelNew C\+\+ +correct" "$T/i.out"
check "... one for the incorrect extension, without a time" \
	grep -Eq "^sample_1/kernel.cpp +3  extension C\+\+ +incorrect +- +-$" "$T/i.out"
check "... and one for the file that is no candidate" \
	grep -Eq "^sample_1/helper.c +-  - +not a candidate" "$T/i.out"
check "... the count and the session" \
	grep -q "^3 files imported into $T/s.jsonl, 1 not a candidate (task softmax, host backend)$" "$T/i.out"
if grep -q '^best: #' "$T/i.out"; then
	check "... the best, to steer from, and how ($(grep '^best' "$T/i.out"))" sh -c \
		"grep -Eq '^best: #[12] (kernel.cpp|model_new.py) \($D/sample_0/' '$T/i.out' && grep -q '^steer from it: kloop search --session $T/s.jsonl' '$T/i.out'"
else
	skip "the loaded machine left every time unverified: no best to name ($(grep -A1 '^no candidate' "$T/i.out"))"
fi
diag $n0 "$T/i.out" "$T/i.err"

# --session: the same directory again, with a new sample: only that is
# evaluated (the session's task, no --task)
mkdir -p "$D/sample_2"
cp tasks/softmax/seed.c "$D/sample_2/seed.c"
$KLOOP import "$D" --session "$T/s.jsonl" $B >"$T/j.out" 2>"$T/j.err"
rc=$?
n0=$NFAIL
check "import into the session again: the files it holds said and not evaluated again" sh -c \
	"test \$(grep -c 'the same source as candidate [123], which the session holds: not imported again' '$T/j.err') -eq 3"
check "... the new kl_run file imported as candidate 4, correct ($(said "$T/s.jsonl"))" sh -c \
	"test '$(status seed.c)' = correct && grep -q '^  #4 seed.c ($D/sample_2/seed.c): correct' '$T/j.out'"
evals=$(python3 -c 'import json,sys
n={}
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get("type")=="eval_finished": n[e.get("candidate")]=n.get(e.get("candidate"),0)+1
print(" ".join("#%s:%d" % (k,n[k]) for k in sorted(n)))' "$T/s.jsonl")
check "... four candidates, each evaluated once ($evals)" test "$evals" = "#1:1 #2:1 #3:1 #4:1"
check "... the no-candidate still said (exit $rc)" sh -c "test $rc -eq 1 && grep -q 'helper.c: defines no kl_run' '$T/j.err'"
diag $n0 "$T/j.out" "$T/j.err"

# an evaluation the last import cut short (its eval_finished gone, as after
# a kill) runs again when the directory is imported into the session again
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if not (e.get("type") == "eval_finished" and e.get("candidate") == 4):
        sys.stdout.write(l)' "$T/s.jsonl" >"$T/cut.jsonl"
$KLOOP import "$D" --session "$T/cut.jsonl" $B >"$T/k.out" 2>"$T/k.err"
n0=$NFAIL
check "an import cut short, imported again: the evaluation it lost runs again ($(said "$T/cut.jsonl"))" sh -c \
	"grep -q '^  #4 seed.c ($D/sample_2/seed.c): correct' '$T/k.out' && test \$(grep -c '\"type\":\"eval_finished\"' '$T/cut.jsonl') -eq 4"
diag $n0 "$T/k.out" "$T/k.err"

# kloop search --session goes on from the imported population
$KLOOP search --session "$T/s.jsonl" --rounds 1 $B >"$T/se.out" 2>"$T/se.err"
n0=$NFAIL
check "kloop search --session starts a search on the imported candidates" grep -q "^search started" "$T/se.out"
check "... its population holds them, by origin import" sh -c \
	"test \$(grep -Ec '^[1-4] +[^ ]+ +import ' '$T/se.out') -eq 4"
check "... and its first round's parents are among them" grep -Eq "^  #[124] (kernel.cpp|model_new.py|seed.c): " "$T/se.out"
diag $n0 "$T/se.out" "$T/se.err"

# export --kernelbench of each candidate, imported into a new session: the
# same sources and names, the same verdicts
mkdir -p "$T/exp"
for id in 1 2 3 4; do
	$KLOOP export "$T/s.jsonl" $id --kernelbench "$T/exp/c$id.py" >/dev/null 2>&1
done
$KLOOP import "$T/exp" --task softmax --session "$T/r.jsonl" --json $B >"$T/r.out" 2>"$T/r.err"
rc=$?
n0=$NFAIL
cands "$T/s.jsonl" | head -n 4 | sort >"$T/s.c"
cands "$T/r.jsonl" | sort >"$T/r.c"
check "the exports imported: exit 0, four verdicts and a summary as JSON lines (exit $rc)" sh -c \
	"test $rc -eq 0 && test \$(grep -c '\"type\": *\"verdict\"' '$T/r.out') -eq 4 && grep -q '\"type\": *\"summary\".*\"imported\": *4' '$T/r.out'"
if cmp -s "$T/s.c" "$T/r.c"; then
	ok "... the same candidates: names, sources and verdicts ($(tr '\n' ' ' <"$T/r.c"))"
elif sed 's/|[a-z_]*|/|/' "$T/s.c" | cmp -s - "$(sed 's/|[a-z_]*|/|/' "$T/r.c" >"$T/r.n" && echo "$T/r.n")" &&
	grep -q 'timing inconsistent' "$T/s.jsonl" "$T/r.jsonl"; then
	ok "... the same sources and names; a verdict differs only where the loaded machine made a time inconsistent"
else
	fail "... the same candidates: names, sources and verdicts (first: $(tr '\n' ' ' <"$T/s.c"); imported: $(tr '\n' ' ' <"$T/r.c"))"
fi
diag $n0 "$T/r.out" "$T/r.err"

# bad arguments: said, exit 2, nothing journaled
run noproblem import "$D" $B
check "import without --problem, --task or a session: which problem? (exit $rc)" sh -c \
	"test $rc -eq 2 && grep -q 'which problem are the files for? give --problem P.py' '$T/noproblem.err'"
run both import "$D" --task softmax --problem x.py $B
check "... --problem and --task both: refused (exit $rc)" sh -c \
	"test $rc -eq 2 && grep -q 'give --problem P.py or --task NAME, not both' '$T/both.err'"
run notpy import "$D" --problem tasks/softmax/task.json --session "$T/np.jsonl" $B
check "... --problem that is not a .py: refused before anything runs (exit $rc)" sh -c \
	"test $rc -eq 2 && grep -q 'not a KernelBench problem file (FILE.py' '$T/notpy.err' && test ! -e '$T/np.jsonl'"
run nofiles import "$T/exp/none" --task softmax $B
check "... a path that is not there: said (exit $rc)" sh -c \
	"test $rc -ne 0 && grep -q '$T/exp/none: No such file or directory' '$T/nofiles.err'"

if ! python3 -c 'import torch' >/dev/null 2>&1; then
	skip "import: PyTorch is not installed for python3, the KernelBench problem files did not run"
	exit 0
fi
# --problem: scalar init inputs reach both forms; the problem file in the
# directory is left out
P="$T/prob"
mkdir -p "$P"
cp tests/fixtures/torch/scaled_softmax.py $F/scaled_softmax.cpp $F/modelnew_scaled.py "$P/"
$KLOOP import "$P" --problem "$P/scaled_softmax.py" --session "$T/p.jsonl" $B >"$T/p.out" 2>"$T/p.err"
rc=$?
n0=$NFAIL
check "import --problem of a problem whose Model takes dim and scale: exit 0 ($rc)" test $rc -eq 0
check "... an extension's number parameters take get_init_inputs() ($(said "$T/p.jsonl"))" \
	grep -q "^  #[12] scaled_softmax.cpp ($P/scaled_softmax.cpp): correct" "$T/p.out"
check "... a ModelNew's self.dim and self.scale from __init__ too" \
	grep -q "^  #[12] modelnew_scaled.py ($P/modelnew_scaled.py): correct" "$T/p.out"
check "... the problem file itself left out of the candidates" \
	test "$(cands "$T/p.jsonl" | cut -d'|' -f1 | tr '\n' ' ')" = "modelnew_scaled.py scaled_softmax.cpp "
diag $n0 "$T/p.out" "$T/p.err"
printf 'import torch\nclass Model(:\n' >"$T/bad.py"
run badprob import "$P" --problem "$T/bad.py" --session "$T/b.jsonl" $B
check "a problem that does not load stops the import before anything is evaluated (exit $rc)" sh -c \
	"test $rc -eq 2 && grep -q 'the problem did not load, nothing was imported: $T/bad.py: syntax error at line 2' '$T/badprob.err' && test ! -e '$T/b.jsonl'"
