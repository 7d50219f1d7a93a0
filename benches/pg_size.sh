#!/usr/bin/env bash
# Where the team server's bytes go (docs/team.md, "The server's size"): a seeded corpus
# (gen_corpus) synced into one local index and pushed once to a throwaway PostgreSQL
# (tests/pg/server.sh), then VACUUM ANALYZE and each relation's size, the database's size and
# the stored size of the big columns. Prints the push's wall time too.
#
#   bash benches/pg_size.sh                 # 1,000 sessions, 100M
#   bash benches/pg_size.sh 1000 100M
#   PIDX_BIN=/path/to/other/pidx bash benches/pg_size.sh    # measure another build
#   PIDX_PG_SIZE_IMAGES=1 bash benches/pg_size.sh           # push --images (image data kept)
#   PIDX_BENCH_CORPUS=DIR bash benches/pg_size.sh           # sessions nobody generated, in DIR
#     (for instance the published transcripts benches/pg_rank_real.sh rebuilds)
#
# Release build; on a shared 2-core machine the push time is noisy (the load average is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${1:-1000}
SIZE=${2:-100M}
source benches/pg_throwaway.sh
pg_throwaway pgsize
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n "${PIDX_BENCH_CORPUS:-}" ]]; then
  cp -a "$PIDX_BENCH_CORPUS" "$W/s"
else
  "$T/examples/gen_corpus" --out "$W/s" --sessions "$SESSIONS" --bytes "$SIZE" --seed 1 >/dev/null
fi
HOME=$W "$P" --db "$W/i.db" --root "$W/s" sync >/dev/null 2>&1
echo "jsonl: $(du -sb "$W/s" | cut -f1) bytes; local index $(stat -c %s "$W/i.db") bytes"
/usr/bin/time -f "push %e s (pidx %U s user, %S s system)" env HOME="$W" "$P" --db "$W/i.db" --root "$W/s" --no-sync push --pg "$URL" --source a ${PIDX_PG_SIZE_IMAGES:+--images} >/dev/null
Q=("$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres -d pidx)
"${Q[@]}" -At -c "VACUUM ANALYZE"
# Each table with its partitions (pg 0010: in schema pidx_parts) summed: its rows with their
# TOAST, its indexes, and the words' GIN index apart (none since pg 0026).
"${Q[@]}" -c "
SELECT coalesce(p.relname, c.relname) AS relation,
       pg_size_pretty(sum(pg_table_size(c.oid))) AS rows_and_toast,
       pg_size_pretty(sum(pg_indexes_size(c.oid))) AS indexes,
       pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS total,
       sum(pg_total_relation_size(c.oid)) AS bytes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class p ON p.oid = i.inhparent
WHERE n.nspname IN ('public', 'pidx_parts') AND c.relkind IN ('r', 'm')
GROUP BY 1 ORDER BY sum(pg_total_relation_size(c.oid)) DESC LIMIT 30;
SELECT coalesce(pg_size_pretty(sum(pg_relation_size(relid))), 'none (pg 0026)') AS words_gin_index
FROM pg_partition_tree(to_regclass('entry_text_words')) WHERE isleaf;
SELECT pg_database_size('pidx') AS database_bytes, pg_size_pretty(pg_database_size('pidx'));"
for q in "SELECT pg_size_pretty(sum(pg_column_size(raw))) raw_stored, pg_size_pretty(sum(octet_length(raw))) raw_bytes, pg_size_pretty(sum(pg_column_size(text))) text_stored FROM entries" \
         "SELECT pg_size_pretty(sum(pg_column_size(raw_z))) raw_z_stored, count(raw_z) FROM entries" \
         "SELECT pg_size_pretty(sum(pg_column_size(body))) body_stored, pg_size_pretty(sum(octet_length(body))) body_bytes, pg_size_pretty(sum(pg_column_size(tsv))) tsv_stored, count(*) FROM entry_text" \
         "SELECT pg_size_pretty(sum(pg_column_size(body_z))) body_z_stored, count(body_z) FROM entry_text"; do
  "${Q[@]}" -c "$q" 2>/dev/null || true
done
# What the stored words would take without their positions (`strip`; phrases need them): both
# forms copied into scratch tables with lz4, as the server stores the column, then dropped.
"${Q[@]}" -At -c "SET default_toast_compression = lz4" \
  -c "CREATE TABLE scratch_tsv AS SELECT tsv FROM entry_text" \
  -c "CREATE TABLE scratch_strip AS SELECT strip(tsv) AS tsv FROM entry_text" \
  -c "SELECT 'tsv with positions ' || pg_size_pretty(pg_total_relation_size('scratch_tsv')) || ', without ' || pg_size_pretty(pg_total_relation_size('scratch_strip'))" \
  -c "DROP TABLE scratch_tsv, scratch_strip" | grep -v '^SET\|^SELECT\|^DROP' || true
