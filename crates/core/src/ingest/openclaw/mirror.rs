//! A JSONL copy of each transcript of one OpenClaw agent store, kept by pidx in a folder of its
//! own (beside its index), so the store's sessions take exactly the path JSONL transcripts take
//! (tail from a byte offset, parse, the writer). A copy grows by `seq`; a new rewrite generation,
//! a shorter transcript or a copy that is not what pidx wrote is written again whole (a new
//! file, which the JSONL sync reads from the start); a session gone from the store loses its
//! copy. The store itself is only read (`super::Reader`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Reader, StoreInfo, Window};
use crate::error::{Error, Result};

// The mirror's own record of what each copy holds (its presence marks a folder of copies).
use crate::store::MIRROR_STATE as STATE;

/// Reads whose immutable snapshot was overtaken by a writer are retried this many times.
const ATTEMPTS: usize = 4;

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    db: PathBuf,
    sessions: BTreeMap<String, Copy>,
}

/// What one copy holds: the generation it was read at, its last `seq` and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Copy {
    generation: Option<String>,
    last_seq: Option<i64>,
    bytes: u64,
}

/// What a pass did.
#[derive(Debug)]
pub struct Outcome {
    pub info: StoreInfo,
    pub windows: Vec<Window>,
    pub appended: usize,
    pub rewritten: usize,
    pub removed: usize,
    /// One line per session that could not be read (a damaged or missing cold archive, a
    /// corrupt zstd frame): its copy stays as last read, every other session is copied.
    pub skipped: Vec<String>,
}

/// A change to one session's copy (`path`), prepared in `tmp` and applied only once the read
/// is known to hold: `tmp` is added to the end of the copy, or replaces it.
struct Staged {
    session_id: String,
    path: PathBuf,
    tmp: PathBuf,
    append: bool,
    copy: Copy,
}

/// The file name of a session's copy (`None` for an id that is not a plain file name).
pub fn copy_name(session_id: &str) -> Option<String> {
    let plain = !session_id.is_empty()
        && !session_id.starts_with('.')
        && !session_id.contains(['/', '\\', '\0']);
    plain.then(|| format!("{session_id}.jsonl"))
}

/// Brings the copies in `dir` up to date with the store at `db`.
///
/// # Errors
/// The store cannot be read (`Invalid`, one line), or `dir` cannot be written (`Io`).
pub fn sync(db: &Path, dir: &Path) -> Result<Outcome> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut state = load_state(dir, db);
    for _ in 0..ATTEMPTS {
        let reader = Reader::open(db)?;
        let read = read(&reader, &state, dir);
        // An immutable read that a writer overtook may have failed or staged garbage: either
        // way it is done again (through the writer's -wal, which now exists).
        match (read, reader.finish()) {
            (Ok((info, windows, staged, skipped)), true) => {
                let (appended, rewritten) = apply(&mut state, staged)?;
                let removed = remove_gone(dir, &mut state, &windows)?;
                if appended + rewritten + removed > 0 || !dir.join(STATE).exists() {
                    save_state(dir, &state)?;
                }
                return Ok(Outcome {
                    info,
                    windows,
                    appended,
                    rewritten,
                    removed,
                    skipped,
                });
            }
            (Ok((_, _, staged, _)), false) => discard(&staged),
            (Err(e), true) => return Err(e),
            (Err(_), false) => {}
        }
    }
    Err(Error::Invalid(format!(
        "{}: the store kept changing while being read; try again",
        db.display()
    )))
}

type Read = (StoreInfo, Vec<Window>, Vec<Staged>, Vec<String>);

fn read(reader: &Reader, state: &State, dir: &Path) -> Result<Read> {
    let info = reader.info()?;
    let windows = reader.windows()?;
    let (staged, skipped) = stage(reader, &windows, state, dir)?;
    Ok((info, windows, staged, skipped))
}

fn load_state(dir: &Path, db: &Path) -> State {
    let read = std::fs::read(dir.join(STATE))
        .ok()
        .and_then(|b| serde_json::from_slice::<State>(&b).ok());
    match read {
        Some(s) if s.db == db => s,
        _ => State {
            db: db.to_path_buf(),
            sessions: BTreeMap::new(),
        },
    }
}

fn save_state(dir: &Path, state: &State) -> Result<()> {
    let tmp = dir.join(format!("{STATE}.tmp"));
    let bytes = serde_json::to_vec(state).unwrap_or_default();
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    let path = dir.join(STATE);
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
}

/// Prepares every change in temp files (nothing visible changes yet). A session whose events
/// cannot be decoded is left as it was and named in the returned lines.
fn stage(
    reader: &Reader,
    windows: &[Window],
    state: &State,
    dir: &Path,
) -> Result<(Vec<Staged>, Vec<String>)> {
    let mut staged = Vec::new();
    let mut skipped = Vec::new();
    for w in windows {
        let Some(name) = copy_name(&w.session_id) else {
            continue;
        };
        let path = dir.join(&name);
        let on_disk = std::fs::metadata(&path).ok().map(|m| m.len());
        // The copy grows when it is what pidx wrote, at the same generation, and the store
        // did not get shorter; anything else is written again whole.
        let grows = state.sessions.get(&w.session_id).filter(|c| {
            on_disk == Some(c.bytes) && c.generation == w.generation && w.last_seq() >= c.last_seq
        });
        if grows.is_some_and(|c| c.last_seq == w.last_seq()) {
            continue;
        }
        let tmp = dir.join(format!(".{name}.tmp"));
        let written = write_events(reader, w, grows.and_then(|c| c.last_seq), &tmp);
        let bytes = match written {
            Ok(b) => b,
            Err(e @ Error::Invalid(_)) => {
                let _ = std::fs::remove_file(&tmp);
                skipped.push(skip_line(reader.path(), w, &e));
                continue;
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                discard(&staged);
                return Err(e);
            }
        };
        staged.push(Staged {
            session_id: w.session_id.clone(),
            path,
            tmp,
            append: grows.is_some(),
            copy: Copy {
                generation: w.generation.clone(),
                last_seq: w.last_seq(),
                bytes: grows.map_or(0, |c| c.bytes) + bytes,
            },
        });
    }
    Ok((staged, skipped))
}

/// `<store>: session <id> (<key>): <why>` for a session that could not be read.
fn skip_line(db: &Path, w: &Window, e: &Error) -> String {
    let db = db.display().to_string();
    let text = e.to_string();
    let why = text
        .strip_prefix(&db)
        .and_then(|t| t.strip_prefix(": "))
        .unwrap_or(&text);
    format!("{db}: session {} ({}): {why}", w.session_id, w.session_key)
}

/// Writes the events of `w` after `after` to `tmp`, one per line; returns the bytes written.
fn write_events(reader: &Reader, w: &Window, after: Option<i64>, tmp: &Path) -> Result<u64> {
    let file = std::fs::File::create(tmp).map_err(|e| Error::io(tmp, e))?;
    let mut out = std::io::BufWriter::new(file);
    let mut bytes = 0u64;
    reader.events(w, after, |e| {
        // JSON text needs no line break; one between tokens would split the entry in two.
        let line = e.json.replace(['\n', '\r'], " ");
        out.write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|err| Error::io(tmp, err))?;
        bytes += line.len() as u64 + 1;
        Ok(())
    })?;
    out.flush().map_err(|e| Error::io(tmp, e))?;
    Ok(bytes)
}

fn discard(staged: &[Staged]) {
    for s in staged {
        let _ = std::fs::remove_file(&s.tmp);
    }
}

/// Makes the staged changes visible: an append is added to the end of the copy; a rewrite
/// replaces it by renaming (a new inode, so the JSONL sync reads it from the start). Returns how
/// many copies grew and how many were written again.
fn apply(state: &mut State, staged: Vec<Staged>) -> Result<(usize, usize)> {
    let (mut appended, mut rewritten) = (0, 0);
    for s in staged {
        if s.append {
            let bytes = std::fs::read(&s.tmp).map_err(|e| Error::io(&s.tmp, e))?;
            std::fs::OpenOptions::new()
                .append(true)
                .open(&s.path)
                .and_then(|mut f| f.write_all(&bytes))
                .map_err(|e| Error::io(&s.path, e))?;
            let _ = std::fs::remove_file(&s.tmp);
            appended += 1;
        } else {
            std::fs::rename(&s.tmp, &s.path).map_err(|e| Error::io(&s.path, e))?;
            rewritten += 1;
        }
        state.sessions.insert(s.session_id, s.copy);
    }
    Ok((appended, rewritten))
}

/// Removes the copies of sessions the store no longer has (and stray files of earlier runs).
fn remove_gone(dir: &Path, state: &mut State, windows: &[Window]) -> Result<usize> {
    let live: std::collections::HashSet<String> = windows
        .iter()
        .filter_map(|w| copy_name(&w.session_id))
        .collect();
    let mut removed = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let stray_tmp = name.starts_with('.') && name.ends_with(".jsonl.tmp");
        if (name.ends_with(".jsonl") && !live.contains(&name)) || stray_tmp {
            std::fs::remove_file(e.path()).map_err(|err| Error::io(e.path(), err))?;
            removed += usize::from(!stray_tmp);
        }
    }
    state
        .sessions
        .retain(|sid, _| copy_name(sid).is_some_and(|n| live.contains(&n)));
    Ok(removed)
}
