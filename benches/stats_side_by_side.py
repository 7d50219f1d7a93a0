#!/usr/bin/env python3
"""Side by side: old vs new pidx binary, each stats command run N times alternating; medians of
wall and CPU (user+sys from wait4 rusage). Usage: stats_side_by_side.py ROOT OLD_BIN OLD_DB NEW_BIN NEW_DB N [--no-sync]"""
import os, sys, time, statistics, subprocess, json
def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a == b
root, old_bin, old_db, new_bin, new_db, n = sys.argv[1:7]
extra = sys.argv[7:]
n = int(n)
cmds = [
    "stats", "stats --by day --by model", "stats --by tool", "stats --by week --by project",
    "stats --by session", "stats --by tool --by model", "stats --by month --by provider --tz Asia/Kathmandu",
    "stats --by day --since 2026-01-01 --until 2026-06-01 --tz UTC",
    "stats --by day --by tool --since 300d",
]
def run(b, db, cmd):
    args = [b, "--db", db, "--root", root] + extra + cmd.split() + ["--json"]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read(); p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    assert status == 0, (cmd, status)
    return wall, (ru.ru_utime + ru.ru_stime) * 1000, out
print(f"load before: {os.getloadavg()}")
print("| command | old wall | new wall | old CPU | new CPU | CPU ratio | same answer (cost 1e-9) |")
print("|---|---|---|---|---|---|---|")
for cmd in cmds:
    o, nw = [], []
    run(old_bin, old_db, cmd); run(new_bin, new_db, cmd)
    for _ in range(n):
        o.append(run(old_bin, old_db, cmd)); nw.append(run(new_bin, new_db, cmd))
    same = close(json.loads(o[0][2]), json.loads(nw[0][2]))
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    print(f"| `{cmd}` | {med(o,0):.1f} ms | {med(nw,0):.1f} ms | {med(o,1):.1f} ms | {med(nw,1):.1f} ms | {med(o,1)/max(med(nw,1),0.01):.1f}x | {same} |", flush=True)
print(f"load after: {os.getloadavg()}")
