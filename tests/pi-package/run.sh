#!/usr/bin/env bash
# The pidx pi package (integrations/pi) in the real pi, headless over RPC, with a fake model
# provider (no network), HOME and pi's agent folder in temp folders: check.mjs says what is
# checked. Runs two pi versions: the one the README names (tests/conformance/setup-pi.sh's
# default, installed into <repo>/.oracle like the conformance check) and the newest on npm
# that installs (the newest release sometimes names dependencies not yet published; then the
# next older one is tried, and the script says so).
#
# pi's CLI needs Node >= 22.19: when the machine's node is older, node-linux-<arch>@22 from the
# npm registry is installed into a cache folder ($PIDX_TEST_CACHE, default ~/.cache/pidx-tests).
# Without node or npm, or when nothing can be installed, it prints a loud SKIPPED line and exits 0.
#
#   PIDX_PI_NEWEST=1.5.2   pin the "newest" version instead of asking npm
#   PIDX_PACKAGE_OUT=DIR   packaging/build.sh's output: check.mjs then also installs the packed
#                          npm package with `pi install npm:pidx` (from a throwaway registry of
#                          those tarballs) and runs /history through the binary it brought
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pkg="@earendil-works/pi-coding-agent"

skip() {
  echo "SKIPPED: the pi package check in the real pi: $*"
  exit 0
}
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || skip "'$tool' is not installed"
done
cache="${PIDX_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pidx-tests}"
mkdir -p "$cache"

# A Node that runs pi's CLI.
node_ok() { "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)'; }
node_bin="$(command -v node)"
if ! node_ok "$node_bin"; then
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) skip "node $("$node_bin" --version) is older than 22.19 and there is no node package for $(uname -m)" ;;
  esac
  nodedir="$cache/node22"
  node_bin="$nodedir/node_modules/node-linux-$arch/bin/node"
  if [ ! -x "$node_bin" ] || ! node_ok "$node_bin"; then
    echo "run.sh: node $(node --version) is older than pi needs (22.19); installing node-linux-$arch@22 into $nodedir" >&2
    mkdir -p "$nodedir"
    [ -f "$nodedir/package.json" ] || echo '{"private":true,"name":"pidx-node22"}' >"$nodedir/package.json"
    npm install --prefix "$nodedir" --no-audit --no-fund --loglevel=error "node-linux-$arch@22" >&2 \
      || skip "npm could not install node-linux-$arch@22"
  fi
fi
node_dir="$(dirname "$node_bin")"
echo "node for pi: $("$node_bin" --version)"

# pi's CLI for a version: installs it (idempotent) and prints dist/bundle/cli.js.
pi_cli() {
  local sm
  sm="$(PATH="$node_dir:$PATH" PIDX_PI_VERSION="$1" PIDX_PI_DIR="$2" bash "$repo/tests/conformance/setup-pi.sh")" || return 1
  echo "$(cd "$(dirname "$sm")/.." && pwd)/bundle/cli.js"
}

readme_version="$(sed -n 's/^version="\${PIDX_PI_VERSION:-\(.*\)}"$/\1/p' "$repo/tests/conformance/setup-pi.sh")"
[ -n "$readme_version" ] || { echo "run.sh: cannot read the pi version setup-pi.sh installs" >&2; exit 1; }
clis=()
cli="$(pi_cli "$readme_version" "$repo/.oracle")" || skip "npm could not install $pkg@$readme_version"
clis+=("$cli")

newest="${PIDX_PI_NEWEST:-}"
if [ -z "$newest" ]; then
  # The newest first, then older ones, until one installs (at most four tries).
  candidates="$(npm view "$pkg" versions --json 2>/dev/null | "$node_bin" -e '
    let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const v=JSON.parse(s).filter(x=>/^\d+\.\d+\.\d+$/.test(x)).reverse().slice(0,4);
      console.log(v.join(" "))})')" || candidates=""
else
  candidates="$newest"
fi
newest_cli=""
for v in $candidates; do
  if [ "$v" = "$readme_version" ]; then break; fi
  if newest_cli="$(pi_cli "$v" "$cache/pi-$v")"; then
    newest="$v"
    break
  fi
  echo "run.sh: $pkg@$v does not install from npm (see above); trying the next older version" >&2
  rm -rf "$cache/pi-$v"
  newest_cli=""
done
if [ -n "$newest_cli" ]; then
  clis+=("$newest_cli")
else
  echo "NOTE: no pi newer than $readme_version installs from npm; only $readme_version is checked"
fi

cd "$repo"
cargo build --quiet --bin pidx
pidx="$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)/pidx"

status=0
for cli in "${clis[@]}"; do
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/pidx-pi-package-XXXXXX")"
  mkdir -p "$tmp/bin" "$tmp/home"
  ln -s "$pidx" "$tmp/bin/pidx"
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node_bin" "$cli" >"$tmp/bin/pi"
  chmod +x "$tmp/bin/pi"
  # pidx and pi see only the temp HOME: sessions, index, pi's settings and mcp.json.
  if ! env -u PIDX_DB -u PIDX_ROOTS -u PIDX_PG -u PI_CODING_AGENT_SESSION_DIR -u PIDX_BIN \
    HOME="$tmp/home" PI_CODING_AGENT_DIR="$tmp/home/.pi/agent" \
    XDG_DATA_HOME="$tmp/home/.local/share" XDG_CONFIG_HOME="$tmp/home/.config" \
    XDG_CACHE_HOME="$tmp/home/.cache" PIDX_CONFIG="$tmp/home/pidx.toml" NO_COLOR=1 \
    PATH="$tmp/bin:$node_dir:$PATH" \
    "$node_bin" "$here/check.mjs" "$cli" "$pidx" "$repo"; then
    status=1
    echo "run.sh: kept $tmp for a look" >&2
  else
    rm -rf "$tmp"
  fi
done
exit "$status"
