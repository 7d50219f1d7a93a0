#!/usr/bin/env python3
"""Scores pidx's rankings on the real corpus: recall@5 per kind of query (English
paraphrases, queries in another language than their session, exact words and identifiers),
for `--lexical`, the default (fused) and `--meaning`, on the tuning half and the held-out half
of queries.tsv. A query finds its target when one of the target's sessions is among the first
five distinct sessions of the hits.

The exact-word queries are chosen here, not written: for each target, the first identifier-like
whole word (holding _ - . or a digit, or in camelCase, 6 to 40 characters) of its messages that
no other session file holds anywhere.

Usage: eval.py PIDX DB CORPUS QUERIES [--json OUT]"""
import collections, json, os, re, subprocess, sys

pidx, db, corpus, queries_file = sys.argv[1:5]
out_json = sys.argv[sys.argv.index('--json') + 1] if '--json' in sys.argv else None


def messages(path):
    users, texts = [], []
    for line in open(path, encoding='utf-8', errors='replace'):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get('type') != 'message':
            continue
        m = e.get('message') or {}
        c = m.get('content')
        t = ' '.join([c] if isinstance(c, str) else [b.get('text', '') for b in (c or []) if isinstance(b, dict) and b.get('type') == 'text'])
        if m.get('role') == 'user':
            users.append(t)
        if m.get('role') in ('user', 'assistant'):
            texts.append(t)
    return users, texts


sessions = {}  # real path -> (folder/file, users, texts)
for folder in sorted(os.listdir(corpus)):
    for name in sorted(os.listdir(os.path.join(corpus, folder))):
        p = os.path.realpath(os.path.join(corpus, folder, name))
        u, t = messages(p)
        sessions[p] = (f'{folder}/{name}', u, t)


def targets(key):
    """The session files a target names; a single session's copies (same first two user
    messages: checkpoints, resets) count as it."""
    folder, rest = key.split('/', 1)
    if rest.startswith('cron:'):
        tag = '[' + rest
        return {p for p, (rel, u, _) in sessions.items() if rel.startswith(folder + '/') and any(x.startswith(tag) for x in u[:1])}
    first = [p for p, (rel, _, _) in sessions.items() if rel.startswith(f'{folder}/{rest}')]
    if len(first) != 1:
        sys.exit(f'eval: target {key} names {len(first)} sessions')
    sig = tuple(sessions[first[0]][1][:2])
    return {p for p, (rel, u, _) in sessions.items() if rel.startswith(folder + '/') and tuple(u[:2]) == sig}


# A whole token: not the tail of a longer run of letters, digits and joiners (a UUID's
# `ea576-fe1b-...` inside `3ea576-fe1b-...` is no word anyone would search for, and a word
# index rightly does not find it).
WORD = re.compile(r'(?<![A-Za-z0-9_.\-])[A-Za-z][A-Za-z0-9_.\-]{5,39}(?![A-Za-z0-9_\-])')
def identifier(w):
    return bool(re.search(r'[_\-.0-9]', w) or re.search(r'[a-z][A-Z]', w)) and not w.endswith(('.', '-'))

# Who holds a word: anywhere in the file (tool output and all), since a search reads it all:
# a word only the target's messages hold but other sessions' tool results also print is not
# the target's alone.
holders = collections.defaultdict(set)
for p in sessions:
    # JSON escapes (a backslash-n, an escaped quote) would glue their letter to the next word.
    raw = re.sub(r'\\[nrtbf"\\/]', ' ', open(p, encoding='utf-8', errors='replace').read())
    for w in set(WORD.findall(raw)):
        if identifier(w):
            holders[w.lower()].add(p)

queries = []
for line in open(queries_file, encoding='utf-8'):
    if line.startswith('#') or not line.strip():
        continue
    qid, kind, lang, target, text = line.rstrip('\n').split('\t')
    qid = int(qid)
    tset = targets(target)
    split = 'tune' if qid % 2 else 'test'
    queries.append((qid, kind, lang, split, text, tset))

# One exact query a target, the same split as its paraphrase.
seen = set()
for qid, kind, lang, split, text, tset in list(queries):
    key = frozenset(tset)
    if key in seen:
        continue
    seen.add(key)
    for p in sorted(tset):
        found = None
        for t in sessions[p][2]:
            for w in WORD.findall(t):
                if identifier(w) and holders[w.lower()] <= tset:
                    found = w
                    break
            if found:
                break
        if found:
            queries.append((1000 + qid, 'exact', '-', split, found, tset))
            break


def top_sessions(mode, q):
    args = [pidx, '--db', db, '--root', corpus, 'search', q, '--json', '--limit', '50']
    if mode == 'lexical':
        args.append('--lexical')
    elif mode == 'meaning':
        args.append('--meaning')
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f'eval: {args}: {r.stderr.strip()}')
    hits = json.loads(r.stdout) if r.stdout.strip() else []
    order = []
    for h in hits:
        p = os.path.realpath(h['path'])
        if p not in order:
            order.append(p)
    return order, r.returncode, hits


modes = ['lexical', 'fused', 'meaning']
# Computed from the other two, to compare fusions before building one: the words' sessions
# first (in their order), then meaning's.
derived = ['words-then-meaning', 'rrf-1.5']
rows = []
for qid, kind, lang, split, text, tset in queries:
    row = {'id': qid, 'kind': kind, 'lang': lang, 'split': split, 'query': text, 'targets': sorted(tset)}
    for m in modes:
        order, code, hits = top_sessions(m, text)
        row[m + '_order'] = order[:50]
        row[m] = bool(set(order[:5]) & tset)
        row[m + '_rank'] = next((i + 1 for i, p in enumerate(order) if p in tset), None)
        row[m + '_by'] = collections.Counter(h.get('by', 'words') for h in hits[:10])
    cascade = row['lexical_order'] + [p for p in row['meaning_order'] if p not in row['lexical_order']]
    row['words-then-meaning'] = bool(set(cascade[:5]) & tset)
    # Reciprocal rank fusion (k = 60, words weighted 1.5), as pidx fused before, by session.
    rrf = collections.defaultdict(float)
    for order, w in ((row['lexical_order'], 1.5), (row['meaning_order'], 1.0)):
        for i, p in enumerate(order):
            rrf[p] += w / (61 + i)
    row['rrf-1.5'] = bool(set(sorted(rrf, key=lambda p: -rrf[p])[:5]) & tset)
    rows.append(row)

print(f'corpus: {len(sessions)} sessions; queries: {len(queries)} ({sum(1 for q in queries if q[1] == "exact")} exact, chosen above)')
for split in ['tune', 'test']:
    print(f'\n{split} half: recall@5 (found / queries)')
    print(f'| kind | n | ' + ' | '.join(modes + derived) + ' |')
    print('|---|---|' + '---|' * len(modes + derived))
    for kind in ['en', 'other', 'exact']:
        sel = [r for r in rows if r['split'] == split and r['kind'] == kind]
        if not sel:
            continue
        cells = [f'{sum(r[m] for r in sel) / len(sel):.2f} ({sum(r[m] for r in sel)}/{len(sel)})' for m in modes + derived]
        print(f'| {kind} | {len(sel)} | ' + ' | '.join(cells) + ' |')
        # Another language, by the query's language (English queries ask about Spanish and
        # Chinese sessions; the others about English ones).
        langs = sorted({r['lang'] for r in sel}) if kind == 'other' else []
        for lang in langs:
            sub = [r for r in sel if r['lang'] == lang]
            cells = [f'{sum(r[m] for r in sub) / len(sub):.2f} ({sum(r[m] for r in sub)}/{len(sub)})' for m in modes + derived]
            print(f'| {kind}, query {lang} | {len(sub)} | ' + ' | '.join(cells) + ' |')
# Where the floor belongs: meaning's similarities with no floor, for each tuning query's
# target (its best hit) and for queries about nothing in the corpus (its best hit at all).
OFF_TOPIC = ['qwertyuiopasdf', 'zxcvbnm lkjhg', 'recipe for banana bread with walnuts',
             'how to tune a classical guitar', 'the rules of cricket explained',
             'knitting a wool scarf pattern', 'volcano eruption in Iceland', 'best hiking boots for winter']
def sims(q):
    env = dict(os.environ, PIDX_MEANING_FLOOR='-1')
    r = subprocess.run([pidx, '--db', db, '--root', corpus, 'search', q, '--meaning', '--json', '--limit', '50'],
                       capture_output=True, text=True, env=env)
    return json.loads(r.stdout) if r.stdout.strip() else []
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float('nan')
target_sims = []
for r in rows:
    if r['split'] != 'tune' or r['kind'] == 'exact':
        continue
    hs = [h['similarity'] for h in sims(r['query']) if os.path.realpath(h['path']) in set(r['targets'])]
    if hs:
        target_sims.append(max(hs))
off = [max([h['similarity'] for h in sims(q)] or [float('-inf')]) for q in OFF_TOPIC]
print(f'\nfloor calibration (tuning half, no floor): the best similarity of the target, when in the top 50: '
      f'n={len(target_sims)}, p10 {pct(target_sims, .1):.3f}, p25 {pct(target_sims, .25):.3f}, median {pct(target_sims, .5):.3f}')
print('best similarity of queries about nothing in the corpus: ' + ', '.join(f'{q!r} {v:.3f}' for q, v in zip(OFF_TOPIC, off)))
if out_json:
    json.dump(rows, open(out_json, 'w'), indent=1, default=dict)
