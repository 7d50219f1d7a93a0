#!/usr/bin/env bash
# A seconds-long run of the benchmark on a tiny corpus, so CI notices when the command rots.
# Timings from it mean nothing and are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bash benches/run.sh --out "$out" --sessions 40 --bytes 3M --huge-session 2M --runs 2 --pi-runs 1 \
  --watch-appends 20 --watch-idle 1 --huge-line-mb 2
grep -q '^| first answer on a new index' "$out/bench.md"
grep -q '^| first full sync' "$out/bench.md"
grep -q '^| peak RSS, a file with a 2 MB text line' "$out/bench.md"
grep -q '^| `context --leaf`' "$out/bench.md"
grep -q '^| append -> visible' "$out/bench.md"
