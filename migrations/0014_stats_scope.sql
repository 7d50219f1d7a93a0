-- `stats` reads the files in scope once (src/query/stats/rolled.rs read_files): their ids and,
-- grouped by project, their cwd. Joined through the tables, that read fetched every session row
-- by rowid and every file row (17 MB of the 10,000-session index, 25 of the 30 ms a `stats`
-- with nothing to sum took). Through these two indexes it reads (cwd, file id) and (root, file
-- id) alone, under 1 MB.
CREATE INDEX sessions_by_cwd ON sessions(cwd);
CREATE INDEX files_by_root ON files(root_id);
