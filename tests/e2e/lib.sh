# tests/e2e/lib.sh - helpers for the whole-program tests (sourced).
# ok NAME / fail NAME print the lines tests/run.sh counts; check NAME CMD...
# runs CMD and reports on its exit status.
KLOOP=${KLOOP:-./bin/kloop}
T=$(mktemp -d "${TMPDIR:-/tmp}/kloop-e2e.XXXXXX")
export XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state" XDG_DATA_HOME="$T/data"
# no worker kept warm after a test's kloop eval (on the GPU that is the
# default) unless the test asks with --warm; those a test keeps are its own
# (their sockets in its runtime directory) and end with it
export KLOOP_WARM_S=0 XDG_RUNTIME_DIR="$T/run"
mkdir -m 700 "$T/run"
# (a test's tmux server, and what still runs in its panes, end with it)
trap '[ -S "$T/tmux.sock" ] && tmux -S "$T/tmux.sock" kill-server 2>/dev/null; $KLOOP warm stop >/dev/null 2>&1; rm -rf "$T"' EXIT
NFAIL=0
ok() { echo "ok - $*"; }
fail() {
	NFAIL=$((NFAIL + 1))
	echo "not ok - $*"
}
skip() { echo "skip - $*"; }
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name"; fi
}
# diag SINCE FILE...: when a check failed since NFAIL was SINCE, print the
# first lines of each FILE as "#| " lines, which tests/run.sh passes on to
# its own output (a CI log shows what the program said, not only the verdict)
diag() {
	_since=$1
	shift
	[ "$NFAIL" -gt "$_since" ] || return 0
	for _f in "$@"; do
		echo "#| --- $_f"
		head -n 40 "$_f" 2>/dev/null | cut -c1-300 | tr -d '\033' | sed 's/^/#| /'
	done
}
# said FILE...: each verdict in FILE (`kloop eval --json` lines, or a
# session journal's eval_finished events) as "NAME: status: reason", on one
# line (tests/e2e/said.py): what a check about verdicts prints of what it got
said() { python3 tests/e2e/said.py "$@"; }
# run NAME ARGS...: kloop ARGS > $T/NAME.out 2> $T/NAME.err; $rc
run() {
	name=$1
	shift
	$KLOOP "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}
# corpus_steering DIR: the command provider answering from the search
# corpus (tests/fixtures/search), one request at a time, in the
# configuration; and in DIR a softmax task "slowmax" whose seed is the
# corpus's slow.c (a search steered from `kloop shell` starts there)
corpus_steering() {
	mkdir -p "$XDG_CONFIG_HOME/kloop"
	printf 'provider = command\ncommand = python3 %s\nllm_max_in_flight = 1\n' \
		tests/fixtures/search/corpus_llm.py >"$XDG_CONFIG_HOME/kloop/config"
	cp -r tasks/softmax "$1"
	cp tests/fixtures/search/slow.c "$1/seed.c"
	python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["name"]="slowmax"; j["seeds"]={"host": ["seed.c"]}
json.dump(j, open(sys.argv[1], "w"))' "$1/task.json"
}
# kb_task TASK DIR: a copy of bundled task TASK in DIR judged by KernelBench's
# tolerance ("tolerance": "kernelbench")
kb_task() {
	mkdir -p "$2"
	cp tasks/$1/* "$2/"
	python3 - "$2/task.json" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["tolerance"] = "kernelbench"
json.dump(d, open(p, "w"), indent=1)
EOF
}
# json FIELD FILE: print a top-level or dotted field of a JSON file (python3)
json() {
	python3 -c 'import json,sys
v=json.load(open(sys.argv[2]))
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v.get(k)
print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1" "$2"
}
# json_true FILE EXPR: exit 0 when the Python expression EXPR over j (the
# JSON in FILE) is true, 1 when false (python3)
json_true() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$1" "$2"
}
# eval_json OUT FILES...: kloop eval softmax FILES with the script's flags $B,
# one verdict a line (--json) into OUT, its stderr into OUT.err
eval_json() {
	out=$1
	shift
	$KLOOP eval softmax "$@" $B --json >"$out" 2>"$out.err"
}
# line_field N DOTTED FILE: a top-level or dotted field of the Nth line
# (from 0) of FILE, a JSON object a line such as eval_json's (python3;
# None where a key is missing)
line_field() {
	python3 -c 'import json,sys
v=json.loads(open(sys.argv[3]).read().splitlines()[int(sys.argv[1])])
for k in sys.argv[2].split("."):
    v=v.get(k) if isinstance(v,dict) else None
print(v)' "$1" "$2" "$3"
}
# cand_field FILE NAME DOTTED: a top-level or dotted field of the verdict of
# candidate NAME (its file's base name) among FILE's `kloop eval --json`
# lines (python3; an object or list printed as JSON)
cand_field() {
	python3 -c 'import json,sys
for line in open(sys.argv[1]):
    try:
        r=json.loads(line)
    except ValueError:
        continue
    if not isinstance(r,dict) or str(r.get("source","")).split("/")[-1]!=sys.argv[2]:
        continue
    v=r
    for k in sys.argv[3].split("."):
        v=v.get(k) if isinstance(v,dict) else None
    print(json.dumps(v) if isinstance(v,(dict,list)) else v)
    break' "$@"
}
# --- the TUI in tmux: a private server in $T; tui_start CMD starts CMD in a
# 100x30 session; screen prints what it shows; wait_for PATTERN [SECONDS]
# polls the screen (grep -E) until it matches or the deadline passes.
tm() {
	[ -f "$T/tmux.conf" ] || printf 'set -g remain-on-exit on\nset -g status off\n' >"$T/tmux.conf"
	tmux -f "$T/tmux.conf" -S "$T/tmux.sock" "$@"
}
# tui_needs NAME: end the test with a skip line where tmux is not
# installed; else KL is $KLOOP's absolute path (a tmux pane starts elsewhere)
tui_needs() {
	if ! command -v tmux >/dev/null 2>&1; then
		skip "$1: tmux is not installed"
		exit 0
	fi
	KL=$(cd "$(dirname "$KLOOP")" && pwd)/$(basename "$KLOOP")
}
TUI_N=0
tui_start() {
	TUI_N=$((TUI_N + 1))
	K=k$TUI_N
	tm new-session -d -s "$K" -x "${TUI_W:-100}" -y "${TUI_H:-30}" "$1"
}
keys() { tm send-keys -t "$K" "$@"; }
screen() { tm capture-pane -p -t "$K"; }
# the screen with the lines that scrolled off it (what a program printed on exit)
screen_all() { tm capture-pane -p -S -200 -t "$K"; }
# _wait_grep GREP-FLAGS PATTERN SECONDS: until grep finds PATTERN on the
# screen captured into $T/screen; on timeout the screen, and 1
_wait_grep() {
	_end=$(($(date +%s) + $3))
	while :; do
		screen >"$T/screen" 2>/dev/null
		grep "$1" -- "$2" "$T/screen" && return 0
		if [ "$(date +%s)" -ge "$_end" ]; then
			echo "# the screen while waiting for: $2"
			sed 's/^/#   /' "$T/screen"
			return 1
		fi
		sleep 0.05
	done
}
wait_for() { _wait_grep -Eq "$1" "${2:-15}"; }
# wait_for_text TEXT [SECONDS]: the same for a fixed string
wait_for_text() { _wait_grep -qF "$1" "${2:-15}"; }
# screen_until SHELL-CMD [SECONDS]: until CMD succeeds on the screen
# captured into $T/screen (a check of several lines of one screen, read
# again until the TUI has drawn them all: a screen caught between two
# draws showed half a pane)
screen_until() {
	_end=$(($(date +%s) + ${2:-15}))
	while :; do
		screen >"$T/screen" 2>/dev/null
		sh -c "$1" && return 0
		if [ "$(date +%s)" -ge "$_end" ]; then
			echo "# the screen while waiting for: $1"
			sed 's/^/#   /' "$T/screen"
			return 1
		fi
		sleep 0.05
	done
}
# wait_gone PATTERN [SECONDS]: until the screen no longer shows PATTERN
wait_gone() {
	_end=$(($(date +%s) + ${2:-15}))
	while :; do
		screen >"$T/screen" 2>/dev/null
		grep -Eq -- "$1" "$T/screen" || return 0
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.05
	done
}
# the alternate screen of the session's pane (1 while a full-screen app runs)
alt_on() { tm display -p -t "$K" '#{alternate_on}'; }
# fake_llm SCRIPT: start the fake LLM server (tests/fake_llm/server.py, real
# HTTP on 127.0.0.1) with SCRIPT, logging requests to $T/server.log; sets
# PORT and stops the server (and any tmux server) at exit.  Returns 1 when
# it does not start.
fake_llm() {
	# the server is on 127.0.0.1: no proxy in between
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
	python3 tests/fake_llm/server.py --script "$1" --port-file "$T/port" --log "$T/server.log" \
		>/dev/null 2>&1 &
	SRV=$!
	trap 'kill $SRV 2>/dev/null; [ -S "$T/tmux.sock" ] && tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
	_i=0
	while [ ! -s "$T/port" ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
	PORT=$(cat "$T/port" 2>/dev/null)
	[ -n "$PORT" ]
}
