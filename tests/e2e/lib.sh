# tests/e2e/lib.sh - helpers for the whole-program tests (sourced).
# ok NAME / fail NAME print the lines tests/run.sh counts; check NAME CMD...
# runs CMD and reports on its exit status.
KLOOP=${KLOOP:-./bin/kloop}
T=$(mktemp -d "${TMPDIR:-/tmp}/kloop-e2e.XXXXXX")
export XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state"
trap 'rm -rf "$T"' EXIT
ok() { echo "ok - $*"; }
fail() { echo "not ok - $*"; }
skip() { echo "skip - $*"; }
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name"; fi
}
# json FIELD FILE: print a top-level or dotted field of a JSON file (python3)
json() {
	python3 -c 'import json,sys
v=json.load(open(sys.argv[2]))
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v.get(k)
print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1" "$2"
}
