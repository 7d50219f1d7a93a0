#!/usr/bin/env python3
"""watch_latency.py PIDX SESSIONS_COPY WORKDIR [--appends N] [--files F] [--idle SECS]

Append -> visible latency under `pidx watch`: starts the watcher on SESSIONS_COPY (a copy: this
script appends to its files), appends N user messages round-robin to F files, one at a time,
and after each append polls `pidx --no-sync sql` until the new entry is in the index. Then it
leaves the watcher idle for SECS seconds and reads its CPU time from /proc. Prints JSON.
The poll itself is a process start (~10 ms), so latencies are upper bounds at that resolution.
"""
import json, os, subprocess, sys, time, uuid

def main():
    pidx, root, work = sys.argv[1:4]
    args = sys.argv[4:]
    opt = lambda name, d: float(args[args.index(name) + 1]) if name in args else d
    n, nfiles, idle = int(opt("--appends", 1000)), int(opt("--files", 50)), opt("--idle", 60)
    db = os.path.join(work, "watch.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jsonl"))[:nfiles]
    base = [pidx, "--root", root, "--db", db]
    w = subprocess.Popen(base + ["watch"], stderr=subprocess.DEVNULL)
    def status():
        return subprocess.run(base + ["status"], capture_output=True, text=True).stdout
    while "watcher: pid" not in status() or "last sync" not in status():
        time.sleep(0.05)
    time.sleep(1.0)  # the first reconcile
    lat = []
    for i in range(n):
        path = files[i % len(files)]
        eid = uuid.uuid4().hex[:8]
        line = json.dumps({"type": "message", "id": eid, "parentId": None,
                           "timestamp": "2026-11-22T00:00:00.000Z",
                           "message": {"role": "user", "content": "latency probe %d" % i, "timestamp": 1}})
        t0 = time.monotonic()
        with open(path, "a") as f:
            f.write(line + "\n")
        q = "SELECT count(*) FROM entries WHERE id = '%s'" % eid
        while True:
            out = subprocess.run(base + ["--no-sync", "--json", "sql", q], capture_output=True, text=True).stdout
            if json.loads(out or "[]") and json.loads(out)[0]["count(*)"] == 1:
                break
        lat.append((time.monotonic() - t0) * 1000)
    ticks = os.sysconf("SC_CLK_TCK")
    def cpu():
        f = open("/proc/%d/stat" % w.pid).read().split(")")[1].split()
        return (int(f[11]) + int(f[12])) / ticks
    c0 = cpu(); time.sleep(idle); c1 = cpu()
    w.terminate(); w.wait()
    lat.sort()
    pct = lambda p: lat[min(len(lat) - 1, int(p / 100 * len(lat)))]
    print(json.dumps({"appends": n, "files": len(files), "p50_ms": round(pct(50), 1),
                      "p95_ms": round(pct(95), 1), "max_ms": round(lat[-1], 1),
                      "idle_seconds": idle, "idle_cpu_seconds": round(c1 - c0, 3)}))

if __name__ == "__main__":
    main()
