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
# The scaling table: two tiny sizes side by side, one column each.
bash benches/run.sh --scaling 20:1M,40:2M --out "$out/scaling" --runs 1 --pi-runs 1 --no-pi
grep -q '^| what | 20 sessions, .* | 40 sessions, .* | goal |' "$out/scaling/scaling.md"
grep -q '^| first answer on a new index [^|]* | [0-9.]* m\?s | [0-9.]* m\?s | ' "$out/scaling/scaling.md"
grep -q '^| search top 20, literal `parse_line` | ' "$out/scaling/scaling.md"
grep -q '^| `stats --by tool` | ' "$out/scaling/scaling.md"
