# layers.sh - the include graph of cli/ tui/ sessions/ engine/ worker/
# include/ has no circle (scripts/include_cycles.py: X.c and X.h are one
# module, X -> Y when either includes Y.h); each circle found is one
# "not ok" line naming it.  First the checker itself is shown a circle it
# must find, so that this test cannot pass by finding nothing.  Then the
# same for the call circles inside each folder (scripts/call_circles.py).
. tests/e2e/lib.sh

# a tree of three modules, a.h -> b.h -> c.c -> a.h, beside one that is fine
mkdir -p "$T/tree/engine/sub" "$T/tree/sessions/model"
printf '#include "b.h"\n' >"$T/tree/engine/a.h"
printf '#include "sub/c.h"\n' >"$T/tree/engine/b.h"
printf '#include "a.h"\n#include <stdio.h>\n' >"$T/tree/engine/sub/c.c"
: >"$T/tree/engine/sub/c.h"
printf '#include "a.h"\n' >"$T/tree/sessions/model/d.c"
python3 scripts/include_cycles.py "$T/tree" >"$T/planted" 2>&1
rc=$?
check "include_cycles.py finds a planted circle across folders, and only it ($(grep -c '^not ok - ' "$T/planted") found, exit $rc)" \
	test "$rc" -ne 0 -a "$(grep -c '^not ok - ' "$T/planted")" -eq 1 -a \
	"$(grep '^not ok - ' "$T/planted")" = "not ok - include cycle: engine/a -> engine/b -> engine/sub/c -> engine/a"

# the tree itself: its lines are this test's (one "not ok" per circle)
python3 scripts/include_cycles.py . >"$T/tree.out" 2>&1
rc=$?
cat "$T/tree.out"
[ "$rc" -eq 0 ] || grep -q '^not ok - ' "$T/tree.out" || fail "include_cycles.py exited with status $rc"

# the call graph inside each folder has no circle (scripts/call_circles.py:
# from the built objects' symbols, A -> B when A calls what B defines, both
# of one folder); first a planted one it must find: a.c <-> b.c, and c.c
# that only calls a.c
mkdir -p "$T/calls/engine/x" "$T/calls/build/engine/x"
printf 'int b(void);\nint a(void) { return b(); }\nint a2(void) { return 2; }\n' >"$T/calls/engine/x/a.c"
printf 'int a2(void);\nint b(void) { return a2(); }\n' >"$T/calls/engine/x/b.c"
printf 'int a(void);\nint c(void) { return a(); }\n' >"$T/calls/engine/x/c.c"
for f in a b c; do
	cc -c "$T/calls/engine/x/$f.c" -o "$T/calls/build/engine/x/$f.o" || fail "cc $f.c"
done
python3 scripts/call_circles.py "$T/calls" >"$T/calls.out" 2>&1
rc=$?
check "call_circles.py finds a planted call circle, and only it ($(grep -c '^not ok - ' "$T/calls.out") found, exit $rc)" \
	test "$rc" -ne 0 -a "$(grep -c '^not ok - ' "$T/calls.out")" -eq 1 -a \
	"$(grep '^not ok - ' "$T/calls.out")" = "not ok - call circle in engine/x/: a.c <-> b.c"

# a folder split into sub-folders (engine/measure: harness/, runner/, ...) is
# checked as a whole too: d.c <-> e.c across its sub-folders is found, and
# f.c <-> g.c inside one of them once, as that sub-folder's
mkdir -p "$T/split/engine/m/p" "$T/split/engine/m/q" "$T/split/build/engine/m/p" "$T/split/build/engine/m/q"
printf 'int e(void);\nint d(void) { return e(); }\nint d2(void) { return 2; }\n' >"$T/split/engine/m/p/d.c"
printf 'int d2(void);\nint e(void) { return d2(); }\n' >"$T/split/engine/m/q/e.c"
printf 'int g(void);\nint f(void) { return g(); }\nint f2(void) { return 2; }\n' >"$T/split/engine/m/p/f.c"
printf 'int f2(void);\nint g(void) { return f2(); }\n' >"$T/split/engine/m/p/g.c"
for f in p/d q/e p/f p/g; do
	cc -c "$T/split/engine/m/$f.c" -o "$T/split/build/engine/m/$f.o" || fail "cc $f.c"
done
python3 scripts/call_circles.py "$T/split" >"$T/split.out" 2>&1
rc=$?
check "call_circles.py finds a planted circle across sub-folders, and one inside a sub-folder once ($(grep -c '^not ok - ' "$T/split.out") found, exit $rc)" \
	test "$rc" -ne 0 -a "$(grep -c '^not ok - ' "$T/split.out")" -eq 2 -a \
	"$(grep '^not ok - ' "$T/split.out" | tr '\n' '|')" = "not ok - call circle across engine/m/: p/d.c <-> q/e.c|not ok - call circle in engine/m/p/: f.c <-> g.c|"

# a top folder split into sub-folders (sessions: model/, driver/, ...) is
# checked as a whole too: h.c <-> i.c across them is found
mkdir -p "$T/top/sessions/p" "$T/top/sessions/q" "$T/top/build/sessions/p" "$T/top/build/sessions/q"
printf 'int i(void);\nint h(void) { return i(); }\nint h2(void) { return 2; }\n' >"$T/top/sessions/p/h.c"
printf 'int h2(void);\nint i(void) { return h2(); }\n' >"$T/top/sessions/q/i.c"
for f in p/h q/i; do
	cc -c "$T/top/sessions/$f.c" -o "$T/top/build/sessions/$f.o" || fail "cc $f.c"
done
python3 scripts/call_circles.py "$T/top" >"$T/top.out" 2>&1
rc=$?
check "call_circles.py finds a planted circle across a top folder's sub-folders ($(grep -c '^not ok - ' "$T/top.out") found, exit $rc)" \
	test "$rc" -ne 0 -a "$(grep -c '^not ok - ' "$T/top.out")" -eq 1 -a \
	"$(grep '^not ok - ' "$T/top.out")" = "not ok - call circle across sessions/: p/h.c <-> q/i.c"

# the tree itself (its objects: make builds them first)
python3 scripts/call_circles.py . >"$T/calls_tree.out" 2>&1
rc=$?
cat "$T/calls_tree.out"
[ "$rc" -eq 0 ] || grep -q '^not ok - ' "$T/calls_tree.out" || fail "call_circles.py exited with status $rc"

[ "$NFAIL" -eq 0 ]
