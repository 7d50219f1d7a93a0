#!/usr/bin/env bash
# The real evaluation of search by meaning, in one command: rebuilds the corpus of published
# pi/OpenClaw transcripts from the snapshots of their repositories (corpus.py, from
# manifest.tsv: repo, commit and path of every file), makes the model (tests/meaning/model.sh),
# indexes and embeds the corpus with pidx, and prints recall@5 per kind of query for
# --lexical, the default and --meaning on both halves of queries.tsv (eval.py).
# The snapshots come from the `fetch` tool (/work/.mirror/OWNER+NAME/repo, or $PIDX_MIRRORS);
# without them this says SKIPPED and exits 0. Nothing of the corpus is committed.
# With --whole, the model is the whole transformer (`pidx model install`) instead of the static
# one distilled from it.
# Usage: bash tests/meaning/real/eval.sh [--whole] [--json OUT]
set -euo pipefail
kind=()
if [ "${1:-}" = --whole ]; then kind=(--whole); shift; fi
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
mirrors="${PIDX_MIRRORS:-/work/.mirror}"
work="${TMPDIR:-/tmp}/pidx-meaning-real"
rm -rf "$work" && mkdir -p "$work"
if ! python3 "$here/corpus.py" "$here/manifest.tsv" "$mirrors" "$work/corpus"; then
  echo "SKIPPED tests/meaning/real/eval.sh: the snapshots of the corpus's repositories are not all in $mirrors (see manifest.tsv)"
  exit 0
fi
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" --bin pidx
pidx="$target/release/pidx"
model="$(bash "$repo/tests/meaning/model.sh" "${kind[@]}" "$pidx")"
export PIDX_MODEL="$model" HOME="$work/home" PIDX_CONFIG="$work/no-config.toml"
"$pidx" --db "$work/index.db" --root "$work/corpus" sync --embed >&2
python3 "$here/eval.py" "$pidx" "$work/index.db" "$work/corpus" "$here/queries.tsv" "$@"
