-- `list` of one project (and the picker's first screen) finds the project's session files by
-- their folder (src/query/list.rs cwd_filter: `f.dir = ?`); without this index it read every
-- file row to compare folders (37 ms for a 925-session project among 10,000).
CREATE INDEX files_by_dir ON files(dir);
