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

# a link stub (NVIDIA's images put lib64/stubs in LIBRARY_PATH) is never
# what a candidate loads: the library itself is taken where there is one,
# and a stub alone is an error that says so
mkdir -p "$T/cuda/lib64/stubs" "$T/real"
cp "$T/libs/lib/libkloop_scale.so" "$T/cuda/lib64/stubs/libkloop_scale.so"
cp "$T/libs/lib/libkloop_scale.so" "$T/real/libkloop_scale.so"
LIBRARY_PATH="$T/cuda/lib64/stubs:$T/real" $KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B \
	--libs "kloop_scale,$T/libs/include" --json >"$T/stub.json" 2>"$T/err"
check "a library found past a stubs directory: the real one is linked, with its rpath ($(json reason "$T/stub.json" 2>/dev/null))" \
	python3 -c "
import json; r=json.load(open('$T/stub.json')); c=r['compile']['command']
assert r['status'] == 'correct' and '-L$T/real' in c and '-Wl,-rpath,$T/real' in c and 'stubs' not in c, c"
LIBRARY_PATH="$T/cuda/lib64/stubs" $KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B \
	--libs "kloop_scale,$T/libs/include" >"$T/out" 2>"$T/err"
rc=$?
check "only a link stub: the task fails with one line saying so, naming the stub" \
	sh -c "test $rc -ne 0 && grep -q 'libs: kloop_scale: only a link stub was found ($T/cuda/lib64/stubs/libkloop_scale.so)' '$T/err'"
# ... and where PyTorch's NVIDIA wheels keep the real ones (nvidia/*/lib of
# the Python environment), versioned .so only
W="$T/venv/lib/python3.12/site-packages/nvidia/kloop_scale/lib"
mkdir -p "$W"
cp "$T/libs/lib/libkloop_scale.so" "$W/libkloop_scale.so.12"
VIRTUAL_ENV="$T/venv" LIBRARY_PATH="$T/cuda/lib64/stubs" $KLOOP eval "$T/libs" "$T/libs/uses_lib.c" $B \
	--libs "kloop_scale,$T/libs/include" --json >"$T/wheel.json" 2>"$T/err"
check "a stub in LIBRARY_PATH, the library in the environment's nvidia wheel: the wheel's is linked ($(json reason "$T/wheel.json" 2>/dev/null)$(head -c 200 "$T/err"))" \
	python3 -c "
import json; r=json.load(open('$T/wheel.json')); c=r['compile']['command']
assert r['status'] == 'correct' and '-l:libkloop_scale.so.12' in c and 'nvidia/kloop_scale/lib' in c, c"
