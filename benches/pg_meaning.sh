#!/usr/bin/env bash
# Search by meaning on the team server against the local index (issue 52; docs/team.md,
# "Search by meaning on the server"). A corpus embedded with the real model
# (tests/meaning/model.sh) is pushed as one source to a throwaway PostgreSQL; for each query,
# by meaning (--meaning) and fused (the default), `pidx --pg URL search` must give the local
# index's top 20 (file, entry, kind, how found, score to a millionth), and the medians of RUNS
# runs of each, alternating, are printed. Then what the push of the vectors cost: the same
# index pushed to an empty database at pg 0031 (no vectors) and at pg 0032, the wall times and
# the server's bytes.
#
#   bash benches/pg_meaning.sh [RUNS]          # published transcripts (default; RUNS 5)
#   PIDX_BENCH_SESSIONS=10000 PIDX_BENCH_SIZE=200M bash benches/pg_meaning.sh
#                                              # generated sessions instead (gen_corpus --seed 1)
#   PIDX_BIN=/path/to/pidx bash benches/pg_meaning.sh
#   PIDX_BENCH_NO_REDACT=1 bash benches/pg_meaning.sh   # push --no-redact: every passage sent
#
# The published transcripts are the real meaning evaluation's corpus (862 pi/OpenClaw session
# files rebuilt by tests/meaning/real/corpus.py from their repositories' snapshots, nothing of
# it committed) and its 56 queries (tests/meaning/real/queries.tsv); generated sessions take
# those queries too. Without the snapshots (the `fetch` tool, /work/.mirror or $PIDX_MIRRORS)
# it says SKIPPED.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
source benches/pg_throwaway.sh
pg_throwaway pgmeaning
if [[ -n "${PIDX_BENCH_SESSIONS:-}" ]]; then
  "$T/examples/gen_corpus" --out "$W/s" --sessions "$PIDX_BENCH_SESSIONS" \
    --bytes "${PIDX_BENCH_SIZE:-100M}" --seed 1 >/dev/null
elif ! python3 tests/meaning/real/corpus.py tests/meaning/real/manifest.tsv \
    "${PIDX_MIRRORS:-/work/.mirror}" "$W/s" >/dev/null 2>&1; then
  echo "SKIPPED benches/pg_meaning.sh: the corpus's repositories are not all fetched (tests/meaning/real/manifest.tsv)"
  exit 0
fi
MODEL=${PIDX_MODEL:-$(bash tests/meaning/model.sh "$P")}
export HOME="$W/home" PIDX_CONFIG="$W/no-config.toml" PIDX_MODEL="$MODEL"
mkdir -p "$HOME"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "sync --embed %e s" "$P" --db "$W/i.db" --root "$W/s" sync --embed >/dev/null 2>"$W/sync.err" \
  || { cat "$W/sync.err"; exit 1; }
tail -1 "$W/sync.err"
echo "jsonl: $(du -sb "$W/s" | cut -f1) bytes"
PSQL=("$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres)
"${PSQL[@]}" -d postgres -qc "CREATE DATABASE before OWNER pidx_writer"
BEFORE=${URL/\/\/\/pidx\?/\/\/\/before?}
size() { "${PSQL[@]}" -d "$1" -qAtc "VACUUM ANALYZE" -c "SELECT pg_database_size(current_database())"; }
push() { /usr/bin/time -f "%e" "$@" --db "$W/i.db" --root "$W/s" --no-sync push --source a ${PIDX_BENCH_NO_REDACT:+--no-redact} 2>&1 >/dev/null | tail -1; }
t_before=$(PIDX_PG_SCHEMA=31 push "$P" --pg "$BEFORE")
t_after=$(push "$P" --pg "$URL")
echo "push without vectors (pg 0031): $t_before s, $(size before) bytes"
echo "push with vectors (pg 0032):    $t_after s, $(size pidx) bytes"
"${PSQL[@]}" -d pidx -Atc "SELECT 'passages: ' || count(*) || ' rows, ' || pg_size_pretty(pg_total_relation_size('passages'::regclass)
  + coalesce((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'passages'::regclass), 0)) FROM passages"
python3 - "$P" "$W" "$URL" "$RUNS" tests/meaning/real/queries.tsv <<'EOF'
import json, subprocess, sys, time, statistics
pidx, w, url, runs, queries = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
qs = [l.rstrip("\n").split("\t")[4] for l in open(queries) if l[0].isdigit()]
def run(server, q, extra):
    cmd = [pidx, "--db", f"{w}/i.db", "--root", f"{w}/s", "--no-sync"]
    if server:
        cmd += ["--pg", url, "--source", "a"]
    cmd += ["search", q, "--limit", "20", "--json"] + extra
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    took = time.perf_counter() - t
    if out.returncode not in (0, 1):
        sys.exit(f"{cmd}: {out.stderr}")
    hits = json.loads(out.stdout or "[]")
    return took, [f'{h["path"]} {h["entryId"]} {h["kind"]} {h["by"]} {h["score"]:.6f}' for h in hits]
for name, extra in [("by meaning (--meaning)", ["--meaning"]), ("fused (the default)", [])]:
    same = hits = 0
    local_t, server_t = [], []
    for q in qs:
        lt, st = [], []
        for _ in range(runs):
            t, want = run(False, q, extra); lt.append(t)
            t, got = run(True, q, extra); st.append(t)
        local_t.append(statistics.median(lt)); server_t.append(statistics.median(st))
        hits += len(want)
        if got == want:
            same += 1
        else:
            at = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
            print(f"  differs: {q!r} from hit {at + 1} (local {len(want)}, server {len(got)} hits)\n"
                  f"    local:  {want[at:at + 2]}\n    server: {got[at:at + 2]}")
    print(f"{name}: {same}/{len(qs)} top 20 identical ({hits} hits); median of the queries' medians "
          f"local {statistics.median(local_t)*1000:.0f} ms, server {statistics.median(server_t)*1000:.0f} ms; "
          f"p90 local {sorted(local_t)[int(len(local_t)*0.9)]*1000:.0f} ms, server {sorted(server_t)[int(len(server_t)*0.9)]*1000:.0f} ms")
EOF
