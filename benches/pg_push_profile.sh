#!/usr/bin/env bash
# Where a first push's time goes (docs/performance.md, "Where a first push's time goes"): a
# seeded corpus (gen_corpus) synced into one local index, pushed once as source `warm` (the
# migrations, a server that holds a source already), then pushed again as source `profile` to
# a throwaway PostgreSQL (tests/pg/server.sh) logging every statement's duration; prints the
# push's wall and CPU time and the server's time by statement, largest first.
#
#   bash benches/pg_push_profile.sh                   # 1,000 sessions, 100M
#   bash benches/pg_push_profile.sh 1000 100M
#   PIDX_PROFILE_SQL='DROP INDEX entry_text_words' bash benches/pg_push_profile.sh
#                                                     # SQL run (as postgres) before the push:
#                                                     # what the push would cost without it
#   PIDX_BIN=/path/to/other/pidx bash benches/pg_push_profile.sh
#
# A statement's time includes the time pidx takes to stream a COPY's rows. Release build; on a
# shared 2-core machine the times are noisy (the load average is printed): compare runs
# alternated in one sitting.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${1:-1000}
SIZE=${2:-100M}
source benches/pg_throwaway.sh
pg_throwaway pgprofile -c log_min_duration_statement=0
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$T/examples/gen_corpus" --out "$W/sessions" --sessions "$SESSIONS" --bytes "$SIZE" --seed 1 >/dev/null 2>&1
echo "jsonl: $(du -sb "$W/sessions" | cut -f1) bytes, $SESSIONS sessions"
L=("$P" --db "$W/index.db" --root "$W/sessions")
"${L[@]}" sync >/dev/null 2>&1
"${L[@]}" --no-sync push --pg "$URL" --source warm >/dev/null
if [[ -n "${PIDX_PROFILE_SQL:-}" ]]; then
  echo "before the push: $PIDX_PROFILE_SQL"
  "${PSQL[@]}" -c "$PIDX_PROFILE_SQL" pidx
fi
: >"$PG_TMP/server.log"
/usr/bin/time -f "push: %e s wall, pidx %U s user + %S s system, peak RSS %M KB" \
  "${L[@]}" --no-sync push --pg "$URL" --source profile >/dev/null
python3 - "$PG_TMP/server.log" <<'PY'
import collections, re, sys
log = open(sys.argv[1]).read()
by = collections.defaultdict(lambda: [0, 0.0])
for entry in re.split(r"\n(?=\d{4}-\d\d-\d\d )", log):
    m = re.search(r"duration: ([\d.]+) ms\s+(\w+)[^:]*: (.*)", entry, re.S)
    if m:
        # One row per statement: its parse, bind and execute summed.
        sql = " ".join(m.group(3).split())[:90]
        by[sql][1] += float(m.group(1))
        by[sql][0] += m.group(2) == "execute" or m.group(2) == "statement"
total = sum(v[1] for v in by.values())
print(f"server: {total / 1000:.2f} s in statements")
for sql, (n, ms) in sorted(by.items(), key=lambda kv: -kv[1][1])[:12]:
    print(f"{ms:9.0f} ms {n:4d}x  {sql}")
PY
