//! inotify's event queue overflowing under `pidx watch`: the kernel drops every event after
//! `fs.inotify.max_queued_events` and queues one "overflow" event instead. The watcher must
//! take that as "anything may have changed" and check every file at once, not wait for the
//! periodic reconcile. The overflow is forced for real: the watcher is stopped with SIGSTOP
//! while more events than the queue holds are produced, then a change is made whose event the
//! kernel drops, then the watcher is continued.

use crate::common;

use std::io::Write as _;
use std::process::Command;

use common::live::{
    assert_equals_rebuild, listed, start_watch_with, stop_cleanly, user, wait_for, HEADER,
};

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(ok.success(), "kill -{sig} {pid}");
}

#[test]
fn a_queue_overflow_makes_the_watcher_check_every_file() {
    let Some(queue) = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
    else {
        eprintln!("SKIPPED: no /proc/sys/fs/inotify/max_queued_events (not Linux inotify)");
        return;
    };
    if queue > 1_000_000 {
        eprintln!("SKIPPED: max_queued_events is {queue}; overflowing it would take too long");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (p, q) = (root.join("--p--"), root.join("--q--"));
    std::fs::create_dir_all(&p).unwrap();
    std::fs::create_dir_all(&q).unwrap();
    let session = |id: &str| format!("{}\n{}\n", HEADER.replace("ID", id), user("m0", None, id));
    for (dir, id) in [(&p, "a"), (&p, "c"), (&q, "b")] {
        std::fs::write(dir.join(format!("{id}.jsonl")), session(id)).unwrap();
    }
    let db = tmp.path().join("i.db");
    // The periodic reconcile is pushed out of reach: only the overflow can find b's change.
    let mut w = start_watch_with(&db, &root, &["--reconcile-every", "3600"]);
    wait_for("the first reconcile", || listed(&db, &root).len() == 3);

    signal(w.id(), "STOP");
    // Alternating between two files, so the kernel cannot merge consecutive events.
    let writes = queue + 1_000;
    let open = |name: &str| {
        std::fs::OpenOptions::new()
            .append(true)
            .open(p.join(name))
            .unwrap()
    };
    let (mut a, mut c) = (open("a.jsonl"), open("c.jsonl"));
    for i in 1..=writes {
        let f = if i % 2 == 0 { &mut a } else { &mut c };
        let parent = if i <= 2 {
            "m0".to_string()
        } else {
            format!("m{}", i - 2)
        };
        let line = user(&format!("m{i}"), Some(&parent), "x");
        f.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
    drop((a, c));
    // This event is dropped: the queue is already full.
    std::fs::OpenOptions::new()
        .append(true)
        .open(q.join("b.jsonl"))
        .unwrap()
        .write_all(format!("{}\n", user("m1", Some("m0"), "after the overflow")).as_bytes())
        .unwrap();
    signal(w.id(), "CONT");

    wait_for("b's change, whose event was lost", || {
        listed(&db, &root)
            .iter()
            .any(|(path, n, _)| path == "--q--/b.jsonl" && *n == 2)
    });
    assert_equals_rebuild(&db, &root);
    stop_cleanly(&mut w);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut w.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        err.contains("file events were lost") && err.contains("fs.inotify.max_queued_events"),
        "the watcher did not say it lost events: {err}"
    );
}
