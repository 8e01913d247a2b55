//! The proxy (docs/proxy.md) as a tool meets it: the official `openai` Python client
//! (`tests/common/openai_client.py`, the package pinned in scripts/setup.sh) pointed
//! at `lorebank serve --upstream … --token-file …` with lorebank's token as its API
//! key, against the deterministic stand-in upstream (`tests/common/upstream.py`). A
//! whole and two streamed chat completions (the chunk named by the client's
//! `extra_headers` and by the base URL's path) are parsed by the client into the
//! stand-in's text, reach the stand-in with the book's context, and leave receipts
//! that replay identical and checks in the audit; the model list passes through.
//!
//! Fails (never skips) when python3 or the openai package is missing: CI installs
//! them with scripts/setup.sh.

#[path = "common/serve.rs"]
mod serve;
#[path = "common/upstream.rs"]
mod upstream;

use std::process::{Command, Stdio};

use serde_json::{json, Value};
use serve::Server;
use upstream::{Upstream, TRANSLATION};

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/openai_client.py");
const KEY: &str = "sk-upstream-SECRET-openai-5b1d";
const TOKEN: &str = "proxy-token-openai-0123456789";
/// A token bound to the party `human:reader`.
const PARTY_TOKEN: &str = "proxy-token-party-9876543210";

/// Real text of 西游记's chapter 1 holding 美猴王 and 悟空: the `n`th chunk.
fn chunk_text(n: usize) -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpora/xiyouji-head.txt")).unwrap();
    let line = text.lines().find(|line| line.contains("话表美猴王得了姓名")).unwrap().trim();
    let chars: Vec<char> = line.chars().collect();
    chars[..60 + 10 * n].iter().collect()
}

/// Runs the client script; fails when python3 or openai is missing.
fn run_client(server: &Server, chunks: &[String]) -> Value {
    let probe = Command::new("python3").args(["-c", "import openai"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "this test needs the Python package openai (pinned in scripts/setup.sh): run scripts/setup.sh ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => panic!("python3 is needed to run the openai client ({error}): run scripts/setup.sh"),
    }
    let args = json!({ "server": format!("http://{}", server.addr), "book": "a", "token": TOKEN, "chunks": chunks });
    let mut command = Command::new("python3");
    command.arg(CLIENT).arg(args.to_string());
    // The client reads these; none may point it elsewhere or replace its key.
    for name in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_LOG"] {
        command.env_remove(name);
    }
    // The server is on loopback; no proxy stands between.
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
        command.env_remove(name);
    }
    let output = command.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "openai_client.py exited with {}:\n{stdout}\n{stderr}", output.status);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|error| panic!("{error}: {stdout}\n{stderr}"))
}

#[test]
fn the_openai_python_client_gets_context_injected_and_leaves_receipts_that_replay() {
    let upstream = Upstream::start();
    // The book: 美猴王 and 悟空 for every chapter, 祖师 from chapter 4 on.
    let (root, books) = upstream::library_with_book_a();
    let tokens = root.path().join("tokens.txt");
    std::fs::write(&tokens, format!("# the tool's key\n{TOKEN}\n{PARTY_TOKEN} human:reader\n")).unwrap();
    let url = upstream.url();
    let flags = [
        "--token-file",
        tokens.to_str().unwrap(),
        "--upstream",
        url.as_str(),
        "--upstream-key-env",
        "PROXY_TEST_KEY",
        "--upstream-timeout",
        "10",
    ];
    let mut server = Server::start_with_env(&books, "127.0.0.1:0", &flags, &[("PROXY_TEST_KEY", KEY)]);
    // Without the token, the proxy refuses: the client's API key is what lets it in.
    let refused = server.send("GET", "/proxy/a/v1/models", &[], b"");
    assert_eq!(refused.status, 401, "{}", refused.text());
    // A token bound to a party is refused too: the proxy records the book's full view.
    server.token = Some(PARTY_TOKEN.to_owned());
    let body = json!({ "model": "ok", "messages": [{ "role": "user", "content": chunk_text(0) }] }).to_string();
    let headers = [("Content-Type", "application/json"), ("Lorebank-Chapter", "3"), ("Lorebank-Chunk", "0001")];
    let party = server.send("POST", "/proxy/a/v1/chat/completions", &headers, body.as_bytes());
    assert_eq!(party.status, 403, "{}", party.text());
    assert!(upstream.requests().is_empty(), "a refused request reached the upstream");
    server.token = Some(TOKEN.to_owned());

    let chunks: Vec<String> = (0..3).map(chunk_text).collect();
    let report = run_client(&server, &chunks);

    // The client parsed each answer into the stand-in's text.
    assert_eq!(report["whole"]["text"], TRANSLATION, "{report}");
    assert_eq!(report["whole"]["model"], "stand-in-1", "{report}");
    assert_eq!(report["whole"]["total_tokens"], 120, "{report}");
    for streamed in ["path", "streamed"] {
        assert_eq!(report[streamed]["text"], TRANSLATION, "{streamed}: {report}");
        assert!(report[streamed]["events"].as_u64().unwrap() > 1, "{streamed}: {report}");
    }
    assert_eq!(report["models"], json!(["stand-in"]), "{report}");

    // Each chunk is the one named, with context injected.
    let mut receipts = Vec::new();
    for (what, chunk) in [("whole", "0001"), ("path", "0002"), ("streamed", "0003")] {
        let headers = &report[what]["headers"];
        assert_eq!(headers["lorebank-chapter"], "3", "{what}: {report}");
        assert_eq!(headers["lorebank-chunk"], chunk, "{what}: {report}");
        assert_eq!(headers["lorebank-injected"], "context", "{what}: {report}");
        receipts.push(headers["lorebank-receipt"].as_str().unwrap_or_else(|| panic!("{what}: {report}")).to_owned());
    }

    // The stand-in received each request with the book's context in the request's own
    // system message (祖师 not yet: chapter 3), the user message as the client sent
    // it, and the server's key, not the client's.
    let sent: Vec<Value> =
        upstream.requests().into_iter().filter(|request| request["path"] == "/v1/chat/completions").collect();
    assert_eq!(sent.len(), 3, "{sent:?}");
    for (request, chunk) in sent.iter().zip(&chunks) {
        assert_eq!(request["authorization"], format!("Bearer {KEY}"));
        let messages = request["body"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "the system message is extended, not doubled: {request}");
        let system = messages[0]["content"].as_str().unwrap();
        assert!(system.starts_with("You translate Chinese novels into Russian.\n\n"), "{system}");
        assert!(system.contains("Царь обезьян") && system.contains("Укун"), "{system}");
        assert!(!system.contains("Патриарх"), "{system}");
        assert_eq!(messages[1]["content"], format!("Translate into Russian:\n{chunk}"));
    }
    assert!(!sent[0]["body"].get("stream").and_then(Value::as_bool).unwrap_or(false), "{}", sent[0]);
    assert_eq!(sent[1]["body"]["stream"], true);
    assert_eq!(sent[2]["body"]["stream"], true);
    assert_eq!(upstream.requests().iter().filter(|request| request["path"] == "/v1/models").count(), 1);

    // Every receipt replays identical, and its context is the one the stand-in got.
    for (receipt, request) in receipts.iter().zip(&sent) {
        let replayed = server.send("POST", &format!("/v1/books/a/receipts/{receipt}/replay"), &[], b"").ok();
        assert_eq!(replayed["identical"], true, "{replayed}");
        let system = request["body"]["messages"][0]["content"].as_str().unwrap();
        assert!(system.ends_with(replayed["context"].as_str().unwrap()), "{system}\n---\n{replayed}");
    }
    // Chunk 0002's scene inertia is chunk 0001's receipt.
    let shown = server.get(&format!("/v1/books/a/receipts/{}", receipts[1])).ok();
    assert_eq!(shown["prev"], receipts[0], "{shown}");

    // Each translation's check is stored beside its receipt.
    let audit = server.get("/v1/books/a/audit?chapter=3").ok();
    let audited = audit["chunks"].as_array().unwrap();
    assert_eq!(audited.len(), 3, "{audit}");
    for (chunk, receipt) in audited.iter().zip(&receipts) {
        assert_eq!(chunk["receipt"], *receipt, "{chunk}");
        assert_eq!(chunk["checks"].as_array().unwrap().len(), 1, "{chunk}");
    }
    server.verified("a");
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains(KEY) && !stderr.contains(TOKEN), "a key is in the server's log: {stderr}");
}
