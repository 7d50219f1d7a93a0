#!/usr/bin/env bash
# The `pidx pick` benchmark: builds pidx and examples/bench_pick (release), generates the seeded
# corpus with gen_corpus unless it exists (10,000 sessions, 2 GB; no huge session: the picker's
# costs grow with the number of sessions and their text), indexes it, then drives the picker
# through a pseudo-terminal and prints a markdown table (first paint, keystroke to redraw,
# peak RSS). Timings are not checked.
#
#   benches/pick.sh [--out DIR] [--sessions N] [--bytes SIZE] [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."

out=/tmp/pidx-pick-bench
sessions=10000
bytes=2G
runs=15
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    --bytes) bytes="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "pick.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

cargo build --release --bin pidx --example gen_corpus --example bench_pick
target="${CARGO_TARGET_DIR:-target}"
corpus="$out/sessions"
if [ ! -d "$corpus" ]; then
  mkdir -p "$out"
  "$target/release/examples/gen_corpus" --out "$corpus" --sessions "$sessions" --bytes "$bytes" --seed 1
fi
"$target/release/pidx" --root "$corpus" --db "$out/index.db" sync
"$target/release/examples/bench_pick" --root "$corpus" --db "$out/index.db" --runs "$runs" \
  --pidx "$target/release/pidx" | tee "$out/pick.md"
