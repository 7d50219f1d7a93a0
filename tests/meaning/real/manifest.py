#!/usr/bin/env python3
"""Writes tests/meaning/real/manifest.tsv: every pi/OpenClaw session file (a `.jsonl` whose
first line is a `"type":"session"` header) in the given snapshots of public repositories, as
`repo<TAB>commit<TAB>path`. The snapshots are what the `fetch` tool brings (bare git
directories under /work/.mirror/OWNER+NAME/repo); corpus.py reads the files back from them.
Usage: manifest.py MIRROR_DIR... > manifest.tsv"""
import subprocess, sys

for mirror in sys.argv[1:]:
    repo = mirror.rstrip('/').split('/')[-2].replace('+', '/', 1)
    git = ['git', '-C', mirror]
    commit = subprocess.run(git + ['rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    names = subprocess.run(git + ['ls-tree', '-r', '--name-only', commit], capture_output=True, text=True).stdout.split('\n')
    for path in sorted(n for n in names if n.endswith('.jsonl')):
        head = subprocess.run(git + ['show', f'{commit}:{path}'], capture_output=True).stdout[:400]
        if b'"type":"session"' in head.split(b'\n', 1)[0]:
            print(f'{repo}\t{commit}\t{path}')
