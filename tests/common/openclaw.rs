//! The OpenClaw store fixture: a state folder written by OpenClaw's own code
//! (tests/openclaw/make-store.mjs; committed as tests/fixtures/openclaw, or `$PIDX_OPENCLAW_DIR`
//! from tests/openclaw/live.sh) and pi's answers on its transcripts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pidx::ingest::openclaw::DB_NAME;
use serde_json::Value;

/// The folder holding `manifest.json`, `pi-answers.json` and `state/`.
pub fn fixture_dir() -> PathBuf {
    std::env::var_os("PIDX_OPENCLAW_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openclaw"))
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A temp copy of the state folder, with the agent stores decompressed (`*.sqlite.zst`).
pub fn state_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("state");
    super::copy_tree(&fixture_dir().join("state"), &root);
    for agent in agents(&root) {
        let zst = agent.join("agent").join(format!("{DB_NAME}.zst"));
        if zst.exists() {
            let bytes = zstd::decode_all(std::fs::File::open(&zst).unwrap()).unwrap();
            std::fs::write(agent.join("agent").join(DB_NAME), bytes).unwrap();
            std::fs::remove_file(&zst).unwrap();
        }
    }
    (tmp, root)
}

pub fn agents(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("agents"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

pub fn db_of(agent: &Path) -> PathBuf {
    agent.join("agent").join(DB_NAME)
}

/// Every file under `dir` with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir(dir) {
        out.insert(e.clone(), std::fs::read(&e).unwrap());
    }
    out
}

pub fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn manifest() -> BTreeMap<String, (String, String)> {
    let m = read_json(&fixture_dir().join("manifest.json"));
    m["sessions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, v)| {
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (id.clone(), (s("agent"), s("key")))
        })
        .collect()
}
