//! A library on several machines, end to end (`docs/scale.md`): three `nats-server`
//! processes clustered with JetStream on loopback ports and `lorebank serve
//! --cluster` nodes, all started and stopped by this test.
//!
//! * two nodes write one book at once: stale attempts are run again by the server,
//!   every acknowledged write is on both nodes exactly once, and both hold the same
//!   chain (no fork); a retry of a write on the other node is answered from its
//!   marker, not appended;
//! * a message forged in the stream is refused by every node's chain check, with the
//!   book, the stream sequence and what failed; the local books are untouched and
//!   writes stop until the message is deleted, then resume;
//! * a lorebank node killed with SIGKILL: another node serves its books, every
//!   acknowledged write and receipt of it, and every receipt replays; a party reads
//!   there only what is released to it, and its receipt replays for it;
//! * a fresh node joins with an empty directory and materializes the books, which
//!   verify and replay every receipt; a command on its copy reads it and refuses to
//!   write to it; its copies deleted, it fetches them again;
//! * the `nats-server` leading the stream is killed during writes on two nodes:
//!   nothing acknowledged is lost and nothing is appended twice.
//!
//! A `harness = false` target, because it runs child processes. Every wait has a
//! deadline that fails the test, and a watchdog kills every child and fails the test
//! if the whole run takes longer than 5 minutes. The phases share the cluster and run
//! in order.

#[path = "common/nats.rs"]
mod nats;
#[path = "common/serve.rs"]
mod serve;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ledger::replica::{split, Group};
use ledger::Head;
use ledger_model::record::{seal_in_batch, SCHEMA_CURRENT};
use ledger_model::{Body, Hash32, NewEvent, Seq};
use serde_json::{json, Value};
use serve::{try_request, Server};
use test_support::harness::Harness;

const STREAM: &str = "lorebank-main";

struct World {
    nats: nats::Cluster,
    dirs: Vec<tempfile::TempDir>,
    nodes: BTreeMap<&'static str, Server>,
    /// Receipts recorded, by book: (id, chapter).
    receipts: Vec<String>,
}

impl World {
    fn node(&self, name: &str) -> &Server {
        &self.nodes[name]
    }

    /// Starts node `name` on `dir` in the library.
    fn start(&mut self, name: &'static str, dir: &Path) {
        let server = Server::start(dir, &["--cluster", &self.nats.urls(), "--request-timeout", "60"]);
        nats::register(server.pid());
        self.nodes.insert(name, server);
    }
}

fn events_body(id: &str) -> Vec<u8> {
    let term = json!({ "term_put": { "id": id, "src": format!("名字{id}"), "dst": format!("имя {id}") } });
    json!({ "events": [term], "actor": "human:test" }).to_string().into_bytes()
}

/// Appends term `id` on `node` with Idempotency-Key `key`, retrying what a client
/// retries (a timeout, a conflict after the server's own retries, a log out of
/// reach) with the same key, for up to `patience`. The head the write answered.
fn write(node: &Server, book: &str, id: &str, key: &str, patience: Duration) -> u64 {
    let deadline = Instant::now() + patience;
    let path = format!("/v1/books/{book}/events");
    loop {
        let headers = [("Content-Type", "application/json"), ("Idempotency-Key", key)];
        let last = match try_request(&node.addr, "POST", &path, &headers, &events_body(id)) {
            Ok(reply) if reply.status == 200 => return reply.json()["head"].as_u64().unwrap(),
            Ok(reply) if [408, 409, 503].contains(&reply.status) => reply.text(),
            Ok(reply) => panic!("write {id} on {}: {} {}", node.addr, reply.status, reply.text()),
            Err(error) => error.to_string(),
        };
        assert!(Instant::now() < deadline, "write {id} on {} not acknowledged within {patience:?}: {last}", node.addr);
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `GET /v1/books/{book}` once the node has revision `revision`.
fn info_at(node: &Server, book: &str, revision: u64) -> Value {
    let revision = revision.to_string();
    let reply = node.send("GET", &format!("/v1/books/{book}"), &[("Lorebank-Min-Revision", &revision)], b"");
    reply.ok()
}

/// How many times each term was put, from the node's log.
fn puts(node: &Server, book: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for event in node.log(book) {
        if let Some(id) = event["body"]["term_put"]["id"].as_str() {
            *counts.entry(id.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

/// Every acknowledged term on `node`, each put exactly once, and nothing else.
fn exactly(node: &Server, book: &str, acked: &BTreeSet<String>) {
    let counts = puts(node, book);
    let doubled: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "appended twice on {}: {doubled:?}", node.addr);
    let found: BTreeSet<String> = counts.keys().cloned().collect();
    let lost: Vec<_> = acked.difference(&found).collect();
    assert!(lost.is_empty(), "acknowledged but missing on {}: {lost:?}", node.addr);
    assert_eq!(&found, acked, "terms nobody was told of on {}", node.addr);
}

fn two_nodes_write_one_book_concurrently(world: &mut World) {
    let (a, b) = (world.node("a"), world.node("b"));
    let created = a.put("/v1/books/shared", &json!({ "profile": "plain", "actor": "human:test" }));
    assert_eq!(created.status, 201, "{}", created.text());
    let acked = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for writer in 0..8 {
            let node = if writer % 2 == 0 { a } else { b };
            let acked = &acked;
            scope.spawn(move || {
                for write_idx in 0..6 {
                    let id = format!("T-{}", writer * 100 + write_idx + 1);
                    let head = write(node, "shared", &id, &format!("shared-{id}"), Duration::from_secs(90));
                    acked.lock().unwrap().insert(id, head);
                }
            });
        }
    });
    let acked = acked.into_inner().unwrap();
    let top = *acked.values().max().unwrap();
    let (on_a, on_b) = (info_at(a, "shared", top), info_at(b, "shared", top));
    assert_eq!(on_a, on_b, "the two nodes' books differ");
    assert_eq!(on_a["head"], 49, "48 writes after the config: {on_a}");
    let ids: BTreeSet<String> = acked.keys().cloned().collect();
    exactly(a, "shared", &ids);
    exactly(b, "shared", &ids);
    a.verified("shared");
    b.verified("shared");
    // A retry on the other node finds the marker in the book: nothing is appended.
    let headers = [("Content-Type", "application/json"), ("Idempotency-Key", "shared-T-1")];
    let again = b.send("POST", "/v1/books/shared/events", &headers, &events_body("T-1"));
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json()["head"], 49);
}

/// A group of one record after `head` whose payload was changed after sealing.
fn forged(head: Head) -> Vec<u8> {
    let body: Body =
        serde_json::from_value(json!({ "term_put": { "id": "T-666", "src": "伪造", "dst": "подделка" } })).unwrap();
    let event = NewEvent { recorded_at_ms: 0, actor: "human:forger".into(), source: "forged".into(), body };
    let payload = event.encode().unwrap();
    let (mut record, _) = seal_in_batch(head.seq.next(), head.hash, SCHEMA_CURRENT, &payload, true);
    // "подделка" becomes "подделкa": the payload no longer hashes to the header's hash.
    let at = record.len() - 1;
    record[at] ^= 0x01;
    let group = Group { before: head, records: vec![record], ..Group::default() };
    split(&group.encode(), 1 << 20).unwrap().remove(0)
}

fn a_forged_message_is_refused_and_reported(world: &mut World) {
    let (a, b) = (world.node("a"), world.node("b"));
    assert_eq!(a.put("/v1/books/forged", &json!({ "profile": "plain" })).status, 201);
    let head = write(a, "forged", "T-1", "forged-1", Duration::from_secs(60));
    let before = info_at(b, "forged", head);
    let head = Head {
        seq: Seq(before["head"].as_u64().unwrap()),
        hash: Hash32::from_hex(before["hash"].as_str().unwrap()).unwrap(),
    };
    let mut raw = nats::RawNats::connect(world.nats.live_port());
    let ack: Value = serde_json::from_slice(&raw.request("lorebank.main.book.forged", &forged(head))).unwrap();
    let sequence = ack["seq"].as_u64().unwrap_or_else(|| panic!("no ack for the forged message: {ack}"));
    for node in [a, b] {
        let refused =
            node.send("POST", "/v1/books/forged/events", &[("Content-Type", "application/json")], &events_body("T-2"));
        let problem = refused.problem(500, "corrupted");
        let detail = problem["detail"].as_str().unwrap();
        for expected in ["book forged", &format!("stream sequence {sequence}"), "payload hash"] {
            assert!(detail.contains(expected), "{expected:?} not in {detail}");
        }
        // Reported in the status, and the local book is untouched.
        let status = node.get("/v1/status").ok();
        let books = status["cluster"]["books"].as_array().unwrap();
        let book = books.iter().find(|book| book["book"] == "forged").unwrap();
        assert!(book["halted"].as_str().unwrap().contains(&format!("stream sequence {sequence}")), "{book}");
        assert_eq!(node.get("/v1/books/forged").ok(), before);
        node.verified("forged");
        assert!(!puts(node, "forged").contains_key("T-666"));
    }
    // An operator deletes the message; writes resume.
    let deleted =
        raw.request(&format!("$JS.API.STREAM.MSG.DELETE.{STREAM}"), json!({ "seq": sequence }).to_string().as_bytes());
    let deleted: Value = serde_json::from_slice(&deleted).unwrap();
    assert_eq!(deleted["success"], true, "{deleted}");
    let head = write(a, "forged", "T-2", "forged-2", Duration::from_secs(60));
    let head = write(b, "forged", "T-3", "forged-3", Duration::from_secs(60)).max(head);
    assert_eq!(info_at(a, "forged", head), info_at(b, "forged", head));
    let ids: BTreeSet<String> = ["T-1", "T-2", "T-3"].into_iter().map(str::to_owned).collect();
    exactly(a, "forged", &ids);
}

fn a_killed_node_is_served_by_another(world: &mut World) {
    let a = world.node("a");
    assert_eq!(a.put("/v1/books/wuchuan", &json!({ "profile": "zh", "actor": "human:test" })).status, 201);
    let terms = [
        json!({ "term_put": { "id": "T-1", "src": "沈照", "dst": "Шэнь Чжао", "kind": "character", "gender": "m" } }),
        json!({ "term_put": { "id": "T-2", "src": "灯宗", "dst": "Секта Светильника", "kind": "organization" } }),
        json!({ "term_put": { "id": "T-3", "src": "顾寒川", "dst": "Гу Ханьчуань", "kind": "character", "gender": "m" } }),
    ];
    let applied = a.post("/v1/books/wuchuan/events", &json!({ "events": terms, "actor": "human:editor" })).ok();
    assert_eq!(applied["head"], 4);
    // Governance: a party, and a term released to the editors only.
    let governed = json!({ "events": [
        { "governance_set": { "conflict_policy": "flag", "parties": ["human:editors", "tool:pipeline"],
          "defaults": [{ "records": "*", "owner": "human:editors", "release_to": ["*"] }] } },
        { "term_put": { "id": "T-6", "src": "雾川", "dst": "Уча", "release_to": ["human:editors"] } },
    ], "actor": "human:editor" });
    assert_eq!(a.post("/v1/books/wuchuan/events", &governed).ok()["head"], 6);
    let as_party = [("Content-Type", "application/json"), ("Lorebank-Party", "tool:pipeline")];
    let party_chunk = json!({ "chapter": 3, "chunk": "1", "text": "雾川的沈照。" }).to_string();
    let party_receipt = a.send("POST", "/v1/books/wuchuan/assemble", &as_party, party_chunk.as_bytes()).ok();
    assert_eq!(party_receipt["party"], "tool:pipeline");
    let chunks = json!({ "chunks": [
        { "key": "1", "text": "沈照十五岁，是灯宗年纪最小的弟子。" },
        { "key": "2", "text": "先生名叫顾寒川。沈照提着灯。" },
    ] });
    let chapter = a.post("/v1/books/wuchuan/chapters/1/assemble", &chunks).ok();
    let mut receipts: Vec<String> = chapter["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chunk| chunk["receipt"].as_str().unwrap().to_owned())
        .collect();
    let one = a
        .post("/v1/books/wuchuan/assemble", &json!({ "chapter": 2, "chunk": "1", "text": "灯宗的人都认识沈照。" }))
        .ok();
    receipts.push(one["receipt"].as_str().unwrap().to_owned());
    receipts.push(party_receipt["receipt"].as_str().unwrap().to_owned());
    let head = write(a, "wuchuan", "T-4", "wuchuan-4", Duration::from_secs(60));
    assert_eq!(head, 7);
    let snapshot = a.get("/v1/books/wuchuan").ok()["snapshot"].clone();
    world.receipts = receipts;
    world.nodes.remove("a").unwrap().kill();
    let b = world.node("b");
    let on_b = info_at(b, "wuchuan", head);
    assert_eq!(on_b["snapshot"], snapshot);
    for receipt in &world.receipts {
        let got = b.get(&format!("/v1/books/wuchuan/receipts/{receipt}")).ok();
        assert_eq!(got["receipt"].as_str(), Some(receipt.as_str()), "{got}");
        let replayed = b.send("POST", &format!("/v1/books/wuchuan/receipts/{receipt}/replay"), &[], b"").ok();
        assert_eq!(replayed["identical"], true, "{replayed}");
    }
    // A party reads on another node exactly what it reads on one: T-6 is not
    // released to it, and its receipt replays for it.
    let revision = head.to_string();
    let glossary = |party: Option<&str>| -> BTreeSet<String> {
        let mut headers = vec![("Lorebank-Min-Revision", revision.as_str())];
        if let Some(party) = party {
            headers.push(("Lorebank-Party", party));
        }
        let reply = b.send("GET", "/v1/books/wuchuan/glossary", &headers, b"").ok();
        reply["terms"].as_array().unwrap().iter().map(|term| term["id"].as_str().unwrap().to_owned()).collect()
    };
    assert!(glossary(None).contains("T-6"));
    assert!(!glossary(Some("tool:pipeline")).contains("T-6"));
    assert!(glossary(Some("human:editors")).contains("T-6"));
    let id = party_receipt["receipt"].as_str().unwrap();
    let replayed = b.send("POST", &format!("/v1/books/wuchuan/receipts/{id}/replay"), &as_party, b"").ok();
    assert_eq!(replayed["identical"], true, "{replayed}");
    // And it takes writes for the books the dead node served.
    write(b, "wuchuan", "T-5", "wuchuan-5", Duration::from_secs(60));
    write(b, "shared", "T-999", "shared-999", Duration::from_secs(60));
}

fn a_fresh_node_materializes_the_books(world: &mut World) {
    let dir = tempfile::tempdir().unwrap();
    world.start("c", dir.path());
    let (b, c) = (world.node("b"), world.node("c"));
    let listed = c.get("/v1/books").ok();
    assert_eq!(listed["books"], json!(["forged", "shared", "wuchuan"]));
    for book in ["forged", "shared", "wuchuan"] {
        let on_b = b.get(&format!("/v1/books/{book}")).ok();
        let on_c = info_at(c, book, on_b["head"].as_u64().unwrap());
        assert_eq!(on_c, on_b, "{book}");
        c.verified(book);
    }
    for receipt in &world.receipts {
        let replayed = c.send("POST", &format!("/v1/books/wuchuan/receipts/{receipt}/replay"), &[], b"").ok();
        assert_eq!(replayed["identical"], true, "{replayed}");
    }
    // Its copies are a cache: stopped, emptied and started again, it fetches them.
    let expected = b.get("/v1/books/wuchuan").ok();
    let (status, _) = world.nodes.remove("c").unwrap().terminate();
    assert!(status.success());
    // A command on a node's copy reads it and refuses to write to it.
    let copy = dir.path().join("wuchuan.lorebank");
    let verified = serve::cli(&copy, &["verify"]);
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stderr));
    let refused = serve::cli(&copy, &["term", "put", "--id", "T-9", "--src", "新词", "--dst", "новое"]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("write through a node of its library"), "{stderr}");
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::remove_file(path).unwrap();
        }
    }
    world.start("c", dir.path());
    let c = world.node("c");
    assert_eq!(info_at(c, "wuchuan", expected["head"].as_u64().unwrap()), expected);
    c.verified("wuchuan");
    let receipt = &world.receipts[0];
    let replayed = c.send("POST", &format!("/v1/books/wuchuan/receipts/{receipt}/replay"), &[], b"").ok();
    assert_eq!(replayed["identical"], true, "{replayed}");
    world.dirs.push(dir);
}

fn a_killed_nats_server_loses_nothing(world: &mut World) {
    let (b, c) = (&world.nodes["b"], &world.nodes["c"]);
    let nats = &mut world.nats;
    assert_eq!(b.put("/v1/books/durable", &json!({ "profile": "plain" })).status, 201);
    let acked = Mutex::new(BTreeMap::new());
    let n_acked = AtomicUsize::new(0);
    let killed = AtomicBool::new(false);
    let leader = nats.stream_leader(STREAM);
    assert!(leader.is_some(), "no server names the leader of {STREAM}:\n{}", nats.logs());
    std::thread::scope(|scope| {
        for writer in 0..4 {
            let node = if writer % 2 == 0 { b } else { c };
            let (acked, n_acked, killed) = (&acked, &n_acked, &killed);
            scope.spawn(move || {
                let mut write_idx = 0;
                // Each writer keeps writing until the server has been dead a while.
                while write_idx < 8 || !killed.load(Ordering::SeqCst) || write_idx < 16 {
                    write_idx += 1;
                    let id = format!("T-{}", writer * 1000 + write_idx);
                    let head = write(node, "durable", &id, &format!("durable-{id}"), Duration::from_secs(120));
                    acked.lock().unwrap().insert(id, head);
                    n_acked.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        while n_acked.load(Ordering::SeqCst) < 12 {
            assert!(Instant::now() < deadline, "no writes before the kill");
            std::thread::sleep(Duration::from_millis(20));
        }
        let victim = leader.unwrap_or_default();
        eprintln!("killing nats-server {}, the leader of {STREAM}", nats.nodes[victim].name);
        nats.kill(victim);
        killed.store(true, Ordering::SeqCst);
    });
    let acked = acked.into_inner().unwrap();
    let top = *acked.values().max().unwrap();
    let ids: BTreeSet<String> = acked.keys().cloned().collect();
    assert!(ids.len() >= 64, "{} writes", ids.len());
    let (on_b, on_c) = (info_at(b, "durable", top), info_at(c, "durable", top));
    assert_eq!(on_b, on_c);
    exactly(b, "durable", &ids);
    exactly(c, "durable", &ids);
    b.verified("durable");
    c.verified("durable");
}

type Phase = (&'static str, fn(&mut World));

fn main() {
    let phases: &[Phase] = &[
        ("two_nodes_write_one_book_concurrently", two_nodes_write_one_book_concurrently),
        ("a_forged_message_is_refused_and_reported", a_forged_message_is_refused_and_reported),
        ("a_killed_node_is_served_by_another", a_killed_node_is_served_by_another),
        ("a_fresh_node_materializes_the_books", a_fresh_node_materializes_the_books),
        ("a_killed_nats_server_loses_nothing", a_killed_nats_server_loses_nothing),
    ];
    // The phases share one cluster and build on each other: a filter naming any of
    // them runs them all; one naming none runs none.
    let names: Vec<&'static str> = phases.iter().map(|(name, _)| *name).collect();
    let mut harness = Harness::new(&names).all_or_none(&names);
    if harness.selected().is_empty() {
        return harness.finish();
    }
    nats::watchdog(Duration::from_secs(300));
    let started = Instant::now();
    let nats = nats::Cluster::start();
    let mut world = World { nats, dirs: Vec::new(), nodes: BTreeMap::new(), receipts: Vec::new() };
    for name in ["a", "b"] {
        let dir = tempfile::tempdir().unwrap();
        world.start(name, dir.path());
        world.dirs.push(dir);
    }
    for (name, phase) in phases {
        harness.run(name, || phase(&mut world));
        if harness.failed() {
            // The next phases build on this one: show the logs and stop.
            eprintln!("{}", world.nats.logs());
            for (node, server) in &world.nodes {
                eprintln!("--- lorebank node {node}:\n{}", server.stderr());
            }
            break;
        }
    }
    eprintln!("cluster test: {:.1} s", started.elapsed().as_secs_f64());
    // Its processes end before `finish` ends a failed run.
    drop(world);
    harness.finish();
}
