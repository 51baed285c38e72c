#!/usr/bin/env python3
"""gen_archive.py N OUT - N synthetic innovation-archive entries (the JSON lines
`kloop archive export` writes), for bench/archive.sh.

Entries are spread over 40 task names and the idea categories; each idea is a
title and a description made of kernel-optimisation phrases; the code is one of
the bundled seeds with a few lines changed, and the diff against it a real
unified diff (difflib) of those lines.  About one in four is a dead end."""
import difflib, json, os, random, sys

def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rnd = random.Random(7)
    seeds = []
    for t in sorted(os.listdir(os.path.join(top, 'tasks'))):
        for f in ('seed.c', 'seed.cu'):
            p = os.path.join(top, 'tasks', t, f)
            if os.path.exists(p):
                seeds.append(open(p).read())
    tasks = ['softmax', 'layernorm', 'matmul', 'hgemm', 'gemm_bias_relu'] + \
            ['kb_l%d_%02d' % (1 + i % 3, i) for i in range(35)]
    cats = ['memory access', 'asynchrony and latency hiding', 'precision',
            'compute and instructions', 'parallelism and occupancy', 'fusion', 'algorithm']
    verbs = ['vectorize', 'tile', 'unroll', 'fuse', 'pipeline', 'prefetch', 'split', 'transpose',
             'pack', 'cache', 'reorder', 'coalesce', 'swizzle', 'hoist', 'batch', 'specialize']
    nouns = ['float4 loads', 'shared memory', 'the inner loop', 'warp shuffles', 'tensor cores',
             'cp.async copies', 'the reduction', 'register blocking', 'bank conflicts', 'the epilogue',
             'the row max', 'L2 residency', 'thread coarsening', 'double buffering', 'wmma fragments',
             'half precision', 'the online softmax', 'grid-stride loops', 'persistent blocks']
    fails = ['compile_error', 'incorrect', 'crashed', 'timeout', 'slower']
    variants = []
    for k in range(64):
        s = rnd.choice(seeds)
        lines = s.split('\n')
        new = list(lines)
        for _ in range(rnd.randint(2, 6)):
            i = rnd.randrange(len(new))
            new.insert(i, '\t/* %s %s, step %d */' % (rnd.choice(verbs), rnd.choice(nouns), k))
        code = '\n'.join(new)
        diff = ''.join(difflib.unified_diff(s.splitlines(True), code.splitlines(True),
                                            'parent.cu', 'child.cu'))
        variants.append((code, diff))
    with open(out, 'w') as f:
        for i in range(n):
            title = '%s %s' % (rnd.choice(verbs).capitalize(), rnd.choice(nouns))
            desc = ' '.join('%s %s' % (rnd.choice(verbs), rnd.choice(nouns)) for _ in range(4))
            code, diff = variants[i % len(variants)]
            win = rnd.random() < 0.75
            t = rnd.choice(tasks)
            e = {'ukey': 'bench:%d' % i, 'kind': 'win' if win else 'dead_end', 'task': t,
                 'signature': 'ops: %s; in x f32 [4096, 8192]' % t, 'backend': 'cuda',
                 'gpu': rnd.choice(['NVIDIA H100 80GB HBM3', 'NVIDIA H200', 'NVIDIA A100-SXM4-80GB']),
                 'idea': title, 'idea_description': desc, 'category': rnd.choice(cats),
                 'origin': 'llm', 'name': 'cand%d.cu' % i, 'candidate': i % 500 + 2,
                 'parents': [i % 500 + 1], 'lineage': [], 'diff': diff, 'code': code,
                 'time_ms': 1.0, 'speedup_parent': round(1 + rnd.random() * 2, 3) if win else None,
                 'speedup': round(rnd.random() * 5, 3), 'session': 'bench-%d' % (i // 50),
                 'session_path': '/bench/%d.jsonl' % (i // 50), 'event': i % 1000 + 1,
                 'model': 'openai bench', 'idea_id': i % 50 + 1}
            if not win:
                e['failure'] = rnd.choice(fails)
            f.write(json.dumps(e, separators=(',', ':')) + '\n')

main()
