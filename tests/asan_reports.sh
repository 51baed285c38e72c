#!/bin/sh
# tests/asan_reports.sh DIR - after `make asan`'s suite: the reports ASan
# and LeakSanitizer wrote into DIR (log_path, one file per process that had
# one) instead of the programs' stderr.  Prints each and exits 1 when there
# is any; 0 with one line when there is none.
dir=${1:?usage: tests/asan_reports.sh DIR}
n=0
for f in "$dir"/*; do
	[ -s "$f" ] || continue
	n=$((n + 1))
	echo "== $f"
	head -n 80 "$f"
done
if [ $n -gt 0 ]; then
	echo "asan: $n sanitizer report(s) in $dir (a leak, or an error in a program whose exit status no test checks)"
	exit 1
fi
echo "asan: no sanitizer reports (leaks checked)"
