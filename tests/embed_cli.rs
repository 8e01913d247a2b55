//! The embedding tier end to end with the committed tiny model: `embed set-model`,
//! `embed refresh`, `embed status`, `suggest`, `dedupe` and what the review queue
//! shows and accepting does, with `--json`; that none of it moves the snapshot; the
//! exit codes of a missing model, a bad file, a party and a missing ONNX Runtime
//! library (nothing written); and the same over HTTP (503 without a model or the
//! library, 403 for a party) and with `--server`.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::process::Command;

use common::Book;
use serde_json::{json, Value};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/embed/testdata/tiny.onnx");
const TOKENIZER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/embed/testdata/tiny-tokenizer.json");

/// Four terms of characters the tiny model knows.
const TERMS: &str = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь","kind":"character"}}
{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао","kind":"character"}}
{"term_put":{"id":"T-3","src":"林动","dst":"Линь Дун","kind":"character"}}
{"term_put":{"id":"T-4","src":"炎萧","dst":"Сяо Янь","kind":"character"}}
"#;

/// 林月 (near 林动) and 药心 (near 药老), quoted, so the name alarm finds them.
const CHUNK: &str = "萧炎看着天空。“林月，你好。”萧炎说：“药心”。林月和林月和林月。";

fn files<'a>() -> [&'a str; 4] {
    ["--model", MODEL, "--tokenizer", TOKENIZER]
}

fn set_model<'a>() -> Vec<&'a str> {
    let mut args = vec!["embed", "set-model", "--name", "lorebank-tiny-char-mean-32", "--output", "last_hidden_state"];
    args.extend(files());
    args
}

fn book_with_terms(dir: &std::path::Path) -> Book {
    let book = Book::new();
    let terms = dir.join("terms.jsonl");
    std::fs::write(&terms, TERMS).unwrap();
    book.ok(&["apply", terms.to_str().unwrap()]);
    book
}

/// Runs the binary on `book` with `env` set; (exit code, stdout, stderr).
fn run_env(book: &Book, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(&book.path)
        .args(args)
        .env_remove("LOREBANK_BOOK")
        .env_remove("LOREBANK_EMBED_MODEL")
        .env_remove("LOREBANK_EMBED_TOKENIZER")
        .env_remove("LOREBANK_EMBED_OPERATOR_LIBRARY")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
}

#[test]
fn the_embedding_commands_propose_low_trust_candidates_and_move_no_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let book = book_with_terms(dir.path());
    let chunk = dir.path().join("ch1-p1.txt");
    std::fs::write(&chunk, CHUNK).unwrap();
    let chunk = chunk.to_str().unwrap();
    let snapshot = book.json(&["snapshot"])["snapshot"].clone();
    assert_eq!(book.json(&["embed", "status"])["model"], Value::Null);
    let text = book.ok(&set_model());
    assert!(text.contains("embedding model lorebank-tiny-char-mean-32 model=") && text.contains("dim=32"), "{text}");
    let status = book.json(&["embed", "status"]);
    assert_eq!((status["n_terms"].as_u64(), status["n_missing"].as_u64()), (Some(4), Some(4)), "{status}");
    assert_eq!(status["model"]["pooling"], "mean");
    // Without vectors, suggest says how to get them.
    let error = book.fails(&[&["suggest", "--chapter", "1", "--text", chunk], &files()[..]].concat(), 2);
    assert!(error.contains("lorebank embed refresh"), "{error}");
    let refreshed = book.json(&[&["embed", "refresh"], &files()[..]].concat());
    assert_eq!((refreshed["n_embedded"].as_u64(), refreshed["n_texts"].as_u64()), (Some(4), Some(8)), "{refreshed}");
    let suggested =
        book.json(&[&["suggest", "--chapter", "1", "--text", chunk, "--min-score", "0.56"], &files()[..]].concat());
    let proposed = suggested["proposed"].as_array().unwrap();
    let found: Vec<(&str, &str, &str)> = proposed
        .iter()
        .map(|c| (c["surface"].as_str().unwrap(), c["related"].as_str().unwrap(), c["trust"].as_str().unwrap()))
        .collect();
    assert_eq!(found, [("林月", "T-3", "low"), ("药心", "T-2", "low")], "{suggested}");
    assert!(proposed[0]["evidence"].as_str().unwrap().contains("ch1/ch1-p1@"), "the chunk key is the file's stem");
    assert_eq!(suggested["spans"][0]["nearest"]["term"], "T-3");
    let again =
        book.json(&[&["suggest", "--chapter", "1", "--text", chunk, "--min-score", "0.56"], &files()[..]].concat());
    assert_eq!(again["proposed"], json!([]), "{again}");
    assert_eq!(again["written"], Value::Null);
    assert_eq!((again["phrases"].clone(), again["n_phrases"].clone()), (json!([]), json!(0)), "phrases are asked for");
    // With --phrases, the chunk's phrases are compared with the terms it does not name
    // (萧炎 is named): 林月和林 is near 林动 (a dry run, in words and JSON).
    let args = ["suggest", "--chapter", "1", "--text", chunk, "--min-score", "0.56", "--phrases", "--dry-run"];
    let phrases = book.json(&[&args[..], &files()[..]].concat());
    assert!(phrases["n_phrases"].as_u64().unwrap() > 10, "{phrases}");
    let kept = phrases["phrases"].as_array().unwrap();
    assert!(kept.iter().all(|phrase| phrase["nearest"]["term"] != "T-1"), "{phrases}");
    assert!(kept.iter().any(|phrase| phrase["nearest"]["term"] == "T-3"), "{phrases}");
    let text = book.ok(&[&args[..], &files()[..]].concat());
    assert!(text.contains("phrase(s) of") && text.contains("near a term the chunk does not name"), "{text}");
    // The actor is LOREBANK_ACTOR when set (`tool:embed` when not: the HTTP test), and
    // the log says what each candidate is near.
    let log = book.log();
    let last = log.last().unwrap();
    assert_eq!((last["actor"].as_str(), last["source"].as_str()), (Some("human:test"), Some("ch1/ch1-p1")), "{last}");
    assert!(last["body"]["candidate_proposed"]["evidence"].as_str().unwrap().contains("«萧炎说：“药心”。»"), "{last}");
    let lines = book.ok(&["log"]);
    assert!(lines.contains("candidate_proposed C-1 林月 (embedding) near T-3"), "{lines}");
    // Low trust is visible in the queue, in words and in JSON.
    let queue = book.ok(&["review", "list"]);
    assert!(queue.contains("C-1 林月 (candidate, embedding, low trust, score 0.594138"), "{queue}");
    assert!(queue.contains("alias of T-3?"), "{queue}");
    let item = book.json(&["review", "show", "C-1"]);
    assert_eq!((item["trust"].as_str(), item["related"].as_str()), (Some("low"), Some("T-3")), "{item}");
    assert!(item["score"].as_i64().unwrap() > 590_000);
    assert_eq!(book.json(&["snapshot"])["snapshot"], snapshot, "nothing of the tier moved the snapshot");
    // Dedupe: 炎萧 has 萧炎's characters.
    let deduped = book.json(&[&["dedupe"], &files()[..]].concat());
    assert_eq!(deduped["pairs"][0]["first"], "T-1");
    assert_eq!(deduped["pairs"][0]["second"], "T-4");
    assert_eq!(deduped["pairs"][0]["score"], 1_000_000);
    let pair = deduped["proposed"][0]["id"].as_str().unwrap().to_owned();
    let queue = book.ok(&["review", "list"]);
    assert!(queue.contains("T-4 same as T-1?"), "{queue}");
    // Accepting the suggestion makes 林月 an alias of T-3, which the next assembly finds.
    book.ok(&["review", "accept", "C-1", "--actor", "human:editor"]);
    let context = book.ok(&["assemble", "--chapter", "1", "--chunk", "1", "--text", chunk, "--dry-run"]);
    assert!(context.contains("Линь Дун"), "{context}");
    // Accepting the pair writes the verdict only.
    let head = book.head();
    book.ok(&["review", "accept", &pair, "--actor", "human:editor"]);
    assert_eq!(book.head(), head + 1);
    // verify and rebuild know the vectors.
    let verified = book.json(&["verify"]);
    assert_eq!(verified["n_derived"], 4, "{verified}");
    let rebuilt = book.json(&["rebuild"]);
    assert_eq!((rebuilt["n_derived"].as_u64(), rebuilt["n_derived_dropped"].as_u64()), (Some(4), Some(0)));
}

#[test]
fn embedding_failures_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let book = book_with_terms(dir.path());
    let head = book.head();
    // No model file given.
    let (code, _, error) = run_env(&book, &["embed", "refresh"], &[]);
    assert_eq!(code, Some(2), "{error}");
    assert!(error.contains("--model FILE") && error.contains("LOREBANK_EMBED_MODEL"), "{error}");
    // A model file that is not there.
    let missing = dir.path().join("missing.onnx");
    let (code, _, error) = run_env(
        &book,
        &["embed", "set-model", "--name", "x", "--model", missing.to_str().unwrap(), "--tokenizer", TOKENIZER],
        &[],
    );
    assert_eq!(code, Some(2), "{error}");
    assert!(error.contains("cannot read") && error.contains("missing.onnx"), "{error}");
    // Operator libraries, by flag or variable (paths separated by `:`), are read first.
    let library = dir.path().join("libmissing-ops.so");
    let (code, _, error) =
        run_env(&book, &[&set_model()[..], &["--operator-library", library.to_str().unwrap()]].concat(), &[]);
    assert_eq!(code, Some(2), "{error}");
    assert!(error.contains("cannot read") && error.contains("libmissing-ops.so"), "{error}");
    let libraries = format!("{}:{}", TOKENIZER, library.display());
    let (code, _, error) = run_env(&book, &set_model(), &[("LOREBANK_EMBED_OPERATOR_LIBRARY", &libraries)]);
    assert_eq!(code, Some(2), "{error}");
    assert!(error.contains("cannot read") && error.contains("libmissing-ops.so"), "{error}");
    // No ONNX Runtime library: the install hint, as JSON too.
    let nowhere = dir.path().join("nowhere/libonnxruntime.so.1.31.1");
    let runtime = [("ORT_DYLIB_PATH", nowhere.to_str().unwrap())];
    let (code, _, error) = run_env(&book, &set_model(), &runtime);
    assert_eq!(code, Some(2), "{error}");
    assert!(error.contains("ONNX Runtime library is missing") && error.contains("./scripts/setup.sh"), "{error}");
    let (code, _, error) = run_env(&book, &[&["--json"], &set_model()[..]].concat(), &runtime);
    assert_eq!(code, Some(2));
    let error: Value = serde_json::from_str(error.trim()).unwrap();
    assert_eq!(error["error"]["kind"], "invalid", "{error}");
    // Everything else still runs without it.
    let (code, out, error) = run_env(&book, &["show"], &runtime);
    assert_eq!(code, Some(0), "{error}");
    assert!(out.contains("萧炎"), "{out}");
    // A party never reaches the tier.
    let (code, _, error) = run_env(&book, &["--party", "tool:pipeline", "dedupe", "--model", MODEL], &[]);
    assert_eq!(code, Some(2), "{error}");
    assert!(error.contains("--party"), "{error}");
    // A score outside -1..=1 is an argument error.
    let (code, _, _) = run_env(&book, &["dedupe", "--min-score", "1.5", "--model", MODEL], &[]);
    assert_eq!(code, Some(2));
    assert_eq!(book.head(), head);
}

fn serve_book(server: &serve::Server) {
    server.create("b");
    let lines: Vec<&str> = TERMS.lines().collect();
    server.append_lines("b", "", &lines).ok();
}

#[test]
fn the_embedding_routes_over_http_and_with_server() {
    let dir = tempfile::tempdir().unwrap();
    let token = "embed-test-token-0123456789";
    let party = "embed-party-token-0123456789";
    std::fs::write(dir.path().join("tokens"), format!("{token}\n{party} tool:pipeline\n")).unwrap();
    let books = dir.path().join("books");
    std::fs::create_dir(&books).unwrap();
    let tokens = dir.path().join("tokens");
    let mut server = serve::Server::start(
        &books,
        &["--token-file", tokens.to_str().unwrap(), "--embed-model", MODEL, "--embed-tokenizer", TOKENIZER],
    );
    server.token = Some(token.to_owned());
    serve_book(&server);
    assert_eq!(server.get("/v1/books/b/embedding").ok()["model"], Value::Null);
    let body = json!({ "name": "lorebank-tiny-char-mean-32", "output": "last_hidden_state", "actor": "human:editor" });
    let set = server.put("/v1/books/b/embedding", &body).ok();
    assert_eq!(set["model"]["dim"], 32, "{set}");
    assert_eq!(set["status"]["n_missing"], 4);
    let suggest = json!({ "chunk": "1", "text": CHUNK, "min_score": 560_000 });
    let stale = server.post("/v1/books/b/chapters/1/suggest", &suggest).problem(400, "invalid");
    assert!(stale["detail"].as_str().unwrap().contains("embed refresh"), "{stale}");
    let refreshed = server.post("/v1/books/b/embedding/refresh", &json!({})).ok();
    assert_eq!(refreshed["n_embedded"], 4, "{refreshed}");
    let suggested = server.post("/v1/books/b/chapters/1/suggest", &suggest).ok();
    assert_eq!(suggested["proposed"].as_array().unwrap().len(), 2, "{suggested}");
    assert_eq!(suggested["proposed"][0]["trust"], "low");
    let last = server.log("b").pop().unwrap();
    assert_eq!((last["actor"].as_str(), last["source"].as_str()), (Some("tool:embed"), Some("ch1/1")), "{last}");
    let deduped = server.post("/v1/books/b/dedupe", &json!({ "dry_run": true })).ok();
    assert_eq!(deduped["pairs"][0]["second"], "T-4", "{deduped}");
    server.post("/v1/books/b/chapters/0/suggest", &suggest).problem(400, "invalid");
    server.post("/v1/books/nobook/dedupe", &json!({})).problem(404, "not-found");
    // A party's token reads nothing of the tier.
    let as_party = |method: &str, path: &str| {
        let bearer = format!("Bearer {party}");
        serve::request(
            &server.addr,
            method,
            path,
            &[("Authorization", &bearer), ("Content-Type", "application/json")],
            b"{}",
        )
    };
    for (method, path) in [
        ("GET", "/v1/books/b/embedding"),
        ("PUT", "/v1/books/b/embedding"),
        ("POST", "/v1/books/b/embedding/refresh"),
        ("POST", "/v1/books/b/chapters/1/suggest"),
        ("POST", "/v1/books/b/dedupe"),
    ] {
        as_party(method, path).problem(403, "forbidden");
    }
    // The CLI with --server: the server's model files, the same JSON.
    let url = format!("http://{}", server.addr);
    let remote = |args: &[&str]| {
        let output = Command::new(serve::BIN)
            .args(["--server", &url, "--book", "b"])
            .args(args)
            .env("LOREBANK_TOKEN", token)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    assert_eq!(remote(&["embed", "status"])["n_fresh"], 4);
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, CHUNK).unwrap();
    let again = remote(&[
        "suggest",
        "--chapter",
        "1",
        "--text",
        chunk.to_str().unwrap(),
        "--chunk",
        "1",
        "--min-score",
        "0.56",
    ]);
    assert_eq!(again["proposed"], json!([]), "the same chunk again proposes nothing: {again}");
    // --phrases reaches the server (it was dropped on the way).
    let chunk = chunk.to_str().unwrap();
    let args = ["suggest", "--chapter", "1", "--text", chunk, "--min-score", "0.56", "--phrases", "--dry-run"];
    let phrases = remote(&args);
    assert!(phrases["n_phrases"].as_u64().unwrap() > 10, "{phrases}");
    assert_eq!(
        remote(&args[..args.len() - 2].iter().chain(&["--dry-run"]).copied().collect::<Vec<_>>())["n_phrases"],
        0
    );
    assert_eq!(remote(&["dedupe", "--dry-run"])["pairs"][0]["first"], "T-1");
    assert_eq!(remote(&["embed", "refresh"])["n_kept"], 4);
    assert_eq!(remote(&set_model())["written"], Value::Null, "the same model again writes nothing");
}

#[test]
fn without_a_model_or_the_runtime_library_the_routes_answer_503() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve::Server::start(dir.path(), &[]);
    serve_book(&server);
    let body = json!({ "name": "lorebank-tiny-char-mean-32", "output": "last_hidden_state" });
    let problem = server.put("/v1/books/b/embedding", &body).problem(503, "embedding-unavailable");
    assert!(problem["detail"].as_str().unwrap().contains("--embed-model"), "{problem}");
    assert_eq!(problem["exit_code"], 2);
    server.post("/v1/books/b/dedupe", &json!({})).problem(503, "embedding-unavailable");
    // The status needs no model.
    assert_eq!(server.get("/v1/books/b/embedding").ok()["n_terms"], 4);
    let nowhere = dir.path().join("nowhere/libonnxruntime.so.1.31.1");
    let other = tempfile::tempdir().unwrap();
    let without = serve::Server::start_with_env(
        other.path(),
        "127.0.0.1:0",
        &["--embed-model", MODEL, "--embed-tokenizer", TOKENIZER],
        &[("ORT_DYLIB_PATH", nowhere.to_str().unwrap())],
    );
    serve_book(&without);
    let problem = without.put("/v1/books/b/embedding", &body).problem(503, "embedding-unavailable");
    assert!(problem["detail"].as_str().unwrap().contains("./scripts/setup.sh"), "{problem}");
    assert_eq!(without.info("b")["head"], server.info("b")["head"], "nothing was written");
}
