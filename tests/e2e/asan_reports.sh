# asan_reports.sh - `make asan` fails on every sanitizer report a process
# left in the reports directory (tests/asan_reports.sh), but not on the
# report of a leak check cut short by the process being killed from outside
# ("Unable to get registers from thread N.": that thread's stack could not
# be scanned, so the leaks it lists are not findings).  A leak in another
# file, or a memory error next to such lines, still fails.
. tests/e2e/lib.sh
R=tests/asan_reports.sh
mkdir -p "$T/cut" "$T/leak" "$T/mixed" "$T/none"
cut='==11044==Unable to get registers from thread 10973.'
printf '%s\n' "$cut" >"$T/cut/asan.10973"
printf '%s\n' "$cut" >"$T/leak/asan.10973"
printf '%s\n' '==7==ERROR: LeakSanitizer: detected memory leaks' '' \
	'Direct leak of 24 byte(s) in 1 object(s) allocated from:' >"$T/leak/asan.7"
printf '%s\n' "$cut" '==9==ERROR: LeakSanitizer: detected memory leaks' '' \
	'Direct leak of 8 byte(s) in 1 object(s) allocated from:' >"$T/mixed/asan.9"
mkdir -p "$T/error"
printf '%s\n' "$cut" '==5==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020' \
	>"$T/error/asan.5"
sh $R "$T/cut" >"$T/cut.out" 2>&1
check "a process killed during its leak check at exit is no finding" \
	test $? -eq 0
check "and the run says so, naming the file" \
	grep -q "asan.10973: the process was killed while LeakSanitizer checked it" "$T/cut.out"
sh $R "$T/leak" >"$T/leak.out" 2>&1
check "a leak next to it fails the run" test $? -eq 1
check "and is printed, with the count" sh -c \
	"grep -q 'Direct leak of 24 byte' '$T/leak.out' && grep -q '^asan: 1 sanitizer report' '$T/leak.out'"
sh $R "$T/mixed" >"$T/mixed.out" 2>&1
rc=$?
check "the leaks a cut check lists are not findings, and are counted" sh -c \
	"test $rc -eq 0 && grep -q 'asan.9: the process was killed .*1 leak(s) it could not tell' '$T/mixed.out'"
sh $R "$T/error" >"$T/error.out" 2>&1
check "a memory error next to such a line fails the run" test $? -eq 1
sh $R "$T/none" >"$T/none.out" 2>&1
rc=$?
check "no reports pass, and say so" sh -c \
	"test $rc -eq 0 && grep -q '^asan: no sanitizer reports' '$T/none.out'"
exit $((NFAIL > 0))
