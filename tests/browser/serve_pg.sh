#!/usr/bin/env bash
# `pidx --pg URL serve` in a real browser: a throwaway PostgreSQL (tests/pg/server.sh), the
# browser fixtures (tests/browser/serve_corpus.py) pushed as two sources, the server started
# through the read-only role (docs/team.md's grants), and headless Chromium
# (tests/browser/serve_pg_test.py): the pages over both sources load with no console error and
# no payload run, the source filter narrows, a search typed opens a hit on one machine. Prints
# SKIPPED when there is no chromium or no PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$(command -v "$b")"; break; fi
done
[ -n "$browser" ] || { echo "SKIPPED: pidx --pg serve browser test: no chromium (tests/browser/serve.sh installs it)"; exit 0; }
pg_skip() { echo "SKIPPED: pidx --pg serve browser test: $*" >&2; exit 0; }
source tests/pg/server.sh
pg_start -c fsync=off
cargo build --quiet
pidx="${CARGO_TARGET_DIR:-$PWD/target}/debug/pidx"
work="$(mktemp -d)"
trap 'rm -rf "$work"; pg_stop' EXIT
writer="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
reader="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_reader"
python3 tests/browser/serve_corpus.py "$work/sessions" 2
run() { HOME="$work" "$pidx" --root "$work/sessions" --db "$work/index.db" "$@"; }
run push --images --pg "$writer" --source alpha >/dev/null
run push --images --pg "$writer" --source beta >/dev/null
# docs/team.md's read-only role (created by pg_start already).
sed -n '/<!-- pg-reader-role -->/,/^```$/p' docs/team.md | sed -n '/^```sql/,/^```$/p' | grep -v '^```' \
  | grep -v '^CREATE ROLE' | "${PSQL[@]}" -d pidx >/dev/null
HOME="$work" python3 tests/browser/serve_pg_test.py "$pidx" "$browser" "$work" "$reader"
