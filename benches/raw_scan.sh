#!/usr/bin/env bash
# Punctuation literals (Plan::RawScan, docs/search.md) side by side with `rg -lF` over the same
# JSONL files: medians of 5 warm runs each. Generates a seeded ~700 MB / 2,500-session corpus
# with gen_corpus unless OUT/sessions exists, and syncs it once.
#   benches/raw_scan.sh [OUT]   (default /tmp/pidx-raw-scan)
set -euo pipefail
out="${1:-/tmp/pidx-raw-scan}"
cargo build --release --bin pidx --example gen_corpus >&2
tdir="${CARGO_TARGET_DIR:-target}"
pidx="$tdir/release/pidx"
corpus="$out/sessions"
db="$out/index.db"
mkdir -p "$out"
if [ ! -d "$corpus" ]; then
  "$tdir"/release/examples/gen_corpus --out "$corpus" --sessions 2500 --bytes 700M --seed 49 >&2
fi
[ -f "$db" ] || "$pidx" --db "$db" --root "$corpus" sync >/dev/null
command -v rg >/dev/null || { echo "raw_scan.sh: ripgrep (rg) is missing: apt-get install ripgrep" >&2; exit 1; }

# Median wall seconds of 5 runs of "$@" (after one warm-up run).
median() {
  "$@" >/dev/null 2>&1 || true
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%e" -o "$out/t" "$@" >/dev/null 2>&1 || true
    tail -n 1 "$out/t"  # time adds "Command exited with non-zero status 1" for no match
  done | sort -n | sed -n 3p
}

printf '%-12s %10s %10s %8s  %s\n' needle pidx_s rg_s ratio plan
for needle in '=>>>' '->' '::<' '?;' '=>'; do
  p=$(median "$pidx" --db "$db" --root "$corpus" search --no-sync --limit 20 --literal "$needle")
  r=$(median rg -lF -- "$needle" "$corpus")
  plan=$("$pidx" --db "$db" --root "$corpus" search --no-sync --limit 20 --literal "$needle" --explain | head -1 | cut -c1-40)
  printf '%-12s %10s %10s %8s  %s\n' "$needle" "$p" "$r" "$(echo "scale=2; $p / $r" | bc)" "$plan"
done
