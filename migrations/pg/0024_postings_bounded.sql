-- pg 0024: each block of a word's postings (pg 0023) with what its best posting can score at
-- most, so that a search of one word reads its blocks best bound first and stops where no
-- block left can beat the best kept, where it read and scored every posting of the word (a
-- common word's millions at a million sessions; issue 52). A row's `bounds` holds, for each
-- block in order, up to four corners of counts of the word and lengths in tokens that no
-- posting of the block beats, each with the latest time of the postings it stands for
-- (crates/team/src/pg/postings.rs, `Bound`); merged rows concatenate it as they do `skips`.
ALTER TABLE word_postings ADD COLUMN bounds bytea;

-- Rows written before have none and are read whole, as before. The next push of each source
-- rewrites them with their bounds (`pg::writer::reblock`, which pg 0023's rows without blocks
-- already go through), once.
UPDATE sources SET postings_blocked = false;
