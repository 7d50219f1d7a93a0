#!/usr/bin/env python3
"""Rebuilds the real-transcript corpus of the meaning evaluation from manifest.tsv (repo,
commit, path a line): each file is read from the snapshot of its repository (a bare git
directory; `fetch` puts them at /work/.mirror/OWNER+NAME/repo) at the recorded commit and
written to OUT/OWNER--NAME/ (one sessions folder a repository, as pi's root has one a
project), under its own file name. Nothing of it is committed: the transcripts are other
people's, used here locally to measure search. Prints how many files it wrote; exits 1 when a
snapshot is missing.
Usage: corpus.py MANIFEST MIRRORS_DIR OUT"""
import os, subprocess, sys

manifest, mirrors, out = sys.argv[1:4]
written = missing = 0
for line in open(manifest, encoding='utf-8'):
    repo, commit, path = line.rstrip('\n').split('\t')
    git = os.path.join(mirrors, repo.replace('/', '+', 1), 'repo')
    data = subprocess.run(['git', '-C', git, 'show', f'{commit}:{path}'], capture_output=True)
    if data.returncode != 0:
        missing += 1
        continue
    folder = os.path.join(out, repo.replace('/', '--'))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, os.path.basename(path)), 'wb') as f:
        f.write(data.stdout)
    written += 1
print(f'corpus: {written} session files in {out}' + (f'; {missing} missing (fetch their repositories first)' if missing else ''), file=sys.stderr)
sys.exit(1 if missing else 0)
