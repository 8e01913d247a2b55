//! The books the audit page's tests look at, built through the HTTP API of a live
//! `lorebank serve`: the bundled example book told as `scripts/demo.sh` tells it
//! (glossary, every chunk of chapters 1-5, two terms revised and rolled back, a
//! post-check that flags a record, the name alarm on chapter 6), and a book whose
//! records, sources and chunk text carry HTML and script.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::{json, Value};

use super::serve::Server;

fn example(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("examples/wuchuan").join(path)).unwrap()
}

/// The chunks of a chapter file, split at its `---` lines as the demo splits them.
pub fn chunks(chapter: u32) -> Vec<String> {
    example(&format!("chapters/{chapter:02}.txt"))
        .split("\n---\n")
        .map(|chunk| format!("{}\n", chunk.trim_matches('\n')))
        .collect()
}

/// What the tests need to know about the bundled book.
pub struct Bundled {
    /// The head after the glossary and the recorded chapters.
    pub before: u64,
    /// The head after the two revisions (before the rollback).
    pub revised: u64,
    /// The head when the book is built.
    pub head: u64,
    /// The receipt of chapter 1, chunk 1.
    pub first_receipt: String,
    /// The text of chapter 6, chunk 1 (scanned, recorded, not yet accepted).
    pub chapter_6: String,
}

fn ok(reply: super::serve::Reply) -> Value {
    reply.ok()
}

/// Records every chunk of `chapter` (the text of chunk N is `texts[N-1]`).
pub fn record(server: &Server, book: &str, chapter: u32, texts: &[String]) -> Value {
    let chunks: Vec<Value> =
        texts.iter().enumerate().map(|(n, text)| json!({ "key": (n + 1).to_string(), "text": text })).collect();
    ok(server.post(&format!("/v1/books/{book}/chapters/{chapter}/assemble"), &json!({ "chunks": chunks })))
}

/// Builds book `wuchuan` on `server`.
pub fn bundled(server: &Server) -> Bundled {
    let book = "wuchuan";
    let created = server.put(&format!("/v1/books/{book}"), &json!({ "profile": "zh", "actor": "human:editor" }));
    assert_eq!(created.status, 201, "{}", created.text());
    let glossary = example("glossary.jsonl");
    let lines: Vec<&str> = glossary.lines().filter(|line| !line.trim().is_empty()).collect();
    ok(server.append_lines(book, "actor=import:example&source=examples/wuchuan/glossary.jsonl", &lines));
    let mut first_receipt = String::new();
    for chapter in 1..=5 {
        let recorded = record(server, book, chapter, &chunks(chapter));
        if chapter == 1 {
            first_receipt = recorded["chunks"][0]["receipt"].as_str().unwrap().to_owned();
        }
    }
    let before = server.info(book)["head"].as_u64().unwrap();
    // An editor reviews 灯宗 and renames 雾川, as in the demo.
    let edits = [
        ("T-10", json!({ "dst": "Секта Фонаря", "decl": ["Секты Фонаря", "Секте Фонаря"], "status": "approved" })),
        ("T-7", json!({ "dst": "Туманная река", "decl": ["Туманной реки", "Туманную реку"] })),
    ];
    for (id, mut edit) in edits {
        edit["actor"] = json!("human:editor");
        edit["source"] = json!("review-1");
        let body = edit.to_string();
        let reply = server.send(
            "PATCH",
            &format!("/v1/books/{book}/terms/{id}"),
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        ok(reply);
    }
    let revised = server.info(book)["head"].as_u64().unwrap();
    let rollback = json!({ "to": before, "reason": "keep the published names", "actor": "human:editor" });
    ok(server.post(&format!("/v1/books/{book}/rollback"), &rollback));
    // A translation that leaves out a term: the check flags it for review.
    let translation = example("review/01-1.ru.txt");
    let check = json!({ "translation": translation, "propose": true, "actor": "tool:postcheck" });
    ok(server.post(&format!("/v1/books/{book}/receipts/{first_receipt}/check"), &check));
    // A new chapter brings names no entry covers; its chunk is recorded.
    let chapter_6 = example("review/06-1.txt");
    let scan = json!({ "chunk": "1", "text": chapter_6, "actor": "tool:names" });
    ok(server.post(&format!("/v1/books/{book}/chapters/6/scan"), &scan));
    record(server, book, 6, std::slice::from_ref(&chapter_6));
    let head = server.info(book)["head"].as_u64().unwrap();
    Bundled { before, revised, head, first_receipt, chapter_6 }
}

/// Markup and script in every field a page shows.
pub const HOSTILE_DST: &str = "<script>alert('dst')</script>Ночной фонарь";
pub const HOSTILE_NOTE: &str = "<img src=x onerror=alert('note')> & \"quoted\" </td></tr></table>";
pub const HOSTILE_SOURCE: &str = "<script>alert('source')</script>";
pub const HOSTILE_TEXT: &str = "<script>alert('text')</script>夜灯亮了。<b onmouseover=alert(1)>夜灯</b>";

/// Builds book `hostile` on `server`: a term with script in its rendering, note and
/// source, edited to another note, a chunk with script in its text, and the term
/// retired.
pub fn hostile(server: &Server) {
    let book = "hostile";
    server.create(book);
    let put = json!({ "term_put": { "id": "T-1", "src": "夜灯", "dst": HOSTILE_DST, "note": HOSTILE_NOTE, "kind": "object" } });
    let events = json!({ "events": [put], "actor": "human:editor", "source": HOSTILE_SOURCE });
    ok(server.post(&format!("/v1/books/{book}/events"), &events));
    record(server, book, 1, &[HOSTILE_TEXT.to_owned()]);
    let body = json!({ "note": "<script>alert('edited')</script>", "actor": "human:editor", "source": HOSTILE_SOURCE });
    let reply = server.send(
        "PATCH",
        &format!("/v1/books/{book}/terms/T-1"),
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    );
    ok(reply);
    let retired = json!({ "events": [{ "term_retired": { "id": "T-1" } }], "actor": "human:editor" });
    ok(server.post(&format!("/v1/books/{book}/events"), &retired));
}
