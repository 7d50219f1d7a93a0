#!/usr/bin/env python3
"""The server's ranking against the local one on transcripts nobody wrote for pidx (issue 52):
queries drawn with a seed from the corpus's own words, by how many texts hold them (rare to
common), pairs of adjacent words as phrases and as two words, words with `--in assistant` and
`--since`, and (`kinds`, the server's paths from pg 0026 on) prefixes, `OR`, `NOT`, a phrase
`OR` a word, literals across and inside words, and patterns. For each, `pidx --pg URL search Q
--json` (through one source's index) is compared with the local `pidx search Q --json` over
the whole corpus: the same hits (file, entry, kind) in the same order with the same scores to
a millionth. Prints each query that differs, the identical ones by kind, and one line of
totals.

usage: pg_rank_real.py PIDX ALL_DB ALL_ROOT SOURCE_DB SOURCE_ROOT URL [SEED]"""
import collections, json, os, random, re, subprocess, sys

pidx, all_db, all_root, src_db, src_root, url = sys.argv[1:7]
seed = int(sys.argv[7]) if len(sys.argv) > 7 else 11
token = re.compile(r'[^\W_]+', re.U)
df, pairs = collections.Counter(), collections.Counter()
for root, _, files in os.walk(all_root):
    for name in sorted(files):
        for line in open(os.path.join(root, name), encoding='utf-8', errors='replace'):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            m = e.get('message') if isinstance(e, dict) else None
            c = m.get('content') if isinstance(m, dict) else None
            if isinstance(c, str):
                texts = [c]
            elif isinstance(c, list):
                texts = [b.get('text') or b.get('thinking') or '' for b in c if isinstance(b, dict)]
            else:
                texts = []
            for t in texts:
                if isinstance(t, str):
                    w = [x.lower() for x in token.findall(t)]
                    df.update(set(w))
                    pairs.update(set(zip(w, w[1:])))
rnd = random.Random(seed)
queries = []
for lo, hi, k in [(1, 3, 30), (4, 30, 40), (31, 300, 40), (301, 3000, 40), (3001, 10**9, 15)]:
    band = sorted(w for w, n in df.items() if lo <= n <= hi)
    queries += [[w] for w in rnd.sample(band, min(k, len(band)))]
two = sorted(p for p, n in pairs.items() if n >= 3)
queries += [['"%s %s"' % p] for p in rnd.sample(two, 40)]
queries += [['%s %s' % p] for p in rnd.sample(two, 20)]
common = sorted(w for w, n in df.items() if n >= 50)
queries += [[w, '--in', 'assistant'] for w in rnd.sample(common, 10)]
queries += [[w, '--since', '2026-03-10'] for w in rnd.sample(common, 10)]
# The kinds the server answers from its postings and by reading texts (reads::expression,
# matching, search): drawn after the ones above so that their draws stay what they were.
ascii_words = sorted(w for w, n in df.items() if n >= 2 and w.isascii() and w.isalpha() and len(w) >= 5)
mid = sorted(w for w in ascii_words if 4 <= df[w] <= 3000)
kinds = {'prefix': [[w[:4] + '*'] for w in rnd.sample(ascii_words, 10)],
         'or': [['%s OR %s' % tuple(rnd.sample(mid, 2))] for _ in range(10)],
         'not': [['%s -%s' % (w, v)] for w, v in (rnd.sample(common, 2) for _ in range(10))],
         'phrase or word': [['"%s %s" OR %s' % (*p, w)]
                            for p, w in zip(rnd.sample(two, 5), rnd.sample(mid, 5))],
         'literal': [['--literal', '%s %s' % p] for p in rnd.sample(two, 5)]
                    + [['--literal', w[1:-1]] for w in rnd.sample(mid, 5)],
         'regex': [['re:\\b%s\\w*' % w[:5]] for w in rnd.sample(ascii_words, 5)]
                  + [['re:(?i)%s \\w+' % w] for w in rnd.sample(mid, 5)]}
kind_of = {}
for k, qs in kinds.items():
    for q in qs:
        kind_of[len(queries)] = k
        queries.append(q)


def search(db, root, extra, q):
    p = subprocess.run([pidx, '--db', db, '--root', root, '--no-sync', *extra, 'search', *q,
                        '--limit', '20', '--json'], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def key(h):
    return (h['path'].rsplit('/sessions/', 1)[-1], h.get('entryId'), h['kind'])


def close(a, b):
    x, y = a.get('score', 0.0), b.get('score', 0.0)
    return abs(x - y) <= 1e-6 * max(1.0, abs(x))


same = scores = differ = failed = 0
tally = collections.defaultdict(lambda: [0, 0])
for i, q in enumerate(queries):
    want = search(all_db, all_root, [], q)
    got = search(src_db, src_root, ['--pg', url], q)
    if want is None or got is None:
        failed += 1
        print('failed:', q)
    elif [key(h) for h in want] != [key(h) for h in got]:
        differ += 1
        print(f'hits differ: {q} ({len(want)} local, {len(got)} on the server)')
    elif not all(close(a, b) for a, b in zip(want, got)):
        scores += 1
        print(f'scores differ: {q}')
    else:
        same += 1
        tally[kind_of.get(i, 'words')][0] += 1
    tally[kind_of.get(i, 'words')][1] += 1
print('identical by kind: ' + ', '.join(f'{k} {a}/{n}' for k, (a, n) in tally.items()))
print(f'seed {seed}: {len(queries)} queries, {same} identical (hits, order, scores to 1e-6), '
      f'{scores} with the same hits in the same order and other scores, {differ} with other '
      f'hits or order, {failed} failed')
