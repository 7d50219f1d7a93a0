#!/usr/bin/env bash
# Times `pidx tree` on one session whose entries form a single chain (N entries, default
# 200,000): human output and --json, three runs each, CPU time from perf when it is there.
# Usage: benches/tree-chain.sh [N]
set -euo pipefail
n="${1:-200000}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
pidx="${CARGO_TARGET_DIR:-$repo/target}/release/pidx"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sessions/--tmp-chain--"
python3 - "$tmp/sessions/--tmp-chain--/chain.jsonl" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
sid = "0190aaaa-0000-7000-8000-000000000001"
with open(path, "w") as f:
    f.write(json.dumps({"type": "session", "version": 3, "id": sid,
                        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/chain"}) + "\n")
    prev = None
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        msg = {"role": role, "content": [{"type": "text", "text": f"message {i}"}],
               "timestamp": 1767225600000 + i}
        f.write(json.dumps({"type": "message", "id": f"{i:08x}", "parentId": prev,
                            "timestamp": "2026-01-01T00:00:01.000Z", "message": msg}) + "\n")
        prev = f"{i:08x}"
PY
"$pidx" --root "$tmp/sessions" --db "$tmp/i.db" sync
for mode in "" "--json"; do
  for run in 1 2 3; do
    if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
      perf stat -e task-clock "$pidx" --root "$tmp/sessions" --db "$tmp/i.db" --no-sync $mode tree chain.jsonl 2>&1 >/dev/null |
        awk -v m="tree $mode" '/task-clock/ {cpu=$1} /elapsed/ {el=$1} END {printf "%s: %s ms CPU, %.2f s elapsed\n", m, cpu, el}'
    else
      /usr/bin/time -f "tree $mode: %e s elapsed, %U s user" "$pidx" --root "$tmp/sessions" --db "$tmp/i.db" --no-sync $mode tree chain.jsonl >/dev/null
    fi
  done
done
