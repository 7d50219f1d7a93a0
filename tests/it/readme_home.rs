//! The home the README test runs the docs' examples in: what a newcomer's machine holds after
//! some use of pi (sessions, an agent gateway, a git project sessions edited) and stand-ins for
//! the files pidx's meaning commands get from the network (a toy sentence-transformer and a toy
//! static model, so `model install`, `model distill`, `sync --embed` and `similar` run as
//! written), a stand-in `pi` and the repository's pi package (so `pidx pi install` runs as
//! written).

use std::path::{Path, PathBuf};

use crate::files::{git_commit, Session, T0};

/// A newcomer's home: pi's sessions (the sample corpus), an agent gateway, a git repository
/// `~/app` that two sessions wrote and a person committed, and a toy embedding model in pidx's
/// models folder. Returns the home and pi's agent folder.
pub(crate) fn newcomer_home(tmp: &Path, sessions: &Path) -> (PathBuf, PathBuf) {
    let home = tmp.join("home");
    let agent = home.join(".pi").join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::rename(sessions, agent.join("sessions")).unwrap();
    // A small agent gateway for the gateway examples: one agent with one transcript.
    let gw = home.join(".openclaw/agents/ops/sessions");
    std::fs::create_dir_all(&gw).unwrap();
    let src = agent.join("sessions/--home-user-handwritten--/crlf.jsonl");
    std::fs::copy(&src, gw.join("crlf-0001.jsonl")).unwrap();
    std::fs::write(
        gw.join("sessions.json"),
        r#"{"agent:ops:slack:channel:C1":{"sessionId":"crlf-0001","updatedAt":1,"chatType":"room"}}"#,
    )
    .unwrap();
    git_project(&home.join("app"), &agent.join("sessions"));
    toy_model(&home.join(".local/share/pidx/models/default"));
    toy_bert(&home.join("all-MiniLM-L6-v2"));
    fake_pi(&home.join("bin"));
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/pi");
    crate::common::copy_tree(&package, &home.join("integrations/pi"));
    (home, agent)
}

/// A stand-in for pi in `~/bin` (the test puts it first on PATH), so `pidx pi install` and
/// `uninstall` run as written: it says it is pi 1.5.2 and does what it is told by succeeding.
/// The real pi runs these in `tests/pi-package/run.sh`.
fn fake_pi(bin: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let pi = bin.join("pi");
    std::fs::write(
        &pi,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 1.5.2; fi\nexit 0\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `~/app`: a person's first commit, then one session writes `src/parse.rs` and another edits
/// it, a person adds a line, and the second commit holds all of it.
fn git_project(app: &Path, sessions: &Path) {
    std::fs::create_dir_all(app).unwrap();
    git2::Repository::init(app).unwrap();
    std::fs::write(app.join("README.md"), "# app\n").unwrap();
    git_commit(app, "start", T0 / 1000);
    let cwd = app.to_string_lossy();
    let mut a = Session::new("019b7a10-5c3e-7d2a-9f00-1a2b3c4d5e6f", &cwd, T0 + 60_000);
    a.user("Write a parser for the config lines.");
    a.write(
        "src/parse.rs",
        "pub fn parse(line: &str) -> Option<(&str, &str)> {\n    line.split_once('=')\n}\n",
    );
    let mut b = Session::new("019b7b42-8e1f-7c3b-a100-2b3c4d5e6f70", &cwd, T0 + 600_000);
    b.user("Trim the keys and values the parser returns.");
    b.edit(
        "src/parse.rs",
        "    line.split_once('=')\n",
        "    let (k, v) = line.split_once('=')?;\n    Some((k.trim(), v.trim()))\n",
    );
    let text = std::fs::read_to_string(app.join("src/parse.rs")).unwrap();
    std::fs::write(
        app.join("src/parse.rs"),
        format!("// Config lines.\n{text}"),
    )
    .unwrap();
    git_commit(app, "parser: trim keys and values", T0 / 1000 + 900);
    a.save(sessions, "app-parser-a");
    b.save(sessions, "app-parser-b");
}

/// A static embedding model of letters (a WordPiece vocabulary of single letters and digits, so
/// every word has tokens; each row made up from its token's number): enough for `sync --embed`
/// and `similar` to run as written, not to mean anything.
fn toy_model(dir: &Path) {
    let tokens = letters_tokenizer(dir);
    std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#).unwrap();
    let dim = 8;
    let rows = made_up(tokens.len() * dim, 7919);
    let tensors = [("embeddings".to_string(), vec![tokens.len(), dim], rows)];
    std::fs::write(dir.join("model.safetensors"), safetensors(&tensors)).unwrap();
}

/// A WordPiece `tokenizer.json` in `dir` with BERT's special tokens, single letters and digits
/// and their `##` pieces (so every word has tokens); returns the tokens in id order.
fn letters_tokenizer(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let mut tokens: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
        .map(String::from)
        .to_vec();
    for c in ('a'..='z').chain('0'..='9') {
        tokens.push(c.to_string());
        tokens.push(format!("##{c}"));
    }
    let vocab: serde_json::Map<String, serde_json::Value> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i.into()))
        .collect();
    let tokenizer = serde_json::json!({"model": {"type": "WordPiece", "vocab": vocab,
        "unk_token": "[UNK]", "continuing_subword_prefix": "##"},
        "normalizer": {"lowercase": true}});
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    tokens
}

/// `n` numbers in [-1, 1), made up from their position and `seed`.
fn made_up(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * seed % 101) as f32 / 50.0) - 1.0)
        .collect()
}

/// A safetensors file of F32 tensors: the header's length, a JSON header padded to 8 bytes,
/// then the data.
fn safetensors(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut at = 0;
    for (name, shape, data) in tensors {
        let end = at + data.len() * 4;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [at, end]}),
        );
        at = end;
    }
    let mut head = serde_json::Value::Object(header).to_string().into_bytes();
    while !head.len().is_multiple_of(8) {
        head.push(b' ');
    }
    let mut bytes = (head.len() as u64).to_le_bytes().to_vec();
    bytes.extend(head);
    for (_, _, data) in tensors {
        bytes.extend(data.iter().flat_map(|v| v.to_le_bytes()));
    }
    bytes
}

/// A one-layer BERT sentence-transformer of 8 dimensions, laid out as Hugging Face names its
/// weights: what `pidx model install --from` and `model distill --from` read, made up, so
/// running it takes a moment.
fn toy_bert(dir: &Path) {
    let vocab = letters_tokenizer(dir).len();
    let config = serde_json::json!({"hidden_size": 8, "num_attention_heads": 2,
        "num_hidden_layers": 1, "intermediate_size": 16, "hidden_act": "gelu",
        "layer_norm_eps": 1e-12, "max_position_embeddings": 8, "type_vocab_size": 2});
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let (h, up) = (8, 16);
    let mut tensors: Vec<(String, Vec<usize>, Vec<f32>)> = Vec::new();
    let mut add = |name: &str, shape: Vec<usize>| {
        let n = shape.iter().product();
        let data = if name.ends_with("LayerNorm.weight") {
            vec![1.0; n]
        } else {
            made_up(n, 31 + tensors.len() * 12)
        };
        tensors.push((name.to_string(), shape, data));
    };
    add("embeddings.word_embeddings.weight", vec![vocab, h]);
    add("embeddings.position_embeddings.weight", vec![8, h]);
    add("embeddings.token_type_embeddings.weight", vec![2, h]);
    add("embeddings.LayerNorm.weight", vec![h]);
    add("embeddings.LayerNorm.bias", vec![h]);
    for (name, shape) in [
        ("attention.self.query", vec![h, h]),
        ("attention.self.key", vec![h, h]),
        ("attention.self.value", vec![h, h]),
        ("attention.output.dense", vec![h, h]),
        ("intermediate.dense", vec![up, h]),
        ("output.dense", vec![h, up]),
    ] {
        let out = shape[0];
        add(&format!("encoder.layer.0.{name}.weight"), shape);
        add(&format!("encoder.layer.0.{name}.bias"), vec![out]);
    }
    for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
        add(&format!("encoder.layer.0.{name}.weight"), vec![h]);
        add(&format!("encoder.layer.0.{name}.bias"), vec![h]);
    }
    std::fs::write(dir.join("model.safetensors"), safetensors(&tensors)).unwrap();
}
