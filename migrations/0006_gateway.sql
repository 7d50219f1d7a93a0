-- Agent gateways (OpenClaw and its rebrands): transcripts in `agents/<agentId>/sessions/`, next
-- to a `sessions.json` that maps session keys to their current transcript. See
-- src/ingest/gateway.rs.

-- One row per gateway sessions folder: its agent and the state of its sessions.json.
CREATE TABLE gw_dirs (
    dir        TEXT PRIMARY KEY,    -- the folder holding sessions.json and the transcripts
    agent_id   TEXT NOT NULL,       -- agents/<agentId>/sessions
    size       INTEGER,             -- sessions.json at its last read (NULL: missing)
    mtime_ms   INTEGER,
    ino        INTEGER,
    problem    TEXT                 -- why sessions.json could not be used, NULL when fine
);

-- Every (sessionKey, sessionId) pair seen in a sessions.json. `current` is 1 for the pairs the
-- latest read holds; a reset gives a key a new sessionId and leaves the older pair here with
-- current = 0, so the earlier transcript keeps its key (as long as this index saw it).
CREATE TABLE gw_keys (
    id           INTEGER PRIMARY KEY,
    dir          TEXT NOT NULL,
    session_key  TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    session_file TEXT,              -- SessionEntry.sessionFile, when set
    current      INTEGER NOT NULL,
    updated_at   INTEGER,           -- SessionEntry.updatedAt (epoch ms)
    agent_key    TEXT,              -- the agent id inside the key (agent:<id>:...)
    channel      TEXT,              -- telegram, discord, slack, cron, hook, ...
    chat_type    TEXT,              -- direct | group | room
    peer         TEXT,              -- the chat, group or room id in the key
    display_name TEXT,
    subject      TEXT,
    meta         TEXT NOT NULL,     -- the SessionEntry as written (unknown fields kept)
    UNIQUE (dir, session_key, session_id)
);
CREATE INDEX gw_keys_by_id ON gw_keys(dir, session_id);

-- Assistant replies starting with NO_REPLY, and the turn that led to them (from the user
-- message they answer): housekeeping users never saw.
ALTER TABLE entries ADD COLUMN silent INTEGER NOT NULL DEFAULT 0;

-- Each gateway transcript with the key it belongs to: the key whose sessionFile names it, else
-- one whose sessionId is its name up to `.jsonl` or `-topic-` (keys without a sessionFile
-- first); current pairs before earlier ones, then the latest updatedAt.
CREATE VIEW gw_files AS
SELECT x.file_id, x.agent_id, x.dir, x.thread_id,
       k.session_key, k.current, k.channel, k.chat_type, k.peer, k.display_name, k.subject,
       k.updated_at, k.meta
FROM (
    SELECT f.id AS file_id, g.agent_id, g.dir,
           CASE WHEN instr(f.name, '-topic-') > 0
                THEN substr(f.name, instr(f.name, '-topic-') + 7,
                            length(f.name) - instr(f.name, '-topic-') - 12)
           END AS thread_id,
           coalesce(
               (SELECT k.id FROM gw_keys k
                WHERE k.dir = f.dir AND k.session_file IN (f.name, f.path)
                ORDER BY k.current DESC, k.updated_at DESC LIMIT 1),
               (SELECT k.id FROM gw_keys k
                WHERE k.dir = f.dir AND k.session_id = CASE
                    WHEN instr(f.name, '-topic-') > 0
                    THEN substr(f.name, 1, instr(f.name, '-topic-') - 1)
                    ELSE substr(f.name, 1, length(f.name) - 6) END
                ORDER BY k.session_file IS NULL DESC, k.current DESC, k.updated_at DESC LIMIT 1)
           ) AS key_id
    FROM files f JOIN gw_dirs g ON g.dir = f.dir
) x
LEFT JOIN gw_keys k ON k.id = x.key_id;
