//! `pidx push`: this machine's index to the team server, incrementally. The server keeps, per
//! transcript, the sync state it was sent (inode, offset, head and tail hashes, last entry);
//! comparing it with the local `files` row says what to send: nothing, the summary, the new
//! entries (an append: the server's tail window still matches the file), or everything (a
//! rewrite). Changes go in batches (`pg::writer`), all in one server transaction, under a
//! per-source advisory lock; transcripts gone from this machine are removed. Secrets are
//! redacted before anything leaves (`local`), unless `PushOptions::redact` is off.

mod local;
pub mod meaning;
pub mod worker;

use std::collections::{HashMap, HashSet};
use std::fs::File;

use postgres::{Client, Transaction};
use rusqlite::Connection;

use crate::pg::writer::{self, Batch, Change, WordCounts};
use crate::pg::{lock_source, migrate, server_err};
pub use local::LocalFile;
use pidx_core::error::{Error, Result};
use pidx_core::ingest::tail::{hash, WINDOW};
use pidx_core::store::jsonl::read_at;
use pidx_core::store::Scope;

#[derive(Debug, Clone)]
pub struct PushOptions {
    /// The source name (default: user@host).
    pub source: String,
    /// Send image data (by default images are sent with empty data).
    pub images: bool,
    /// Replace every secret the detector finds (`pidx_core::redact`) by its rule's marker in what
    /// is sent: texts, listing texts, names and the raw entry JSON. On unless the user says
    /// `--no-redact`.
    pub redact: bool,
}

/// What a push did, per transcript.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PushReport {
    pub source: String,
    pub new: usize,
    pub appended: usize,
    pub rewritten: usize,
    pub summaries: usize,
    pub deleted: usize,
    pub unchanged: usize,
    /// Transcripts that changed on disk after the sync: the next push sends them.
    pub skipped: usize,
    /// Entry rows sent.
    pub entries: usize,
    /// Schema versions this push applied.
    pub migrated: Vec<i32>,
    /// The embeddings sent (pg 0032), when the local index holds some.
    pub meaning: meaning::Sent,
}

impl PushReport {
    pub fn changed(&self) -> usize {
        self.new + self.appended + self.rewritten + self.summaries + self.deleted
    }
}

/// The server's record of one transcript.
struct Remote {
    fid: i64,
    root: String,
    ino: i64,
    head_hash: i64,
    tail_hash: i64,
    offset: i64,
    lines: i64,
    leaf_seq: Option<i64>,
    summary_hash: i64,
}

/// The default source name: `user@host`. The user is `$USER`, else `$LOGNAME` (cron and
/// containers often set neither), else this process's entry in `/etc/passwd`, else
/// `uid<N>`: never a word that reads like someone's name when no name was found.
pub fn default_source() -> String {
    let uid = uid();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let user = user_name(|k| std::env::var(k).ok(), &passwd, uid);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{user}@{host}")
}

/// The user's name from the environment (`env`), else from `passwd` (the text of
/// `/etc/passwd`) for `uid`, else `uid<N>` (`unknown-user` without a uid).
fn user_name(env: impl Fn(&str) -> Option<String>, passwd: &str, uid: Option<u32>) -> String {
    let named = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    named(env("USER"))
        .or_else(|| named(env("LOGNAME")))
        .or_else(|| {
            let uid = uid?.to_string();
            passwd.lines().find_map(|l| {
                let mut f = l.split(':');
                let (name, _, id) = (f.next()?, f.next()?, f.next()?);
                (id == uid && !name.is_empty()).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| uid.map_or("unknown-user".into(), |u| format!("uid{u}")))
}

/// This process's user id: the owner of `/proc/self` (no libc call needed on Linux).
fn uid() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Pushes the transcripts of `scope` from the index `conn` to the server as `opts.source`.
/// `waiting` is called when another push of the same source holds its lock.
///
/// # Errors
/// Server and index errors. The server keeps what it held before; the next push sends it all.
pub fn push(
    conn: &Connection,
    scope: &Scope,
    client: &mut Client,
    opts: &PushOptions,
    waiting: impl FnOnce(),
) -> Result<PushReport> {
    if opts.source.trim().is_empty() {
        return Err(Error::Invalid("--source must not be empty".into()));
    }
    let mut report = PushReport {
        source: opts.source.clone(),
        migrated: migrate::migrate(client)?,
        ..PushReport::default()
    };
    crate::pg::rights::check_may_write(client, &opts.source)?;
    client
        .execute(
            "INSERT INTO sources (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&opts.source],
        )
        .map_err(server_err)?;
    lock_source(client, &opts.source, waiting)?;
    session_settings(client)?;
    // The whole push is one transaction, its batches savepoints in it: a reader sees all of a
    // push or none of it. Committed batch by batch, readers saw a source with part of a push's
    // new sessions (tests/it/pg_many.rs, issue 52). A push killed or failed at any point still
    // leaves the server as it was; the next push sends everything again.
    let mut tx = client.transaction().map_err(server_err)?;
    let mut remote = remote_state(&mut tx, &opts.source)?;
    let files = local::files(conn, scope)?;
    let source = opts.source.as_str();
    // The server writes one batch while pidx reads, redacts and compresses the next: the two
    // took turns (a first push of 1,000 sessions: 7 s in pidx, 10 s in the server, 17 s).
    // One batch waits between them, so memory holds at most three.
    let mut words = WordCounts::new(remote.is_empty());
    let (mut batch, mut tx, mut words) = std::thread::scope(|s| {
        let (send, batches) = std::sync::mpsc::sync_channel::<Batch>(1);
        let writer = s.spawn(move || -> Result<(Transaction, WordCounts)> {
            for batch in batches {
                writer::write_batch(&mut tx, source, &batch, &mut words)?;
            }
            Ok((tx, words))
        });
        let produced = (|| -> Result<Batch> {
            let mut batch = Batch::default();
            for f in &files {
                let old = remote.remove(&f.path);
                let Some(change) = change_for(f, old.as_ref())? else {
                    report.unchanged += 1;
                    continue;
                };
                let Some(rows) = local::rows(conn, f, change, opts)? else {
                    report.skipped += 1;
                    continue;
                };
                report.entries += rows.entries.len();
                match change {
                    Change::Full if old.is_none() => report.new += 1,
                    Change::Full => report.rewritten += 1,
                    Change::Append { .. } => report.appended += 1,
                    Change::Summary => report.summaries += 1,
                }
                batch.add(old.map(|r| r.fid), rows, change);
                // A writer that stopped has its error, returned below.
                if batch.full() && send.send(std::mem::take(&mut batch)).is_err() {
                    break;
                }
            }
            Ok(batch)
        })();
        drop(send);
        let (tx, words) = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        Ok::<_, Error>((produced?, tx, words))
    })?;
    for fid in gone(scope, &files, &remote) {
        batch.delete(fid);
        report.deleted += 1;
        if batch.full() {
            writer::write_batch(&mut tx, source, &std::mem::take(&mut batch), &mut words)?;
        }
    }
    writer::write_batch(&mut tx, source, &batch, &mut words)?;
    words.write(&mut tx, source)?;
    if crate::pg::meaning_held() {
        report.meaning = meaning::push(conn, &mut tx, source, &files, opts.redact)?;
    }
    if crate::pg::postings_blocked() {
        writer::reblock(&mut tx, source)?;
    }
    if crate::pg::words_posted() {
        // Every text of the source has its postings once no transcript waits to be sent again
        // (pg 0020 sent them all again; a push of part of the index may leave some waiting).
        tx.execute(
            "UPDATE sources SET postings = true WHERE name = $1 AND NOT postings
             AND NOT EXISTS (SELECT 1 FROM sessions WHERE source = $1 AND ino = -1)",
            &[&opts.source],
        )
        .map_err(server_err)?;
    }
    tx.execute(
        "UPDATE sources SET last_push = now(), pidx = $2 WHERE name = $1",
        &[&opts.source, &env!("CARGO_PKG_VERSION")],
    )
    .map_err(server_err)?;
    let stale = if report.changed() > 0 {
        stale_parents(&mut tx)
    } else {
        Vec::new()
    };
    tx.commit().map_err(server_err)?;
    if report.changed() > 0 {
        // Words written since the last flush wait in the GIN index's pending list (before pg
        // 0026), which every search reads through; merge them now rather than on the first
        // searches (the index of each partition, pg 0010; one with nothing pending costs
        // nothing). Only the index's owner may: another writer role leaves it to autovacuum.
        // After the commit: a failure inside the push's transaction would undo the push.
        if !crate::pg::words_unindexed() {
            let _ = client.execute(
                "SELECT gin_clean_pending_list(relid) FROM pg_partition_tree('entry_text_words')
                 WHERE isleaf",
                &[],
            );
        }
        analyze_parents(client, &stale);
    }
    client
        .execute("SELECT pg_advisory_unlock_all()", &[])
        .map_err(server_err)?;
    Ok(report)
}

/// The partitioned tables (pg 0010) whose statistics as a whole the reads' plans use.
const PARENTS: &[&str] = &[
    "sessions",
    "entries",
    "entry_text",
    "text_heads",
    "usage_rollup",
];

/// Autovacuum analyses each partition as it changes, never a partitioned parent, whose
/// statistics as a whole (the selectivity of a word in `entry_text.tsv`, the rows of a join)
/// plan every read. After a push, a parent whose partitions now hold twice as many rows as its
/// statistics say, or half as many, is analysed (with its partitions: 10 s at 100,000 sessions,
/// so at each doubling, not at autovacuum's tenth, which cost every push of the benchmark that).
/// Only the tables' owner may: another writer role leaves it to the owner's next push.
///
/// Weighed inside the push's transaction (`stale_parents`), analysed after its commit: the
/// rows a partition holds are the server's count of its live rows plus this transaction's
/// inserts less its deletes, exact before the commit. Counted afterwards from the partitions'
/// own statistics, a first push was weighed before autovacuum had analysed its partitions, so
/// the parent went stale unseen and the next push to look, a user's push of a few grown
/// transcripts, paid for the analysis (3.0 s for 100 grown transcripts after three first
/// pushes of 10,000 sessions, against 0.28 s).
fn stale_parents(tx: &mut Transaction) -> Vec<String> {
    // In a savepoint: a failed look must not abort the push's transaction.
    let Ok(mut look) = tx.transaction() else {
        return Vec::new();
    };
    let stale = look.query(
        "SELECT p.relname::text FROM pg_class p
         JOIN LATERAL (SELECT sum(pg_stat_get_live_tuples(t.relid)
                                  + pg_stat_get_xact_tuples_inserted(t.relid)
                                  - pg_stat_get_xact_tuples_deleted(t.relid)) AS n
                       FROM pg_partition_tree(p.oid) t WHERE t.isleaf) k ON true
         WHERE p.oid = ANY ($1::text[]::regclass[]) AND p.relkind = 'p'
           AND pg_has_role(p.relowner, 'USAGE')
           AND (p.reltuples < 0 OR k.n > 2 * p.reltuples + 1000 OR k.n < p.reltuples / 2 - 1000)",
        &[&PARENTS],
    );
    match stale {
        Ok(rows) if look.commit().is_ok() => rows.iter().map(|r| r.get(0)).collect(),
        _ => Vec::new(),
    }
}

fn analyze_parents(client: &mut Client, stale: &[String]) {
    for table in stale {
        let _ = client.batch_execute(&format!("ANALYZE (SKIP_LOCKED) {table}"));
    }
}

/// The server's ids of the transcripts it holds under these roots that this machine no longer
/// has.
fn gone(scope: &Scope, files: &[LocalFile], remote: &HashMap<String, Remote>) -> Vec<i64> {
    let roots: HashSet<String> = files
        .iter()
        .map(|f| f.root.clone())
        .chain(
            scope
                .roots
                .iter()
                .map(|r| r.path.to_string_lossy().into_owned()),
        )
        .collect();
    (remote.values())
        .filter(|r| roots.contains(&r.root))
        .map(|r| r.fid)
        .collect()
}

/// The push's own settings: 64 MB of memory to sort in, and plans that do not trust the
/// statistics about `source`. The GIN index's pending list keeps the server's 4 MB: merged
/// every 64 MB instead, each partition's index grew by 80 MB a first push of 10,000 sessions
/// (92 MB of JSONL) against 19 MB, space it did not reuse (eight pushes: 436 MB against
/// 138 MB), in the same time (112 s against 116 s for the eight; docs/team.md, "The server's
/// size"). A source's first push starts while
/// the statistics say it has no rows, so a plan made for the actual name scans all of the
/// source's rows per lookup (the second source of the benchmark sat 10 minutes in one batch's
/// re-ranking); a generic plan looks every row up by its whole key.
fn session_settings(client: &mut Client) -> Result<()> {
    client
        .batch_execute("SET work_mem = '64MB'; SET plan_cache_mode = force_generic_plan")
        .map_err(server_err)
}

fn remote_state(client: &mut Transaction, source: &str) -> Result<HashMap<String, Remote>> {
    let rows = client
        .query(
            "SELECT path, fid, root, ino, head_hash, tail_hash, byte_offset, lines, leaf_seq,
                    summary_hash
             FROM sessions WHERE source = $1",
            &[&source],
        )
        .map_err(server_err)?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.get(0),
                Remote {
                    fid: r.get(1),
                    root: r.get(2),
                    ino: r.get(3),
                    head_hash: r.get(4),
                    tail_hash: r.get(5),
                    offset: r.get(6),
                    lines: r.get(7),
                    leaf_seq: r.get(8),
                    summary_hash: r.get(9),
                },
            )
        })
        .collect())
}

/// What to send for `f`, given what the server holds (`None`: nothing).
fn change_for(f: &LocalFile, remote: Option<&Remote>) -> Result<Option<Change>> {
    let Some(r) = remote else {
        return Ok(Some(Change::Full));
    };
    // The head hash covers the first `WINDOW` bytes, so a file shorter than that has a head
    // that grows with it: its old head is the prefix the tail check below reads (found by
    // tests/it/pg_many.rs: every append to a small transcript was sent as a rewrite).
    let same_head = r.head_hash == f.head_hash || r.offset < WINDOW as i64;
    let same_file = r.ino == f.ino && same_head;
    let grown = f.offset >= r.offset && f.lines >= r.lines && f.leaf_seq >= r.leaf_seq;
    if !same_file || !grown {
        return Ok(Some(Change::Full));
    }
    if f.offset == r.offset {
        if f.tail_hash() != r.tail_hash {
            return Ok(Some(Change::Full));
        }
        return Ok((f.summary_hash != r.summary_hash).then_some(Change::Summary));
    }
    if !tail_matches(&f.path, r.offset, r.tail_hash)? {
        return Ok(Some(Change::Full));
    }
    Ok(Some(Change::Append {
        after_seq: r.leaf_seq.unwrap_or(-1),
        from_line: r.lines,
    }))
}

/// Whether the file's bytes before `offset` still end as they did when the server got them.
fn tail_matches(path: &str, offset: i64, tail_hash: i64) -> Result<bool> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let start = (offset - WINDOW as i64).max(0);
    let bytes =
        read_at(&file, start as u64, (offset - start) as usize).map_err(|e| Error::io(path, e))?;
    Ok(bytes.len() as i64 == offset - start && hash(&bytes) == tail_hash)
}

#[cfg(test)]
mod user_tests {
    use super::user_name;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\nana:x:1000:1000::/home/ana:/bin/sh\n";

    #[test]
    fn the_user_comes_from_user_then_logname_then_passwd_then_the_uid() {
        let env = |user: Option<&str>, logname: Option<&str>| {
            let (user, logname) = (user.map(str::to_string), logname.map(str::to_string));
            move |k: &str| match k {
                "USER" => user.clone(),
                "LOGNAME" => logname.clone(),
                _ => None,
            }
        };
        assert_eq!(
            user_name(env(Some("bo"), Some("cy")), PASSWD, Some(1000)),
            "bo"
        );
        assert_eq!(user_name(env(None, Some("cy")), PASSWD, Some(1000)), "cy");
        assert_eq!(user_name(env(Some(""), None), PASSWD, Some(1000)), "ana");
        assert_eq!(user_name(env(None, None), PASSWD, Some(0)), "root");
        assert_eq!(user_name(env(None, None), PASSWD, Some(4242)), "uid4242");
        assert_eq!(user_name(env(None, None), "", None), "unknown-user");
    }
}

#[cfg(test)]
mod change_tests {
    use super::{change_for, hash, Change, LocalFile, Remote, WINDOW};
    use crate::pg::values::Val;
    use crate::pg::writer::SESSION_COLS;

    /// The index's record of `path` synced over its first `bytes` (`lines` lines).
    fn local(path: &str, bytes: &[u8], lines: i64) -> LocalFile {
        let head = &bytes[..bytes.len().min(WINDOW)];
        let tail = &bytes[bytes.len().saturating_sub(WINDOW)..];
        LocalFile {
            file_id: 1,
            path: path.into(),
            root: "/r".into(),
            ino: 7,
            offset: bytes.len() as i64,
            head_hash: hash(head),
            lines,
            leaf_seq: Some(lines - 1),
            session: SESSION_COLS
                .iter()
                .map(|c| Val::Int((c.0 == "tail_hash").then(|| hash(tail))))
                .collect(),
            summary_hash: 0,
        }
    }

    /// What the server keeps of the same sync.
    fn remote(f: &LocalFile) -> Remote {
        Remote {
            fid: 1,
            root: f.root.clone(),
            ino: f.ino,
            head_hash: f.head_hash,
            tail_hash: f.tail_hash(),
            offset: f.offset,
            lines: f.lines,
            leaf_seq: f.leaf_seq,
            summary_hash: f.summary_hash,
        }
    }

    #[test]
    fn an_append_to_a_file_shorter_than_the_head_window_is_sent_as_an_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let path_str = path.to_str().unwrap();
        let before = b"{\"type\":\"session\"}\n{\"a\":1}\n".to_vec();
        let sent = remote(&local(path_str, &before, 2));
        for (grown, want) in [
            (
                [before.as_slice(), b"{\"b\":2}\n"].concat(),
                Change::Append {
                    after_seq: 1,
                    from_line: 2,
                },
            ),
            // The bytes the server has were edited: everything again.
            (
                b"{\"type\":\"session\"}\n{\"a\":9}\n{\"b\":2}\n".to_vec(),
                Change::Full,
            ),
        ] {
            std::fs::write(&path, &grown).unwrap();
            let now = local(path_str, &grown, 3);
            assert_eq!(change_for(&now, Some(&sent)).unwrap(), Some(want));
        }
    }
}
