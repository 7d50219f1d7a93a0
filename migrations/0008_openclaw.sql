-- OpenClaw's SQLite session stores (2026.8 and later: agents/<agentId>/agent/openclaw-agent.sqlite).
-- pidx keeps a JSONL copy of each store transcript in a folder beside the index (`mirror`);
-- those copies are ordinary `files` of the gateway root, with a `gw_dirs` row for the mirror
-- folder and `gw_keys` rows fed from the store's session windows. This table is what `status`
-- says of each store. See src/ingest/openclaw.rs and docs/openclaw-store.md.
CREATE TABLE oc_stores (
    db             TEXT PRIMARY KEY,   -- the store's path
    root           TEXT NOT NULL,      -- the gateway root it belongs to
    agent_id       TEXT NOT NULL,
    mirror         TEXT NOT NULL,      -- the folder of pidx's JSONL copies
    schema_version INTEGER,            -- schema_meta.schema_version at the last good read
    app_version    TEXT,               -- the OpenClaw version that wrote it
    sessions       INTEGER NOT NULL DEFAULT 0,
    cold           INTEGER NOT NULL DEFAULT 0,  -- of which in cold archives
    problem        TEXT,               -- why the last read failed (NULL when it worked)
    synced_at      INTEGER             -- epoch ms of the last good read
);
