#!/usr/bin/env python3
"""gen_journal.py N OUT [--new K] - a synthetic session journal of N softmax
candidates with results, for benchmarking the TUI at scale.

Each candidate is the softmax host seed with a distinct comment and a
varied constant (about 900 bytes), an origin from seed/llm/human/sweep/
crossover, parents among the earlier ones, an idea title for the llm ones,
and an eval_finished with a result shaped like the worker's (compile log,
correctness report, timing with its spread, baseline and speedup); about
one in eight is incorrect or a compile error.  With --new K, K more
candidates are added without results, so that opening the journal as a
live session evaluates them at once (K jobs in flight)."""
import json, os, random, sys

def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    k_new = int(sys.argv[sys.argv.index('--new') + 1]) if '--new' in sys.argv else 0
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seed = open(os.path.join(top, 'tasks/softmax/seed.c')).read()
    rnd = random.Random(42)
    ts = 1795000000.0
    origins = ['llm'] * 5 + ['human', 'sweep', 'crossover']
    ideas = ['Tile rows into shared memory', 'Vectorize loads with float4', 'Fuse max and sum passes',
             'Online softmax (one pass)', 'Unroll the inner loop by 8', 'Use expf approximations',
             'Split rows across threads', 'Prefetch the next row']
    with open(out, 'w') as f:
        def emit(ev):
            nonlocal ts
            ts += 0.05
            ev['ts'] = round(ts, 3)
            f.write(json.dumps(ev, separators=(',', ':')) + '\n')
        emit({'type': 'session_started', 'task': 'softmax', 'task_dir': os.path.join(top, 'tasks/softmax'),
              'backend': 'host', 'kloop': '0.1.0'})
        for i in range(1, n + k_new + 1):
            origin = 'seed' if i == 1 else rnd.choice(origins)
            parents = [] if i == 1 else [rnd.randint(1, i - 1)]
            if origin == 'crossover' and i > 2:
                parents.append(rnd.randint(1, i - 1))
            src = seed.replace('naive host seed', 'candidate %d (%s)' % (i, origin)).replace(
                'sum = 0.0f', 'sum = 0.0f * %d' % i)
            ev = {'type': 'candidate_added', 'id': i, 'name': 'cand%d.c' % i, 'origin': origin,
                  'parents': parents, 'source': src}
            if origin == 'llm':
                ev['idea'] = rnd.choice(ideas)
            emit(ev)
            if i > n:
                continue
            emit({'type': 'eval_started', 'candidate': i, 'backend': 'host'})
            r = rnd.random()
            t = 1.2 / (1 + rnd.random() * 2)
            if r < 0.06:
                res = {'status': 'compile_error', 'reason': 'cand.c:20:9: error: expected expression',
                       'compile': {'ok': False, 'cached': False, 'seconds': 0.05,
                                   'command': 'cc -std=gnu11 -O3 -march=native -fPIC -shared -Wall -o out.so cand.c -lm',
                                   'log': 'cand.c: In function kl_run:\ncand.c:20:9: error: expected expression\n'}}
            else:
                res = {'status': 'correct' if r > 0.12 else 'incorrect',
                       'reason': '' if r > 0.12 else 'trial 1 of 5: output y differs from the reference',
                       'correctness': {'trials': 5, 'trials_run': 5, 'trials_passed': 5 if r > 0.12 else 0,
                                       'max_abs_error': 2.6e-08, 'rel_l2_error': 9.6e-07, 'mismatches': 0},
                       'timing': {'median_ms': t, 'p10_ms': t * 0.93, 'p90_ms': t * 1.1, 'min_ms': t * 0.9,
                                  'mean_ms': t * 1.01, 'count': 40, 'rse': 0.012, 'converged': False,
                                  'warmup_runs': 27},
                       'compile': {'ok': True, 'cached': False, 'seconds': 0.05,
                                   'command': 'cc -std=gnu11 -O3 -march=native -fPIC -shared -Wall -o out.so cand.c -lm',
                                   'log': ''},
                       'seconds': {'compile': 0.05, 'load': 0.0001, 'check': 0.009, 'time': 0.5}}
            res.update({'task': 'softmax', 'source': 'cand%d.c' % i, 'backend': 'host',
                        'device': 'Intel(R) Xeon(R) Processor', 'baseline_ms': 2.7, 'baseline': 'reference.c'})
            ok = res['status'] == 'correct'
            res['time_ms'] = t if ok else None
            res['speedup'] = 2.7 / t if ok else None
            emit({'type': 'eval_finished', 'candidate': i, 'result': res})

main()
