#!/usr/bin/env python3
# emu_cu.py - rewrite a CUDA seed as C++ for emu.h: the CUDA headers dropped,
# the PTX statements of cp.async made emu_cp_async calls, and each
# KERNEL<<<grid, block, smem, stream>>>(args) an emu_launch.
# Usage: emu_cu.py IN.cu OUT.cpp
import re
import sys

src = open(sys.argv[1]).read()
src = re.sub(r'#include <(cuda_bf16|cuda_fp16|cuda_fp8|cuda_runtime|mma)\.h>\n', '', src)
src = '#include "emu.h"\n' + src


def asm(m):
    body = m.group(1)
    if 'cp.async.cg.shared.global' in body:
        return 'emu_cp_async(dst, src, src_bytes);'
    if 'cp.async.commit_group' in body or 'cp.async.wait_group' in body:
        return ';'
    sys.exit('emu_cu.py: an asm statement emu.h cannot emulate: ' + body[:80])


src = re.sub(r'asm volatile\((.*?)\);', asm, src, flags=re.S)


def launch(m):
    cfg = [c.strip() for c in m.group(2).split(',')]
    return 'emu_launch(%s, %s, [&] { %s(%s); });' % (cfg[0], cfg[1], m.group(1), m.group(3))


src, n = re.subn(r'([A-Za-z_]\w*(?:<[^<>]*>)?)\s*<<<(.*?)>>>\s*\((.*?)\);', launch, src, flags=re.S)
if n == 0:
    sys.exit('emu_cu.py: no kernel launch in ' + sys.argv[1])
open(sys.argv[2], 'w').write(src + '\nEMU_DEFINE_GLOBALS\n')
