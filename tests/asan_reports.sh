#!/bin/sh
# tests/asan_reports.sh DIR - after `make asan`'s suite: the reports ASan
# and LeakSanitizer wrote into DIR (log_path, one file per process that had
# one) instead of the programs' stderr.  Prints each and exits 1 when there
# is any; 0 with one line when there is none.
#
# One kind of file is no finding: LeakSanitizer checks a process as it
# exits, stopping its threads under ptrace; a process killed from outside in
# that moment (the kill -9 suite kills kloop at random points, the pool ends
# a worker that is slow to leave) leaves "Unable to get registers from
# thread N." lines: the thread was gone, so its stack and registers, where
# the pointers to the process's memory were, could not be scanned, and any
# leak the check went on to report is one it could not tell from memory in
# use.  Such a file is named, with its count, and does not fail the run
# unless it also holds a memory error (ASan's or UBSan's), which is reported
# when it happens, not at exit.  Any other file fails the run.
dir=${1:?usage: tests/asan_reports.sh DIR}
n=0
cut=0
for f in "$dir"/*; do
	[ -s "$f" ] || continue
	if grep -q '^==[0-9]*==Unable to get registers from thread [0-9]*\.$' "$f" &&
		! grep -Eq 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error' "$f"; then
		cut=$((cut + 1))
		leaks=$(grep -c 'leak of [0-9]* byte' "$f")
		echo "asan: $f: the process was killed while LeakSanitizer checked it at exit (not a finding; $leaks leak(s) it could not tell from memory in use)"
		continue
	fi
	n=$((n + 1))
	echo "== $f"
	head -n 80 "$f"
done
if [ $n -gt 0 ]; then
	echo "asan: $n sanitizer report(s) in $dir (a leak, or an error in a program whose exit status no test checks)"
	exit 1
fi
echo "asan: no sanitizer reports (leaks checked; $cut process(es) killed during their check at exit)"
