//! The translation proxy end to end (docs/proxy.md): `lorebank serve --upstream`
//! against a deterministic stand-in model server (`tests/common/upstream.py`), with
//! the chunk named by the `Lorebank-Chapter` and `Lorebank-Chunk` headers or found in
//! the book's source text, on real text of 西游记 (`tests/data/corpora/xiyouji-head.txt`);
//! and the same stand-in served over TLS with a certificate of a CA made at test time
//! (the `openssl` command), trusted through `--upstream-ca` only.

#[path = "common/serve.rs"]
mod serve;
#[path = "common/upstream.rs"]
mod upstream;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve::{request, try_request, Server};
use upstream::{Upstream, TRANSLATION};

const KEY: &str = "sk-upstream-SECRET-7f3c9e1d";

/// Real lines of chapter 1 of 西游记 (the 美猴王 learning from 祖师), used as the
/// chunks of the proxied chapters.
fn chunk_text(n: usize) -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpora/xiyouji-head.txt")).unwrap();
    let line = text.lines().find(|line| line.contains("话表美猴王得了姓名")).unwrap().trim();
    let chars: Vec<char> = line.chars().collect();
    // Every chunk holds 美猴王, 悟空 and 祖师; later chunks are longer.
    chars[..60 + n.min(40)].iter().collect()
}

/// A library whose book `a` has 美猴王 and 悟空 for every chapter and 祖师 only from
/// chapter 4 on, served as a proxy of `upstream` with `extra` flags.
fn proxy(upstream: &Upstream, extra: &[&str]) -> (tempfile::TempDir, Server) {
    proxy_at(&upstream.url(), extra, &[])
}

/// [`proxy`] of the upstream at `url`, with `env` set for the server.
fn proxy_at(url: &str, extra: &[&str], env: &[(&str, &str)]) -> (tempfile::TempDir, Server) {
    let (root, books) = upstream::library_with_book_a();
    let mut flags = vec!["--upstream", url, "--upstream-key-env", "PROXY_TEST_KEY", "--upstream-timeout", "2"];
    flags.extend_from_slice(extra);
    let mut env = env.to_vec();
    env.push(("PROXY_TEST_KEY", KEY));
    let server = Server::start_with_env(&books, "127.0.0.1:0", &flags, &env);
    (root, server)
}

fn chat_body(model: &str, text: &str, stream: bool) -> Vec<u8> {
    json!({
        "model": model,
        "stream": stream,
        "messages": [
            { "role": "system", "content": "You translate Chinese novels into Russian." },
            { "role": "user", "content": format!("Translate into Russian:\n{text}") },
        ],
    })
    .to_string()
    .into_bytes()
}

fn chat(server: &Server, chapter: u32, chunk: &str, body: &[u8]) -> serve::Reply {
    let chapter = chapter.to_string();
    server.send(
        "POST",
        "/proxy/a/v1/chat/completions",
        &[("Content-Type", "application/json"), ("Lorebank-Chapter", &chapter), ("Lorebank-Chunk", chunk)],
        body,
    )
}

/// The chunks of `chapter` as the audit shows them.
fn audited(server: &Server, chapter: u32) -> Vec<Value> {
    server.get(&format!("/v1/books/a/audit?chapter={chapter}")).ok()["chunks"].as_array().unwrap().clone()
}

/// The text of every delta of a server-sent event stream.
fn streamed_text(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|event| event.pointer("/choices/0/delta/content").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn assert_no_key(what: &str, bytes: &[u8]) {
    assert!(!bytes.windows(KEY.len()).any(|window| window == KEY.as_bytes()), "the upstream key is in {what}");
}

#[test]
fn a_proxied_chunk_gets_its_context_and_records_receipt_translation_and_check_once() {
    let upstream = Upstream::start();
    let (_root, server) = proxy(&upstream, &[]);
    let text = chunk_text(0);

    // Chapter 3, non-streaming.
    let body = chat_body("ok", &text, false);
    let answer = chat(&server, 3, "0001", &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["choices"][0]["message"]["content"], TRANSLATION);
    assert_eq!(answer.header("lorebank-injected"), Some("context"));
    let receipt = answer.header("lorebank-receipt").unwrap().to_owned();
    let sent = upstream.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["path"], "/v1/chat/completions");
    assert_eq!(sent[0]["authorization"], format!("Bearer {KEY}"));
    let messages = sent[0]["body"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "the system message is extended, not doubled");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.starts_with("You translate Chinese novels into Russian.\n\n"), "{system}");
    assert!(system.contains("Царь обезьян") && system.contains("Укун"), "{system}");
    // The spoiler gate: 祖师 is released from chapter 4 only.
    assert!(!system.contains("Патриарх"), "{system}");
    assert_eq!(messages[1]["content"], format!("Translate into Russian:\n{text}"));

    // The receipt: chapter, chunk key, its context is the one injected, and it replays.
    let shown = server.get(&format!("/v1/books/a/receipts/{receipt}")).ok();
    assert_eq!(shown["chapter"], 3, "{shown}");
    assert_eq!(shown["chunk"], "0001", "{shown}");
    let replayed = server.send("POST", &format!("/v1/books/a/receipts/{receipt}/replay"), &[], b"").ok();
    assert_eq!(replayed["identical"], true, "{replayed}");
    assert!(system.ends_with(replayed["context"].as_str().unwrap()), "{system}\n---\n{replayed}");
    // The translation is checked and stored beside the receipt.
    let chunks = audited(&server, 3);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["receipt"], receipt);
    assert_eq!(chunks[0]["checks"].as_array().unwrap().len(), 1, "{}", chunks[0]);

    // A retry of the same body is answered again and records nothing twice.
    let again = chat(&server, 3, "0001", &body);
    assert_eq!(again.status, 200);
    assert_eq!(again.header("lorebank-receipt"), Some(receipt.as_str()));
    assert_eq!(upstream.requests().len(), 2);
    assert_eq!(audited(&server, 3)[0]["checks"].as_array().unwrap().len(), 1);

    // Chapter 4 gets 祖师.
    let answer = chat(&server, 4, "0001", &chat_body("ok", &text, false));
    assert_eq!(answer.status, 200);
    let system = upstream.requests()[2]["body"]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("Патриарх Бодхи"), "{system}");

    // Streaming: the next chunk of chapter 3, its prev the first one's receipt.
    let answer = chat(&server, 3, "0002", &chat_body("ok", &chunk_text(10), true));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert_eq!(streamed_text(&answer.body), TRANSLATION);
    assert!(answer.text().ends_with("data: [DONE]\n\n"));
    let second = answer.header("lorebank-receipt").unwrap().to_owned();
    let shown = server.get(&format!("/v1/books/a/receipts/{second}")).ok();
    assert_eq!(shown["prev"], receipt, "{shown}");
    let chunks = audited(&server, 3);
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[1]["checks"].as_array().unwrap().len(), 1, "{}", chunks[1]);

    // The models route is passed through.
    let models = server.get("/proxy/a/v1/models").ok();
    assert_eq!(models["data"][0]["id"], "stand-in");

    // The key is in no answer, log line or stored byte; the receipt replays with the
    // CLI once the server is stopped.
    for (what, bytes) in [("an answer", answer.body.clone()), ("a receipt", shown.to_string().into_bytes())] {
        assert_no_key(what, &bytes);
    }
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{stderr}");
    assert_no_key("the server's log", stderr.as_bytes());
    let book = _root.path().join("books/a.lorebank");
    assert_no_key("the book", &std::fs::read(&book).unwrap());
    let replay = Command::new(serve::BIN)
        .args(["--json", "--book"])
        .arg(&book)
        .args(["replay", &second])
        .env_remove("LOREBANK_BOOK")
        .output()
        .unwrap();
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    let replayed: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(replayed["identical"], true, "{replayed}");
}

#[test]
fn upstream_failures_reach_the_tool_as_sent_and_record_nothing() {
    let upstream = Upstream::start();
    let (_root, server) = proxy(&upstream, &[]);
    let text = chunk_text(0);

    let failed = chat(&server, 5, "0001", &chat_body("fail", &text, false));
    assert_eq!(failed.status, 500);
    assert_eq!(failed.json()["error"]["message"], "the stand-in failed");
    let failed = chat(&server, 5, "0002", &chat_body("fail", &text, true));
    assert_eq!(failed.status, 500);

    // A stream cut mid-chunk reaches the tool cut.
    let chapter = "5".to_string();
    let cut = try_request(
        &server.addr,
        "POST",
        "/proxy/a/v1/chat/completions",
        &[("Content-Type", "application/json"), ("Lorebank-Chapter", &chapter), ("Lorebank-Chunk", "0003")],
        &chat_body("cut", &text, true),
    );
    assert!(cut.is_err(), "a cut stream answered whole: {:?}", cut.map(|reply| reply.text()));

    // A hanging upstream is cut off by --upstream-timeout (2 s).
    let started = Instant::now();
    let hung = chat(&server, 5, "0004", &chat_body("hang", &text, false));
    assert_eq!(hung.status, 504, "{}", hung.text());
    assert_eq!(hung.json()["type"], "urn:lorebank:problem:upstream-timeout");
    assert!(started.elapsed() < Duration::from_secs(20));

    assert!(audited(&server, 5).is_empty(), "{:?}", audited(&server, 5));

    // Without the headers and without source text, the request is refused by default.
    let unplaced = server.send(
        "POST",
        "/proxy/a/v1/chat/completions",
        &[("Content-Type", "application/json")],
        &chat_body("ok", &text, false),
    );
    assert_eq!(unplaced.status, 422, "{}", unplaced.text());
    assert_eq!(unplaced.json()["type"], "urn:lorebank:problem:chunk-not-found");
    // A chunk without its chapter, and a body that is no chat, are refused.
    let lonely = server.send(
        "POST",
        "/proxy/a/v1/chat/completions",
        &[("Content-Type", "application/json"), ("Lorebank-Chunk", "0001")],
        &chat_body("ok", &text, false),
    );
    assert_eq!(lonely.status, 400, "{}", lonely.text());
    let nochat = chat(&server, 5, "0009", b"{\"model\":\"ok\"}");
    assert_eq!(nochat.status, 400, "{}", nochat.text());
    assert_eq!(upstream.requests().iter().filter(|request| request["body"]["model"] == "ok").count(), 0);
    for (_, bytes) in [("", failed.body), ("", hung.body), ("", unplaced.body)] {
        assert_no_key("an answer", &bytes);
    }
    assert_no_key("the server's log", server.stderr().as_bytes());
}

#[test]
fn an_unplaced_request_can_be_forwarded_without_context() {
    let upstream = Upstream::start();
    let (_root, server) = proxy(&upstream, &["--proxy-forward-unplaced"]);
    let body = chat_body("ok", &chunk_text(0), false);
    let answer = server.send("POST", "/proxy/a/v1/chat/completions", &[("Content-Type", "application/json")], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("lorebank-injected"), Some("none"));
    assert!(answer.header("lorebank-unplaced").is_some());
    let sent = upstream.requests();
    assert_eq!(sent[0]["body"], serde_json::from_slice::<Value>(&body).unwrap(), "forwarded as sent");
}

#[test]
fn thirty_two_concurrent_streams_are_answered_as_the_upstream_streams_and_each_recorded_once() {
    let upstream = Upstream::start();
    let (_root, server) = proxy(&upstream, &[]);
    // What the upstream streams, asked directly.
    let direct = request(
        &format!("127.0.0.1:{}", upstream.port),
        "POST",
        "/v1/chat/completions",
        &[("Content-Type", "application/json")],
        &chat_body("ok", "直接", true),
    );
    assert_eq!(direct.status, 200);
    let answers: Vec<(String, serve::Reply)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32)
            .map(|n| {
                let server = &server;
                scope.spawn(move || {
                    let key = format!("{n:04}");
                    let reply = chat(server, 2, &key, &chat_body("ok", &chunk_text(n), true));
                    (key, reply)
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().unwrap()).collect()
    });
    for (key, reply) in &answers {
        assert_eq!(reply.status, 200, "{key}: {}", reply.text());
        assert!(reply.body == direct.body, "{key}: {}", reply.text());
    }
    let chunks = audited(&server, 2);
    assert_eq!(chunks.len(), 32);
    for chunk in &chunks {
        assert_eq!(chunk["checks"].as_array().unwrap().len(), 1, "{chunk}");
    }
    server.verified("a");
}

/// A chapter of source text from 西游记's slice: the paragraph of 美猴王 learning
/// from 祖师 and the two paragraphs on either side of it.
fn source_chapter() -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpora/xiyouji-head.txt")).unwrap();
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let at = lines.iter().position(|line| line.contains("话表美猴王得了姓名")).unwrap();
    lines[at.saturating_sub(2)..(at + 3).min(lines.len())].join("\n")
}

#[test]
fn a_chunk_found_in_the_source_text_through_a_galtransl_prompt_gets_the_context_of_its_span() {
    let upstream = Upstream::start();
    let (_root, server) = proxy(&upstream, &[]);
    let chapter = source_chapter();
    let put = server.send("PUT", "/v1/books/a/source/2", &[("Content-Type", "text/plain")], chapter.as_bytes());
    assert_eq!(put.status, 200, "{}", put.text());

    // GalTransl's prompt: its own glossary (祖师 among its names, which chapter 2 must
    // not get), then the first 80 chars of the paragraph.
    let line = chapter.lines().find(|line| line.contains("话表美猴王得了姓名")).unwrap();
    let chunk: String = line.chars().take(80).collect();
    let prompt = format!(
        "参考以下术语表（可为空，格式为src->dst #备注）：\n祖师->Патриарх\n美猴王->Царь обезьян\n\
         将下面的文本从中文翻译成俄文：\n{chunk}"
    );
    let body = json!({ "model": "ok", "messages": [{ "role": "user", "content": prompt }] }).to_string();
    let answer =
        server.send("POST", "/proxy/a/v1/chat/completions", &[("Content-Type", "application/json")], body.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("lorebank-chapter"), Some("2"));
    let key = answer.header("lorebank-chunk").unwrap().to_owned();
    assert!(key.starts_with("src-"), "{key}");
    let system = upstream.requests()[0]["body"]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("Царь обезьян") && system.contains("Укун"), "{system}");
    assert!(!system.contains("Патриарх"), "the tool's glossary or a later window reached chapter 2: {system}");
    let receipt = answer.header("lorebank-receipt").unwrap();
    let shown = server.get(&format!("/v1/books/a/receipts/{receipt}")).ok();
    assert_eq!((shown["chapter"].clone(), shown["chunk"].as_str()), (json!(2), Some(key.as_str())), "{shown}");

    // Without source text in the chapter named, nothing is found: 422, nothing sent.
    let elsewhere = server.send(
        "POST",
        "/proxy/a/chapters/5/v1/chat/completions",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    assert_eq!(elsewhere.status, 422, "{}", elsewhere.text());
    assert_eq!(upstream.requests().len(), 1);
}

#[test]
fn hostile_requests_are_refused_before_anything_is_sent_upstream() {
    let upstream = Upstream::start();
    let (_root, server) = proxy(&upstream, &["--body-limit", "65536"]);
    let chapter = source_chapter();
    let put = |book: &str, text: &str| {
        let reply = server.send(
            "PUT",
            &format!("/v1/books/{book}/source/2"),
            &[("Content-Type", "text/plain")],
            text.as_bytes(),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    };
    put("a", &chapter);
    // Book b holds other text: the slice's last long paragraph.
    server.create("b");
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpora/xiyouji-head.txt")).unwrap();
    let other: String = text.lines().map(str::trim).rfind(|line| line.chars().count() > 60).unwrap().to_owned();
    assert!(!chapter.contains(&other));
    put("b", &other);
    let json = [("Content-Type", "application/json")];
    let ask = |path: &str, text: &str| {
        let body = json!({ "model": "ok", "messages": [{ "role": "user", "content": format!("翻译：\n{text}") }] });
        server.send("POST", path, &json, body.to_string().as_bytes())
    };

    // Book b's text sent to book a is found in neither a's chapter nor anywhere of a.
    let crossed = ask("/proxy/a/v1/chat/completions", &other);
    assert_eq!(crossed.status, 422, "{}", crossed.text());
    assert_eq!(crossed.json()["type"], "urn:lorebank:problem:chunk-not-found");
    // ... and it is book b's own: found there.
    assert_eq!(ask("/proxy/b/v1/chat/completions", &other).status, 200);
    // A book that is not there.
    let missing = ask("/proxy/nobook/v1/chat/completions", &other);
    assert_eq!(missing.status, 404, "{}", missing.text());
    // A body over --body-limit, and a huge one.
    let big = ask("/proxy/a/v1/chat/completions", &"沈".repeat(30_000));
    assert_eq!(big.status, 413, "{}", big.text());
    // Bad chapter and chunk headers and path segments.
    let body = json!({ "model": "ok", "messages": [{ "role": "user", "content": "沈照" }] }).to_string();
    for (path, headers) in [
        ("/proxy/a/v1/chat/completions", vec![("Lorebank-Chapter", "0")]),
        ("/proxy/a/v1/chat/completions", vec![("Lorebank-Chapter", "x1")]),
        ("/proxy/a/chapters/2/v1/chat/completions", vec![("Lorebank-Chapter", "3")]),
        ("/proxy/a/chapters/0/v1/chat/completions", vec![]),
    ] {
        let mut headers = headers;
        headers.push(("Content-Type", "application/json"));
        let refused = server.send("POST", path, &headers, body.as_bytes());
        assert_eq!(refused.status / 100, 4, "{path} {headers:?}: {}", refused.text());
    }
    // Not JSON, JSON of another shape, a user message without text.
    for body in [&b"\xff\xfe not json"[..], b"[1,2]", br#"{"model":"ok","messages":[{"role":"user","content":[]}]}"#] {
        let refused = server.send("POST", "/proxy/a/chapters/2/chunks/1/v1/chat/completions", &json, body);
        assert_eq!(refused.status, 400, "{}", refused.text());
    }
    // Only book b's one answered request reached the upstream, and only b recorded.
    assert_eq!(upstream.requests().len(), 1);
    assert!(audited(&server, 2).is_empty());
}

/// The certificates of a TLS test, made with the `openssl` command: a CA, a server
/// certificate it signed for `localhost` only (not for `127.0.0.1`), its key, and an
/// unrelated CA that stands in for the system's roots (`SSL_CERT_FILE`), so that the
/// test CA is trusted through `--upstream-ca` or not at all, whatever the machine trusts.
struct Pki {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    system: PathBuf,
    _dir: tempfile::TempDir,
}

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command makes the TLS test's certificates");
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    for (name, subject) in [("ca", "/CN=lorebank test CA"), ("system", "/CN=lorebank test system root")] {
        let (key, pem) = (format!("{name}.key"), format!("{name}.pem"));
        let mut args = vec!["req", "-x509", "-new", "-days", "2", "-subj", subject, "-keyout", &key, "-out", &pem];
        args.extend_from_slice(&ec);
        args.extend_from_slice(&["-addext", "basicConstraints=critical,CA:TRUE"]);
        args.extend_from_slice(&["-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
        openssl(path, &args);
    }
    let mut args = vec!["req", "-new", "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr"];
    args.extend_from_slice(&ec);
    openssl(path, &args);
    std::fs::write(
        path.join("server.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n\
         extendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        path,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            "2",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    );
    Pki {
        ca: path.join("ca.pem"),
        cert: path.join("server.pem"),
        key: path.join("server.key"),
        system: path.join("system.pem"),
        _dir: dir,
    }
}

#[test]
fn an_https_upstream_is_answered_through_upstream_ca_and_refused_without_it() {
    let pki = pki();
    let upstream = Upstream::start_tls(&pki.cert, &pki.key);
    let url = upstream.url();
    let system = pki.system.to_str().unwrap();
    let env = [("SSL_CERT_FILE", system)];
    let (_root, server) = proxy_at(&url, &["--upstream-ca", pki.ca.to_str().unwrap()], &env);
    let text = chunk_text(0);

    // Trusted through --upstream-ca: a whole answer and a stream, each recorded.
    let answer = chat(&server, 3, "0001", &chat_body("ok", &text, false));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["choices"][0]["message"]["content"], TRANSLATION);
    assert_eq!(answer.header("lorebank-injected"), Some("context"));
    let answer = chat(&server, 3, "0002", &chat_body("ok", &chunk_text(10), true));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert_eq!(streamed_text(&answer.body), TRANSLATION);
    assert!(answer.text().ends_with("data: [DONE]\n\n"));
    let models = server.get("/proxy/a/v1/models").ok();
    assert_eq!(models["data"][0]["id"], "stand-in");
    let sent = upstream.requests();
    assert_eq!(sent.len(), 3);
    for request in &sent {
        // HTTP/1.1 agreed by ALPN, the URL's host as the server name, the key sent.
        assert_eq!((request["sni"].as_str(), request["alpn"].as_str()), (Some("localhost"), Some("http/1.1")));
        assert_eq!(request["authorization"], format!("Bearer {KEY}"));
    }
    assert_eq!(sent[0]["path"], "/v1/chat/completions");
    let chunks = audited(&server, 3);
    assert_eq!(chunks.len(), 2);
    for chunk in &chunks {
        assert_eq!(chunk["checks"].as_array().unwrap().len(), 1, "{chunk}");
    }

    // Without --upstream-ca the certificate is refused: 502 saying why, nothing
    // reaches the upstream's handler, nothing is recorded.
    let (_bare_root, bare) = proxy_at(&url, &[], &env);
    for (chunk, stream) in [("0001", false), ("0002", true)] {
        let refused = chat(&bare, 3, chunk, &chat_body("ok", &text, stream));
        let detail = refused.problem(502, "upstream-unavailable")["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains("certificate was refused") && detail.contains("UnknownIssuer"), "{detail}");
        assert!(detail.contains("--upstream-ca"), "{detail}");
        assert_no_key("a refusal", &refused.body);
    }
    bare.get("/proxy/a/v1/models").problem(502, "upstream-unavailable");
    assert!(audited(&bare, 3).is_empty());
    // The certificate's name is checked too: it is not valid for 127.0.0.1.
    let by_address = format!("https://127.0.0.1:{}/v1", upstream.port);
    let (_address_root, by_address) = proxy_at(&by_address, &["--upstream-ca", pki.ca.to_str().unwrap()], &env);
    let refused = chat(&by_address, 3, "0001", &chat_body("ok", &text, false));
    let detail = refused.problem(502, "upstream-unavailable")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("not valid for name \"127.0.0.1\""), "{detail}");
    assert!(audited(&by_address, 3).is_empty());
    assert_eq!(upstream.requests().len(), 3);
    for server in [&bare, &by_address] {
        assert_no_key("the server's log", server.stderr().as_bytes());
    }

    // A --upstream-ca that holds no certificate (here: the server's key) stops the
    // start-up, naming the file and not echoing it.
    let books = tempfile::tempdir().unwrap();
    let key = pki.key.to_str().unwrap();
    let output = Command::new(serve::BIN)
        .args(["serve", "--dir"])
        .arg(books.path())
        .args(["--listen", "127.0.0.1:0", "--upstream", &url, "--upstream-ca", key])
        .env_remove("LOREBANK_BOOK")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("--upstream-ca {key}: no certificate in it")), "{stderr}");
    assert!(!stderr.contains("PRIVATE KEY"), "{stderr}");
}
