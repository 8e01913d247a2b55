//! The pipeline example (`examples/pipeline/pipeline.py`) run against a live
//! `lorebank serve`: every chunk of the example book assembled, translated (offline
//! and through an OpenAI-compatible endpoint) and written out, every receipt replayed
//! byte-identically, the import idempotent across runs and server restarts, and the
//! server stopped by SIGTERM with exit 0.

use std::io::{BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

#[path = "common/http_server.rs"]
mod serve;
use serve::Server;

const PIPELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/pipeline/pipeline.py");

/// Runs the pipeline; fails (never skips) when httpx is missing.
fn pipeline(server: &str, args: &[&str]) -> Output {
    let probe = Command::new("python3").args(["-c", "import httpx"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "the pipeline example needs the Python package httpx: run scripts/setup.sh ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => panic!("python3 is needed to run the pipeline example ({error}): run scripts/setup.sh"),
    }
    let mut command = Command::new("python3");
    command.arg(PIPELINE).args(["--server", server]).args(args);
    for name in ["LOREBANK_SERVER", "LOREBANK_TOKEN", "LOREBANK_TRANSLATOR_MODEL", "OPENAI_API_KEY"] {
        command.env_remove(name);
    }
    // The server and the fake endpoint are on loopback; no proxy stands between.
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
        command.env_remove(name);
    }
    command.stdin(Stdio::null()).output().unwrap()
}

fn succeeds(output: Output) -> String {
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "pipeline exited with {}:\n{stdout}\n{stderr}", output.status);
    stdout
}

fn receipts(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("receipts.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap().as_array().unwrap().clone()
}

/// The translation of chapter `chapter`, chunk `chunk` as listed in receipts.json.
fn translation(out: &Path, entries: &[Value], chapter: u64, chunk: &str) -> String {
    let entry = entries.iter().find(|entry| entry["chapter"] == chapter && entry["chunk"] == chunk).unwrap();
    let file = out.join(entry["translation"].as_str().unwrap());
    let receipt = entry["receipt"].as_str().unwrap();
    assert!(file.to_str().unwrap().contains(&receipt[..12]), "{file:?} is not named by its receipt");
    std::fs::read_to_string(file).unwrap()
}

fn events_in(book: &Path) -> usize {
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(book)
        .args(["--json", "log"])
        .env_remove("LOREBANK_BOOK")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().count()
}

#[test]
fn offline_pipeline_translates_every_chunk_and_replays_every_receipt() {
    let books = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    let server = Server::start(books.path());

    let stdout = succeeds(pipeline(&server.url, &["--out", out.to_str().unwrap()]));
    assert!(stdout.contains("book wuchuan: created; glossary glossary.jsonl imported, head 15"), "{stdout}");
    assert!(stdout.contains("10 of 10 receipts replayed byte-identically"), "{stdout}");
    let first = receipts(out);
    assert_eq!(first.len(), 10, "five chapters of two chunks each");
    assert!(first.iter().all(|entry| entry["identical"] == true), "{first:?}");
    // Every translation was post-checked and the check stored in the book.
    assert!(first.iter().all(|entry| entry["check"].as_str().is_some_and(|id| id.len() == 64)), "{first:?}");
    assert_eq!(first[0]["check_failed"], false, "the offline translator renders every term it is given: {first:?}");
    // The OpenAPI document's example receipt is this book's chapter 1, chunk 1.
    let openapi = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json")).unwrap();
    assert!(openapi.contains(&format!("\"example\": \"{}\"", first[0]["receipt"].as_str().unwrap())));

    // The offline translator replaces what the glossary block names and marks the rest.
    let chunk = translation(out, &first, 1, "1");
    assert!(chunk.starts_with("⟦第一章 ⟧Секта Фонаря"), "{chunk}");
    for dst in ["Мглистая река", "негасимая лампада", "Шэнь Чжао"] {
        assert!(chunk.contains(dst), "chapter 1 chunk 1 lacks {dst}: {chunk}");
    }
    // The letter in traditional characters: its surfaces get lines of their own.
    let letter = translation(out, &first, 3, "2");
    assert!(letter.contains("Гу Ханьчуань") && !letter.contains("顧寒川"), "{letter}");
    let entry = first.iter().find(|entry| entry["chapter"] == 3 && entry["chunk"] == "2").unwrap();
    let block: Vec<&str> = entry["glossary"].as_array().unwrap().iter().map(|line| line.as_str().unwrap()).collect();
    assert!(block.contains(&"顾寒川->Гу Ханьчуань #character, m; добрый наставник Шэнь Чжао"), "{block:?}");
    assert!(block.contains(&"顧寒川->Гу Ханьчуань #character, m; добрый наставник Шэнь Чжао"), "{block:?}");
    let prompt =
        std::fs::read_to_string(out.join(entry["translation"].as_str().unwrap().replace(".ru.txt", ".prompt.json")))
            .unwrap();
    assert!(prompt.contains("根据以下术语表（可以为空）：\\n雾川->Мглистая река #place, f;"), "{prompt}");
    // Chapter 4 after the reveal: the sect master, a spoiler until then, is named.
    assert!(translation(out, &first, 4, "2").contains("Глава Ночной секты"));

    // A second run, chunk by chunk with `prev`: the import appends nothing, and the
    // receipts are those of the first run.
    let again = tempfile::tempdir().unwrap();
    let stdout =
        succeeds(pipeline(&server.url, &["--out", again.path().to_str().unwrap(), "--chapter", "2", "--per-chunk"]));
    assert!(stdout.contains("book wuchuan: exists; glossary glossary.jsonl was already imported"), "{stdout}");
    assert!(stdout.contains("2 of 2 receipts replayed byte-identically"), "{stdout}");
    let second = receipts(again.path());
    let chapter_2: Vec<&Value> = first.iter().filter(|entry| entry["chapter"] == 2).collect();
    assert_eq!(
        second.iter().map(|entry| &entry["receipt"]).collect::<Vec<_>>(),
        chapter_2.iter().map(|entry| &entry["receipt"]).collect::<Vec<_>>()
    );
    server.stop();

    // After a restart the answer cache is gone; the marker in the book still holds.
    let server = Server::start(books.path());
    let stdout = succeeds(pipeline(&server.url, &["--out", out.to_str().unwrap(), "--chapter", "1"]));
    assert!(stdout.contains("glossary glossary.jsonl was already imported"), "{stdout}");
    server.stop();
    assert_eq!(events_in(&books.path().join("wuchuan.lorebank")), 15, "the config and the 14 glossary events");
}

#[test]
fn pipeline_prints_the_problem_detail_of_a_refused_request() {
    let books = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let server = Server::start(books.path());
    let output = pipeline(&server.url, &["--book", "Wuchuan", "--out", out.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("pipeline: GET /v1/books/Wuchuan: HTTP 400 "), "{stderr}");
    assert!(stderr.contains("Wuchuan"), "the detail names the book: {stderr}");
    assert!(!stderr.contains("Traceback"), "{stderr}");
    server.stop();
}

/// One request the fake endpoint got: its path, Authorization header and JSON body.
type Seen = Arc<Mutex<Vec<(String, String, Value)>>>;

/// An OpenAI-compatible endpoint that answers every chat completion with
/// `перевод N` and keeps what it was sent.
fn fake_endpoint() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let requests = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let (request_line, headers) = serve::read_head(&mut reader);
            let header = |name: &str| headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
            let length = header("content-length").map_or(0, |length| length.parse().unwrap());
            let authorization = header("authorization").unwrap_or_default();
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let path = request_line.split_whitespace().nth(1).unwrap_or("").to_owned();
            let n = {
                let mut requests = requests.lock().unwrap();
                requests.push((path, authorization, serde_json::from_slice(&body).unwrap()));
                requests.len()
            };
            let answer = serde_json::json!({
                "id": format!("chatcmpl-{n}"),
                "object": "chat.completion",
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": format!("перевод {n}") }, "finish_reason": "stop" }],
            })
            .to_string();
            let mut stream = reader.into_inner();
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            )
            .unwrap();
        }
    });
    (url, seen)
}

#[test]
fn pipeline_sends_the_sakura_prompt_to_an_openai_compatible_endpoint() {
    let books = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let out: PathBuf = out.path().to_owned();
    let server = Server::start(books.path());
    let (endpoint, seen) = fake_endpoint();
    let args = ["--out", out.to_str().unwrap(), "--chapter", "2", "--translator", &endpoint];
    let mut command_args = args.to_vec();
    command_args.extend(["--model", "sakura-test", "--api-key", "test-key"]);
    let stdout = succeeds(pipeline(&server.url, &command_args));
    assert!(stdout.contains("2 of 2 receipts replayed byte-identically"), "{stdout}");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "one completion per chunk");
    for (path, authorization, body) in seen.iter() {
        assert_eq!(path, "/v1/chat/completions");
        assert_eq!(authorization, "Bearer test-key");
        assert_eq!(body["model"], "sakura-test");
        assert_eq!(body["messages"][0]["role"], "system");
    }
    // Chapter 2, chunk 1 writes 沈照 only as its nickname 阿照: both get a line.
    let user = seen[0].2["messages"][1]["content"].as_str().unwrap();
    assert!(user.starts_with("根据以下术语表（可以为空）：\n"), "{user}");
    assert!(user.contains("\n沈照->Шэнь Чжао #character, m; Шэнь Чжао; главный герой, ученик с фонарём\n"), "{user}");
    assert!(user.contains("\n阿照->Шэнь Чжао #"), "{user}");
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/chapters/02.txt")).unwrap();
    let first_chunk = text.split("\n---\n").next().unwrap().trim_matches('\n');
    assert!(user.ends_with(&format!("翻译成俄文：{first_chunk}\n")), "{user}");

    let entries = receipts(&out);
    assert_eq!(translation(&out, &entries, 2, "1"), "перевод 1\n");
    assert_eq!(translation(&out, &entries, 2, "2"), "перевод 2\n");
    server.stop();
}
