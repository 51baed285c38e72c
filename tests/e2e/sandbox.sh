# sandbox.sh - evil candidates (tests/fixtures/evil) against the sandboxed
# runner on the host backend: each gets the verdict it deserves, leaves
# nothing behind, reads no secret, reaches no network, forges nothing; and
# no worker outlives kloop, whatever signal ends it.
. tests/e2e/lib.sh
E=tests/fixtures/evil
B="--backend host --budget 0.3 --trials 5"
if ! ./bin/kloop doctor | grep -q '^sandbox *ok'; then
	fail "bubblewrap runs here (kloop doctor: $(./bin/kloop doctor | grep '^sandbox'))"
	exit 0
fi
ok "kloop doctor says bubblewrap can sandbox candidates"

# the fixtures share softmax_body.h: each candidate is one source file
mkdir -p "$T/evil"
for f in $E/*.c; do
	{ grep -v '#include "softmax_body.h"' "$E/softmax_body.h"; grep -v '#include "softmax_body.h"' "$f"; } |
		sed "s|@CACHE@|$XDG_CACHE_HOME|g" >"$T/evil/$(basename "$f")"
done
V="$T/evil"


# 1. telling calls apart by their return address: every call comes from one place
eval_json "$T/ra.json" $V/retaddr_skip.c
check "retaddr_skip: correct, since every call looks alike ($(line_field 0 status "$T/ra.json"))" \
	test "$(line_field 0 status "$T/ra.json")" = correct
sp=$(line_field 0 speedup "$T/ra.json")
check "retaddr_skip: an honest speedup (${sp}x, not thousands)" python3 -c "import sys; assert float(sys.argv[1]) < 20" "$sp"

# 2. skipping the work after the trials: caught by a checked timed run
eval_json "$T/cs.json" $V/count_skip.c
check "count_skip: incorrect in a checked timed run, or the run after timing, always checked ($(line_field 0 reason "$T/cs.json"))" \
	sh -c "test \"\$(python3 -c 'import json;print(json.loads(open(\"$T/cs.json\").readline())[\"status\"])')\" = incorrect && grep -Eq 'timed run|the run after timing' '$T/cs.json'"

# 2b. telling timed runs by the clock, or being right at one shape only
# (issue 25's classes): incorrect wherever the line is drawn
eval_json "$T/ck.json" $V/clock_skip.c $V/shape_special.c $V/flush_skip.c
check "clock_skip: incorrect ($(line_field 0 reason "$T/ck.json" | cut -c1-120))" \
	test "$(line_field 0 status "$T/ck.json")" = incorrect
check "shape_special: right at the timed shape only, incorrect at the small shapes ($(line_field 1 reason "$T/ck.json" | cut -c1-120))" \
	sh -c "test '$(line_field 1 status "$T/ck.json")' = incorrect && sed -n 2p '$T/ck.json' | grep -q 'small shapes'"
check "flush_skip: telling a timed run by its flushed cache buys nothing: $(line_field 2 status "$T/ck.json") ($(line_field 2 reason "$T/ck.json" | cut -c1-100))" \
	sh -c "test '$(line_field 2 status "$T/ck.json")' = incorrect || python3 -c \"import json; r=json.loads(open('$T/ck.json').read().splitlines()[2]); assert r['status']=='correct' and r['speedup'] < 20\""

# 3. an output cache on disk, over three runs of kloop
rm -rf /tmp/kloop-evil-cache
for i in 1 2 3; do
	eval_json "$T/dc$i.json" $V/disk_cache.c
	check "disk_cache run $i: correct, so no cache hit (a hit returns 77)" test "$(line_field 0 status "$T/dc$i.json")" = correct
done
check "disk_cache: nothing written to the host's /tmp" test ! -e /tmp/kloop-evil-cache

# 4. forged protocol lines on fds 100..109, with an honest candidate after it
eval_json "$T/ff.json" $V/forge_fds.c tasks/softmax/seed.c
check "forge_fds: nothing forged reaches the results" sh -c "! grep -q forged '$T/ff.json'"
check "forge_fds: both results are real (correct, correct; got $(said "$T/ff.json"))" \
	test "$(line_field 0 status "$T/ff.json") $(line_field 1 status "$T/ff.json")" = "correct correct"
check "forge_fds: an honest speedup ($(line_field 0 speedup "$T/ff.json")x)" \
	python3 -c "import sys; assert float(sys.argv[1]) < 20" "$(line_field 0 speedup "$T/ff.json")"
eval_json "$T/fc.json" $V/forge_ctl.c
check "forge_ctl: writing to the runner's channel is incorrect ($(line_field 0 reason "$T/fc.json"))" \
	sh -c "test '$(line_field 0 status "$T/fc.json")' = incorrect && grep -q 'control channel' '$T/fc.json'"
# the next request read before the runner reads it (issue 37): a SIGIO on
# its socket, a SIGALRM timer, their handler run as kloop lets the runner
# go; the runner holds signals outside kl_run, the filter refuses timers
eval_json "$T/pk.json" $V/peek_request.c tasks/softmax/seed.c
check "peek_request: no handler of its ran before the runner read a request, no timer was set: correct, as the seed beside it (77: it peeked, 78: a timer; got $(said "$T/pk.json"))" \
	test "$(line_field 0 status "$T/pk.json") $(line_field 1 status "$T/pk.json")" = "correct correct"

# 5. patching the comparison: it is in another process
eval_json "$T/pc.json" $V/patch_compare.c
check "patch_compare: incorrect, NaN seen ($(line_field 0 reason "$T/pc.json"))" \
	sh -c "test '$(line_field 0 status "$T/pc.json")' = incorrect && grep -q NaN '$T/pc.json'"

# 6. 16 spinning threads, then an innocent candidate
eval_json "$T/th.json" $V/threads.c tasks/softmax/seed.c
check "threads: the threads' candidate and the innocent one after it are both correct" \
	test "$(line_field 0 status "$T/th.json") $(line_field 1 status "$T/th.json")" = "correct correct"

# 7. secrets: a file in the host's /tmp and $HOME, other processes' environments
echo "kloop-secret-7f3a9" >/tmp/kloop-evil-secret
SECRET_ENV=kloop-secret-env-51c2 eval_json "$T/rs.json" $V/read_secret.c
check "read_secret: crashed (SIGABRT)" test "$(line_field 0 status "$T/rs.json")" = crashed
check "read_secret: no secret in its report" sh -c "! grep -q 'kloop-secret-' '$T/rs.json' '$T/rs.json.err'"
eval_json "$T/is.json" $V/include_secret.c
check "include_secret: compile_error ($(line_field 0 reason "$T/is.json"))" \
	test "$(line_field 0 status "$T/is.json")" = compile_error
check "include_secret: the compile log says what the compiler can see, and holds no secret" \
	sh -c "grep -q 'runs in a sandbox' '$T/is.json' && ! grep -q 'kloop-secret-' '$T/is.json'"
rm -f /tmp/kloop-evil-secret

# 8. the network
python3 -c '
import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1",47391)); s.listen(4); s.settimeout(30)
try:
    c,_=s.accept(); open(sys.argv[1],"w").write("connected")
except Exception: pass' "$T/net.flag" &
lp=$!
sleep 0.3
eval_json "$T/nw.json" $V/network.c
kill $lp 2>/dev/null
wait $lp 2>/dev/null
check "network: correct" test "$(line_field 0 status "$T/nw.json")" = correct
check "network: no connection reached 127.0.0.1:47391" test ! -e "$T/net.flag"

# 9. a setsid daemon
eval_json "$T/dm.json" $V/daemon.c
sleep 0.5
left=$(grep -l '^kl-evil-daemon$' /proc/[0-9]*/comm 2>/dev/null | wc -l)
check "daemon: correct, and no kl-evil-daemon left running ($left)" \
	test "$(line_field 0 status "$T/dm.json")" = correct -a "$left" -eq 0

# 10. the compile cache: out of reach, and verified on load
eval_json "$T/c1.json" tasks/softmax/seed.c
eval_json "$T/oc.json" $V/overwrite_cache.c
eval_json "$T/c2.json" tasks/softmax/seed.c
check "overwrite_cache: the cached objects are out of its reach (it overwrote none)" \
	sh -c "! grep -q 'overwrote [1-9]' '$T/oc.json.err' '$T/oc.json'"
check "overwrite_cache: the seed, cached, is still correct" \
	test "$(line_field 0 status "$T/c2.json") $(line_field 0 compile.cached "$T/c2.json")" = "correct True"
for so in "$XDG_CACHE_HOME"/kloop/so/*.so; do printf 'tampered' >>"$so"; done
eval_json "$T/c3.json" tasks/softmax/seed.c
check "a cached object changed on disk is not loaded: compiled again (cached: $(line_field 0 compile.cached "$T/c3.json")), correct" \
	test "$(line_field 0 status "$T/c3.json") $(line_field 0 compile.cached "$T/c3.json")" = "correct False"

# 11. the session journal through /proc/PPID/fd
$KLOOP eval softmax $V/journal_proc.c $B --session "$T/s.kloop" --json >"$T/jp.json" 2>"$T/jp.err"
check "journal_proc: correct" test "$(line_field 0 status "$T/jp.json")" = correct
check "journal_proc: no forged event in the journal" sh -c "! grep -q '^{\"type\":\"eval_finished\",\"forged\"' '$T/s.kloop'"

# 12. killing its parent: crashed, and the next candidate runs
eval_json "$T/kp.json" $V/kill_parent.c tasks/softmax/seed.c
check "kill_parent: crashed, then the seed is correct ($(line_field 0 status "$T/kp.json") $(line_field 1 status "$T/kp.json"))" \
	test "$(line_field 0 status "$T/kp.json") $(line_field 1 status "$T/kp.json")" = "crashed correct"

# 13. API keys are not in any worker's environment
OPENAI_API_KEY=sk-kloop-evil-key-0042 ANTHROPIC_API_KEY=sk-ant-kloop-evil-0042 \
	eval_json "$T/pk.json" $V/print_key.c
check "print_key: crashed" test "$(line_field 0 status "$T/pk.json")" = crashed
check "print_key: no key in its report" sh -c "! grep -q 'kloop-evil-.*0042' '$T/pk.json' '$T/pk.json.err'"
check "print_key: it saw none" grep -q 'OPENAI_API_KEY=(none) ANTHROPIC_API_KEY=(none)' "$T/pk.json"

# 14. no worker outlives kloop: SIGTERM, SIGKILL, SIGHUP while a candidate hangs
mkdir -p "$T/orphans"
cat >"$T/orphans/hang.c" <<'C'
#include "kloop.h"
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	(void)in; (void)n_in; (void)out; (void)n_out; (void)stream;
	for (volatile int i = 0;; i++)
		;
}
C
top=$(pwd)
# what kloop ran is known by its process tree before the signal (inside the
# sandbox a runner's cwd is the sandbox's /tmp, and other kloops may run on
# the machine): after it, none of that tree may be left
# tree PID: "pid starttime" of PID and every process below it (starttime
# tells a pid reused later apart); alive LIST: those of LIST still running
# (zombies are not)
tree() {
	python3 - "$1" <<'PY'
import os, sys
kids, start = {}, {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            f = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(f[1]), []).append(int(d))
        start[int(d)] = f[19]
todo, seen = [int(sys.argv[1])], []
while todo:
    p = todo.pop()
    if p in start:
        seen.append(p)
    todo += kids.get(p, [])
for p in seen:
    print(p, start[p])
PY
}
alive() {
	while read -r pid st; do
		f=$( (cat "/proc/$pid/stat" 2>/dev/null || true) | sed 's/.*) //')
		# a zombie has ended (its parent, or init, has yet to reap it)
		[ "$(echo "$f" | cut -d' ' -f20)" = "$st" ] && [ "$(echo "$f" | cut -d' ' -f1)" != Z ] &&
			printf '%s(%s) ' "$pid" "$(cat "/proc/$pid/comm" 2>/dev/null)"
	done <"$1"
}
for sig in TERM KILL HUP; do
	d="$T/orphans/$sig"
	mkdir -p "$d"
	(cd "$d" && exec "$top/bin/kloop" eval softmax "$T/orphans/hang.c" $B --timeout 60 >/dev/null 2>&1) &
	kp=$!
	# wait until the candidate runs (its worker's cwd is $d)
	n=0
	while [ $n -lt 100 ]; do
		c=0
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/cwd" 2>/dev/null)" = "$d" ] && c=$((c + 1))
		done
		[ $c -ge 3 ] && break
		sleep 0.1
		n=$((n + 1))
	done
	sleep 0.5
	tree $kp >"$T/tree"
	kill -$sig $kp
	wait $kp 2>/dev/null
	sleep 1
	left=""
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$d" ] && left="$left $(cat "$p/comm" 2>/dev/null)"
	done
	newr=$(alive "$T/tree")
	check "SIG$sig of kloop while a candidate hangs leaves no process behind (${left:-none}; of its $(wc -l <"$T/tree") processes: ${newr:-none})" \
		test -z "$left$newr"
done

# 15. a poison pill: a candidate whose evaluation the session did not live
# through twice, running, is marked and not run again when the session is
# reopened; one that waited behind it in the queue is not
P="$T/pill.jsonl"
# wait_running N: until the journal says the candidate's code runs for the
# Nth time (eval_running: a runner seen in /proc may still be the
# reference's, timed as the worker starts, and a session killed then was
# not the candidate's doing)
wait_running() {
	n=0
	while [ $n -lt 300 ]; do
		[ "$(grep -c '"type":"eval_running","candidate":1' "$P" 2>/dev/null)" -ge "$1" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
}
mkdir -p "$T/pill1" "$T/pill2" "$T/pill3"
(cd "$T/pill1" && exec "$top/bin/kloop" eval softmax "$T/orphans/hang.c" "$top/tasks/softmax/seed.c" $B --timeout 60 --session "$P" >/dev/null 2>&1) &
kp=$!
wait_running 1
kill -KILL $kp
wait $kp 2>/dev/null
(cd "$T/pill2" && exec "$top/bin/kloop" shell softmax $B --timeout 60 --session "$P" </dev/null >/dev/null 2>&1) &
kp=$!
wait_running 2
kill -KILL $kp
wait $kp 2>/dev/null
check "the journal holds two evaluations of the hanging candidate that never finished, running both times" \
	test "$(grep -c '"type":"eval_started","candidate":1' "$P")" -eq 2 -a "$(grep -c '"type":"eval_running","candidate":1' "$P")" -eq 2 -a "$(grep -c '"type":"eval_finished"' "$P")" -eq 0
(cd "$T/pill3" && echo list | "$top/bin/kloop" shell softmax $B --timeout 60 --session "$P" >"$T/pill3.out" 2>&1)
check "reopened, the session marks it abandoned (crashed) instead of running it a third time" \
	sh -c "grep -q '\"abandoned\":true' '$P' && test \$(grep -c '\"type\":\"eval_started\",\"candidate\":1' '$P') -eq 2"
check "... but not the seed, which only waited behind it in the queue both times" \
	sh -c "! grep '\"type\":\"eval_finished\",\"candidate\":2' '$P' | grep -q abandoned"
check "the session lists it as crashed" grep -q "crashed" "$T/pill3.out"

# 16. where bubblewrap cannot run (here: not on PATH), a clear warning, the
# result says so, and kloop doctor too; --no-sandbox is explicit and quiet
mkdir -p "$T/nobw"
for t in cc gcc as ld python3 sh; do ln -sf "$(command -v $t)" "$T/nobw/$t"; done
PATH="$T/nobw" $KLOOP eval softmax tasks/softmax/seed.c $B --json >"$T/nobw.json" 2>"$T/nobw.err"
check "without bwrap: correct, with a warning that candidates run unsandboxed ($(cat "$T/nobw.err"))" \
	sh -c "test '$(line_field 0 status "$T/nobw.json")' = correct && grep -q 'warning: bubblewrap (bwrap) is not installed: candidates run unsandboxed' '$T/nobw.err'"
check "without bwrap: the result says \"sandbox\": \"none\"" test "$(line_field 0 sandbox "$T/nobw.json")" = none
PATH="$T/nobw" $KLOOP doctor >"$T/nobw.doc" 2>&1
check "without bwrap: kloop doctor says the sandbox is missing" grep -q '^sandbox *-- *bubblewrap (bwrap) is not installed' "$T/nobw.doc"
$KLOOP eval softmax tasks/softmax/seed.c $B --no-sandbox --json >"$T/nosb.json" 2>"$T/nosb.err"
check "--no-sandbox: correct, \"sandbox\": \"none\", no warning" \
	sh -c "test '$(line_field 0 status "$T/nosb.json") $(line_field 0 sandbox "$T/nosb.json")' = 'correct none' && ! grep -q warning '$T/nosb.err'"
check "with bubblewrap: the result says \"sandbox\": \"bubblewrap\"" test "$(line_field 0 sandbox "$T/c2.json")" = bubblewrap
# a candidate killed by a signal in the sandbox is said to be, as without it
# (bubblewrap passes a death by signal on as exit status 128 + N)
for sig in KILL USR1; do
	printf '#include <signal.h>\n#include "kloop.h"\nint kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *s)\n{\n\t(void)in, (void)n_in, (void)out, (void)n_out, (void)s;\n\traise(SIG%s);\n\treturn 0;\n}\n' \
		$sig >"$T/sig$sig.c"
	eval_json "$T/sig$sig.json" "$T/sig$sig.c"
	line_field 0 reason "$T/sig$sig.json" >"$T/sig$sig.reason"
	check "raise(SIG$sig) in the sandbox: crashed, killed by SIG$sig ($(cat "$T/sig$sig.reason"))" sh -c \
		"test '$(line_field 0 status "$T/sig$sig.json") $(line_field 0 sandbox "$T/sig$sig.json")' = 'crashed bubblewrap' && grep -q 'killed by signal [0-9]* (SIG$sig)' '$T/sig$sig.reason'"
done
