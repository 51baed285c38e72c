# layers.sh - the include graph of cli/ tui/ sessions/ engine/ worker/
# include/ has no circle (scripts/include_cycles.py: X.c and X.h are one
# module, X -> Y when either includes Y.h); each circle found is one
# "not ok" line naming it.  First the checker itself is shown a circle it
# must find, so that this test cannot pass by finding nothing.
. tests/e2e/lib.sh

# a tree of three modules, a.h -> b.h -> c.c -> a.h, beside one that is fine
mkdir -p "$T/tree/engine/sub" "$T/tree/sessions"
printf '#include "b.h"\n' >"$T/tree/engine/a.h"
printf '#include "sub/c.h"\n' >"$T/tree/engine/b.h"
printf '#include "a.h"\n#include <stdio.h>\n' >"$T/tree/engine/sub/c.c"
: >"$T/tree/engine/sub/c.h"
printf '#include "a.h"\n' >"$T/tree/sessions/d.c"
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

[ "$NFAIL" -eq 0 ]
