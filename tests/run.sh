#!/bin/sh
# Run every unit test binary given as arguments, then every tests/e2e/*.sh
# (E2E="a b": only tests/e2e/a.sh and b.sh), and print one closing line
# "N passed, N failed, N skipped".  Each test prints "ok - ...",
# "not ok - ..." or "skip - ..." lines.
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/tests/out"
rm -rf "$out"
mkdir -p "$out"
log="$out/all.log"
: >"$log"
# the python3 of every test: the one on PATH, unless it has no PyTorch and
# Debian's has (make deps installs python3-torch): then Debian's, so the
# PyTorch suites run where a python3 of another install comes first on PATH
if ! python3 -c 'import torch' >/dev/null 2>&1 && [ -x /usr/bin/python3 ] &&
	/usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
	mkdir -p "$out/python"
	ln -sf /usr/bin/python3 "$out/python/python3"
	PATH="$out/python:$PATH"
	export PATH
	echo "# python3 is /usr/bin/python3 (it has PyTorch)"
fi
scripts="$top/tests/e2e/*.sh"
if [ -n "${E2E:-}" ]; then
	scripts=""
	for e in $E2E; do scripts="$scripts $top/tests/e2e/$e.sh"; done
fi
for t in "$@" $scripts; do
	[ -e "$t" ] || continue
	case "$t" in */lib.sh) continue ;; esac
	name=$(basename "$t")
	echo "# $name"
	case "$t" in
	*.sh) (cd "$top" && sh "$t") >"$out/$name.log" 2>&1 ;;
	*) (cd "$top" && "$t") >"$out/$name.log" 2>&1 ;;
	esac
	rc=$?
	grep -E '^(ok|not ok|skip) - |^#\| ' "$out/$name.log" | head -n 2000 | sed 's/^/  /'
	if [ $rc -ne 0 ] && ! grep -q '^not ok - ' "$out/$name.log"; then
		echo "not ok - $name exited with status $rc" | tee -a "$out/$name.log" | sed 's/^/  /'
		tail -n 15 "$out/$name.log" | sed 's/^/    | /'
	fi
	cat "$out/$name.log" >>"$log"
done
pass=$(grep -c '^ok - ' "$log")
fail=$(grep -c '^not ok - ' "$log")
skip=$(grep -c '^skip - ' "$log")
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
