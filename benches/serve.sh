#!/usr/bin/env bash
# `pidx serve` speed and memory on a generated corpus, release build, measured with a real HTTP
# client (benches/serve_bench.py, timing each request from send to last byte on loopback):
# the sessions pages, the first screen of a long session, search as you type (p50/p95 over
# typed prefixes of the corpus vocabulary), and the server's RSS while a client pages through
# the long session and a very large line. Prints a Markdown table. A benchmark, not a test.
#   benches/serve.sh [--sessions N] [--bytes SIZE] [--huge-session SIZE] [--huge-line MB] [--out DIR]
# Defaults: the benchmark corpus (10,000 sessions, 1G, seed 1) plus a 60M session and a
# session whose one message is a 100 MB line (read through the page and its text endpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=10000 bytes=1G huge=60M line_mb=100 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sessions) sessions="$2"; shift 2 ;;
    --bytes) bytes="$2"; shift 2 ;;
    --huge-session) huge="$2"; shift 2 ;;
    --huge-line) line_mb="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "serve.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
target="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --quiet --release --bin pidx --example gen_corpus
if [ -z "$out" ]; then out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT; fi
root="$out/sessions" db="$out/index.db"
if [ ! -d "$root" ]; then
  "$target/release/examples/gen_corpus" --out "$root" --sessions "$sessions" --bytes "$bytes" \
    --huge-session "$huge" --seed 1 >/dev/null
  python3 benches/serve_bench.py --write-line "$root/--bench-huge-line--" "$line_mb"
fi
HOME="$out" "$target/release/pidx" --root "$root" --db "$db" sync >/dev/null 2>&1
HOME="$out" python3 benches/serve_bench.py "$target/release/pidx" "$root" "$db"
