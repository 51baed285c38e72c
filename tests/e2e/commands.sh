# commands.sh - `kloop tasks`, `kloop doctor`, help, and `kloop` with no
# arguments (the default task's seed).
. tests/e2e/lib.sh
$KLOOP tasks >"$T/tasks"
for t in softmax layernorm matmul hgemm gemm_bias_relu bf16_gemm fp8_gemm rmsnorm_bf16 attention_bf16 attention_causal_bf16; do
	check "kloop tasks lists $t" grep -q "^$t " "$T/tasks"
done
$KLOOP tasks --json >"$T/tasks.json"
check "kloop tasks --json gives both shape sets of softmax" python3 -c "
import json; t={x['name']:x for x in json.load(open('$T/tasks.json'))['tasks']}
s=t['softmax']['shapes']; assert s['host']['inputs'][0]['shape']==[64,4096] and 'cuda' in s"
$KLOOP tasks tasks/softmax >"$T/tdir.out" 2>"$T/tdir.err"
check "kloop tasks DIR: exit 2, saying it takes a PROBLEM.py and what to use instead" sh -c \
	"test $? -eq 2 && grep -q 'tasks/softmax is not a KernelBench problem file (PROBLEM.py); .kloop tasks. alone lists the bundled tasks' '$T/tdir.err'"
OPENAI_API_KEY=sk-test-secret-value $KLOOP doctor >"$T/doctor" 2>&1
check "doctor reports the C compiler" grep -q "^cc .*ok" "$T/doctor"
check "doctor says a kernel edit compiles only its device code, with objcopy ($(grep '^cuda edits' "$T/doctor"))" \
	grep -Eq "^cuda edits +ok +objcopy: GNU objcopy .*: an edit inside a kernel compiles only its device code" "$T/doctor"
check "doctor reports the GPU line" grep -q "^gpu " "$T/doctor"
check "doctor reports python and pytorch" sh -c "grep -q '^python ' '$T/doctor' && grep -q '^pytorch ' '$T/doctor'"
check "doctor says the OpenAI key is set" grep -q "OPENAI_API_KEY is set" "$T/doctor"
check "doctor never prints the key" sh -c "! grep -q sk-test-secret-value '$T/doctor'"
check "doctor says a compile's memory limit and what sized it ($(grep '^compile mem' "$T/doctor"))" \
	grep -Eq '^compile mem ok +[0-9]+ MiB a compile \((the cgroup.s limit|MemTotal) [0-9]+ MiB, [0-9]+ MiB of it available, [0-9]+ compiles? at once\); KLOOP_COMPILE_MEM_MB sets it$' "$T/doctor"
# PyTorch's C++ headers (make deps installs Debian's libtorch-dev)
check "doctor says which PyTorch an extension the stand-in cannot compile is built against ($(grep '^torch c++' "$T/doctor"))" \
	grep -Eq '^torch c\+\+ +ok +PyTorch [0-9][^ ]* of .*: an extension using what kloop.s ATen stand-in lacks is built against it$' "$T/doctor"
KLOOP_LIBTORCH=off $KLOOP doctor >"$T/doctor.off" 2>&1
check "... and, with KLOOP_LIBTORCH=off, that there is none ($(grep '^torch c++' "$T/doctor.off"))" \
	grep -Eq "^torch c\+\+ +-- +KLOOP_LIBTORCH=off: kloop does not compile against PyTorch's own headers" "$T/doctor.off"
KLOOP_COMPILE_MEM_MB=lots $KLOOP doctor >"$T/doctor.bad" 2>&1
check "doctor: a KLOOP_COMPILE_MEM_MB that is no number is named, and ignored ($(grep '^compile mem' "$T/doctor.bad"))" \
	grep -q '^compile mem -- .*KLOOP_COMPILE_MEM_MB=lots is not a positive number of MiB: ignored' "$T/doctor.bad"
# inside a memory cgroup of 3 GiB (as root, where one can be made), the
# compile's limit is sized from that group's limit, not from MemTotal
cg=""
own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
if [ -n "$own" ] && mkdir "/sys/fs/cgroup/memory$own/kloop-test-$$" 2>/dev/null; then
	cg="/sys/fs/cgroup/memory$own/kloop-test-$$"
	echo 3221225472 >"$cg/memory.limit_in_bytes"
else
	v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	own=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
	[ "$own" = / ] && own=""
	if [ -n "$v2" ] && mkdir "$v2$own/kloop-test-$$" 2>/dev/null; then
		cg="$v2$own/kloop-test-$$"
		echo 3221225472 >"$cg/memory.max" 2>/dev/null || { rmdir "$cg"; cg=""; }
	fi
fi
if [ -n "$cg" ]; then
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" doctor' sh "$cg" "$KLOOP" >"$T/doctor.cg" 2>&1
	rmdir "$cg" 2>/dev/null
	check "doctor in a memory cgroup of 3 GiB: a compile's limit comes from that group's ($(grep '^compile mem' "$T/doctor.cg"))" \
		grep -Eq "^compile mem ok +1536 MiB a compile \(the cgroup's limit 3072 MiB, [0-9]+ MiB of it available" "$T/doctor.cg"
else
	skip "doctor in a memory cgroup of 3 GiB: no memory cgroup can be made here (not root, or no memory controller)"
fi
$KLOOP help >"$T/help"
check "help lists every subcommand" sh -c "for c in open shell replay eval tasks session outline doctor; do grep -q \"kloop \$c\" '$T/help' || exit 1; done"
# a verb of both the CLI and the workbench is one command: `kloop VERB
# --help` says what it does in the line the workbench's `help VERB` says
V="archive export ideas implement profile search"
for v in $V; do echo "help $v"; done |
	$KLOOP shell tests/fixtures/tui_task --backend host --budget 0.2 --session "$T/h.jsonl" \
		>"$T/wbhelp" 2>&1
for v in $V; do
	wb=$(grep -A1 "^$v " "$T/wbhelp" | sed -n '2s/^    //p')
	cli=$($KLOOP $v --help 2>&1 | sed -n 3p)
	check "kloop $v --help and the workbench's help $v say the same line" \
		sh -c 'test -n "$1" && case "$2" in "$1"*) exit 0 ;; *) exit 1 ;; esac' - "$wb" "$cli"
	check "kloop help lists $v once, with that line" \
		sh -c 'test "$(grep -c "^       kloop $1 " "$3")" -eq 1 && grep -qF -- "$2" "$3"' - "$v" "$wb" "$T/help"
done
$KLOOP --backend host --budget 0.2 >"$T/default" 2>&1
check "kloop with no task and no terminal says what it does instead of the TUI" grep -q "stdout is not a terminal.*evaluating the seeds of softmax" "$T/default"
check "and evaluates the default task's seed" grep -q "candidate 1 (seed.c): correct" "$T/default"
check "into a session journal under \$XDG_STATE_HOME" sh -c "ls '$T'/state/kloop/sessions/softmax-*.jsonl >/dev/null"
