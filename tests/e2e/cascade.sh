# cascade.sh - the evaluation cascade on the host backend (compile, small
# shapes, full shapes, quick timing, full timing, A/B): candidates made from
# the softmax seed by one change each, so that where each one stops is
# certain, and the stage it stopped at is in its result.
. tests/e2e/lib.sh
EVAL="--backend host --budget 0.2 --trials 2"
SEED=tasks/softmax/seed.c
COLS='int64_t cols = in\[0\].shape\[in\[0\].ndim - 1\];'
# rows taken to be 4096 long (the host set's cols): wrong at the small
# shapes (cols 512), yet inside its buffers
sed "s/$COLS/int64_t cols = 4096;/" $SEED >"$T/small_wrong.c"
# a SIGSEGV unless the rows are 4096 long: a crash at the small shapes
sed "s/$COLS/& if (cols != 4096) *(volatile int *)0 = 0;/" $SEED >"$T/small_crash.c"
# the last row left at zero when the rows are 4096 long: wrong at the full shapes only
sed 's|yr\[c\] /= sum;|yr[c] = cols == 4096 \&\& r == rows - 1 ? 0.0f : yr[c] / sum;|' $SEED \
	>"$T/full_wrong.c"
cp $SEED "$T/seed.c"
printf 'int kl_run(void) { return undeclared; }\n' >"$T/no_compile.c"
# stage FILE STATUS STAGE PASSED: kloop eval FILE --json stops at STAGE with
# STATUS, having passed the stages PASSED (comma-separated)
stage() {
	$KLOOP eval softmax "$1" --json $EVAL >"$T/r.json" 2>"$T/r.err"
	python3 - "$T/r.json" "$2" "$3" "$4" <<'PY' >"$T/py.out" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
passed = [s["stage"] for s in r["stages"]]
assert r["status"] == sys.argv[2], (r["status"], r["reason"])
assert r["stage"] == sys.argv[3], (r["stage"], r["reason"])
assert passed == [x for x in sys.argv[4].split(",") if x], passed
PY
}
for c in "small_wrong incorrect:small shapes:compile" \
	"small_crash crashed:small shapes:compile" \
	"full_wrong incorrect:full shapes:compile,small shapes" \
	"no_compile compile_error:compile:" \
	"seed correct:full timing:compile,small shapes,full shapes,quick timing,full timing"; do
	f=${c%% *}
	rest=${c#* }
	st=${rest%%:*}
	rest=${rest#*:}
	sg=${rest%%:*}
	stage "$T/$f.c" "$st" "$sg" "${rest#*:}"
	if [ $? -eq 0 ]; then ok "cascade: $f.c is $st at stage '$sg'"; else
		fail "cascade: $f.c is $st at stage '$sg'"
		sed 's/^/#   /' "$T/py.out" | tail -3
	fi
done
