//! Handles a person can copy back into any SESSION argument: the shortest prefix of the session
//! id that no other session in the index shares, at least 8 characters (git's abbreviated
//! hashes). pi's ids are UUIDv7, time first, so sessions made in the same minute share their
//! first 8 characters and need a few more. A file whose whole id another file also has (a copy
//! made outside pi) is named by its file name instead, which `resolve` accepts too.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use crate::query::Reader;
use crate::store::schema::TITLE;

/// The shortest prefix shown, however unique a shorter one would be.
pub const MIN_LEN: usize = 8;

/// What identifies one session file to a person.
pub struct Session<'a> {
    pub file_id: i64,
    pub id: Option<&'a str>,
    pub path: &'a str,
}

/// Up to this many sessions, [`handles`] looks each up without counting the index's ids.
const LOOKUPS_UP_TO: usize = 64;

/// Ids read in order that cost about as much as one session's three lookups (measured with
/// 100,000 ids: 0.4 µs an id read, 8 µs a session looked up).
const IDS_PER_LOOKUP: usize = 16;

/// The handle of each session, by file id: how many files have its id, and its neighbours in
/// id order (the prefix must outlast both). Three index lookups a session, or, when that would
/// cost more (many sessions for the size of the index), one read of every id in order,
/// answered from memory (the same answers).
///
/// # Errors
/// Index errors only.
pub fn handles<'a>(
    conn: &Connection,
    sessions: impl IntoIterator<Item = Session<'a>>,
) -> rusqlite::Result<HashMap<i64, String>> {
    handles_among(conn, sessions, &[])
}

/// [`handles`], unique also among `unread`: the sorted ids of session files not read into the
/// index yet (an answer given before a long first sync has finished).
///
/// # Errors
/// Index errors only.
pub fn handles_among<'a>(
    conn: &Connection,
    sessions: impl IntoIterator<Item = Session<'a>>,
    unread: &[String],
) -> rusqlite::Result<HashMap<i64, String>> {
    let sessions: Vec<Session> = sessions.into_iter().collect();
    let read_all = sessions.len() > LOOKUPS_UP_TO && {
        let ids: i64 = conn.query_row(
            "SELECT count(*) FROM sessions WHERE session_id IS NOT NULL",
            [],
            |r| r.get(0),
        )?;
        sessions.len().saturating_mul(IDS_PER_LOOKUP) >= usize::try_from(ids).unwrap_or(0)
    };
    let ids = if read_all {
        Ids::All(every_id(conn)?)
    } else {
        Ids::Lookups(conn)
    };
    named(&ids, sessions, unread)
}

/// The handle of each of `sessions` among `ids` and `unread`.
pub fn named(
    ids: &Ids,
    sessions: Vec<Session>,
    unread: &[String],
) -> rusqlite::Result<HashMap<i64, String>> {
    let mut out = HashMap::with_capacity(sessions.len());
    for s in sessions {
        let handle = match s.id.filter(|id| !id.is_empty()) {
            Some(id) => match (ids.around(id)?, around(unread, id)) {
                (Some([prev, next]), Some([before, after])) => {
                    let prev = prev.as_deref().max(before);
                    let next = match (next.as_deref(), after) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    shortest_unique(id, [prev, next])
                }
                _ => file_name(s.path).to_string(),
            },
            None => file_name(s.path).to_string(),
        };
        out.insert(s.file_id, handle);
    }
    Ok(out)
}

/// [`handles_among`] in the local index (with its unread files), or among the team server's
/// sessions.
///
/// # Errors
/// Index or server errors.
pub fn handles_in<'a>(
    reader: &mut Reader,
    sessions: impl IntoIterator<Item = Session<'a>>,
) -> crate::Result<HashMap<i64, String>> {
    match reader {
        Reader::Local { conn, unread, .. } => Ok(handles_among(conn, sessions, unread)?),
        Reader::Server(server) => server.handles(sessions.into_iter().collect()),
    }
}

/// Where the other sessions' ids come from.
pub enum Ids<'c> {
    Lookups(&'c Connection),
    /// Every session id, in order.
    All(Vec<String>),
    /// Each named id's neighbours, looked up beforehand (the team server's, in one statement
    /// for every named id): `None` when more than one session has the id. An id missing here
    /// is named by its file, as a shared one.
    Around(HashMap<String, Around>),
}

/// The greatest other id below an id and the least above it, or `None` when more than one
/// session has the id.
pub type Around = Option<[Option<String>; 2]>;

impl Ids<'_> {
    /// The greatest id below `id` and the least above it; `None` when more than one session
    /// has `id` (its files are named by file name).
    fn around(&self, id: &str) -> rusqlite::Result<Around> {
        match self {
            Ids::Around(found) => Ok(found.get(id).cloned().flatten()),
            Ids::All(all) => {
                let below = all.partition_point(|x| x.as_str() < id);
                let upto = all.partition_point(|x| x.as_str() <= id);
                if upto - below > 1 {
                    return Ok(None);
                }
                let prev = below.checked_sub(1).map(|i| all[i].clone());
                Ok(Some([prev, all.get(upto).cloned()]))
            }
            Ids::Lookups(conn) => {
                let same: i64 = conn
                    .prepare_cached("SELECT count(*) FROM sessions WHERE session_id = ?1")?
                    .query_row([id], |r| r.get(0))?;
                if same > 1 {
                    return Ok(None);
                }
                let one = |sql: &str| -> rusqlite::Result<Option<String>> {
                    conn.prepare_cached(sql)?
                        .query_row([id], |r| r.get(0))
                        .optional()
                };
                Ok(Some([
                    one("SELECT session_id FROM sessions WHERE session_id < ?1 ORDER BY session_id DESC LIMIT 1")?,
                    one("SELECT session_id FROM sessions WHERE session_id > ?1 ORDER BY session_id LIMIT 1")?,
                ]))
            }
        }
    }
}

/// The neighbours of `id` in the sorted `ids`, or `None` when `ids` holds it.
fn around<'i>(ids: &'i [String], id: &str) -> Option<[Option<&'i str>; 2]> {
    let below = ids.partition_point(|x| x.as_str() < id);
    if ids.get(below).is_some_and(|x| x == id) {
        return None;
    }
    let prev = below.checked_sub(1).map(|i| ids[i].as_str());
    Some([prev, ids.get(below).map(String::as_str)])
}

/// Every session id in the index, in order (SQLite's `BINARY` order: bytes, as `str`'s).
fn every_id(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT session_id FROM sessions WHERE session_id IS NOT NULL ORDER BY session_id",
    )?;
    let ids = stmt.query_map([], |r| r.get(0))?;
    ids.collect()
}

/// One indexed session file as a person sees it in a row: its handle, title and where it ran.
pub struct SessionAtPath {
    pub path: String,
    pub session_id: Option<String>,
    /// The handle `pidx list` shows and every SESSION argument takes.
    pub handle: String,
    /// The session's name, else its first message; None when it has neither.
    pub title: Option<String>,
    pub cwd: String,
    pub created_ms: Option<i64>,
}

/// The indexed session of each path in `paths`, in that order; paths the index does not hold
/// are left out.
///
/// # Errors
/// Index errors only.
pub fn sessions_at<'a>(
    conn: &Connection,
    paths: impl IntoIterator<Item = &'a str>,
) -> rusqlite::Result<Vec<SessionAtPath>> {
    let paths: Vec<&str> = paths.into_iter().collect();
    with_handles(conn, read_sessions(conn, Some(&paths))?)
}

/// The session rows (file id first) of `paths`, in that order, or of every session file
/// (`None`), without their handles.
fn read_sessions(
    conn: &Connection,
    paths: Option<&[&str]>,
) -> rusqlite::Result<Vec<(i64, SessionAtPath)>> {
    let columns = format!("f.id, s.session_id, {TITLE}, s.cwd, s.created_ms, f.path");
    let row = |r: &rusqlite::Row| {
        Ok((
            r.get::<_, i64>(0)?,
            SessionAtPath {
                path: r.get(5)?,
                session_id: r.get(1)?,
                handle: String::new(),
                title: r.get(2)?,
                cwd: r.get(3)?,
                created_ms: r.get(4)?,
            },
        ))
    };
    if let Some(paths) = paths.filter(|p| p.len() <= LOOKUPS_UP_TO) {
        let mut find = conn.prepare_cached(&format!(
            "SELECT {columns} FROM files f JOIN sessions s ON s.file_id = f.id WHERE f.path = ?1"
        ))?;
        let mut found = Vec::with_capacity(paths.len());
        for path in paths {
            found.extend(find.query_row([path], row).optional()?);
        }
        return Ok(found);
    }
    // Many paths (`stats --by session` over every session), or all: one read of every session
    // instead of a lookup by path each (10,000 lookups: 70 ms).
    let mut stmt = conn.prepare(&format!(
        "SELECT {columns} FROM files f JOIN sessions s ON s.file_id = f.id"
    ))?;
    let mut rows = stmt.query([])?;
    let Some(paths) = paths else {
        let mut every = Vec::new();
        while let Some(r) = rows.next()? {
            every.push(row(r)?);
        }
        return Ok(every);
    };
    // A row is decoded only when its path is wanted, and lands in the place of its path.
    let place: HashMap<&str, usize> = paths.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let mut placed: Vec<Option<(i64, SessionAtPath)>> = Vec::new();
    placed.resize_with(paths.len(), || None);
    while let Some(r) = rows.next()? {
        let path = r.get_ref(5)?.as_str().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(5, rusqlite::types::Type::Text, Box::new(e))
        })?;
        if let Some(&i) = place.get(path) {
            placed[i] = Some(row(r)?);
        }
    }
    Ok(placed.into_iter().flatten().collect())
}

/// `found`, each given its handle.
fn with_handles(
    conn: &Connection,
    found: Vec<(i64, SessionAtPath)>,
) -> rusqlite::Result<Vec<SessionAtPath>> {
    let handles = handles(
        conn,
        found.iter().map(|(file_id, s)| Session {
            file_id: *file_id,
            id: s.session_id.as_deref(),
            path: &s.path,
        }),
    )?;
    Ok(found
        .into_iter()
        .map(|(file_id, s)| SessionAtPath {
            handle: handles[&file_id].clone(),
            ..s
        })
        .collect())
}

/// What a person reads for each session file in `paths`: its handle and its name or first
/// message (`stats --by session` rows, keyed by path in JSON).
///
/// # Errors
/// Index errors only.
pub fn labels_by_path<'a>(
    conn: &Connection,
    paths: impl IntoIterator<Item = &'a str>,
) -> rusqlite::Result<HashMap<String, String>> {
    Ok(labels(sessions_at(conn, paths)?))
}

/// [`labels_by_path`] in the local index or on the team server.
///
/// # Errors
/// Index or server errors.
pub fn labels_in<'a>(
    reader: &mut Reader,
    paths: impl IntoIterator<Item = &'a str>,
) -> crate::Result<HashMap<String, String>> {
    match reader {
        Reader::Local { conn, .. } => Ok(labels_by_path(conn, paths)?),
        Reader::Server(server) => server.labels_by_path(paths.into_iter().collect()),
    }
}

/// [`labels_by_path`] of every session file in the index, from one read of them.
///
/// # Errors
/// Index errors only.
pub fn labels_of_every_session(conn: &Connection) -> rusqlite::Result<HashMap<String, String>> {
    Ok(labels(with_handles(conn, read_sessions(conn, None)?)?))
}

/// Each session's label by its path.
fn labels(sessions: Vec<SessionAtPath>) -> HashMap<String, String> {
    sessions
        .into_iter()
        .map(|s| {
            let title = s.title.as_deref().unwrap_or("(no messages)");
            let label = format!("{}  {title}", s.handle);
            (s.path, label)
        })
        .collect()
}

/// The shortest prefix of `id` (in characters, at least [`MIN_LEN`]) that neither neighbour
/// starts with.
fn shortest_unique(id: &str, neighbours: [Option<&str>; 2]) -> String {
    let shared = neighbours
        .into_iter()
        .flatten()
        .map(|n| {
            id.chars()
                .zip(n.chars())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0);
    id.chars().take((shared + 1).max(MIN_LEN)).collect()
}

/// The last component of a path.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_outlast_both_neighbours_and_never_go_below_eight() {
        let id = "019cb679-409f-7627-b31a-d50361e1e06b";
        assert_eq!(shortest_unique(id, [None, None]), "019cb679");
        assert_eq!(
            shortest_unique(id, [Some("019cb679-3fff-7000-8000-000000000000"), None]),
            "019cb679-4"
        );
        assert_eq!(
            shortest_unique(
                id,
                [Some("019cb600"), Some("019cb679-409f-7627-b31a-d50361e1e0")]
            ),
            "019cb679-409f-7627-b31a-d50361e1e06"
        );
        // An id that is a prefix of another is its own handle: an exact id wins in `resolve`.
        assert_eq!(
            shortest_unique("abcdefgh", [Some("abcdefghi"), None]),
            "abcdefgh"
        );
        assert_eq!(shortest_unique("abc", [None, None]), "abc");
        assert_eq!(file_name("/a/b/c.jsonl"), "c.jsonl");
    }

    #[test]
    fn unread_ids_lengthen_handles_as_indexed_ones_do() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE sessions(file_id INTEGER, session_id TEXT);
             INSERT INTO sessions VALUES (1, 'aaaaaaaa-1111'), (2, 'cccccccc-2222');",
        )?;
        let s = |file_id, id| Session {
            file_id,
            id: Some(id),
            path: "/p/x.jsonl",
        };
        let both = || [s(1, "aaaaaaaa-1111"), s(2, "cccccccc-2222")];
        let plain = handles(&conn, both())?;
        assert_eq!(
            (plain[&1].as_str(), plain[&2].as_str()),
            ("aaaaaaaa", "cccccccc")
        );
        // An unread id after the first and one before the second.
        let unread = ["aaaaaaaa-1199".to_string(), "cccccccc-2000".to_string()];
        let among = handles_among(&conn, both(), &unread)?;
        assert_eq!(among[&1], "aaaaaaaa-111");
        assert_eq!(among[&2], "cccccccc-22");
        // The nearer of an indexed and an unread neighbour counts.
        let far = ["aaaaaaaa-0000".to_string()];
        assert_eq!(handles_among(&conn, both(), &far)?[&1], "aaaaaaaa-1");
        let same = ["cccccccc-2222".to_string()];
        let among = handles_among(&conn, both(), &same)?;
        assert_eq!(
            among[&2], "x.jsonl",
            "an id an unread file has too is named by file"
        );
        Ok(())
    }

    #[test]
    fn a_shared_id_is_named_by_its_file() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE sessions(file_id INTEGER, session_id TEXT);
             INSERT INTO sessions VALUES (1, 'aaaaaaaa-1'), (2, 'aaaaaaaa-1'), (3, 'aaaaaaaa-2'),
                                         (4, 'bbbbbbbbbbbb');",
        )?;
        let rows = [
            (1, "aaaaaaaa-1", "/x/one.jsonl"),
            (3, "aaaaaaaa-2", "/x/three.jsonl"),
            (4, "bbbbbbbbbbbb", "/x/four.jsonl"),
        ];
        let h = handles(
            &conn,
            rows.iter().map(|&(file_id, id, path)| Session {
                file_id,
                id: Some(id),
                path,
            }),
        )?;
        assert_eq!(h[&1], "one.jsonl");
        assert_eq!(h[&3], "aaaaaaaa-2");
        assert_eq!(h[&4], "bbbbbbbb");
        Ok(())
    }

    /// Neighbours looked up beforehand (the team server's way) name sessions as the index's
    /// lookups do; a shared id and an id not looked up are named by file.
    #[test]
    fn neighbours_given_name_sessions_as_the_lookups_do() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE sessions(file_id INTEGER, session_id TEXT);
             INSERT INTO sessions VALUES (1, 'aaaaaaaa-1'), (2, 'aaaaaaaa-1'), (3, 'aaaaaaaa-2'),
                                         (4, 'aaaaaaaa-22'), (5, 'bbbbbbbbbbbb');",
        )?;
        let rows = [
            (1, "aaaaaaaa-1", "/x/one.jsonl"),
            (3, "aaaaaaaa-2", "/x/three.jsonl"),
            (4, "aaaaaaaa-22", "/x/four.jsonl"),
            (5, "bbbbbbbbbbbb", "/x/five.jsonl"),
        ];
        let sessions = || {
            rows.iter().map(|&(file_id, id, path)| Session {
                file_id,
                id: Some(id),
                path,
            })
        };
        let lookups = Ids::Lookups(&conn);
        let mut found = HashMap::new();
        for (_, id, _) in &rows[..3] {
            found.insert(id.to_string(), lookups.around(id)?);
        }
        let given = named(&Ids::Around(found), sessions().collect(), &[])?;
        let mut want = handles(&conn, sessions())?;
        assert_eq!(want[&3], "aaaaaaaa-2");
        assert_eq!(want[&4], "aaaaaaaa-22");
        want.insert(5, "five.jsonl".into());
        assert_eq!(given, want);
        Ok(())
    }

    /// Many sessions are answered from one read of every id, a few by lookups: the same
    /// handles either way (shared ids, shared prefixes, ids that prefix others, no id).
    #[test]
    fn reading_every_id_names_sessions_as_the_lookups_do() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch("CREATE TABLE sessions(file_id INTEGER, session_id TEXT);")?;
        let id = |i: i64| match i % 5 {
            0 => format!("019cb679-{:04}", i / 5),
            1 => format!("019cb679-{:04}", i / 5 - 1),
            2 => format!("019cb6{i:02}"),
            3 => format!("{i:08}-x"),
            _ => String::new(),
        };
        let all: Vec<(i64, String, String)> = (0..200)
            .map(|i| (i, id(i), format!("/x/{i}.jsonl")))
            .collect();
        for (file_id, sid, _) in &all {
            conn.execute("INSERT INTO sessions VALUES (?1, ?2)", (file_id, sid))?;
        }
        let named = || {
            all.iter().map(|(file_id, sid, path)| Session {
                file_id: *file_id,
                id: Some(sid.as_str()),
                path,
            })
        };
        let at_once = handles(&conn, named())?;
        assert_eq!(at_once.len(), all.len());
        for s in named() {
            let (file_id, one) = (s.file_id, handles(&conn, [s])?);
            assert_eq!(one[&file_id], at_once[&file_id], "session {file_id}");
        }
        assert_eq!(at_once[&4], "4.jsonl");
        assert_eq!(at_once[&5], "5.jsonl", "shares its id with session 11");
        Ok(())
    }
}
