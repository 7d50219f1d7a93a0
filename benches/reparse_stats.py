#!/usr/bin/env python3
"""reparse_stats.py ROOT: the baseline for `pidx stats --by day --by model`.

What a tool without an index does (ccusage-style): parse every line of every session file under
ROOT/*/*.jsonl and sum assistant usage per (UTC day, provider/model): messages, input, output,
cacheRead, cacheWrite tokens and cost. Prints the rows as JSON. Files are only read.
"""
import datetime
import json
import os
import sys
from collections import defaultdict


def main() -> None:
    root = sys.argv[1]
    rows = defaultdict(lambda: [0, 0, 0, 0, 0, 0.0])
    for project in sorted(os.listdir(root)):
        folder = os.path.join(root, project)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".jsonl"):
                continue
            with open(os.path.join(folder, name), "rb") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(entry, dict) or entry.get("type") != "message":
                        continue
                    message = entry.get("message")
                    if not isinstance(message, dict) or message.get("role") != "assistant":
                        continue
                    usage = message.get("usage") or {}
                    ts = message.get("timestamp")
                    if not isinstance(ts, (int, float)):
                        continue
                    day = datetime.datetime.fromtimestamp(ts / 1000, datetime.timezone.utc).date()
                    key = (day.isoformat(), f"{message.get('provider')}/{message.get('model')}")
                    row = rows[key]
                    row[0] += 1
                    row[1] += usage.get("input", 0) or 0
                    row[2] += usage.get("output", 0) or 0
                    row[3] += usage.get("cacheRead", 0) or 0
                    row[4] += usage.get("cacheWrite", 0) or 0
                    row[5] += (usage.get("cost") or {}).get("total", 0) or 0
    out = [
        {"day": d, "model": m, "messages": r[0], "input": r[1], "output": r[2],
         "cacheRead": r[3], "cacheWrite": r[4], "cost": r[5]}
        for (d, m), r in sorted(rows.items())
    ]
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
