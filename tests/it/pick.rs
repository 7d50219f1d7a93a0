//! `pidx pick` end to end: the real binary in a real pseudo-terminal, its screen read through a
//! terminal emulator, Enter checked with a fake `pi` first on PATH that records its arguments
//! and working directory. Every corpus is built in a temp dir (never the real ~/.pi).

#[path = "../pick/pty.rs"]
mod pty;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pty::Term;
use serde_json::json;

/// A temp world: a sessions root, an index, a home, two project folders and a fake `pi`.
struct World {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    root: PathBuf,
    db: PathBuf,
    app: PathBuf,
    api: PathBuf,
    record: PathBuf,
}

/// One session to write.
struct Spec<'a> {
    id: &'a str,
    hours_ago: i64,
    name: Option<&'a str>,
    user: &'a str,
    assistant: &'a str,
}

fn pidx_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pidx"))
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// pi's session folder name for a cwd.
fn folder(cwd: &str) -> String {
    pidx::pi::layout::encode_cwd(cwd)
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let (root, app, api, bin) = (
            dir.join("sessions"),
            dir.join("projects/app"),
            dir.join("projects/api"),
            dir.join("bin"),
        );
        for d in [&root, &app, &api, &bin, &dir.join("home")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let pi = bin.join("pi");
        std::fs::write(
            &pi,
            "#!/bin/sh\n{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; pwd -P; } > \"$PICK_RECORD.tmp\"\nmv \"$PICK_RECORD.tmp\" \"$PICK_RECORD\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
        World {
            db: dir.join("index.db"),
            record: dir.join("pi-was-run"),
            _tmp: tmp,
            dir,
            root,
            app,
            api,
        }
    }

    /// Writes a session of `cwd` as pi would: header, user message, assistant reply, name.
    fn add(&self, cwd: &Path, s: &Spec) -> PathBuf {
        self.add_fork(cwd, s, None)
    }

    /// `add`, for a session forked from `parent` (pi's `parentSession` header field).
    fn add_fork(&self, cwd: &Path, s: &Spec, parent: Option<&Path>) -> PathBuf {
        let now = chrono::Utc::now().timestamp_millis();
        let t = now - s.hours_ago * 3_600_000;
        let ts = iso(t);
        let mut header = json!({"type":"session","version":3,"id":s.id,"timestamp":ts,"cwd":cwd});
        if let Some(p) = parent {
            header["parentSession"] = json!(p);
        }
        let mut lines = vec![
            header,
            json!({"type":"message","id":"e1","parentId":null,"timestamp":ts,
                   "message":{"role":"user","content":s.user,"timestamp":t}}),
            json!({"type":"message","id":"e2","parentId":"e1","timestamp":iso(t + 1000),
                   "message":{"role":"assistant","content":[{"type":"text","text":s.assistant}],
                              "provider":"anthropic","model":"claude-test","stopReason":"stop",
                              "usage":{"input":10,"output":20,"cacheRead":0,"cacheWrite":0,
                                       "totalTokens":30,"cost":{"total":0.25}},
                              "timestamp":t + 1000}}),
        ];
        if let Some(name) = s.name {
            lines.push(json!({"type":"session_info","id":"e3","parentId":"e2",
                              "timestamp":iso(t + 2000),"name":name}));
        }
        let dir = self.root.join(folder(&cwd.to_string_lossy()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{}_{}.jsonl", ts.replace([':', '.'], "-"), s.id));
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&file, text).unwrap();
        file
    }

    fn sync(&self) {
        let ok = self.pidx().arg("sync").status().unwrap().success();
        assert!(ok, "pidx sync failed");
    }

    /// `pidx --root R --db D` without a terminal.
    fn pidx(&self) -> Command {
        let mut c = Command::new(pidx_bin());
        c.arg("--root").arg(&self.root).arg("--db").arg(&self.db);
        c.env_clear().envs(self.env()).current_dir(&self.app);
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            self.dir.join("bin").display()
        );
        vec![
            ("PATH", path),
            ("HOME", self.dir.join("home").display().to_string()),
            (
                "PI_CODING_AGENT_DIR",
                self.dir.join("home/agent").display().to_string(),
            ),
            ("TERM", "xterm-256color".into()),
            ("PICK_RECORD", self.record.display().to_string()),
            ("PIDX", pidx_bin().display().to_string()),
            ("ROOT", self.root.display().to_string()),
            ("DB", self.db.display().to_string()),
            // The model search by meaning uses where the index holds vectors (made by
            // tests/meaning/model.sh; without vectors it is never read).
            ("PIDX_MODEL", meaning_model().display().to_string()),
        ]
    }

    /// `pidx pick ARGS` in a 30x120 terminal, started in `cwd`.
    fn pick(&self, args: &[&str], cwd: &Path) -> Term {
        let root = self.root.display().to_string();
        let db = self.db.display().to_string();
        let mut all = vec!["--root", &root, "--db", &db, "pick"];
        all.extend_from_slice(args);
        Term::spawn(&pidx_bin(), &all, cwd, &self.env(), (30, 120))
    }

    /// A shell command line in the terminal (`$PIDX`, `$ROOT`, `$DB` are set).
    fn shell(&self, script: &str) -> Term {
        Term::spawn(
            Path::new("/bin/sh"),
            &["-c", script],
            &self.app,
            &self.env(),
            (30, 120),
        )
    }

    /// What the fake pi recorded: its arguments, then its working directory.
    fn pi_run(&self) -> Vec<String> {
        let start = std::time::Instant::now();
        while !self.record.exists() {
            assert!(
                start.elapsed().as_secs() < 30,
                "the fake pi was never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let text = std::fs::read_to_string(&self.record).unwrap();
        text.lines().map(str::to_string).collect()
    }
}

/// Two sessions in `app`, one in `api`.
fn three_sessions(w: &World) -> [PathBuf; 3] {
    let parser = w.add(
        &w.app,
        &Spec {
            id: "11111111-aaaa-4000-8000-000000000001",
            hours_ago: 3,
            name: Some("parser work"),
            user: "Fix the parser for nested quotes",
            assistant: "The tokenizer now tracks quote depth.",
        },
    );
    let socket = w.add(
        &w.app,
        &Spec {
            id: "22222222-bbbb-4000-8000-000000000002",
            hours_ago: 1,
            name: None,
            user: "Why is the websocket test flaky?",
            assistant: "A race between connect and the first ping.",
        },
    );
    let deploy = w.add(
        &w.api,
        &Spec {
            id: "33333333-cccc-4000-8000-000000000003",
            hours_ago: 2,
            name: None,
            user: "Set up the deploy pipeline",
            assistant: "Added a staging job to the pipeline.",
        },
    );
    [parser, socket, deploy]
}

/// The title bar's row count.
fn rows(n: usize) -> String {
    format!("· {n} rows ·")
}

#[test]
fn typing_filters_and_enter_resumes_in_pi_in_the_sessions_directory() {
    let w = World::new();
    let [_, socket, _] = three_sessions(&w);
    w.sync();
    let mut t = w.pick(&[], &w.app);
    let s = t.wait_for("this project's two sessions", |s| {
        s.contains(&rows(2)) && s.contains("parser work") && s.contains("Why is the websocket")
    });
    assert!(s.contains("this project"), "{s}");
    assert!(
        !s.contains("deploy pipeline"),
        "another project's session: {s}"
    );
    t.send(b"websockt"); // fuzzy: letters in order
    t.wait_for("one match and its preview", |s| {
        s.contains(&rows(1)) && s.contains("> websockt") && s.contains("A race between connect")
    });
    t.send(b"\r");
    let run = w.pi_run();
    assert_eq!(
        run,
        vec![
            "--session".to_string(),
            socket.display().to_string(),
            w.app.display().to_string()
        ]
    );
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn keys_toggle_scope_mode_sort_named_preview_and_tree() {
    let w = World::new();
    three_sessions(&w);
    w.sync();
    let mut t = w.pick(&[], &w.app);
    t.wait_text(&rows(2));
    // Moving changes the preview: the newest session first, then the parser session.
    t.wait_text("A race between connect");
    t.send(b"\x1b[B");
    t.wait_text("The tokenizer now tracks");
    t.send(b"?");
    t.wait_text("keys (any key closes)");
    t.send(b"x");
    t.wait_for("the help to close", |s| {
        !s.contains("keys (any key closes)")
    });
    t.send(b"\x7f"); // the key that closed the help typed nothing
    t.send(b"\t");
    t.wait_for("every project's sessions", |s| {
        s.contains("[sessions] all projects")
            && s.contains("Set up the deploy pipeline")
            && s.contains("PROJECT")
            && s.contains(&rows(3))
    });
    t.send(b"\x0f"); // Ctrl-O: named only
    let s = t.wait_for("the named session alone", |s| {
        s.contains("named only") && s.contains(&rows(1))
    });
    assert!(s.contains("parser work"), "{s}");
    t.send(b"\x0f");
    t.wait_for("every session again", |s| s.contains(&rows(3)));
    t.send(b"\x13"); // Ctrl-S
    t.wait_text("sort: recent");
    t.send(b"\x13");
    t.wait_text("sort: relevance");
    t.send(b"\x14"); // Ctrl-T: the tree
    t.wait_for("the tree", |s| {
        s.contains("preview: tree") && s.contains("← current leaf")
    });
    t.send(b"\x14");
    t.wait_text("preview: conversation");
    t.send(b"\x06"); // Ctrl-F: full text
    t.wait_text("[full text]");
    t.send(b"staging");
    t.wait_for("the hit under its session", |s| {
        s.contains("[assistant]")
            && s.contains("Set up the deploy pipeline")
            && s.contains(&rows(1))
    });
    // Asked again after Backspace (answered from the searches kept): the same hit.
    t.send(b"\x7f");
    t.wait_text("> stagin");
    t.send(b"g");
    t.wait_for("the same hit again", |s| {
        s.contains("> staging") && s.contains("Set up the deploy pipeline") && s.contains(&rows(1))
    });
    t.send(b"\x14");
    t.wait_for("the hit in the tree", |s| {
        s.contains("preview: tree") && s.contains("e2 assistant: Added a staging job")
    });
    t.resize(24, 80);
    t.wait_for("a redraw at 80 columns", |s| {
        s.lines().next().is_some_and(|l| l.contains("[full text]"))
            && s.lines().any(|l| l.starts_with(" Enter resume · ? keys"))
    });
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn the_preview_prints_money_to_the_cent_and_counts_with_separators() {
    let w = World::new();
    let file = w.add(
        &w.app,
        &Spec {
            id: "22222222-aaaa-4000-8000-000000000001",
            hours_ago: 1,
            name: None,
            user: "refactor the parser",
            assistant: "done",
        },
    );
    // The same session, at a cost and size a long day reaches.
    let text = std::fs::read_to_string(&file).unwrap().replace(
        r#""usage":{"input":10,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":30,"cost":{"total":0.25}}"#,
        r#""usage":{"input":3153234,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":3153254,"cost":{"total":1795.4048}}"#,
    );
    assert!(text.contains("3153234"), "{text}");
    std::fs::write(&file, text).unwrap();
    w.sync();
    let mut t = w.pick(&[], &w.app);
    t.wait_text("$1,795.40 · 3,153,254 tokens · 2 messages");
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn handles_are_shown_whole_however_long() {
    let w = World::new();
    // Time-ordered ids that differ only in their last character: each handle is the whole id.
    for (id, user) in [
        ("019cb679-0000-7000-8000-00000000001a", "first of the pair"),
        ("019cb679-0000-7000-8000-00000000001b", "second of the pair"),
    ] {
        w.add(
            &w.app,
            &Spec {
                id,
                hours_ago: 1,
                name: None,
                user,
                assistant: "ok",
            },
        );
    }
    w.sync();
    let mut t = w.pick(&[], &w.app);
    t.wait_for("both handles whole", |s| {
        s.contains("019cb679-0000-7000-8000-00000000001a")
            && s.contains("019cb679-0000-7000-8000-00000000001b")
    });
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn print_writes_the_chosen_path_to_stdout() {
    let w = World::new();
    let [_, _, deploy] = three_sessions(&w);
    w.sync();
    let out = w.dir.join("chosen");
    let mut t = w.shell(&format!(
        "\"$PIDX\" --root \"$ROOT\" --db \"$DB\" pick --print --all deploy > '{}'",
        out.display()
    ));
    t.wait_text(&rows(1));
    t.send(b"\r");
    assert_eq!(t.wait_exit(), 0);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!("{}\n", deploy.display())
    );
    assert!(!w.record.exists(), "--print must not start pi");
}

#[test]
fn escape_and_ctrl_c_leave_the_screen_as_it_was() {
    let w = World::new();
    three_sessions(&w);
    w.sync();
    for key in [&b"\x1b"[..], b"\x03"] {
        let mut t = w.shell(
            "printf 'BEFORE-THE-PICKER\\n'; \"$PIDX\" --root \"$ROOT\" --db \"$DB\" pick; echo \"AFTER $?\"",
        );
        t.wait_text(&rows(2));
        assert!(t.alternate_screen());
        t.send(key);
        let s = t.wait_text("AFTER 1");
        assert!(!t.alternate_screen());
        assert!(s.contains("BEFORE-THE-PICKER"), "{s}");
        assert!(
            !s.contains("pidx pick") && !s.contains("parser work"),
            "{s}"
        );
        assert_eq!(t.wait_exit(), 0);
    }
}

#[test]
fn a_session_deleted_while_open_is_reported_on_enter() {
    let w = World::new();
    let [_, socket, _] = three_sessions(&w);
    w.sync();
    let mut t = w.pick(&["--no-sync"], &w.app);
    t.wait_text("A race between connect");
    std::fs::remove_file(&socket).unwrap();
    t.send(b"\r");
    t.wait_text("no longer exists");
    assert!(t.running());
    assert!(!w.record.exists());
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn a_missing_directory_offers_resuming_in_the_current_one() {
    let w = World::new();
    three_sessions(&w);
    let gone = w.dir.join("projects/removed");
    let orphan = w.add(
        &gone,
        &Spec {
            id: "44444444-dddd-4000-8000-000000000004",
            hours_ago: 5,
            name: Some("orphaned session"),
            user: "hello from a deleted folder",
            assistant: "hi",
        },
    );
    w.sync();
    let mut t = w.pick(&["--all", "orphaned"], &w.api);
    t.wait_text(&rows(1));
    t.send(b"\r");
    t.wait_for("the question", |s| {
        s.contains("directory no longer exists") && s.contains("projects/removed")
    });
    t.send(b"n");
    t.wait_for("the question to close", |s| {
        !s.contains("directory no longer exists")
    });
    t.send(b"\r");
    t.wait_text("directory no longer exists");
    t.send(b"y");
    let run = w.pi_run();
    assert_eq!(
        run,
        vec![
            "--session".to_string(),
            orphan.display().to_string(),
            w.api.display().to_string()
        ]
    );
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn escape_sequences_in_transcripts_never_reach_the_terminal() {
    let w = World::new();
    w.add(
        &w.app,
        &Spec {
            id: "55555555-eeee-4000-8000-000000000005",
            hours_ago: 1,
            name: Some("\u{1b}]0;PWNED\u{7}evil\u{1b}[2J name"),
            user: "look \u{1b}[31mred\u{1b}[0m and \u{9b}31m csi \u{1b}]8;;http://x\u{7}link",
            assistant: "bell \u{7} and \u{1b}[?1049l leave",
        },
    );
    w.sync();
    let mut t = w.pick(&[], &w.app);
    t.wait_text("evil");
    t.wait_text("bell");
    t.send(b"\x14");
    t.wait_text("← current leaf");
    t.send(b"\x06look");
    t.wait_text("[user]");
    let raw = t.raw();
    for bad in [
        &b"\x1b]0;PWNED"[..],
        b"\x1b[31mred",
        b"\xc2\x9b31m",
        b"\x1b]8;;",
        b"\x1b[?1049l leave",
        b"\x07",
    ] {
        assert!(
            !raw.windows(bad.len()).any(|w| w == bad),
            "{:?} reached the terminal",
            String::from_utf8_lossy(bad)
        );
    }
    assert_eq!(t.seen(), (String::new(), 0), "title set or bell rung");
    assert!(t.alternate_screen());
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn the_first_paint_does_not_wait_for_the_sync_and_the_list_refreshes_after_it() {
    let w = World::new();
    three_sessions(&w);
    // No index yet: the first paint is empty, the background sync fills it.
    let mut t = w.pick(&["--all"], &w.app);
    t.wait_text(&rows(3));
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn without_a_terminal_it_says_to_use_print_or_list() {
    let w = World::new();
    let [_, socket, _] = three_sessions(&w);
    w.sync();
    let out = w.pidx().arg("pick").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--print") && err.contains("pidx list"),
        "{err}"
    );
    let out = w
        .pidx()
        .args(["pick", "--print", "flaky"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", socket.display())
    );
    let out = w
        .pidx()
        .args(["pick", "--print", "zzzqqq"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// `--print QUERY` in a project whose sessions hold the query's letters only scattered
/// (pi's fuzzy match) prints the other project's session that holds the phrase, and says why;
/// a session of this project that holds the phrase too wins over the other project's.
#[test]
fn print_prefers_the_phrase_in_another_project_to_scattered_letters_here() {
    let w = World::new();
    w.add(
        &w.app,
        &Spec {
            id: "44444444-dddd-4000-8000-000000000004",
            hours_ago: 1,
            name: None,
            user: "connect a new io node, then re-run the set of tests",
            assistant: "Done.",
        },
    );
    let phrase = w.add(
        &w.api,
        &Spec {
            id: "55555555-eeee-4000-8000-000000000005",
            hours_ago: 5,
            name: None,
            user: "the client logs connection reset by peer on every deploy",
            assistant: "The proxy closes idle sockets.",
        },
    );
    w.sync();
    let print = |q: &str| {
        let out = w.pidx().args(["pick", "--print", q]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        (String::from_utf8(out.stdout).unwrap(), err)
    };
    // pi's own order in this project ranks the scattered match: it is a match there.
    let listed = w
        .pidx()
        .args(["list", "-q", "connection reset"])
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(listed.contains("connect a new io node"), "{listed}");
    let (out, err) = print("connection reset");
    assert_eq!(out, format!("{}\n", phrase.display()));
    assert!(
        err.contains("connection reset by peer")
            && err.contains(&w.api.display().to_string())
            && err.contains("this project has no closer match")
            && err.contains("as typed"),
        "{err}"
    );
    // Every word as typed, apart, still beats letters in order.
    let (out, err) = print("reset connection");
    assert_eq!(out, format!("{}\n", phrase.display()));
    assert!(err.contains("every word"), "{err}");
    // A phrase here wins over the same phrase elsewhere.
    let here = w.add(
        &w.app,
        &Spec {
            id: "66666666-ffff-4000-8000-000000000006",
            hours_ago: 9,
            name: None,
            user: "why does the connection reset after an hour?",
            assistant: "Keep-alive.",
        },
    );
    w.sync();
    let (out, err) = print("connection reset");
    assert_eq!(out, format!("{}\n", here.display()));
    assert!(err.contains("in this project"), "{err}");
    // Only scattered letters anywhere: pi's best here (as `list -q`), said so.
    let listed = w
        .pidx()
        .args(["list", "--json", "-q", "cnnctnrst"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    let (out, err) = print("cnnctnrst");
    assert_eq!(out, format!("{}\n", listed[0]["path"].as_str().unwrap()));
    assert!(err.contains("only its letters match"), "{err}");
}

#[test]
fn a_gateway_transcript_prints_its_key_and_path_instead_of_resuming() {
    let w = World::new();
    let sessions = w.dir.join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let header = json!({"type":"session","version":3,"id":"m1","timestamp":"2026-03-01T10:00:00.000Z",
                        "cwd":"/home/bot/workspace"});
    let user = json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z",
                      "message":{"role":"user","content":"plan the weekend trip","timestamp":1772359201000_i64}});
    let transcript = sessions.join("m1.jsonl");
    std::fs::write(&transcript, format!("{header}\n{user}\n")).unwrap();
    std::fs::write(
        sessions.join("sessions.json"),
        json!({"agent:main:main": {"sessionId": "m1", "updatedAt": 1772359300000_i64}}).to_string(),
    )
    .unwrap();
    let root = w.dir.join(".openclaw").display().to_string();
    let db = w.db.display().to_string();
    let args = ["--root", &root, "--db", &db, "pick", "--all", "weekend"];
    let mut t = Term::spawn(&pidx_bin(), &args, &w.app, &w.env(), (30, 120));
    t.wait_for("the transcript", |s| {
        s.contains(&rows(1)) && s.contains("plan the weekend trip")
    });
    t.send(b"\r");
    assert_eq!(t.wait_exit(), 0);
    let s = t.screen();
    assert!(s.contains("agent:main:main"), "{s}");
    assert!(s.contains(&transcript.display().to_string()), "{s}");
    assert!(!w.record.exists(), "pi cannot resume a gateway transcript");
}

#[test]
fn the_threaded_sort_shows_forks_under_the_session_they_came_from() {
    let w = World::new();
    let [parser, ..] = three_sessions(&w);
    let fork = Spec {
        id: "66666666-ffff-4000-8000-000000000006",
        hours_ago: 0,
        name: Some("forked parser work"),
        user: "Fix the parser for nested quotes",
        assistant: "Trying another approach.",
    };
    w.add_fork(&w.app, &fork, Some(&parser));
    w.sync();
    let mut t = w.pick(&[], &w.app);
    let s = t.wait_for("three sessions", |s| {
        s.contains(&rows(3)) && s.contains("forked parser work")
    });
    let order: Vec<&str> = s
        .lines()
        .filter(|l| !l.starts_with('│') && (l.contains("parser work") || l.contains("websocket")))
        .map(|l| l.split("  ").next().unwrap_or("").trim())
        .collect();
    assert_eq!(
        order,
        vec![
            "Why is the websocket test flaky?",
            "parser work",
            "└ forked parser work"
        ],
        "{s}"
    );
    t.send(b"\x13"); // recent: the fork is the newest
    let s = t.wait_text("sort: recent");
    let first = s
        .lines()
        .find(|l| l.contains("parser work") || l.contains("websocket"));
    assert!(
        first.is_some_and(|l| l.starts_with("forked parser work")),
        "{s}"
    );
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn long_preview_lines_are_wrapped_not_cut() {
    let w = World::new();
    w.add(
        &w.app,
        &Spec {
            id: "44444444-dddd-4000-8000-000000000004",
            hours_ago: 1,
            name: None,
            user: "Print one very long line",
            assistant: &"ZQXJ-ab ".repeat(120),
        },
    );
    w.sync();
    // Cut at the pane's edge, it would fill one row.
    let wrapped = |s: &str| s.lines().filter(|l| l.contains("ZQXJ")).count() >= 2;
    w.pick(&[], &w.app).wait_for("the line wrapped", wrapped);
}

/// Enter on a full-text hit in the first session of `three_sessions`: the tokenizer reply, e2.
fn enter_on_the_tokenizer_hit(w: &World) -> Term {
    let mut t = w.pick(&["--no-sync"], &w.app);
    t.wait_text(&rows(2));
    t.send(b"\x06"); // Ctrl-F: full text
    t.wait_text("[full text]");
    t.send(b"tokenizer");
    t.wait_for("the hit", |s| {
        s.contains("[assistant]") && s.contains("parser work") && s.contains(&rows(1))
    });
    t.send(b"\r");
    t
}

#[test]
fn enter_on_a_hit_resumes_at_its_entry_only_when_pi_has_the_pidx_package() {
    let w = World::new();
    let [parser, _, _] = three_sessions(&w);
    w.sync();
    let mut t = enter_on_the_tokenizer_hit(&w);
    let run = w.pi_run();
    let plain = vec![
        "--session".to_string(),
        parser.display().to_string(),
        w.app.display().to_string(),
    ];
    assert_eq!(run, plain, "a plain pi would refuse --pidx-entry");
    assert_eq!(t.wait_exit(), 0);
    let said = String::from_utf8_lossy(&t.raw()).into_owned();
    assert!(
        said.contains("resumes this session at its last entry"),
        "{said}"
    );

    // pi's settings list the package (a relative source, as `pi install` writes it).
    let agent = w.dir.join("home/agent");
    let pkg = w.dir.join("pkg");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"pidx-pi"}"#).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"packages":["npm:other","../../pkg"]}"#,
    )
    .unwrap();
    std::fs::remove_file(&w.record).unwrap();
    let mut t = enter_on_the_tokenizer_hit(&w);
    let run = w.pi_run();
    assert_eq!(
        run,
        vec![
            "--session".to_string(),
            parser.display().to_string(),
            "--pidx-entry".into(),
            "e2".into(),
            w.app.display().to_string(),
        ]
    );
    assert_eq!(t.wait_exit(), 0);
}

/// The distilled model the meaning tests use (tests/meaning/model.sh).
fn meaning_model() -> PathBuf {
    std::env::var_os("PIDX_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/meaning/.cache/model"))
}

/// The three sessions and a recipe's, synced with their vectors; `None`, said as SKIPPED for
/// `test`, without the distilled model.
fn kitchen_with_vectors(test: &str) -> Option<World> {
    let model = meaning_model();
    if !model.join("model.safetensors").is_file() {
        eprintln!(
            "SKIPPED pick::{test}: no model at {} (run `bash tests/meaning/model.sh`)",
            model.display()
        );
        return None;
    }
    let w = World::new();
    three_sessions(&w);
    w.add(
        &w.app,
        &Spec {
            id: "44444444-dddd-4000-8000-000000000004",
            hours_ago: 4,
            name: Some("kitchen notes"),
            user: "Recipe for a tomato pasta sauce with garlic, basil and olive oil.",
            assistant: "Simmer the sauce for twenty minutes and add salt.",
        },
    );
    let out = w.pidx().arg("sync").arg("--embed").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(w)
}

#[test]
fn full_text_ranks_by_meaning_when_the_index_holds_vectors() {
    let Some(w) = kitchen_with_vectors("full_text_ranks_by_meaning_when_the_index_holds_vectors")
    else {
        return;
    };
    let mut t = w.pick(&["--no-sync"], &w.app);
    t.wait_text(&rows(3));
    t.send(b"\x06"); // Ctrl-F: full text
    t.wait_text("[full text]");
    // No word of the query is in any session: only meaning finds the recipe, first.
    t.send(b"italian cooking");
    let titles = [
        "kitchen notes",
        "parser work",
        "websocket",
        "deploy pipeline",
    ];
    t.wait_for("the recipe's session first", |s| {
        s.contains("> italian cooking")
            && s.lines()
                .skip(1)
                .find_map(|l| titles.iter().find(|t| l.contains(*t)))
                .is_some_and(|t| *t == "kitchen notes")
    });
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}

#[test]
fn full_text_finds_nothing_for_nonsense_and_marks_meaning_hits() {
    let Some(w) =
        kitchen_with_vectors("full_text_finds_nothing_for_nonsense_and_marks_meaning_hits")
    else {
        return;
    };
    let mut t = w.pick(&["--no-sync"], &w.app);
    t.wait_text(&rows(3));
    t.send(b"\x06"); // Ctrl-F: full text
    t.wait_text("[full text]");
    // No word holds it and nothing is close enough in meaning: no row at all.
    t.send(b"qwertyuiopasdf");
    t.wait_for("no matches", |s| {
        s.contains("> qwertyuiopasdf") && s.contains("no matches") && s.contains(&rows(0))
    });
    // A paraphrase: the recipe, marked as found by meaning.
    for _ in 0.."qwertyuiopasdf".len() {
        t.send(b"\x7f");
    }
    t.send(b"italian cooking");
    t.wait_for("the recipe, by meaning", |s| {
        s.contains("> italian cooking") && s.contains("kitchen notes") && s.contains("(meaning 0.")
    });
    t.send(b"\x1b");
    assert_eq!(t.wait_exit(), 1);
}
