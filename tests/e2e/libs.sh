# libs.sh - libraries a task or --libs gives candidates: a host candidate
# that calls a helper library (its header directory and .so named in
# task.json's "libs", with -lm) compiles, loads and is correct; without the
# libs it fails to compile; --libs gives the same from the command line; a
# library that is not there is one line naming it; kloop doctor lists the
# well-known libraries and checks libs= from the config.
. tests/e2e/lib.sh
B="--backend host --budget 0.2 --trials 2"
cp -r tests/fixtures/libs "$T/libs"
mkdir -p "$T/libs/lib"
cc -shared -fPIC -O2 -I"$T/libs/include" -o "$T/libs/lib/libkloop_scale.so" "$T/libs/src/kloop_scale.c" -lm

$KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B --json >"$T/ok.json" 2>"$T/err"
check "a candidate calling the task's library is correct ($(json reason "$T/ok.json" 2>/dev/null)$(head -c 200 "$T/err"))" \
	test "$(json status "$T/ok.json" 2>/dev/null)" = correct
check "its compile command has the include directory, the library, -lm and an rpath" python3 -c "
import json; c=json.load(open('$T/ok.json'))['compile']['command']
assert '-I$T/libs/include' in c and '$T/libs/lib/libkloop_scale.so' in c and '-l:libm.so' in c \
    and '-Wl,-rpath,$T/libs/lib' in c, c"

python3 -c "
import json; p='$T/libs/task.json'; t=json.load(open(p)); del t['libs']; json.dump(t, open('$T/libs/task.json','w'))"
$KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B --json >"$T/none.json" 2>"$T/err"
check "without the libs the same candidate does not compile (kloop_scale.h is not found)" \
	sh -c "grep -q '\"status\":\"compile_error\"' '$T/none.json' && grep -q 'kloop_scale.h' '$T/none.json'"
$KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B --libs "$T/libs/lib/libkloop_scale.so,$T/libs/include" --json \
	>"$T/flag.json" 2>"$T/err"
check "--libs gives the library and the include directory from the command line" \
	test "$(json status "$T/flag.json" 2>/dev/null)" = correct
$KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B --libs nosuchlib_kloop >"$T/out" 2>"$T/err"
rc=$?
check "a library that is not there fails the task with one line naming it" \
	sh -c "test $rc -ne 0 && grep -q 'libs: nosuchlib_kloop: libnosuchlib_kloop.so was not found' '$T/err'"

mkdir -p "$T/config/kloop"
printf 'libs = m nosuchlib_kloop\n' >"$T/config/kloop/config"
$KLOOP doctor >"$T/doctor" 2>&1
check "doctor lists cuBLAS, cuBLASLt, cuDNN and CUTLASS, found or not" \
	sh -c "grep -q '^lib cublas ' '$T/doctor' && grep -q '^lib cublasLt' '$T/doctor' && grep -q '^lib cudnn ' '$T/doctor' && grep -q '^lib cutlass' '$T/doctor'"
check "doctor checks the config's libs=: m is found, a missing one is flagged" \
	sh -c "grep -Eq '^libs= m +ok ' '$T/doctor' && grep -Eq '^libs= nosuchlib_kloop +-- .*was not found' '$T/doctor'"
