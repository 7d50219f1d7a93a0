#!/usr/bin/env bash
# `pidx mcp` against a real MCP client: the official Python SDK (`mcp` from PyPI), installed
# into a venv in a cache folder ($PIDX_TEST_CACHE, default ~/.cache/pidx-tests). Skips loudly
# when python3, venv or pip (or the package) cannot be had. See client_check.py for what it checks.
# With --pg: the same check of `pidx --pg URL mcp` against a throwaway PostgreSQL server
# (tests/pg/server.sh; skips loudly without one), read through docs/team.md's read-only role.
#   bash tests/mcp/run.sh [--pg]
set -euo pipefail
cd "$(dirname "$0")/../.."

skip() {
  echo "SKIPPED: the MCP client check: $*"
  exit 0
}

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
cache="${PIDX_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pidx-tests}"
venv="$cache/mcp-venv"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$cache"
  python3 -m venv "$venv" >/dev/null 2>&1 || { rm -rf "$venv"; skip "python3 cannot create a venv (install python3-venv)"; }
fi
if ! "$venv/bin/python" -c 'import mcp, jsonschema' >/dev/null 2>&1; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'mcp>=2,<3' jsonschema \
    || skip "pip could not install the mcp package from PyPI"
fi
echo "MCP client: python $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'), mcp $("$venv/bin/python" -m pip show mcp 2>/dev/null | sed -n 's/^Version: //p')"

cargo build --quiet --bin pidx
# Absolute: the client starts the server from a temp folder.
bin="$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)/pidx"
if [ "${1:-}" != "--pg" ]; then
  exec "$venv/bin/python" tests/mcp/client_check.py "$bin" tests/fixtures/conformance/sessions
fi
pg_skip() { echo "!!!!!!!! SKIPPED: the MCP client check over --pg: $* !!!!!!!!" >&2; exit 0; }
source tests/pg/server.sh
pg_start -c fsync=off -c synchronous_commit=off
writer="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
reader="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_reader"
# The schema first, then docs/team.md's grants to the read-only role (pg_start made it).
HOME="$PG_TMP" "$bin" --pg "$writer" pg migrate >/dev/null
sed -n '/<!-- pg-reader-role -->/,/^```$/p' docs/team.md | sed -n '/^```sql/,/^```$/p' | grep -v '^```' \
  | grep -v '^CREATE ROLE' | "${PSQL[@]}" -d pidx >/dev/null
PIDX_PSQL="$BIN/psql" PIDX_PG_ADMIN="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=postgres" \
  "$venv/bin/python" tests/mcp/client_check.py "$bin" tests/fixtures/conformance/sessions --pg "$writer" "$reader"
