//! End-to-end tests of `lorebank serve`'s contract: the committed OpenAPI document is
//! the generated and the served one and every operation in it is routed; bearer
//! auth and the loopback default; problem answers for unknown routes and methods;
//! log paging; idempotent and conditional appends.

#[path = "common/serve.rs"]
mod serve;

use serde_json::{json, Value};
use serve::{term_line, Server};

fn library() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn the_committed_openapi_document_is_the_generated_and_the_served_one() {
    let committed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json")).unwrap();
    let printed = std::process::Command::new(serve::BIN).arg("openapi").output().unwrap();
    assert!(printed.status.success(), "{}", String::from_utf8_lossy(&printed.stderr));
    assert!(
        printed.stdout == committed,
        "docs/openapi.json differs from `lorebank openapi`: regenerate it with `cargo run -- openapi > docs/openapi.json`"
    );
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    let served = server.get("/openapi.json");
    assert_eq!(served.status, 200);
    assert_eq!(served.header("content-type"), Some("application/json"));
    assert!(served.body == committed, "GET /openapi.json differs from docs/openapi.json");
    let document: Value = serde_json::from_slice(&committed).unwrap();
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1."), "{}", document["openapi"]);
}

/// A request that reaches the handler of each documented operation on a book that
/// does not exist (or, for the server's own routes, succeeds).
fn probe(method: &str, path: &str) -> (String, Value) {
    let concrete =
        path.replace("{book}", "nobook").replace("{id}", "T-1").replace("{chapter}", "1").replace("{seq}", "1");
    let (query, body) = match (method, path) {
        ("get", "/v1/books/{book}/diff") => ("?from=1", Value::Null),
        ("get", "/v1/books/{book}/audit") => ("?chapter=1", Value::Null),
        ("get", "/v1/books/{book}/rollback/preview") => ("?to=1", Value::Null),
        ("get", "/v1/books/{book}/export") => ("?format=galtransl", Value::Null),
        ("get", "/v1/books/{book}/receipts/{id}") | ("post", "/v1/books/{book}/receipts/{id}/replay") => {
            return (concrete.replace("T-1", &"0".repeat(64)), Value::Null)
        }
        ("post", "/v1/books/{book}/receipts/{id}/check") => {
            return (concrete.replace("T-1", &"0".repeat(64)), json!({ "translation": "Шэнь Чжао" }))
        }
        ("post", path) if path.starts_with("/v1/books/{book}/review/") => ("", json!({})),
        ("post", "/v1/books/{book}/chapters/{chapter}/scan") => ("", json!({ "chunk": "1", "text": "空空道人" })),
        ("post", "/v1/books/{book}/chapters/{chapter}/suggest") => ("", json!({ "chunk": "1", "text": "空空道人" })),
        ("post", "/v1/books/{book}/embedding/refresh" | "/v1/books/{book}/dedupe") => ("", json!({})),
        ("put", "/v1/books/{book}/embedding") => ("", json!({ "name": "lorebank-tiny-char-mean-32" })),
        ("post", "/v1/books/{book}/source") => ("", json!({ "files": [{ "name": "001.txt", "text": "萧炎" }] })),
        ("post", "/v1/books/{book}/events" | "/v1/books/{book}/impact") => {
            ("", json!({ "events": [{ "term_put": { "id": "T-1", "src": "萧炎", "dst": "Сяо Янь" } }] }))
        }
        ("patch", _) => ("", json!({ "dst": "Сяо Янь", "actor": "human:test" })),
        ("post", "/v1/books/{book}/rollback") => ("", json!({ "to": 1, "actor": "human:test" })),
        ("post", "/v1/books/{book}/assemble") => ("", json!({ "chapter": 1, "chunk": "c1", "text": "萧炎" })),
        ("post", "/v1/books/{book}/chapters/{chapter}/assemble") => {
            ("", json!({ "chunks": [{ "key": "c1", "text": "萧炎" }] }))
        }
        ("post", "/v1/books/{book}/replay") => {
            ("", json!({ "snapshot": "0".repeat(64), "chapter": 1, "text": "萧炎" }))
        }
        _ => ("", Value::Null),
    };
    (format!("{concrete}{query}"), body)
}

#[test]
fn every_documented_operation_is_routed() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    // The answer of a path no route has, to tell it apart.
    let unrouted = server.get("/v1/books/nobook/nothing");
    assert!(unrouted.problem(404, "not-found")["detail"].as_str().unwrap().starts_with("no route"));
    let document: Value = serde_json::from_slice(&server.get("/openapi.json").body).unwrap();
    let mut n_operations = 0;
    let mut create = None;
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            n_operations += 1;
            if method == "put" && path == "/v1/books/{book}" {
                create = Some(path.clone());
                continue;
            }
            let (uri, body) = probe(method, path);
            let bytes = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
            let reply = server.send(&method.to_uppercase(), &uri, &[("Content-Type", "application/json")], &bytes);
            if path.starts_with("/v1/books/{book}") {
                let problem = reply.problem(404, "not-found");
                assert_eq!(problem["detail"], "no book named nobook in the library", "{method} {uri}");
            } else {
                assert_eq!(reply.status, 200, "{method} {uri}: {}", reply.text());
            }
        }
    }
    assert_eq!(n_operations, 51);
    // The one operation that creates a book.
    let create = create.expect("PUT /v1/books/{book} is documented").replace("{book}", "nobook");
    let reply = server.put(&create, &json!({ "profile": "zh", "actor": "human:test" }));
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert_eq!(server.info("nobook")["head"], 1);
}

#[test]
fn unknown_routes_and_methods_are_problems() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    let reply = server.get("/v2/status");
    assert_eq!(reply.problem(404, "not-found")["detail"], "no route GET /v2/status");
    let reply = server.send("DELETE", "/v1/books/a", &[], b"");
    let problem = reply.problem(405, "method-not-allowed");
    assert_eq!(problem["detail"], "DELETE is not allowed on /v1/books/a");
    let reply = server.send("PUT", "/v1/status", &[], b"");
    reply.problem(405, "method-not-allowed");
}

#[test]
fn a_non_loopback_address_needs_a_token_file() {
    let dir = library();
    let output = std::process::Command::new(serve::BIN)
        .args(["serve", "--dir"])
        .arg(dir.path())
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--token-file") && stderr.contains("0.0.0.0:0"), "{stderr}");
    // A token shorter than 16 characters is refused too.
    let short = dir.path().join("short-token");
    std::fs::write(&short, "secret\n").unwrap();
    let output = std::process::Command::new(serve::BIN)
        .args(["serve", "--dir"])
        .arg(dir.path())
        .args(["--listen", "0.0.0.0:0", "--token-file"])
        .arg(&short)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("at least 16 characters"));
}

#[test]
fn with_a_token_every_v1_request_needs_it_and_the_openapi_document_stays_public() {
    let root = library();
    let books = root.path().join("books");
    std::fs::create_dir(&books).unwrap();
    let token_file = root.path().join("token");
    let token = "s3cret-token-of-some-length";
    std::fs::write(&token_file, format!("# the team's token\n{token}\n")).unwrap();
    let mut server = Server::start_on(&books, "0.0.0.0:0", &["--token-file", token_file.to_str().unwrap()]);
    for given in [None, Some(format!("Bearer {token}x")), Some(format!("Bearer {}", &token[1..])), Some(token.into())] {
        let headers: Vec<(&str, &str)> = given.iter().map(|value| ("Authorization", value.as_str())).collect();
        for (method, path) in [("GET", "/v1/status"), ("GET", "/v1/books"), ("PUT", "/v1/books/a")] {
            let reply = serve::request(&server.addr, method, path, &headers, br#"{"profile":"zh","actor":"human:x"}"#);
            reply.problem(401, "unauthorized");
            assert_eq!(reply.header("www-authenticate"), Some("Bearer"), "{given:?}");
        }
    }
    assert_eq!(server.get("/openapi.json").status, 200);
    assert!(!books.join("a.lorebank").exists());
    // The scheme is case-insensitive; the token is not.
    for scheme in ["bearer", "BEARER"] {
        let given = format!("{scheme} {token}");
        let reply = serve::request(&server.addr, "GET", "/v1/status", &[("Authorization", &given)], b"");
        assert_eq!(reply.status, 200, "{given}: {}", reply.text());
    }
    let upper = format!("Bearer {}", token.to_uppercase());
    serve::request(&server.addr, "GET", "/v1/status", &[("Authorization", &upper)], b"").problem(401, "unauthorized");
    serve::request(&server.addr, "GET", "/v1/status", &[("Authorization", token)], b"").problem(401, "unauthorized");
    server.token = Some(token.to_owned());
    assert_eq!(server.get("/v1/status").ok()["version"], env!("CARGO_PKG_VERSION"));
    server.create("a");
    assert_eq!(server.get("/v1/books").ok()["books"], json!(["a"]));
}

#[test]
fn a_write_without_an_actor_is_made_by_the_documented_default() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    let reply = server.put("/v1/books/a", &json!({ "profile": "zh" }));
    assert_eq!(reply.status, 201, "{}", reply.text());
    let reply = server.append_lines("a", "", &[&term_line("T-1", "萧炎", "Сяо Янь")]);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = server.post("/v1/books/a/events", &json!({ "events": [{ "term_retired": { "id": "T-1" } }] }));
    assert_eq!(reply.status, 200, "{}", reply.text());
    let log = server.log("a");
    assert_eq!(log.len(), 3);
    // Creating a book is init's use case, whose actor is its own, as in the CLI.
    let actors: Vec<&Value> = log.iter().map(|event| &event["actor"]).collect();
    assert_eq!(actors, [&json!("system:init"), &json!("tool:api"), &json!("tool:api")], "{log:?}");
}

#[test]
fn the_log_pages_with_lorebank_next_from_and_the_pages_make_the_whole_log() {
    let dir = library();
    let server = Server::start(dir.path(), &["--log-page-max", "7"]);
    server.create("a");
    let lines: Vec<String> = (1..=24).map(|n| term_line(&format!("T-{n}"), &format!("人物{n}号"), "x")).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    server.append_lines("a", "actor=human:test", &lines).ok();
    let whole = server.get("/v1/books/a/events?limit=7&to=25");
    // The page size is also the most a request gets.
    assert_eq!(whole.header("lorebank-next-from"), Some("8"));
    let mut pages = Vec::new();
    let mut from = Some("1".to_owned());
    let mut n_pages = 0;
    while let Some(start) = from {
        let reply = server.get(&format!("/v1/books/a/events?from={start}&limit=5"));
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.header("content-type"), Some("application/x-ndjson"));
        pages.extend_from_slice(&reply.body);
        from = reply.header("lorebank-next-from").map(str::to_owned);
        n_pages += 1;
    }
    assert_eq!(n_pages, 5);
    let seqs: Vec<u64> = String::from_utf8(pages.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=25).collect::<Vec<u64>>());
    // The pages are the CLI's log, byte for byte.
    let book = dir.path().join("a.lorebank");
    let page = server.get("/v1/books/a/events?from=3&to=4");
    assert_eq!(page.header("lorebank-next-from"), None);
    assert_eq!(page.text().lines().count(), 2);
    drop(server);
    assert_eq!(String::from_utf8(pages).unwrap(), serve::cli_ok(&book, &["--json", "log"]));
    let server = Server::start(dir.path(), &["--log-page-max", "7"]);
    let problem = server.get("/v1/books/a/events?from=5&to=4").problem(400, "invalid");
    assert_eq!(problem["at"], "to");
    for bad in ["limit=0", "limit=8", "from=x", "from=1&from=2", "after=3"] {
        server.get(&format!("/v1/books/a/events?{bad}")).problem(400, "invalid");
    }
    // Past the head: out of range, as every read of a revision past the head.
    server.get("/v1/books/a/events?from=26").problem(400, "invalid");
}

#[test]
fn an_idempotency_key_makes_a_retry_append_nothing_even_after_a_restart() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    server.create("a");
    let line = term_line("T-1", "萧炎", "Сяо Янь");
    let send_to = |server: &Server, book: &str, key: &str, line: &str| {
        server.send(
            "POST",
            &format!("/v1/books/{book}/events?actor=human:test"),
            &[("Content-Type", "application/x-ndjson"), ("Idempotency-Key", key)],
            format!("{line}\n").as_bytes(),
        )
    };
    let send = |server: &Server, key: &str, line: &str| send_to(server, "a", key, line);
    let first = send(&server, "retry-1", &line);
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.header("idempotent-replayed"), None);
    let head = server.info("a");
    assert_eq!(head["head"], 2);
    let again = send(&server, "retry-1", &line);
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(server.info("a"), head);
    // The same key with another request is refused and writes nothing.
    let other = term_line("T-2", "药老", "Яо Лао");
    let problem = send(&server, "retry-1", &other).problem(422, "invalid");
    assert_eq!(problem["at"], "Idempotency-Key");
    assert_eq!(server.info("a"), head);
    // A key is a key of one book.
    server.create("b");
    let on_b = send_to(&server, "b", "retry-1", &line);
    assert_eq!((on_b.status, on_b.header("idempotent-replayed")), (200, None), "{}", on_b.text());
    assert_eq!(server.info("b")["head"], 2);
    // After a restart, the marker stored with the batch still stops a second append.
    let (status, _) = server.terminate();
    assert!(status.success());
    let server = Server::start(dir.path(), &[]);
    let retried = send(&server, "retry-1", &line);
    assert_eq!(retried.status, 200, "{}", retried.text());
    assert_eq!(retried.header("idempotent-replayed"), Some("true"));
    assert_eq!(retried.json()["first"], 2);
    assert_eq!(retried.json()["head"], 2);
    assert_eq!(server.info("a"), head);
    send(&server, "retry-1", &other).problem(422, "invalid");
    assert_eq!(server.info("a"), head);
    // A new key appends.
    let next = send(&server, "retry-2", &other).ok();
    assert_eq!(next["first"], 3);
    for bad in ["", &"k".repeat(256), "tab\tkey"] {
        send(&server, bad, &line).problem(400, "invalid");
    }
    server.verified("a");
}

#[test]
fn a_stale_expected_head_is_a_conflict_and_writes_nothing() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    server.create("a");
    let line = term_line("T-1", "萧炎", "Сяо Янь");
    server.append_lines("a", "actor=human:test&expected_head=1", &[&line]).ok();
    let head = server.info("a");
    let other = term_line("T-2", "药老", "Яо Лао");
    server.append_lines("a", "actor=human:test&expected_head=1", &[&other]).problem(409, "conflict");
    let body = json!({ "events": [{ "term_put": { "id": "T-2", "src": "药老", "dst": "Яо Лао" } }], "actor": "human:test", "expected_head": 1 });
    let problem = server.post("/v1/books/a/events", &body).problem(409, "conflict");
    assert_eq!(problem["exit_code"], 5);
    assert_eq!(server.info("a"), head);
    let body = json!({ "events": body["events"], "actor": "human:test", "expected_head": 2 });
    assert_eq!(server.post("/v1/books/a/events", &body).ok()["head"], 3);
    server.verified("a");
}

#[test]
fn concurrent_retries_with_one_key_append_once() {
    let dir = library();
    let server = std::sync::Arc::new(Server::start(dir.path(), &[]));
    server.create("a");
    let line = term_line("T-1", "萧炎", "Сяо Янь") + "\n";
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (server, line) = (std::sync::Arc::clone(&server), line.clone());
            std::thread::spawn(move || {
                let reply = server.send(
                    "POST",
                    "/v1/books/a/events?actor=human:test",
                    &[("Content-Type", "application/x-ndjson"), ("Idempotency-Key", "same")],
                    line.as_bytes(),
                );
                let replayed = reply.header("idempotent-replayed").is_some();
                (reply.ok(), replayed)
            })
        })
        .collect();
    let answers: Vec<(Value, bool)> = threads.into_iter().map(|thread| thread.join().unwrap()).collect();
    assert_eq!(answers.iter().filter(|(_, replayed)| !replayed).count(), 1);
    assert!(answers.iter().all(|(answer, _)| *answer == answers[0].0), "{answers:?}");
    assert_eq!(server.info("a")["head"], 2);
}

/// A SIGTERM sent as soon as the server says it listens stops it gracefully: the
/// handlers are in place before that line (they were once registered only when the
/// accept loop first waited for a signal, and a signal before that killed the server).
#[test]
fn a_sigterm_right_after_the_listening_line_stops_the_server_gracefully() {
    let dir = library();
    for attempt in 0..10 {
        let server = Server::start(dir.path(), &[]);
        let (status, stderr) = server.terminate();
        assert!(status.success() && stderr.contains("stopped; closed"), "attempt {attempt}: {status:?} {stderr}");
    }
}

#[test]
fn a_retry_after_a_timeout_appends_at_most_once() {
    let dir = library();
    let line = term_line("T-1", "萧炎", "Сяо Янь") + "\n";
    let keyed = [("Content-Type", "application/x-ndjson"), ("Idempotency-Key", "after-timeout")];
    {
        let server = Server::start(dir.path(), &[]);
        server.create("a");
    }
    // So short a timeout that the answer is (nearly always) a 408, while the
    // write may still complete.
    let server = Server::start(dir.path(), &["--request-timeout", "0.000001"]);
    let reply = server.send("POST", "/v1/books/a/events?actor=human:test", &keyed, line.as_bytes());
    if reply.status == 408 {
        let problem = reply.problem(408, "timeout");
        assert!(problem["detail"].as_str().unwrap().contains("same Idempotency-Key"), "{problem}");
    } else {
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{stderr}");
    let server = Server::start(dir.path(), &[]);
    let head = server.info("a")["head"].as_u64().unwrap();
    let retried = server.send("POST", "/v1/books/a/events?actor=human:test", &keyed, line.as_bytes());
    assert_eq!(retried.status, 200, "{}", retried.text());
    // Written before the timeout's answer or not, T-1 is in the book once.
    assert_eq!(retried.header("idempotent-replayed").is_some(), head == 2, "head {head}: {}", retried.text());
    assert_eq!(retried.json()["first"], 2);
    assert_eq!(server.info("a")["head"], 2);
    let again = server.send("POST", "/v1/books/a/events?actor=human:test", &keyed, line.as_bytes());
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(server.info("a")["head"], 2);
    server.verified("a");
}

#[test]
fn headers_over_the_limits_are_refused_and_the_server_goes_on() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    let big = "a".repeat(1 << 20);
    let reply = serve::try_request(&server.addr, "GET", "/v1/status", &[("X-Big", &big)], b"");
    // The answer (431) or a reset while the client was still sending.
    if let Ok(reply) = reply {
        assert_eq!(reply.status, 431, "{}", reply.text());
    }
    let names: Vec<String> = (0..200).map(|n| format!("X-Header-{n}")).collect();
    let many: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "a")).collect();
    assert_eq!(serve::request(&server.addr, "GET", "/v1/status", &many, b"").status, 431);
    assert_eq!(server.get("/v1/status").status, 200);
}

#[test]
fn books_are_opened_on_demand_and_closed_when_over_the_limit_or_idle() {
    let dir = library();
    {
        let server = Server::start(dir.path(), &[]);
        server.create("a");
        server.create("b");
    }
    let server = Server::start(dir.path(), &["--max-open-books", "1", "--idle-close", "0.2"]);
    let status = server.get("/v1/status").ok();
    assert_eq!((status["n_open_books"].as_u64(), status["max_open_books"].as_u64()), (Some(0), Some(1)));
    for name in ["a", "b", "a"] {
        assert_eq!(server.info(name)["head"], 1);
        assert_eq!(server.get("/v1/status").ok()["open_books"], json!([name]));
    }
    let status = server.get("/v1/status").ok();
    assert_eq!((status["n_opened"].as_u64(), status["n_closed"].as_u64()), (Some(3), Some(2)));
    // Unused for longer than --idle-close, the book is closed.
    let started = std::time::Instant::now();
    while server.get("/v1/status").ok()["n_open_books"] != 0 {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the idle book was not closed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(server.verified("b")["head"], 1);
}

#[test]
fn problems_name_a_book_file_without_the_library_path() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    server.create("a");
    let reply = server.put("/v1/books/a", &json!({ "profile": "zh", "actor": "human:test" }));
    let problem = reply.problem(409, "conflict");
    assert_eq!(problem["detail"], "a.lorebank already exists");
    // A file that is not a book.
    std::fs::write(dir.path().join("notes.lorebank"), "just some notes\n").unwrap();
    let problem = server.get("/v1/books/notes").problem(500, "corrupted");
    assert_eq!(problem["detail"], "notes.lorebank is not a lorebank ledger");
    assert_eq!(server.info("a")["head"], 1);
}

#[test]
fn a_what_if_over_http_writes_nothing_and_refuses_as_an_append_would() {
    let dir = library();
    let server = Server::start(dir.path(), &[]);
    server.create("a");
    let line = term_line("T-1", "萧炎", "Сяо Янь");
    server.append_lines("a", "actor=human:test", &[&line]).ok();
    let recorded = server.post("/v1/books/a/assemble", &json!({ "chapter": 1, "chunk": "c1", "text": "萧炎来了。" }));
    let receipt = recorded.ok()["receipt"].as_str().unwrap().to_owned();
    let head = server.info("a");
    // A rename re-opens the recorded chunk, with the line it loses and the line it gains.
    let rename =
        json!({ "events": [{ "term_put": { "id": "T-1", "src": "萧炎", "dst": "Сяо Ян" } }], "actor": "human:test" });
    let what_if = server.post("/v1/books/a/impact", &rename).ok();
    assert_eq!(what_if["n_chunks"], 1, "{what_if}");
    assert_eq!(what_if["chunks"][0]["receipt"], receipt.as_str(), "{what_if}");
    assert_eq!(what_if["chunks"][0]["removed"], json!(["萧炎 -> Сяо Янь"]), "{what_if}");
    assert_eq!(what_if["chunks"][0]["added"], json!(["萧炎 -> Сяо Ян"]), "{what_if}");
    assert_ne!(what_if["snapshot"], head["snapshot"], "{what_if}");
    assert_eq!(server.info("a"), head, "nothing was written");
    // The same as NDJSON, and the same answer but for nothing.
    let ndjson = server.send(
        "POST",
        "/v1/books/a/impact?actor=human:test",
        &[("Content-Type", "application/x-ndjson")],
        rename["events"][0].to_string().as_bytes(),
    );
    assert_eq!(ndjson.ok()["chunks"], what_if["chunks"]);
    // A batch the head refuses, a stale head and a bad event: problems, nothing written.
    let clash =
        json!({ "events": [{ "term_put": { "id": "T-2", "src": "萧炎", "dst": "Другой" } }], "actor": "human:test" });
    server.post("/v1/books/a/impact", &clash).problem(400, "invalid");
    let stale = json!({ "events": rename["events"], "actor": "human:test", "expected_head": 1 });
    server.post("/v1/books/a/impact", &stale).problem(409, "conflict");
    let bad = json!({ "events": [{ "term_put": { "id": "T-3" } }] });
    let problem = server.post("/v1/books/a/impact", &bad).problem(400, "invalid");
    assert_eq!(problem["at"], "events[0]", "{problem}");
    assert_eq!(server.info("a"), head);
    server.verified("a");
}
