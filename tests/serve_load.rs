//! End-to-end tests of `lorebank serve` under load: many clients assembling and
//! recording on one book while its terms are edited and writers append on another
//! (nothing lost, nothing doubled, every receipt replays), and a server stopped by SIGTERM or killed by
//! SIGKILL in the middle of appends (nothing acknowledged is lost).

#[path = "common/serve.rs"]
mod serve;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve::{term_line, Server};

fn example(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/wuchuan").join(path)).unwrap()
}

/// Book `name` with the example glossary.
fn with_the_example_glossary(server: &Server, name: &str) {
    server.create(name);
    let glossary = example("glossary.jsonl");
    let lines: Vec<&str> = glossary.lines().collect();
    server.append_lines(name, "actor=import:test", &lines).ok();
}

const CLIENTS: usize = 64;
const CHUNKS_PER_CLIENT: usize = 3;
const WRITERS: usize = 8;
const APPENDS_PER_WRITER: usize = 10;
const CHAPTERS: usize = 4;
const EDITORS: usize = 3;
const EDITS_PER_EDITOR: usize = 5;

#[test]
fn many_clients_record_on_one_book_while_its_terms_change_and_writers_append_on_another() {
    let dir = tempfile::tempdir().unwrap();
    let server = Arc::new(Server::start(dir.path(), &[]));
    with_the_example_glossary(&server, "chunks");
    server.create("terms");
    let paragraphs: Vec<String> = ["01.txt", "02.txt"]
        .iter()
        .flat_map(|file| example(&format!("chapters/{file}")).lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|line| line.chars().count() > 10)
        .collect();
    let paragraphs = Arc::new(paragraphs);
    let receipts = Arc::new(Mutex::new(Vec::new()));
    let appended = Arc::new(Mutex::new(Vec::new()));
    let mut threads = Vec::new();
    for client in 0..CLIENTS {
        let (server, paragraphs, receipts) = (Arc::clone(&server), Arc::clone(&paragraphs), Arc::clone(&receipts));
        threads.push(std::thread::spawn(move || {
            let chapter = client % CHAPTERS + 1;
            let mut prev: Option<String> = None;
            for chunk in 0..CHUNKS_PER_CLIENT {
                let key = format!("client{client}-{chunk}");
                let text = &paragraphs[(client * CHUNKS_PER_CLIENT + chunk) % paragraphs.len()];
                let request = json!({ "chapter": chapter, "chunk": key, "text": text, "prev": prev, "record": true });
                let answer = server.post("/v1/books/chunks/assemble", &request).ok();
                assert_eq!((answer["recorded"].as_bool(), answer["chunk"].as_str()), (Some(true), Some(&*key)));
                assert_eq!(answer["prev"], json!(prev));
                let id = answer["receipt"].as_str().unwrap().to_owned();
                receipts.lock().unwrap().push((id.clone(), chapter, key, answer["context"].clone()));
                prev = Some(id);
            }
        }));
    }
    for writer in 0..WRITERS {
        let (server, appended) = (Arc::clone(&server), Arc::clone(&appended));
        threads.push(std::thread::spawn(move || {
            for n in 0..APPENDS_PER_WRITER {
                let id = format!("T-{}", 1000 + writer * 100 + n);
                let line = term_line(&id, &format!("角色{writer}之{n}"), &format!("Персонаж {writer}-{n}"));
                let answer = server.append_lines("terms", "actor=human:test", &[&line]).ok();
                assert_eq!(answer["first"], answer["last"]);
                appended.lock().unwrap().push((id, answer["first"].as_u64().unwrap()));
            }
        }));
    }
    // Editors change the terms the chunks mention while they are assembled: each
    // receipt must still replay against the revision it was made at.
    for editor in 0..EDITORS {
        let server = Arc::clone(&server);
        threads.push(std::thread::spawn(move || {
            for n in 0..EDITS_PER_EDITOR {
                let (id, dst) = [("T-1", "Шэнь Чжао"), ("T-7", "Туманная река"), ("T-10", "Школа Светильника")][editor];
                let edit = json!({ "dst": format!("{dst} {n}"), "actor": "human:editor" });
                server.send("PATCH", &format!("/v1/books/chunks/terms/{id}"), &[], edit.to_string().as_bytes()).ok();
            }
        }));
    }
    for thread in threads {
        thread.join().unwrap();
    }
    let glossary_events = example("glossary.jsonl").lines().count() as u64;
    assert_eq!(server.info("chunks")["head"], 1 + glossary_events + (EDITORS * EDITS_PER_EDITOR) as u64);
    // The writers: every acknowledged append is in the log once, at the place its
    // answer named, and nothing else is.
    let appended = appended.lock().unwrap().clone();
    assert_eq!(appended.len(), WRITERS * APPENDS_PER_WRITER);
    let log = server.log("terms");
    assert_eq!(log.len(), 1 + appended.len());
    let logged: BTreeMap<u64, String> = log[1..]
        .iter()
        .map(|event| (event["seq"].as_u64().unwrap(), event["body"]["term_put"]["id"].as_str().unwrap().to_owned()))
        .collect();
    let acknowledged: BTreeMap<u64, String> = appended.iter().map(|(id, seq)| (*seq, id.clone())).collect();
    assert_eq!(logged, acknowledged);
    assert_eq!(server.verified("terms")["n_events"], 1 + appended.len());
    // The clients: every acknowledged receipt is stored once under its chunk and
    // replays to the same bytes.
    let receipts = receipts.lock().unwrap().clone();
    assert_eq!(receipts.len(), CLIENTS * CHUNKS_PER_CLIENT);
    assert_eq!(receipts.iter().map(|(id, ..)| id).collect::<BTreeSet<_>>().len(), receipts.len());
    let receipts = Arc::new(receipts);
    let next = Arc::new(AtomicUsize::new(0));
    let checkers: Vec<_> = (0..4)
        .map(|_| {
            let (server, receipts, next) = (Arc::clone(&server), Arc::clone(&receipts), Arc::clone(&next));
            std::thread::spawn(move || {
                while let Some((id, chapter, key, context)) = receipts.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let stored = server.get(&format!("/v1/books/chunks/receipts/{id}")).ok();
                    assert_eq!((&stored["chapter"], stored["chunk"].as_str()), (&json!(chapter), Some(key.as_str())));
                    let replay = format!("/v1/books/chunks/receipts/{id}/replay");
                    let replayed = server.send("POST", &replay, &[], b"").ok();
                    assert_eq!(replayed["identical"], true, "{id}: {replayed}");
                    assert_eq!(&replayed["context"], context, "{id}");
                }
            })
        })
        .collect();
    for checker in checkers {
        checker.join().unwrap();
    }
    for chapter in 1..=CHAPTERS {
        let audit = server.get(&format!("/v1/books/chunks/audit?chapter={chapter}")).ok();
        let keys: BTreeSet<&str> =
            audit["chunks"].as_array().unwrap().iter().map(|chunk| chunk["chunk"].as_str().unwrap()).collect();
        let expected: BTreeSet<&str> =
            receipts.iter().filter(|(_, of, ..)| *of == chapter).map(|(_, _, key, _)| key.as_str()).collect();
        assert_eq!(keys, expected, "chapter {chapter}");
        assert_eq!(audit["chunks"].as_array().unwrap().len(), expected.len(), "chapter {chapter}");
    }
    server.verified("chunks");
}

/// Appends one term a request from `WRITERS` threads until the server goes away;
/// stops the server with `stop` once some appends are acknowledged. The term ids
/// acknowledged.
fn append_until_stopped(server: Server, stop: impl FnOnce(Server)) -> BTreeSet<String> {
    const FAULT_WRITERS: usize = 4;
    let addr = server.addr.clone();
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let gone = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..FAULT_WRITERS)
        .map(|writer| {
            let (addr, acknowledged, gone) = (addr.clone(), Arc::clone(&acknowledged), Arc::clone(&gone));
            std::thread::spawn(move || {
                for n in 0.. {
                    let id = format!("T-{}", 10_000 * (writer + 1) + n);
                    let line = term_line(&id, &format!("角色{writer}之{n}"), "x") + "\n";
                    let reply = serve::try_request(
                        &addr,
                        "POST",
                        "/v1/books/w/events?actor=human:test",
                        &[("Content-Type", "application/x-ndjson")],
                        line.as_bytes(),
                    );
                    match reply {
                        Ok(reply) if reply.status == 200 => {
                            assert_eq!(reply.json()["head"].as_u64(), reply.json()["first"].as_u64());
                            acknowledged.lock().unwrap().insert(id);
                        }
                        // Shutting down: the server may refuse, or close before answering.
                        Ok(reply) => assert!(gone.load(Ordering::SeqCst), "{}: {}", reply.status, reply.text()),
                        Err(_) => {
                            assert!(gone.load(Ordering::SeqCst), "the server failed before it was stopped");
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    let started = Instant::now();
    while acknowledged.lock().unwrap().len() < 40 {
        assert!(started.elapsed() < Duration::from_secs(60), "appends are not acknowledged");
        std::thread::sleep(Duration::from_millis(5));
    }
    gone.store(true, Ordering::SeqCst);
    stop(server);
    for thread in threads {
        thread.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    acknowledged
}

/// The term ids the book's log puts, read with the CLI.
fn logged_terms(book: &Path) -> BTreeSet<String> {
    serve::cli_ok(book, &["--json", "log"])
        .lines()
        .filter_map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            event["body"]["term_put"]["id"].as_str().map(str::to_owned)
        })
        .collect()
}

#[test]
fn sigterm_under_load_loses_no_acknowledged_append() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    server.create("w");
    let acknowledged = append_until_stopped(server, |server| {
        let (status, stderr) = server.terminate();
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert!(stderr.contains("stopped; closed 1 book(s)"), "{stderr}");
    });
    let book = dir.path().join("w.lorebank");
    let logged = logged_terms(&book);
    let lost: Vec<&String> = acknowledged.difference(&logged).collect();
    assert!(lost.is_empty(), "acknowledged but not in the book: {lost:?}");
    let verified: Value = serde_json::from_str(&serve::cli_ok(&book, &["--json", "verify"])).unwrap();
    assert_eq!(verified["ok"], true);
    assert_eq!(verified["n_events"], 1 + logged.len());
}

#[test]
fn sigkill_under_load_loses_no_acknowledged_append_and_the_book_reopens_writable() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    server.create("w");
    let acknowledged = append_until_stopped(server, Server::kill);
    let book = dir.path().join("w.lorebank");
    let verified: Value = serde_json::from_str(&serve::cli_ok(&book, &["--json", "verify"])).unwrap();
    assert_eq!(verified["ok"], true);
    let logged = logged_terms(&book);
    let lost: Vec<&String> = acknowledged.difference(&logged).collect();
    assert!(lost.is_empty(), "acknowledged but not in the book: {lost:?}");
    serve::cli_ok(&book, &["term", "put", "--id", "T-1", "--src", "云韵", "--dst", "Юнь Юнь"]);
    assert!(logged_terms(&book).contains("T-1"));
    // And a new server serves it.
    let server = Server::start(dir.path(), &[]);
    assert_eq!(server.verified("w")["n_events"], 2 + logged.len());
}
