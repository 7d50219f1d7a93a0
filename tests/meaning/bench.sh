#!/usr/bin/env bash
# The search-by-meaning benchmark in one command: makes the model (tests/meaning/model.sh),
# generates the corpus (examples/gen_corpus, seeded: the same files every run), and runs
# examples/bench_meaning. Usage: bash tests/meaning/bench.sh [SESSIONS] [BYTES]
# (default 1000 sessions, 200M; the issue's 10,000-session figure is `bench.sh 10000 2400M`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" --bin pidx --example gen_corpus --example bench_meaning
model="$(bash "$here/model.sh" "$target/release/pidx")"
corpus="${TMPDIR:-/tmp}/pidx-meaning-corpus-${1:-1000}"
rm -rf "$corpus"
"$target/release/examples/gen_corpus" --out "$corpus" --sessions "${1:-1000}" --bytes "${2:-200M}" >&2
"$target/release/examples/bench_meaning" --model "$model" --corpus "$corpus"
rm -rf "$corpus"
