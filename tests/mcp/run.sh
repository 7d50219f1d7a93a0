#!/usr/bin/env bash
# `pidx mcp` against a real MCP client: the official Python SDK (`mcp` from PyPI), installed
# into a venv in a cache folder ($PIDX_TEST_CACHE, default ~/.cache/pidx-tests). Skips loudly
# when python3, venv or pip (or the package) cannot be had. See client_check.py for what it checks.
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
exec "$venv/bin/python" tests/mcp/client_check.py "$bin" tests/fixtures/conformance/sessions
