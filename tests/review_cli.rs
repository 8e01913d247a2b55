//! Closing the loop end to end, on the bundled book's glossary: assemble a chunk →
//! a translation that leaves a term out → `check` flags it and proposes `verify` →
//! `review` shows and accepts it → `audit` shows the chain; `scan` proposes an
//! unknown name, `review accept` makes it a term, and the next assembly injects it.
//! The same over HTTP and with `--server`.

mod common;
#[path = "common/serve.rs"]
mod serve;

use common::{write_file, Book};
use serde_json::{json, Value};

const GLOSSARY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/glossary.jsonl");
const CHUNK: &str = "沈照提着长明灯走到雾川边。空空道人坐在石上，空空道人笑了。";

fn example_book() -> Book {
    let book = Book::new();
    book.ok(&["apply", GLOSSARY]);
    book
}

#[test]
fn a_missing_term_is_caught_proposed_reviewed_and_audited() {
    let book = example_book();
    let dir = tempfile::tempdir().unwrap();
    let chunk = write_file(dir.path(), "chunk.txt", CHUNK);
    let assembled = book.json(&["assemble", "--chapter", "1", "--chunk", "1", "--text", &chunk]);
    let receipt = assembled["receipt"].as_str().unwrap().to_owned();
    // 长明灯 (T-9, "негасимая лампада") is left out of the translation.
    let translation = write_file(dir.path(), "ru.txt", "Шэнь Чжао подошёл к Мглистой реке с фонарём.");
    let check = book.json(&["check", "--receipt", &receipt[..12], "--translation", &translation, "--propose"]);
    assert_eq!(check["failed"], true, "{check}");
    let items = check["items"].as_array().unwrap();
    let item = |term: &str| items.iter().find(|item| item["term"] == term).unwrap_or_else(|| panic!("{term}: {check}"));
    assert_eq!(item("T-9")["verdict"], "missing");
    assert_eq!(item("T-1")["verdict"], "rendered");
    assert_eq!(item("T-7")["verdict"], "rendered", "Мглистой реке is a case form of Мглистая река: {check}");
    assert!(check["proposed"]["last"].is_u64(), "{check}");
    // The reviewer sees the flag and accepts the record.
    let queue = book.json(&["review", "list"]);
    let flagged: Vec<&Value> = queue["items"].as_array().unwrap().iter().filter(|item| item["id"] == "T-9").collect();
    assert_eq!(flagged.len(), 1, "{queue}");
    assert_eq!(flagged[0]["why"], "verify:postcheck_missing");
    book.ok(&["review", "accept", "T-9", "--actor", "human:editor"]);
    let queue = book.json(&["review", "list"]);
    assert!(queue["items"].as_array().unwrap().iter().all(|item| item["id"] != "T-9"), "{queue}");
    // The audit shows the check beside the chunk's receipt.
    let audit = book.json(&["audit", "--chapter", "1"]);
    let checks = &audit["chunks"][0]["checks"];
    assert_eq!(checks.as_array().unwrap().len(), 1, "{audit}");
    assert_eq!(checks[0]["check"], check["check"]);
    let text = book.ok(&["audit", "--chapter", "1"]);
    assert!(text.contains("T-9 missing 0/1"), "{text}");
    // A check of an unknown receipt, or of a translation file that is missing, exits 2.
    book.fails(&["check", "--receipt", "00000000", "--translation", &translation], 2);
    book.fails(&["check", "--receipt", &receipt, "--translation", "/nonexistent/ru.txt"], 2);
}

#[test]
fn an_unknown_name_is_proposed_accepted_and_then_injected() {
    let book = example_book();
    let dir = tempfile::tempdir().unwrap();
    let chunk = write_file(dir.path(), "chunk.txt", CHUNK);
    let snapshot = book.json(&["snapshot"])["snapshot"].clone();
    let scanned = book.json(&["scan", "--chapter", "1", "--chunk", "1", "--text", &chunk]);
    let sighting = scanned["sightings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|sighting| sighting["surface"] == "空空道人")
        .unwrap_or_else(|| panic!("{scanned}"))
        .clone();
    let candidate = sighting["candidate"].as_str().unwrap().to_owned();
    // Known names are never proposed.
    for known in ["沈照", "长明灯", "雾川"] {
        assert!(scanned["sightings"].as_array().unwrap().iter().all(|s| s["surface"] != known), "{scanned}");
    }
    // A candidate changes no snapshot.
    assert_eq!(book.json(&["snapshot"])["snapshot"], snapshot);
    let shown = book.json(&["review", "show", &candidate]);
    assert_eq!((shown["type"].as_str(), shown["origin"].as_str()), (Some("candidate"), Some("extractor")));
    book.fails(&["review", "accept", &candidate], 2);
    book.ok(&["review", "accept", &candidate, "--dst", "Даос Пустоты", "--gender", "m", "--kind", "character"]);
    let context = book.ok(&["assemble", "--chapter", "1", "--chunk", "1", "--text", &chunk, "--dry-run"]);
    assert!(context.contains("Даос Пустоты"), "{context}");
    assert!(book.json(&["review", "list"])["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|item| item["id"] != candidate.as_str()));
}

#[test]
fn check_review_and_scan_over_http_and_with_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve::Server::start(dir.path(), &[]);
    server.create("wuchuan");
    let lines: Vec<String> = std::fs::read_to_string(GLOSSARY).unwrap().lines().skip(1).map(str::to_owned).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    server.append_lines("wuchuan", "", &lines).ok();
    let assembled =
        server.post("/v1/books/wuchuan/assemble", &json!({ "chapter": 1, "chunk": "1", "text": CHUNK })).ok();
    let receipt = assembled["receipt"].as_str().unwrap();
    let check = server
        .post(&format!("/v1/books/wuchuan/receipts/{receipt}/check"), &json!({ "translation": "Шэнь Чжао молчал." }))
        .ok();
    assert_eq!(check["failed"], true, "{check}");
    server.post("/v1/books/wuchuan/receipts/ffffffff/check", &json!({ "translation": "x" })).problem(404, "not-found");
    server.post(&format!("/v1/books/wuchuan/receipts/{receipt}/check"), &json!({})).problem(400, "invalid");
    let scanned = server.post("/v1/books/wuchuan/chapters/1/scan", &json!({ "chunk": "1", "text": CHUNK })).ok();
    let candidate = scanned["proposed"][0].as_str().unwrap_or_else(|| panic!("{scanned}")).to_owned();
    let queue = server.get("/v1/books/wuchuan/review").ok();
    let item = queue["items"].as_array().unwrap().iter().find(|item| item["id"] == candidate.as_str()).cloned();
    assert!(item.is_some(), "{queue}");
    // One item of the queue is read by the server, as `review show` reads it locally.
    assert_eq!(Some(server.get(&format!("/v1/books/wuchuan/review/{candidate}")).ok()), item);
    let url = format!("http://{}", server.addr);
    let shown = std::process::Command::new(serve::BIN)
        .args(["--server", &url, "--book", "wuchuan", "review", "show", &candidate])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    assert_eq!(Some(serde_json::from_slice::<Value>(&shown.stdout).unwrap()), item);
    server.get("/v1/books/wuchuan/review/C-999").problem(404, "not-found");
    server.get("/v1/books/wuchuan/review/X-1").problem(400, "invalid");
    server.post(&format!("/v1/books/wuchuan/review/{candidate}/reject"), &json!({ "reason": "not_a_name" })).ok();
    server.post("/v1/books/wuchuan/review/C-999/reject", &json!({})).problem(400, "invalid");
    server.post("/v1/books/wuchuan/review/T-10/verify", &json!({ "reason": "Bad Code" })).problem(400, "invalid");
    // The CLI with --server: the queue as the server has it.
    let output = std::process::Command::new(serve::BIN)
        .args(["--server", &url, "--book", "wuchuan", "review", "list"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(listed["items"].as_array().unwrap().iter().all(|item| item["id"] != candidate.as_str()), "{listed}");
}

#[test]
fn new_ids_past_the_largest_record_number_are_an_error_naming_the_kind_and_the_limit() {
    // C-999999999 and T-999999999 are valid ids that `apply` writes; the next
    // candidate or term a command numbers itself does not exist.
    let book = example_book();
    let dir = tempfile::tempdir().unwrap();
    let chunk = write_file(dir.path(), "chunk.txt", CHUNK);
    let limits = write_file(
        dir.path(),
        "limits.jsonl",
        concat!(
            r#"{"candidate_proposed":{"id":"C-999999999","surface":"灯宗","origin":"extractor","trust":"normal"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-999999999","src":"灯塔","dst":"Маяк"}}"#,
            "\n",
        ),
    );
    book.ok(&["apply", &limits]);
    let head = book.head();
    for args in [
        ["scan", "--chapter", "1", "--chunk", "1", "--text", &chunk, "--dry-run"].as_slice(),
        &["scan", "--chapter", "1", "--chunk", "1", "--text", &chunk],
        &["--json", "scan", "--chapter", "1", "--chunk", "1", "--text", &chunk],
    ] {
        let err = book.fails(args, 2);
        assert!(
            err.contains("no free candidate id is left") && err.contains("C-999999999") && err.contains("999999999"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // Accepting the candidate as a new term needs a term id: none is left either.
    let err = book.fails(&["review", "accept", "C-999999999", "--dst", "Орден Светильника"], 2);
    assert!(err.contains("no free term id is left") && err.contains("T-999999999"), "{err}");
    assert_eq!(book.head(), head, "a refused command wrote");
    // A name the book already has a candidate for needs no new id.
    let known = write_file(dir.path(), "known.txt", "他们回到灯宗。灯宗在山上。");
    book.ok(&["scan", "--chapter", "1", "--chunk", "2", "--text", &known, "--dry-run"]);
}

#[test]
fn a_scan_over_http_past_the_largest_candidate_number_is_a_400_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve::Server::start(dir.path(), &[]);
    server.create("wuchuan");
    let mut lines: Vec<String> =
        std::fs::read_to_string(GLOSSARY).unwrap().lines().skip(1).map(str::to_owned).collect();
    lines.push(
        r#"{"candidate_proposed":{"id":"C-999999999","surface":"灯宗","origin":"extractor","trust":"normal"}}"#.into(),
    );
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    server.append_lines("wuchuan", "", &lines).ok();
    let head = server.info("wuchuan")["head"].clone();
    let reply = server.post("/v1/books/wuchuan/chapters/1/scan", &json!({ "chunk": "1", "text": CHUNK }));
    let problem = reply.problem(400, "invalid");
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("no free candidate id is left") && detail.contains("999999999"), "{problem}");
    assert_eq!(server.info("wuchuan")["head"], head, "a refused scan wrote");
}

#[test]
fn a_name_accepted_without_a_rendering_gets_the_standard_form() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let candidates = write_file(
        dir.path(),
        "candidates.jsonl",
        concat!(
            r#"{"candidate_proposed":{"id":"C-1","surface":"王熙凤","origin":"extractor"}}"#,
            "\n",
            r#"{"candidate_proposed":{"id":"C-2","surface":"大观园","origin":"extractor"}}"#,
            "\n",
            r#"{"candidate_proposed":{"id":"C-3","surface":"ABC","origin":"extractor"}}"#,
            "\n",
        ),
    );
    book.ok(&["apply", &candidates]);
    // Without a kind there is no telling it is a name: a rendering is needed.
    let error = book.fails(&["review", "accept", "C-1"], 2);
    assert!(error.contains("character or place"), "{error}");
    book.ok(&["review", "accept", "C-1", "--kind", "character", "--gender", "f"]);
    book.ok(&["review", "accept", "C-2", "--kind", "place"]);
    let shown = book.json(&["show"]);
    let dst = |src: &str| {
        shown["terms"].as_array().unwrap().iter().find(|term| term["src"] == src).unwrap_or_else(|| panic!("{shown}"))
            ["dst"]
            .clone()
    };
    assert_eq!(dst("王熙凤"), "Ван Сифэн");
    assert_eq!(dst("大观园"), "Дагуаньюань");
    // What the standard cannot read still needs a rendering, and says why.
    let error = book.fails(&["review", "accept", "C-3", "--kind", "character"], 2);
    assert!(error.contains("the standard gives none"), "{error}");
    // A names lint of the book finds nothing to flag.
    assert_eq!(book.json(&["names", "lint"])["deviations"], json!([]));
}

/// A Japanese name in kanji accepted without a rendering is read by the source text's
/// ruby and the name dictionary: one reading gives its form; several are listed for
/// the reviewer to choose with `--dst`.
#[test]
fn a_kanji_name_accepted_without_a_rendering_is_read_by_ruby_and_the_dictionary() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let candidates = write_file(
        dir.path(),
        "candidates.jsonl",
        concat!(
            r#"{"languages_set":{"source":"ja","target":"ru"}}"#,
            "\n",
            r#"{"candidate_proposed":{"id":"C-1","surface":"宮崎駿","origin":"extractor"}}"#,
            "\n",
            r#"{"candidate_proposed":{"id":"C-2","surface":"夏目漱石","origin":"extractor"}}"#,
            "\n",
        ),
    );
    book.ok(&["apply", &candidates]);
    // 宮崎 and 駿 have several readings in the dictionary (tests/data/enamdict): the
    // error lists the first forms they give, and the reviewer chooses.
    let error = book.fails(&["review", "accept", "C-1", "--kind", "character"], 2);
    assert!(error.contains("its readings give Миягики Сюн, ") && error.contains(" more)"), "{error}");
    // The book's text reads both parts in ruby: that is the author's reading, and the
    // one form it gives is the rendering.
    let chapter =
        write_file(dir.path(), "01.txt", "<ruby>宮崎<rt>みやざき</rt></ruby><ruby>駿<rt>はやお</rt></ruby>が来た。\n");
    book.ok(&["source", "add", &chapter, "--chapter", "1"]);
    book.ok(&["review", "accept", "C-1", "--kind", "character"]);
    let shown = book.json(&["show"]);
    assert_eq!(shown["terms"][0]["dst"], "Миядзаки Хаяо", "{shown}");
    // 夏目 and 漱石 are read more than one way too (なつめ, なため): listed.
    let error = book.fails(&["review", "accept", "C-2", "--kind", "character"], 2);
    assert!(error.contains("Нацумэ Сосэки"), "{error}");
}
