#!/usr/bin/env bash
# Regenerates tests/fixtures/openclaw/ (what the Rust-only `cargo test` reads): an OpenClaw
# state folder written by OpenClaw's own code (make-store.mjs) and pi's answers on its
# transcripts (pi-answers.mjs) and OpenClaw's own answers (oc-answers.mjs). The agent databases are stored zstd-compressed
# (openclaw-agent.sqlite.zst, ~98% empty schema pages); tests decompress them into a temp dir.
# Needs npm (setup.sh installs Node 24, openclaw and pi into ~/.cache/pidx-test).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$repo/tests/fixtures/openclaw"
env_lines="$("$here/setup.sh")" || exit $?
eval "$env_lines"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pidx-oc-fixture-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
"$PIDX_OC_NODE" --no-warnings "$here/make-store.mjs" "$tmp/state" 2> >(grep -v 'slow SQLite' >&2)
"$PIDX_OC_NODE" --no-warnings "$here/pi-answers.mjs" "$tmp/state" "$tmp/pi-answers.json"
"$PIDX_OC_NODE" --no-warnings "$here/oc-answers.mjs" "$tmp/state" "$tmp/oc-answers.json"

rm -rf "$out"
mkdir -p "$out"
cp "$tmp/pi-answers.json" "$tmp/oc-answers.json" "$tmp/state/manifest.json" "$out/"
(cd "$tmp/state" && find agents -type f ! -name '*-wal' ! -name '*-shm' ! -path '*session-sqlite-import-archive*' -print) | while read -r rel; do
  mkdir -p "$out/state/$(dirname "$rel")"
  if [[ "$rel" == *.sqlite ]]; then
    "$PIDX_OC_NODE" -e 'const z=require("node:zlib"),fs=require("node:fs");fs.writeFileSync(process.argv[2],z.zstdCompressSync(fs.readFileSync(process.argv[1]),{params:{[z.constants.ZSTD_c_compressionLevel]:19}}))' \
      "$tmp/state/$rel" "$out/state/$rel.zst"
  else
    cp "$tmp/state/$rel" "$out/state/$rel"
  fi
done
du -sh "$out" >&2
