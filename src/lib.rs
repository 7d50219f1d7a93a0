//! pidx: an SQLite index over pi session transcripts.
