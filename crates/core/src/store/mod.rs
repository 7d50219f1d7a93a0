//! The SQLite index: where it lives, how it is opened (pragmas, migrations, safety checks) and
//! the writer lock. The one write path is `writer`; queries live in `crate::query`.

pub mod aside;
pub mod big;
mod copies;
pub mod filter;
pub mod forgotten;
pub mod fts5;
pub mod impacts;
pub mod joints;
pub mod jsonl;
mod lock;
mod migrate;
pub mod schema;
mod scope;
pub mod snapshot;
pub mod words;
pub mod writer;

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
pub use lock::{LockHolder, WriterLock};
pub use scope::{GatewayFilter, Scope};

/// `PRAGMA application_id` of a pidx index ("pidx" in ASCII), so a foreign SQLite file is refused.
const APP_ID: i64 = 0x7069_6478;

/// Bytes of the index a search maps into memory (SQLite caps it at its own limit, 2 GB).
const SEARCH_MAP: i64 = 1 << 31;

/// Maps the index file into memory on `conn`, for `pidx search`: its candidates' entries are
/// thousands of scattered pages, and a mapped page is read in place instead of copied out of the
/// OS cache by one `pread` each (`--literal _line`, 50,652 candidates on a 1 GB corpus: 111 ->
/// 92 ms; `re:fn \w+_line` 80 -> 63 ms). The pages it touches
/// count in the process's resident memory (a common word reads most of the entries table:
/// 54 -> 284 MB on that corpus, all of it the OS's file cache), so only the one-shot command
/// maps: not `pidx mcp` or `pidx pick`, which stay up, nor `context` and `sync`, whose memory
/// is bounded. The writer never shrinks the file under a reader (no VACUUM), which a mapped
/// reader could not survive.
///
/// # Errors
/// SQLite errors.
pub fn map_for_search(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("PRAGMA mmap_size = {SEARCH_MAP}"))
}

/// A 2 MB page cache instead of the 32 MB the writer wants, for a connection that reads most
/// of a table once (`stats`, every session of `list`, `status`'s counts) or reads little at a
/// time for long (the picker's connections, whose memory is bounded). A large cache gains a
/// single pass nothing (no page is read twice), and every page it adds is fresh heap memory the
/// kernel faults in and zeroes: on a 1 GB corpus `list --all --json` took 81 -> 67 ms and
/// `stats --by session` 194 -> 169 ms with the small one (medians of 11, side by side). A
/// first page of `list` re-reads its pages and stays on the large cache.
///
/// # Errors
/// SQLite errors.
pub fn small_cache(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA cache_size = -2048")
}

/// An open index.
pub struct Store {
    pub conn: Connection,
    pub path: PathBuf,
    /// Device and inode of the file opened, to notice it being deleted or replaced.
    identity: Option<(u64, u64)>,
}

/// Where the index lives when neither `--db` nor `PIDX_DB` is given: the user's data dir,
/// outside the watched sessions tree (`~/.local/share/pidx/index.db` on Linux).
pub fn default_db_path() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("pidx")
        .join("index.db")
}

impl Store {
    /// Opens (creating if needed) the index at `path` for reading and writing, applying
    /// migrations. An index from an incompatible pidx is deleted and recreated with a one-line
    /// note on stderr; the caller's next sync re-ingests everything.
    ///
    /// # Errors
    /// `NotAnIndex` for a file that is not a pidx index (it is left untouched), `Corrupt` for
    /// a damaged index, `Io`/`Sqlite` otherwise.
    pub fn open(path: &Path) -> Result<Store> {
        untrack_sqlite_memory();
        check_is_ours(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let conn = Connection::open(path).map_err(|e| Error::at_open(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            identity: identity(path),
        };
        store.configure()?;
        match migrate::apply(&mut store.conn).map_err(|e| Error::at_open(path, e))? {
            migrate::Outcome::Current => Ok(store),
            migrate::Outcome::Incompatible(found) => {
                crate::term::say(&format!(
                    "pidx: index {} has schema {found}, this pidx needs {}; rebuilding it from the session files",
                    path.display(),
                    migrate::LATEST
                ));
                drop(store);
                remove_index_files(path)?;
                Store::open(path)
            }
        }
    }

    /// Opens an existing index read-only (`pidx sql`, and queries on an index that cannot be
    /// written). On a read-only folder SQLite cannot create the `-shm` file a WAL database
    /// needs; when no `-wal` holds unmerged commits the file alone is the whole index, and it is
    /// opened as immutable.
    ///
    /// # Errors
    /// As [`Store::open`]; also when the index does not exist yet, or has another schema (it
    /// cannot be rebuilt without writing).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        untrack_sqlite_memory();
        check_is_ours(path)?;
        if !path.exists() {
            return Err(Error::Invalid(format!(
                "there is no index at {} yet; run `pidx sync` to build it",
                path.display()
            )));
        }
        let store = match open_read_only_conn(path, false) {
            Err(Error::Sqlite(e))
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) && !wal_has_commits(path) =>
            {
                open_read_only_conn(path, true)?
            }
            other => other?,
        };
        let version: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| Error::at_open(path, e))?;
        if version != migrate::LATEST {
            // Read-only, the index can be neither migrated nor rebuilt: say which it needs.
            let needs = if migrate::migrates(version) {
                "it is migrated in place (once, in seconds) by any command that can write it"
            } else {
                "it is rebuilt from the session files by any command that can write it"
            };
            return Err(Error::Invalid(format!(
                "index {} has schema {version} and this pidx reads {}: {needs}; run `pidx sync` where the index is writable",
                path.display(),
                migrate::LATEST
            )));
        }
        Ok(store)
    }

    /// SQLite's `quick_check` of the whole index: `None` when it is sound, else what is wrong.
    /// It reads every page (about 0.15 s of CPU for a 50 MB index), so only `sync --check` runs
    /// it; every command meets damage on its own pages and says how to rebuild.
    ///
    /// # Errors
    /// SQLite errors other than damage.
    pub fn quick_check(&self) -> Result<Option<String>> {
        let mut stmt = self.conn.prepare("PRAGMA quick_check")?;
        let rows: Vec<String> = match stmt
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect())
        {
            Ok(rows) => rows,
            Err(e) if crate::error::write_hint(&e).contains("damaged") => vec![e.to_string()],
            Err(e) => return Err(e.into()),
        };
        Ok((rows != ["ok"]).then(|| rows.join("; ")))
    }

    /// Whether the file at the index's path is no longer the one this store opened (deleted,
    /// or replaced by another). Writes would then go to a file nobody reads.
    pub fn is_replaced(&self) -> bool {
        match std::fs::metadata(&self.path) {
            Ok(m) => self.identity.is_some_and(|id| id != (m.dev(), m.ino())),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        }
    }

    /// Deletes the index (and its WAL files) so the next open starts empty. Refuses files that
    /// are not pidx indexes.
    ///
    /// # Errors
    /// `NotAnIndex` for a foreign file; `Io` when it cannot be removed.
    pub fn destroy(path: &Path) -> Result<()> {
        match check_is_ours(path) {
            Ok(()) | Err(Error::Corrupt { .. }) => remove_index_files(path),
            Err(e) => Err(e),
        }
    }

    /// Replaces the index with a new, empty one at the same path (a first sync that was
    /// interrupted before its full text was in: `store::aside`).
    ///
    /// # Errors
    /// As [`Store::destroy`] and [`Store::open`].
    pub fn start_over(&mut self) -> Result<()> {
        let path = self.path.clone();
        let empty = Connection::open_in_memory().map_err(|e| Error::at_open(&path, e))?;
        drop(std::mem::replace(&mut self.conn, empty));
        Store::destroy(&path)?;
        *self = Store::open(&path)?;
        Ok(())
    }

    /// The index on a new connection. FTS5 keeps each table's structure record per connection
    /// and reloads it only when another connection commits, so after the full text built aside
    /// is copied in through this one (`aside.rs`), FTS5 here would go on reading the tables as
    /// they were before (empty, once it had looked), and the words table's refill and the
    /// impact blocks would find no words.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn reopen(&mut self) -> Result<()> {
        self.conn = Connection::open(&self.path).map_err(|e| Error::at_open(&self.path, e))?;
        self.configure()
    }

    fn configure(&mut self) -> Result<()> {
        register_extensions(&self.conn)?;
        self.conn
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| Error::at_open(&self.path, e))?;
        // Switching a new database to WAL takes an exclusive lock without waiting on the busy
        // handler: when several processes create the index at once, the others retry.
        let started = std::time::Instant::now();
        loop {
            match self.conn.execute_batch("PRAGMA journal_mode = WAL;") {
                Err(e)
                    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && started.elapsed() < std::time::Duration::from_secs(10) =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other.map_err(|e| Error::at_open(&self.path, e))?,
            }
        }
        self.conn
            .execute_batch(
                "PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA temp_store = MEMORY;
                 PRAGMA cache_size = -32768;
                 PRAGMA wal_autocheckpoint = 16384;",
            )
            .map_err(|e| Error::at_open(&self.path, e))
    }
}

/// Refuses a file that exists and is not a pidx index, without modifying it.
fn check_is_ours(path: &Path) -> Result<()> {
    use std::io::Read;
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut head = [0u8; 100];
    let n = file.read(&mut head).map_err(|e| Error::io(path, e))?;
    if n == 0 {
        return Ok(());
    }
    if n < 100 || &head[..16] != b"SQLite format 3\0" {
        return Err(Error::NotAnIndex {
            path: path.to_path_buf(),
            why: "not an SQLite database".into(),
        });
    }
    // Big-endian u32s of the database header: page count at 28, user_version at 60,
    // application_id at 68.
    let be = |at: usize| u32::from_be_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let app_id = be(68) as i64;
    // A brand-new empty database (another pidx creating the index this very moment, before its
    // schema is written) holds nothing to lose.
    let empty = app_id == 0 && be(60) == 0 && be(28) <= 1;
    if app_id == APP_ID || empty || wal_says_ours(path)? {
        return Ok(());
    }
    Err(Error::NotAnIndex {
        path: path.to_path_buf(),
        why: format!("an SQLite database with application_id {app_id}"),
    })
}

/// In WAL mode a header change can still sit in `<db>-wal` (a writer killed before any
/// checkpoint), so ask SQLite, read-only. A database with a WAL and no tables at all (a pidx
/// killed while creating its index) is accepted too: there is nothing in it to lose.
fn wal_says_ours(path: &Path) -> Result<bool> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if !Path::new(&wal).exists() {
        return Ok(false);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| Error::at_open(path, e))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    let (app_id, tables): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT application_id FROM pragma_application_id),
                    (SELECT count(*) FROM sqlite_schema)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| Error::at_open(path, e))?;
    Ok(app_id == APP_ID || tables == 0)
}

fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

fn open_read_only_conn(path: &Path, immutable: bool) -> Result<Store> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    if immutable {
        uri.push_str("?immutable=1");
    }
    let conn = Connection::open_with_flags(&uri, flags).map_err(|e| Error::at_open(path, e))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.execute_batch("PRAGMA query_only = ON;")?;
    register_extensions(&conn)?;
    // SQLite opens lazily: read the schema now so a file it cannot open fails here.
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(|e| Error::at_open(path, e))?;
    Ok(Store {
        conn,
        path: path.to_path_buf(),
        identity: identity(path),
    })
}

/// Whether `<db>-wal` holds commits not yet copied into the database file.
fn wal_has_commits(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0)
}

/// Turns off SQLite's count of the memory it holds, before the process's first connection
/// (after it, SQLite refuses and nothing changes). The count takes one process-wide mutex on
/// every allocation, which the sync's two writing threads (`aside.rs`) fought over: a first
/// sync of 1 GB took 24.5 -> 23.1 s, with 90,000 -> 51,000 voluntary context switches. pidx
/// never reads the count.
fn untrack_sqlite_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config only changes global settings before SQLite is initialized;
        // called later it returns SQLITE_MISUSE and changes nothing.
        unsafe {
            rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0i32);
        }
    });
}

/// Removes index `path` with everything SQLite and a first sync keep beside it: its journals
/// and the full text built aside ([`aside_path`]) with its own.
fn remove_index_files(path: &Path) -> Result<()> {
    remove_db_files(path)?;
    remove_db_files(&aside_path(path))
}

/// The record pidx keeps in each folder of JSONL copies of an OpenClaw store's transcripts
/// (`ingest::openclaw::mirror` writes it); its presence is what marks a folder as copies, for
/// the readers too (`query::context` shows a copy's tree as OpenClaw's). A file of pidx's own
/// beside the index, so it is the store floor's name.
pub const MIRROR_STATE: &str = ".pidx-mirror.json";

/// Where a first sync builds the full text beside index `db` (`store::aside`).
pub fn aside_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-text");
    PathBuf::from(p)
}

/// Removes the SQLite database `path` and its WAL journal; a missing file is no error.
pub(crate) fn remove_db_files(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(PathBuf::from(p), e)),
        }
    }
    Ok(())
}

/// Registers pi's tie-break order (`pi::collate`) as the `pi` collation the schema uses, and
/// the FTS5 functions ranked search reads scores with (`fts5.rs`).
fn register_extensions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_collation("pi", crate::pi::collate::compare)?;
    fts5::register(conn)
}
