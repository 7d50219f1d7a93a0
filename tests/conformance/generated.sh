#!/usr/bin/env bash
# The corpus generator (examples/gen_corpus.rs) checked against pi itself, so it cannot drift
# from pi's format: generate a small seeded corpus, check every line is byte for byte what pi's
# JSON.stringify writes and that pi opens every file without rewriting it (check-format.mjs),
# record pi's answers on it (pi-answers.mjs, pi-picker.mjs) and run the Rust conformance test
# on it. Without node/npm this prints a loud SKIPPED line and exits 0.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: generator check against pi: '$tool' is not installed"
    exit 0
  fi
done
PIDX_PI_SM="$("$here/setup-pi.sh")"
export PIDX_PI_SM
tmp="$(mktemp -d "${TMPDIR:-/tmp}/pidx-gen-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
cargo build --release --quiet --example gen_corpus
target/release/examples/gen_corpus --out "$tmp/sessions" --sessions 40 --bytes 3M \
  --huge-session 1M --seed "${PIDX_GEN_SEED:-11}" >/dev/null
node -e '
  const fs = require("fs"), path = require("path");
  const root = process.argv[1], out = {};
  for (const d of fs.readdirSync(root)) for (const f of fs.readdirSync(path.join(root, d)))
    out[d + "/" + f] = fs.statSync(path.join(root, d, f)).mtimeMs;
  fs.writeFileSync(process.argv[2], JSON.stringify(out));' "$tmp/sessions" "$tmp/mtimes.json"
node "$here/pi-answers.mjs" "$tmp" "$tmp/golden"
node "$here/pi-picker.mjs" "$tmp" "$tmp/golden/picker.json"
node "$here/check-format.mjs" "$tmp" "$tmp/golden"
# Deep trees (one nesting level per entry) need more than the default 2 MB test-thread stack.
RUST_MIN_STACK=268435456 PIDX_CONFORMANCE_DIR="$tmp" cargo test --release --quiet --test it -- conformance::
