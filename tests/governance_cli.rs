//! Governance end to end, on the binary: `--party` on the commands that read as a
//! party (and refused on the others), owners and releases through `term put`/`term
//! edit`, the cast list and `coverage`, `profile check --require`, `export --format
//! profile`, `review list --owner`; over HTTP, a token bound to a party (403 outside
//! the party's routes and for another party), `Lorebank-Party` from a full-view
//! caller, and the same through `--server`.

mod common;
#[path = "common/serve.rs"]
mod serve;

use common::{write_file, Book};
use serde_json::Value;

const GLOSSARY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/glossary.jsonl");
const GOVERNANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/governance/2-governance.jsonl");
const CAST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/governance/cast.txt");
const NOTE: &str = "раскрыт в главе 4";
const CHUNK: &str = "顾寒川看着沈照：“回去。”";

/// The bundled book's glossary and governance, T-4's note released to the editors only.
fn governed_book() -> Book {
    let book = Book::new();
    book.ok(&["apply", GLOSSARY]);
    book.ok(&["apply", GOVERNANCE]);
    book.ok(&["term", "edit", "T-4", "--note-release-to", "human:editors", "--source", "review-1"]);
    book
}

fn note_of(glossary: &Value, id: &str) -> Value {
    glossary["terms"].as_array().unwrap().iter().find(|term| term["id"] == id).unwrap()["note"].clone()
}

#[test]
fn a_party_reads_the_glossary_exports_and_assembles_without_what_is_not_released_to_it() {
    let book = governed_book();
    let dir = tempfile::tempdir().unwrap();
    let full = book.json(&["show", "--chapter", "4"]);
    assert!(note_of(&full, "T-4").as_str().unwrap().contains(NOTE), "{full}");
    assert_eq!(full["party"], Value::Null);
    assert_eq!(full["conflict_policy"], "prefer_specific");
    let pipeline = book.json(&["--party", "tool:pipeline", "show", "--chapter", "4"]);
    assert_eq!(pipeline["party"], "tool:pipeline");
    assert_eq!(note_of(&pipeline, "T-4"), Value::Null);
    assert_eq!(
        note_of(&book.json(&["--party", "human:editors", "show", "--chapter", "4"]), "T-4"),
        note_of(&full, "T-4")
    );
    // The environment variable is the flag.
    let output = book.run_with_env(&["--json", "show", "--chapter", "4"], "LOREBANK_PARTY", "tool:pipeline");
    assert!(output.status.success());
    let from_env: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(from_env["party"], "tool:pipeline");
    // Export, in a format that carries notes.
    for (party, leaks) in [(None, true), (Some("tool:pipeline"), false)] {
        let out = dir.path().join("world.json");
        let mut args = vec!["export", "--format", "sillytavern", "--chapter", "4", "-o", out.to_str().unwrap()];
        if let Some(party) = party {
            args.splice(0..0, ["--party", party]);
        }
        book.ok(&args);
        assert_eq!(std::fs::read_to_string(&out).unwrap().contains(NOTE), leaks, "{party:?}");
    }
    // Assembly for the party is recorded with its party and replays for it only.
    let chunk = write_file(dir.path(), "chunk.txt", CHUNK);
    let assembled =
        book.json(&["--party", "tool:pipeline", "assemble", "--chapter", "4", "--chunk", "1", "--text", &chunk]);
    assert_eq!(assembled["party"], "tool:pipeline");
    assert!(assembled["context"].as_str().unwrap().contains("[rules]"), "a dialogue chunk: {assembled}");
    let receipt = assembled["receipt"].as_str().unwrap();
    book.ok(&["--party", "tool:pipeline", "replay", receipt]);
    book.ok(&["replay", receipt]);
    let error = book.fails(&["--party", "human:editors", "replay", receipt], 2);
    assert!(error.contains("assembled for party human:editors"), "{error}");
    // An undeclared party and the commands that read the full view are refused.
    let error = book.fails(&["--party", "tool:nobody", "show"], 2);
    assert!(error.contains("not one of the book's parties"), "{error}");
    for command in
        [&["audit", "--chapter", "1"][..], &["log"], &["coverage"], &["term", "show", "T-4"], &["profile", "check"]]
    {
        let error = book.fails(&[&["--party", "tool:pipeline"], command].concat(), 2);
        assert!(error.contains("only show, assemble, replay and export read as a party"), "{command:?}: {error}");
    }
}

#[test]
fn owners_and_releases_go_through_term_put_and_term_edit_and_name_declared_parties() {
    let book = Book::new();
    book.ok(&["apply", GOVERNANCE]);
    let error = book
        .fails(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао", "--owner", "human:nobody"], 2);
    assert!(error.contains("term_put.owner") && error.contains("human:nobody"), "{error}");
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-1",
        "--src",
        "沈照",
        "--dst",
        "Шэнь Чжао",
        "--kind",
        "character",
        "--owner",
        "human:editors",
        "--owner-role",
        "lead",
        "--release-to",
        "human:editors,tool:pipeline",
        "--source",
        "t1",
    ]);
    let shown = book.json(&["show"]);
    let term = &shown["terms"][0];
    assert_eq!((term["owner"].clone(), term["owner_role"].clone()), ("human:editors".into(), "lead".into()));
    assert_eq!(term["release_to"], serde_json::json!(["human:editors", "tool:pipeline"]));
    // Clearing the owner falls back to the book's default for characters.
    book.ok(&["term", "edit", "T-1", "--clear-owner", "--clear-owner-role"]);
    let term = book.json(&["show"])["terms"][0].clone();
    assert_eq!(
        (term["owner"].clone(), term["owner_role"].clone()),
        ("human:names-editor".into(), "names editor".into())
    );
    // A put that would drop the release list warns, as for every other field.
    let output = book.run(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("release_to"), "{output:?}");
    // The review queue says whom to ask, and filters by owner.
    book.ok(&["term", "put", "--id", "T-2", "--src", "雾川", "--dst", "Мглистая река", "--status", "auto"]);
    let queue = book.json(&["review", "list", "--owner", "human:editors"]);
    let items = queue["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{queue}");
    assert_eq!((items[0]["id"].clone(), items[0]["owner_role"].clone()), ("T-2".into(), "chief editor".into()));
    assert!(book.ok(&["review", "list"]).contains("ask human:editors (chief editor)"));
}

#[test]
fn the_cast_list_coverage_profile_check_and_profile_export_of_the_bundled_book() {
    let book = governed_book();
    let dir = tempfile::tempdir().unwrap();
    // Record chapter 5's second chunk, where 师姐 speaks.
    let chapter_5 =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/chapters/05.txt")).unwrap();
    let chunk = write_file(dir.path(), "5-2.txt", chapter_5.split("\n---\n").nth(1).unwrap());
    book.ok(&["assemble", "--chapter", "5", "--chunk", "2", "--text", &chunk]);
    let dry = book.json(&["expect", "import", CAST, "--dry-run"]);
    assert_eq!(dry["added"].as_array().unwrap().len(), 3);
    assert_eq!(book.json(&["coverage"])["n_expected"], 0, "a dry run registers nothing");
    book.ok(&["expect", "import", CAST]);
    let coverage = book.json(&["coverage", "--chapter", "5"]);
    assert_eq!(coverage["missing"][0]["surface"], "师姐", "{coverage}");
    assert_eq!(coverage["uncovered"][0]["chunk"], "2", "{coverage}");
    assert!(book.ok(&["audit", "--chapter", "5"]).contains("missing   师姐 (character)"));
    book.ok(&["expect", "add", "林晚", "--kind", "character"]);
    book.ok(&["expect", "drop", "林晚"]);
    let error = book.fails(&["expect", "drop", "林晚"], 2);
    assert!(error.contains("not an expected concept"), "{error}");
    // Level 3, and a gate that asks for it.
    let report = book.json(&["profile", "check", "--require", "3"]);
    assert_eq!(report["level"], 3, "{report}");
    // A record without a source one can follow: the command line's default.
    book.ok(&["term", "put", "--id", "T-30", "--src", "师姐", "--dst", "Старшая сестра", "--kind", "character"]);
    let report = book.json(&["profile", "check"]);
    assert_eq!(report["level"], 1, "{report}");
    let source = report["requirements"].as_array().unwrap().iter().find(|r| r["field"] == "source").unwrap().clone();
    assert_eq!(source["failing"], serde_json::json!(["T-30"]));
    let error = book.fails(&["profile", "check", "--require", "2"], 2);
    assert!(error.contains("level 1 of the profile, below the required level 2"), "{error}");
    // The compact form: the header, then one line per record.
    let profile = book.ok(&["export", "--format", "profile"]);
    let mut lines = profile.lines();
    assert_eq!(lines.next(), Some(book::governance::PROFILE_HEADER));
    assert!(
        profile.contains("\nT-4|4||review-1|human:names-editor|names editor|T-2|*|顾寒川 -> Гу Ханьчуань\n"),
        "{profile}"
    );
    assert!(profile.contains("\nR-1|1||2-governance.jsonl:3|human:editors|chief editor||*|В репликах"), "{profile}");
    let error = book.fails(&["export", "--format", "profile", "--chapter", "3"], 2);
    assert!(error.contains("without a chapter"), "{error}");
    // What the compact form saves against one JSON object per record with the same
    // fields (empty ones null), the measure the profile states.
    let names: Vec<&str> = book::governance::PROFILE_HEADER.trim_start_matches("# ").split('|').collect();
    let mut n_json = 0;
    for line in profile.lines().skip(1) {
        let mut values = Vec::new();
        let (mut value, mut escaped) = (String::new(), false);
        for c in line.chars() {
            if escaped {
                value.push(if c == 'n' { '\n' } else { c });
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '|' {
                values.push(std::mem::take(&mut value));
            } else {
                value.push(c);
            }
        }
        values.push(value);
        assert_eq!(values.len(), names.len(), "{line}");
        let object: serde_json::Map<String, Value> = names
            .iter()
            .zip(&values)
            .map(|(name, value)| (name.to_string(), if value.is_empty() { Value::Null } else { value.clone().into() }))
            .collect();
        n_json += Value::Object(object).to_string().chars().count() + 1;
    }
    let n_compact = profile.chars().count();
    println!(
        "profile form: {n_compact} characters, one JSON object per record: {n_json}, {:.1}% fewer",
        100.0 * (1.0 - n_compact as f64 / n_json as f64)
    );
    assert!(n_compact * 2 < n_json, "{n_compact} vs {n_json}");
}

#[test]
fn over_http_a_party_token_reads_as_its_party_and_only_where_a_party_may() {
    let dir = tempfile::tempdir().unwrap();
    let books = dir.path().join("books");
    std::fs::create_dir(&books).unwrap();
    let book = governed_book();
    std::fs::copy(&book.path, books.join("wuchuan.lorebank")).unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "# full view\nfull-token-0123456789\npipeline-token-0123456789 tool:pipeline\n").unwrap();
    let mut server = serve::Server::start(&books, &["--token-file", tokens.to_str().unwrap()]);
    // The full view, and a party asked for with the header.
    server.token = Some("full-token-0123456789".into());
    let full = server.get("/v1/books/wuchuan/glossary?chapter=4").ok();
    assert!(note_of(&full, "T-4").as_str().unwrap().contains(NOTE));
    let asked = server.send("GET", "/v1/books/wuchuan/glossary?chapter=4", &[("Lorebank-Party", "tool:pipeline")], b"");
    assert_eq!(note_of(&asked.ok(), "T-4"), Value::Null);
    server
        .send("GET", "/v1/books/wuchuan/audit?chapter=1", &[("Lorebank-Party", "tool:pipeline")], b"")
        .problem(400, "invalid");
    server.send("GET", "/v1/books/wuchuan/glossary", &[("Lorebank-Party", "not a party")], b"").problem(400, "invalid");
    server.send("GET", "/v1/books/wuchuan/glossary", &[("Lorebank-Party", "tool:nobody")], b"").problem(400, "invalid");
    // The party's token: its view on its routes, 403 elsewhere and for another party.
    server.token = Some("pipeline-token-0123456789".into());
    let pipeline = server.get("/v1/books/wuchuan/glossary?chapter=4").ok();
    assert_eq!((pipeline["party"].clone(), note_of(&pipeline, "T-4")), ("tool:pipeline".into(), Value::Null));
    let body = serde_json::json!({ "chapter": 4, "chunk": "1", "text": CHUNK });
    let assembled = server.post("/v1/books/wuchuan/assemble", &body).ok();
    assert_eq!(assembled["party"], "tool:pipeline");
    let receipt = assembled["receipt"].as_str().unwrap().to_owned();
    let replayed = server.post(&format!("/v1/books/wuchuan/receipts/{receipt}/replay"), &serde_json::json!({})).ok();
    assert_eq!(replayed["identical"], true);
    let export = server.get("/v1/books/wuchuan/export?format=sillytavern&chapter=4");
    assert_eq!(export.status, 200);
    assert!(!export.text().contains(NOTE));
    for (method, path) in [
        ("GET", "/v1/books/wuchuan/audit?chapter=1"),
        ("GET", "/v1/books/wuchuan/events"),
        ("GET", "/v1/books/wuchuan/terms/T-4"),
        ("GET", "/v1/books/wuchuan/profile"),
        ("POST", "/v1/books/wuchuan/rollback"),
    ] {
        let detail =
            server.send(method, path, &[], b"{}").problem(403, "forbidden")["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains("reads as tool:pipeline"), "{method} {path}: {detail}");
    }
    server
        .send("GET", "/v1/books/wuchuan/glossary", &[("Lorebank-Party", "human:editors")], b"")
        .problem(403, "forbidden");
    // The same party's receipt is readable; the full view's is not its to read.
    server.token = Some("full-token-0123456789".into());
    let theirs = server.post("/v1/books/wuchuan/assemble", &body).ok()["receipt"].as_str().unwrap().to_owned();
    server.token = Some("pipeline-token-0123456789".into());
    server.get(&format!("/v1/books/wuchuan/receipts/{theirs}")).problem(404, "not-found");
    // `--server` sends `--party` as the header.
    let output = std::process::Command::new(serve::BIN)
        .args(["--server", &format!("http://{}", server.addr), "--book", "wuchuan", "--party", "tool:pipeline"])
        .args(["show", "--chapter", "4"])
        .env("LOREBANK_TOKEN", "full-token-0123456789")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let shown: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((shown["party"].clone(), note_of(&shown, "T-4")), ("tool:pipeline".into(), Value::Null));
    // `profile check --require` is one rule: through the server as on the file. A
    // record whose source no one can follow brings both copies down to level 1.
    let remote = |args: &[&str]| {
        std::process::Command::new(serve::BIN)
            .args(["--server", &format!("http://{}", server.addr), "--book", "wuchuan"])
            .args(args)
            .env("LOREBANK_TOKEN", "full-token-0123456789")
            .output()
            .unwrap()
    };
    let put = ["term", "put", "--id", "T-30", "--src", "师姐", "--dst", "Старшая сестра", "--source", "cli"];
    book.ok(&put);
    assert!(remote(&put).status.success());
    let local = book.fails(&["profile", "check", "--require", "2"], 2);
    let answer = remote(&["profile", "check", "--require", "2"]);
    assert_eq!(answer.status.code(), Some(2));
    let answer = String::from_utf8_lossy(&answer.stderr);
    assert!(local.contains("level 1 of the profile, below the required level 2"), "{local}");
    assert_eq!(local.lines().last(), answer.lines().last(), "{answer}");
}

/// History never lifts a restriction: after T-4's note is restricted to the editors,
/// the pipeline asking for a revision from before the restriction gets no note, on
/// the command line, over HTTP (a party token, and `Lorebank-Party`) and through
/// `--server`; its receipt of that revision, which named the term whose note it could
/// read then, is no longer its to read or replay, while the full view still replays it.
#[test]
fn a_party_reading_an_older_revision_gets_nothing_the_head_restricts() {
    let book = Book::new();
    book.ok(&["apply", GLOSSARY]);
    book.ok(&["apply", GOVERNANCE]);
    let before = book.head().to_string();
    let dir = tempfile::tempdir().unwrap();
    let chunk = write_file(dir.path(), "chunk.txt", CHUNK);
    let assembled =
        book.json(&["--party", "tool:pipeline", "assemble", "--chapter", "4", "--chunk", "1", "--text", &chunk]);
    let released = book.json(&["--party", "tool:pipeline", "show", "--chapter", "4"]);
    assert!(note_of(&released, "T-4").as_str().unwrap().contains(NOTE), "released then: {released}");
    let receipt = assembled["receipt"].as_str().unwrap().to_owned();
    book.ok(&["term", "edit", "T-4", "--note-release-to", "human:editors", "--source", "review-1"]);
    // Before the restriction the note was the pipeline's; asked for now, it is not.
    let then = book.json(&["--party", "tool:pipeline", "show", "--chapter", "4", "--as-of", &before]);
    assert_eq!(note_of(&then, "T-4"), Value::Null, "{then}");
    assert!(note_of(&book.json(&["show", "--chapter", "4", "--as-of", &before]), "T-4").is_string());
    let out = dir.path().join("world.json");
    let out_arg = out.to_str().unwrap();
    book.ok(&["--party", "tool:pipeline", "export", "--format", "sillytavern", "--as-of", &before, "-o", out_arg]);
    assert!(!std::fs::read_to_string(&out).unwrap().contains(NOTE));
    let error = book.fails(&["--party", "tool:pipeline", "replay", &receipt], 2);
    assert!(error.contains("no longer releases"), "{error}");
    book.ok(&["replay", &receipt]);
    let snapshot = book.json(&["snapshot", "--as-of", &before])["snapshot"].as_str().unwrap().to_owned();
    let args = ["--party", "tool:pipeline", "replay", "--snapshot", &snapshot, "--chapter", "4", "--text", &chunk];
    // Assembly renders no note, so the context at the old snapshot is the same for
    // the party and the full view (the library's property test covers records cut).
    assert_eq!(book.json(&args)["context"], book.json(&args[2..])["context"]);
    // The reads that take a revision and read the full view only refuse a party.
    for command in
        [&["diff", "1", &before][..], &["impact", "--since", &before], &["term", "show", "T-4", "--as-of", &before]]
    {
        let error = book.fails(&[&["--party", "tool:pipeline"], command].concat(), 2);
        assert!(error.contains("read as a party"), "{command:?}: {error}");
    }

    let books = dir.path().join("books");
    std::fs::create_dir(&books).unwrap();
    std::fs::copy(&book.path, books.join("wuchuan.lorebank")).unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "full-token-0123456789\npipeline-token-0123456789 tool:pipeline\n").unwrap();
    let mut server = serve::Server::start(&books, &["--token-file", tokens.to_str().unwrap()]);
    server.token = Some("pipeline-token-0123456789".into());
    let glossary = server.get(&format!("/v1/books/wuchuan/glossary?chapter=4&as_of={before}")).ok();
    assert_eq!(note_of(&glossary, "T-4"), Value::Null, "{glossary}");
    let export = server.get(&format!("/v1/books/wuchuan/export?format=sillytavern&chapter=4&as_of={before}"));
    assert_eq!(export.status, 200);
    assert!(!export.text().contains(NOTE));
    server.get(&format!("/v1/books/wuchuan/receipts/{receipt}")).problem(404, "not-found");
    server
        .post(&format!("/v1/books/wuchuan/receipts/{receipt}/replay"), &serde_json::json!({}))
        .problem(404, "not-found");
    server.token = Some("full-token-0123456789".into());
    let asked = server.send(
        "GET",
        &format!("/v1/books/wuchuan/glossary?chapter=4&as_of={before}"),
        &[("Lorebank-Party", "tool:pipeline")],
        b"",
    );
    assert_eq!(note_of(&asked.ok(), "T-4"), Value::Null);
    let output = std::process::Command::new(serve::BIN)
        .args(["--server", &format!("http://{}", server.addr), "--book", "wuchuan", "--party", "tool:pipeline"])
        .args(["show", "--chapter", "4", "--as-of", &before])
        .env("LOREBANK_TOKEN", "full-token-0123456789")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let shown: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(note_of(&shown, "T-4"), Value::Null, "{shown}");
}
