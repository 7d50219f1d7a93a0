-- pg 0032: search by meaning on the server (issue 52). A source whose local index holds
-- embeddings (`pidx sync --embed`) pushes them: each passage's int8 vector with its scale, as
-- the local index keeps it (migration 0024), and its sign code about the source's center
-- (migration 0025) as a bit string, so the server finds a query's nearest codes with
-- `bit_count(code # q)` and sends only their vectors to be scored by pidx. Each source keeps
-- its own model and center (`embed_sources`): a similarity is centered on the index that
-- computed the vectors, so a source's hits score on the server as in its local index, and
-- sources embedded by another model than the reader's are left out (pidx says so).
--
-- A transcript's passages go with its texts (push deletes both when it rewrites or removes
-- it). `passage_files` holds, per transcript, the mark of the local passages sent (their count
-- and ids): a push compares it with the local index's and sends a transcript's passages again
-- whole when they differ, so texts embedded after their words were pushed are sent by the next
-- push, and an unchanged transcript costs nothing.
CREATE TABLE passages (
    source text NOT NULL,
    fid    bigint NOT NULL,
    seq    bigint NOT NULL,
    kind   smallint NOT NULL,
    scale  real NOT NULL,     -- the vector is vec[i] * scale
    vec    bytea NOT NULL,    -- int8 components
    code   bit varying NOT NULL
) PARTITION BY HASH (source);

CREATE TABLE passage_files (
    source text NOT NULL,
    fid    bigint NOT NULL,
    mark   bigint NOT NULL,
    PRIMARY KEY (source, fid)
) PARTITION BY HASH (source);

DO $$
DECLARE
    tbl text;
BEGIN
    FOREACH tbl IN ARRAY ARRAY['passages', 'passage_files'] LOOP
        FOR n IN 0..7 LOOP
            EXECUTE format('CREATE TABLE pidx_parts.%I PARTITION OF %I
                                FOR VALUES WITH (MODULUS 8, REMAINDER %s)', tbl || '_' || n, tbl, n);
            EXECUTE format('ALTER TABLE pidx_parts.%I ENABLE ROW LEVEL SECURITY', tbl || '_' || n);
        END LOOP;
    END LOOP;
END $$;
CREATE INDEX passages_by_text ON passages (source, fid, seq, kind);
-- Vectors of a few hundred bytes: never worth a compression attempt.
ALTER TABLE passages ALTER COLUMN vec SET STORAGE EXTERNAL;

-- One row per source with vectors: the model that made them and the center of its codes and
-- similarities (f32 little-endian, one per dimension).
CREATE TABLE embed_sources (
    source text PRIMARY KEY,
    model  text NOT NULL,
    center bytea NOT NULL
);

-- Member rights as on `entry_text`: a limited reader reads the passages of the transcripts it
-- sees, and the centers of the sources it sees.
SELECT pidx_protect('passages',
    'EXISTS (SELECT 1 FROM sessions s WHERE s.source = passages.source AND s.fid = passages.fid)',
    'entry_text');
SELECT pidx_protect('passage_files',
    'EXISTS (SELECT 1 FROM sessions s WHERE s.source = passage_files.source AND s.fid = passage_files.fid)',
    'entry_text');
SELECT pidx_protect('embed_sources', 'pidx_reader_sees_source(current_user, source)', 'sources');
