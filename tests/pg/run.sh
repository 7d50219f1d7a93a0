#!/usr/bin/env bash
# Live test of the team tier against a real PostgreSQL server: a throwaway cluster from
# tests/pg/server.sh (Debian's `postgresql`, installed when missing; skipped LOUDLY when it
# cannot be), a writer and a read-only role, then tests/it/pg.rs with PIDX_TEST_PG_URL /
# PIDX_TEST_PG_READER_URL / PIDX_TEST_PG_ADMIN_URL; the server stops afterwards whatever happens.
#
#   bash tests/pg/run.sh            # from the repository root
set -euo pipefail
cd "$(dirname "$0")/../.."

pg_skip() { echo "!!!!!!!! SKIPPED: PostgreSQL live test: $* !!!!!!!!" >&2; exit 0; }
source tests/pg/server.sh
pg_start -c fsync=off -c synchronous_commit=off
export PIDX_TEST_PG_URL="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
export PIDX_TEST_PG_READER_URL="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_reader"
export PIDX_TEST_PG_ADMIN_URL="postgresql:///postgres?host=$PG_TMP&port=$PG_PORT&user=postgres"
export PIDX_TEST_PG_PSQL="$BIN/psql"
cargo test --test it -- --ignored --test-threads=1 pg:: pg_many:: pg_meaning:: pg_rank:: pg_reads:: pg_scale:: team_rights:: "$@"
