//! End-to-end tests of `lorebank serve` against hostile traffic: the bad bodies of
//! the CLI's `apply` tests, bad JSON, book names that try to leave the library,
//! bodies and batches over the limits, and a client that trickles its body. Every
//! one answers a 4xx problem naming what is wrong, and leaves the books as they were.

#[path = "common/serve.rs"]
mod serve;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve::{term_line, Server};

/// A library with book `a` holding T-1 (萧炎) and T-2 (药老); the library is a
/// directory inside the temp dir, so that its parent is watched too.
fn library_with_a_book(extra: &[&str]) -> (tempfile::TempDir, Server) {
    let put = [term_line("T-1", "萧炎", "Сяо Янь"), term_line("T-2", "药老", "Яо Лао")];
    Server::library_with_a_book(extra, &[&put[0], &put[1]])
}

/// The head, chain hash and snapshot of book `a`.
fn state(server: &Server) -> Value {
    server.info("a")
}

/// The bad batches of the CLI's `apply` tests (tests/cli.rs, tests/write_rules.rs),
/// each with the line the refusal names and a fragment of the reason.
fn bad_batches() -> Vec<(Vec<String>, Option<usize>, &'static str)> {
    let good = r#"{"term_put":{"id":"T-3","src":"萧薰儿","dst":"Сяо Сюнь-эр"}}"#.to_owned();
    let alias = |kind: &str| format!(r#"{{"alias_added":{{"id":"T-1","surface":"炎子","kind":"{kind}"}}}}"#);
    let first = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь"}}"#.to_owned();
    let mut batches = vec![
        (
            vec![good.clone(), String::new(), r#"{"term_put":{"id":"T-4","src":"古河","dst":"Гу Хэ","dts":"x"}}"#.into()],
            Some(3),
            "unknown field `dts`",
        ),
        (
            vec![good.clone(), r#"{"term_put":{"id":"T-4","src":"古河","dst":"Гу Хэ","window":{"since":0}}}"#.into()],
            Some(2),
            "term_put.window.since",
        ),
        (
            vec![format!(r#"{{"config_set":{{"profile":{{"name":"zh","table":"{}"}}}}}}"#, "ab".repeat(32))],
            Some(1),
            "not stored in the book",
        ),
        (
            vec![r#"{"config_set":{"assembly":{"token_budget":800,"sticky_chunks":2,"min_key_chars":2,"render_format":9,"token_estimator":1},"profile":{"name":"plain"}}}"#.into()],
            Some(1),
            "render format 9",
        ),
        (vec![good.clone(), "{\"alias_added\":{\"id\":\"T-3\",\"surface\":\"\u{ad}\u{ad}\"}}".into()], Some(2), "folds to"),
        (
            vec![r#"{"rollback_marker":{"to":2}}"#.into(), r#"{"term_retired":{"id":"T-2"}}"#.into()],
            Some(1),
            "must be the last event",
        ),
        (
            vec![first.clone(), good.clone(), r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Ян"}}"#.into()],
            Some(3),
            "T-1",
        ),
        (vec![first, alias("nickname"), alias("title")], Some(3), "line 2"),
        (vec![good.clone(), "{\"term_put\":".into()], Some(2), "EOF"),
        (vec![good, r#"{"term_moved":{"id":"T-1"}}"#.into()], Some(2), "unknown variant `term_moved`"),
        (vec![String::new(), "  ".into()], None, "no events"),
    ];
    for to in [0, 1, 2] {
        batches.push((vec![format!(r#"{{"rollback_marker":{{"to":{to}}}}}"#)], Some(1), "rollback_marker to revision"));
    }
    batches
}

#[test]
fn every_bad_batch_of_the_cli_is_refused_naming_its_line_and_the_book_is_untouched() {
    let (_root, server) = library_with_a_book(&[]);
    let before = state(&server);
    for (lines, line, reason) in bad_batches() {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let reply = server.append_lines("a", "actor=human:test", &lines);
        let problem = reply.problem(400, "invalid");
        let detail = problem["detail"].as_str().unwrap();
        if let Some(line) = line {
            assert!(detail.contains(&format!("body line {line}")), "{lines:?}: {detail}");
        }
        assert!(detail.contains(reason), "{lines:?}: {detail}");
        assert_eq!(problem["exit_code"], 2);
        assert_eq!(state(&server), before, "{lines:?}");
    }
    // Bytes that are not UTF-8, named by their offset.
    let good = term_line("T-3", "萧薰儿", "Сяо Сюнь-эр");
    let body = [good.as_bytes(), b"\n\xff\n"].concat();
    let reply = server.send("POST", "/v1/books/a/events", &[("Content-Type", "application/x-ndjson")], &body);
    let detail = reply.problem(400, "invalid")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains(&format!("not UTF-8 at byte {}", good.len() + 1)), "{detail}");
    assert_eq!(state(&server), before);
    server.verified("a");
}

#[test]
fn every_bad_batch_as_a_json_object_names_its_event() {
    let (_root, server) = library_with_a_book(&[]);
    let before = state(&server);
    for (lines, line, reason) in bad_batches() {
        let Some(line) = line else { continue };
        // Lines that are not JSON cannot go into an array; blank lines are not events.
        let Ok(events) = lines
            .iter()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str::<Value>(line))
            .collect::<Result<Vec<Value>, _>>()
        else {
            continue;
        };
        let index = lines[..line].iter().filter(|line| !line.trim().is_empty()).count() - 1;
        let body = json!({ "events": events, "actor": "human:test" });
        let problem = server.post("/v1/books/a/events", &body).problem(400, "invalid");
        let detail = problem["detail"].as_str().unwrap();
        let reason = reason.replace("line 2", "events[1]");
        assert!(detail.contains(&format!("events[{index}]")) && detail.contains(&reason), "{body}: {detail}");
        // `at` is set when the refusal names one event (a double write names two).
        assert!(problem["at"].is_null() || problem["at"] == format!("events[{index}]"), "{body}: {problem}");
        assert_eq!(state(&server), before, "{body}");
    }
    server.verified("a");
}

#[test]
fn bad_json_unknown_fields_and_wrong_types_name_the_position_or_field() {
    let (_root, server) = library_with_a_book(&[]);
    let before = state(&server);
    let post =
        |path: &str, body: &str| server.send("POST", path, &[("Content-Type", "application/json")], body.as_bytes());
    let cases: &[(&str, &str, &str)] = &[
        ("/v1/books/a/events", "{\"events\":[\n{\"term_put\":", "line 2, column 12"),
        ("/v1/books/a/events", r#"{"events":[],"actor":"human:test"}"#, "events: no events"),
        (
            "/v1/books/a/events",
            r#"{"events":[{"term_retired":{"id":"T-1"}}],"actr":"human:x"}"#,
            "unknown field `actr`",
        ),
        ("/v1/books/a/events", r#"{"events":"T-1"}"#, "invalid type: string \"T-1\", expected a sequence"),
        (
            "/v1/books/a/events",
            r#"{"events":[{"term_retired":{"id":"T-1"}}],"expected_head":"2"}"#,
            "invalid type: string \"2\", expected u64",
        ),
        ("/v1/books/a/events", r#"{"events":[{"term_retired":{"id":7}}]}"#, "events[0]: invalid type: integer `7`"),
        ("/v1/books/a/events", r#"{"events":[{"term_retired":{"id":"T-1"}}],"actor":"nobody"}"#, "field `actor`"),
        ("/v1/books/a/events?actor=human:x", r#"{"events":[{"term_retired":{"id":"T-1"}}]}"#, "\"actor\" is not known"),
        ("/v1/books/a/assemble", r#"{"chapter":"one","chunk":"c1","text":"x"}"#, "invalid type: string \"one\""),
        ("/v1/books/a/assemble", r#"{"chapter":0,"chunk":"c1","text":"x"}"#, "chapters start at 1"),
        ("/v1/books/a/assemble", r#"{"chapter":1,"chunk":"c1"}"#, "missing field `text`"),
        ("/v1/books/a/chapters/x/assemble", r#"{"chunks":[{"key":"c1","text":"x"}]}"#, "path (chapter)"),
        ("/v1/books/a/chapters/1/assemble", r#"{"chunks":[{"key":"c1","txt":"x"}]}"#, "unknown field `txt`"),
        ("/v1/books/a/rollback", r#"{"to":-1}"#, "invalid value: integer `-1`"),
        ("/v1/books/a/replay", r#"{"snapshot":"zz","chapter":1,"text":"x"}"#, "snapshot: \"zz\" is not 64 hex digits"),
    ];
    for (path, body, fragment) in cases {
        let detail = post(path, body).problem(400, "invalid")["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains(fragment), "{path} {body}: {detail}");
    }
    let detail = server
        .send("PATCH", "/v1/books/a/terms/T-1", &[], br#"{"dst":"x","priority":"high"}"#)
        .problem(400, "invalid")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("priority: invalid type") && detail.contains("expected i32"), "{detail}");
    for query in ["chapter=0", "chapter=-1", "chapter=1&chapter=2", "as_of=x", "limit=3"] {
        server.get(&format!("/v1/books/a/glossary?{query}")).problem(400, "invalid");
    }
    assert_eq!(state(&server), before);
    server.verified("a");
}

#[test]
fn book_names_that_try_to_leave_the_library_are_refused_and_create_nothing() {
    let (root, server) = library_with_a_book(&[]);
    let before = serve::tree(root.path());
    let names = [
        "..".to_owned(),
        "%2e%2e".into(),
        ".%2E".into(),
        "..%2Fx".into(),
        "..%2F..%2Fescape".into(),
        "a%2Fb".into(),
        "%2Fetc%2Fpasswd".into(),
        "%00".into(),
        "a%00".into(),
        "A".into(),
        "a.lorebank".into(),
        "-a".into(),
        "a%20b".into(),
        "a".repeat(65),
        "%C3%A9".into(),
        "%E8%90%A7%E7%82%8E".into(),
        "%FF".into(),
        "a%5Cb".into(),
    ];
    for name in &names {
        let create = json!({ "profile": "zh", "actor": "human:test" }).to_string();
        let events = json!({ "events": [{ "term_retired": { "id": "T-1" } }], "actor": "human:test" }).to_string();
        let requests = [
            ("PUT", format!("/v1/books/{name}"), create),
            ("GET", format!("/v1/books/{name}"), String::new()),
            ("POST", format!("/v1/books/{name}/events"), events),
            ("GET", format!("/v1/books/{name}/events"), String::new()),
            ("POST", format!("/v1/books/{name}/verify"), String::new()),
            ("GET", format!("/v1/books/{name}/terms/T-1"), String::new()),
        ];
        for (method, path, body) in requests {
            let reply = server.send(method, &path, &[("Content-Type", "application/json")], body.as_bytes());
            assert!(matches!(reply.status, 400 | 404), "{method} {path}: {} {}", reply.status, reply.text());
            assert_eq!(reply.header("content-type"), Some("application/problem+json"), "{method} {path}");
        }
    }
    // A valid name that is not a book is not created by reading it.
    server.get("/v1/books/b").problem(404, "not-found");
    server.send("POST", "/v1/books/b/verify", &[], b"").problem(404, "not-found");
    assert_eq!(serve::tree(root.path()), before);
    assert_eq!(server.get("/v1/books").ok()["books"], json!(["a"]));
}

#[test]
fn bodies_and_batches_over_the_limits_are_refused_with_413() {
    let (_root, server) = library_with_a_book(&["--body-limit", "4096", "--events-max", "3", "--chunks-max", "2"]);
    let before = state(&server);
    // A body over the limit, as NDJSON and as a JSON object, and to other routes.
    let big: Vec<String> = (0..100).map(|n| term_line(&format!("T-{}", n + 10), &format!("人{n}"), "x")).collect();
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    assert!(big.join("\n").len() > 4096);
    let reply = server.append_lines("a", "actor=human:test", &big);
    assert!(reply.problem(413, "too-large")["detail"].as_str().unwrap().contains("limit"));
    let text = "萧炎".repeat(1000);
    server
        .post("/v1/books/a/assemble", &json!({ "chapter": 1, "chunk": "c1", "text": text }))
        .problem(413, "too-large");
    server
        .put("/v1/books/b", &json!({ "profile": "zh", "actor": "human:test", "source": text }))
        .problem(413, "too-large");
    // A declared length over the limit is refused without waiting for the body.
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    let head = "POST /v1/books/a/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 1000000\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while serve::parse_reply(&answer).is_err() {
        let n = stream.read(&mut buffer).expect("an answer before the body");
        assert!(n > 0, "closed without an answer");
        answer.extend_from_slice(&buffer[..n]);
    }
    let refused = serve::parse_reply(&answer).unwrap();
    // The body was not read: the answer says the connection closes.
    assert_eq!(refused.header("connection"), Some("close"), "{:?}", refused.headers);
    refused.problem(413, "too-large");
    // More events than allowed, in a small body.
    let four: Vec<String> = (0..4).map(|n| term_line(&format!("T-{}", n + 10), &format!("人{n}"), "x")).collect();
    let four: Vec<&str> = four.iter().map(String::as_str).collect();
    let detail = server.append_lines("a", "actor=human:test", &four).problem(413, "too-large")["detail"].to_string();
    assert!(detail.contains("4 events in one append; the limit is 3"), "{detail}");
    let events: Vec<Value> = four.iter().map(|line| serde_json::from_str(line).unwrap()).collect();
    server.post("/v1/books/a/events", &json!({ "events": events, "actor": "human:test" })).problem(413, "too-large");
    // More chunks than allowed.
    let chunks: Vec<Value> = (0..3).map(|n| json!({ "key": format!("c{n}"), "text": "萧炎" })).collect();
    let detail = server.post("/v1/books/a/chapters/1/assemble", &json!({ "chunks": chunks })).problem(413, "too-large")
        ["detail"]
        .to_string();
    assert!(detail.contains("3 chunks in one request; the limit is 2"), "{detail}");
    assert_eq!(state(&server), before);
    assert!(!server.dir.join("b.lorebank").exists());
    // Within the limits, the same requests work.
    assert_eq!(server.append_lines("a", "actor=human:test", &four[..3]).ok()["head"], 6);
    let chunks: Vec<Value> = chunks.into_iter().take(2).collect();
    let assembled = server.post("/v1/books/a/chapters/1/assemble", &json!({ "chunks": chunks })).ok();
    assert_eq!(assembled["chunks"].as_array().unwrap().len(), 2);
    server.verified("a");
}

#[test]
fn a_client_that_trickles_its_body_is_cut_off_and_holds_no_writer() {
    let (_root, server) = library_with_a_book(&["--request-timeout", "2"]);
    let line = term_line("T-9", "云韵", "Юнь Юнь");
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    let head = format!(
        "POST /v1/books/a/events?actor=human:test HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-ndjson\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        line.len() + 1
    );
    slow.write_all(head.as_bytes()).unwrap();
    slow.write_all(&line.as_bytes()[..3]).unwrap();
    let started = Instant::now();
    // While it trickles, another client appends to the same book.
    let other = server.append_lines("a", "actor=human:test", &[&term_line("T-3", "萧薰儿", "Сяо Сюнь-эр")]).ok();
    assert_eq!(other["first"], 4);
    slow.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut answer = Vec::new();
    let mut sent = 3;
    let cut_off = loop {
        let mut buffer = [0u8; 4096];
        match slow.read(&mut buffer) {
            Ok(0) => break true,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => break true,
        }
        // One byte a read timeout; never the last one.
        if sent < line.len() && slow.write_all(&line.as_bytes()[sent..sent + 1]).is_err() {
            break true;
        }
        sent += 1;
        assert!(started.elapsed() < Duration::from_secs(30), "the trickling client was not cut off");
    };
    assert!(cut_off);
    assert!(sent < line.len(), "the whole body was sent before the cut");
    if !answer.is_empty() {
        let reply = serve::parse_reply(&answer).unwrap();
        let problem = reply.problem(408, "timeout");
        assert!(problem["detail"].as_str().unwrap().contains("Idempotency-Key"), "{problem}");
    }
    let info = server.info("a");
    assert_eq!(info["head"], 4);
    assert!(server.log("a").iter().all(|event| event["body"]["term_put"]["id"] != "T-9"));
    server.verified("a");
}

#[test]
fn a_client_that_trickles_its_headers_is_cut_off() {
    let (_root, server) = library_with_a_book(&["--request-timeout", "1"]);
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    slow.write_all(b"GET /v1/books/a HTTP/1.1\r\nHost: x\r\n").unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let header =
        b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let started = Instant::now();
    let mut answer = Vec::new();
    for byte in header.iter().cycle() {
        let mut buffer = [0u8; 4096];
        match slow.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
        if slow.write_all(&[*byte]).is_err() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "a client trickling its headers was not cut off");
    }
    // Cut off without an answer, or with a 408.
    if !answer.is_empty() {
        assert!(answer.starts_with(b"HTTP/1.1 408"), "{}", String::from_utf8_lossy(&answer));
    }
    assert_eq!(server.info("a")["head"], 3);
}

/// Every route that appends events, each with a request and another request for the
/// same key, in an order that lets each one write: (method, path, content type,
/// body, other body). Creating a book is one of them, and a check of `receipt` that
/// proposes a verdict another.
fn keyed_writes(receipt: &str) -> Vec<(&'static str, String, &'static str, String, String)> {
    let json = "application/json";
    let text = "application/octet-stream";
    let body = |value: Value| value.to_string();
    let check = |translation: &str| body(json!({ "translation": translation, "propose": true, "actor": "human:test" }));
    let writes: Vec<(&'static str, &str, &'static str, String, String)> = vec![
        (
            "POST",
            "/v1/books/a/events",
            "application/x-ndjson",
            term_line("T-3", "萧薰儿", "Сяо Сюнь-эр"),
            term_line("T-3", "萧薰儿", "Сюнь-эр"),
        ),
        (
            "PATCH",
            "/v1/books/a/terms/T-1",
            json,
            body(json!({ "dst": "Сяо Янь (2)", "actor": "human:test" })),
            body(json!({ "dst": "Сяо Янь (3)", "actor": "human:test" })),
        ),
        ("POST", "/v1/books/a/import?file=g.txt", text, "纳兰嫣然\tНалань Яньжань\n".into(), "古河\tГу Хэ\n".into()),
        ("POST", "/v1/books/a/expected?file=cast.txt", text, "萧战\tperson\n".into(), "古元\tperson\n".into()),
        (
            "POST",
            "/v1/books/a/chapters/1/scan",
            json,
            body(json!({ "chunk": "1", "text": "沈照提着长明灯走到雾川边。空空道人坐在石上，空空道人笑了。" })),
            body(json!({ "chunk": "2", "text": "沈照提着长明灯走到雾川边。空空道人坐在石上，空空道人笑了。" })),
        ),
        ("PUT", "/v1/books/a/source/1?title=第一章", "text/plain", "萧炎笑了。\r\n".into(), "萧炎走了。\r\n".into()),
        (
            "POST",
            "/v1/books/a/source",
            json,
            body(json!({ "files": [{ "name": "002.txt", "text": "药老。" }], "actor": "human:test" })),
            body(json!({ "files": [{ "name": "002.txt", "text": "药尘。" }], "actor": "human:test" })),
        ),
        (
            "POST",
            "/v1/books/a/review/C-1/reject",
            json,
            body(json!({ "reason": "not_a_name", "actor": "human:test" })),
            body(json!({ "reason": "duplicate", "actor": "human:test" })),
        ),
        (
            "POST",
            "/v1/books/a/review/T-2/verify",
            json,
            body(json!({ "reason": "check_gender", "actor": "human:test" })),
            body(json!({ "reason": "check_dst", "actor": "human:test" })),
        ),
        (
            "POST",
            "/v1/books/a/review/C-2/accept",
            json,
            body(json!({ "dst": "Яо Чэнь", "actor": "human:test" })),
            body(json!({ "dst": "Яо Чэн", "actor": "human:test" })),
        ),
        (
            "POST",
            "/v1/books/a/rollback",
            json,
            body(json!({ "to": 3, "reason": "keep the first names", "actor": "human:test" })),
            body(json!({ "to": 2, "actor": "human:test" })),
        ),
        (
            "PUT",
            "/v1/books/b",
            json,
            body(json!({ "profile": "zh", "actor": "human:test" })),
            body(json!({ "profile": "ja", "actor": "human:test" })),
        ),
    ];
    // The check leaves out 萧炎's rendering, so it fails and proposes a verdict.
    let check_path = format!("/v1/books/a/receipts/{receipt}/check");
    std::iter::once(("POST", check_path, json, check("Он улыбнулся."), check("Он ушёл.")))
        .chain(
            writes.into_iter().map(|(method, path, content_type, first, other)| {
                (method, path.to_owned(), content_type, first, other)
            }),
        )
        .collect()
}

fn book_of(path: &str) -> &str {
    path.trim_start_matches("/v1/books/").split(['/', '?']).next().unwrap()
}

#[test]
fn every_write_route_appends_once_per_idempotency_key_and_refuses_the_key_with_another_request() {
    let (root, server) = library_with_a_book(&[]);
    let candidates = [
        r#"{"candidate_proposed":{"id":"C-1","surface":"炎帝","origin":"extractor"}}"#,
        r#"{"candidate_proposed":{"id":"C-2","surface":"药尘","origin":"extractor"}}"#,
    ];
    server.append_lines("a", "actor=human:test", &candidates).ok();
    let assembled = json!({ "chapter": 1, "chunk": "1", "text": "萧炎笑了。" }).to_string();
    let receipt =
        server.send("POST", "/v1/books/a/assemble", &[("Content-Type", "application/json")], assembled.as_bytes());
    assert_eq!(receipt.status, 200, "{}", receipt.text());
    let writes = keyed_writes(receipt.json()["receipt"].as_str().unwrap());
    let mut firsts = Vec::new();
    for (index, (method, path, content_type, first, other)) in writes.iter().enumerate() {
        let key = format!("retry-{index}");
        let send = |body: &str| {
            server.send(method, path, &[("Content-Type", content_type), ("Idempotency-Key", &key)], body.as_bytes())
        };
        let written = send(first);
        assert!(matches!(written.status, 200 | 201), "{method} {path}: {}", written.text());
        assert_eq!(written.header("idempotent-replayed"), None, "{method} {path}");
        let after = state_of(&server, book_of(path));
        let again = send(first);
        assert_eq!(again.status, written.status, "{method} {path}: {}", again.text());
        assert_eq!(again.header("idempotent-replayed"), Some("true"), "{method} {path}");
        assert_eq!(again.json(), written.json(), "{method} {path}: the retry answers what the first did");
        let problem = send(other).problem(422, "invalid");
        assert_eq!(problem["at"], "Idempotency-Key", "{method} {path}");
        assert_eq!(state_of(&server, book_of(path)), after, "{method} {path}: a retry or a reused key wrote");
        firsts.push(after);
    }

    // After a restart the answers are gone; the markers in the books still hold.
    drop(server);
    let server = Server::start(&root.path().join("books"), &[]);
    for (index, (method, path, content_type, first, other)) in writes.iter().enumerate() {
        let key = format!("retry-{index}");
        let send = |body: &str| {
            server.send(method, path, &[("Content-Type", content_type), ("Idempotency-Key", &key)], body.as_bytes())
        };
        let before = state_of(&server, book_of(path));
        let again = send(first);
        assert_eq!(again.status, 200, "{method} {path}: {}", again.text());
        assert_eq!(again.header("idempotent-replayed"), Some("true"), "{method} {path}");
        let answer = again.json();
        assert!(answer["first"].as_u64().is_some(), "{method} {path}: {answer}");
        assert_eq!(answer["head"], before["head"], "{method} {path}: {answer}");
        send(other).problem(422, "invalid");
        assert_eq!(state_of(&server, book_of(path)), before, "{method} {path}: a retry after a restart wrote");
    }
    // One rollback marker, not two.
    let markers = server.log("a").iter().filter(|event| event["body"].get("rollback_marker").is_some()).count();
    assert_eq!(markers, 1);
    server.verified("a");
}

/// The head, chain hash and snapshot of `book`.
fn state_of(server: &Server, book: &str) -> Value {
    server.info(book)
}

#[test]
fn an_idempotency_key_is_refused_where_nothing_would_honour_it_and_when_it_is_not_a_key() {
    let (_root, server) = library_with_a_book(&[]);
    let before = state(&server);
    let line = term_line("T-3", "萧薰儿", "Сяо Сюнь-эр");
    let ndjson = [("Content-Type", "application/x-ndjson")];
    // (Spaces around a header value are not part of it, in HTTP: only inner ones count.)
    let bad_keys = ["a b", "retry 1", "a\tb", "键", &"k".repeat(256)];
    for key in bad_keys {
        let headers = [ndjson[0], ("Idempotency-Key", key)];
        let reply = server.send("POST", "/v1/books/a/events?actor=human:test", &headers, line.as_bytes());
        let problem = reply.problem(400, "invalid");
        assert_eq!(problem["at"], "Idempotency-Key", "{key:?}: {problem}");
        assert!(problem["detail"].as_str().unwrap().contains("without space"), "{problem}");
    }
    // Routes that append no events do not take the key, rather than ignore it.
    let unkeyed = [
        ("POST", "/v1/books/a/verify", String::new()),
        ("POST", "/v1/books/a/rebuild", String::new()),
        ("GET", "/v1/books/a/glossary", String::new()),
        ("POST", "/v1/books/a/assemble", json!({ "chapter": 1, "chunk": "1", "text": "萧炎笑了。" }).to_string()),
    ];
    for (method, path, body) in unkeyed {
        let headers = [("Content-Type", "application/json"), ("Idempotency-Key", "k-1")];
        let problem = server.send(method, path, &headers, body.as_bytes()).problem(400, "invalid");
        assert_eq!(problem["at"], "Idempotency-Key", "{method} {path}: {problem}");
    }
    assert_eq!(state(&server), before);
}

#[test]
fn a_log_read_past_the_head_is_out_of_range_like_every_read_of_a_revision() {
    let (_root, server) = library_with_a_book(&[]);
    let head = state(&server)["head"].as_u64().unwrap();
    let past = head + 1;
    for (query, at) in [(format!("from={past}"), "from"), (format!("from=1&to={past}"), "to")] {
        let problem = server.get(&format!("/v1/books/a/events?{query}")).problem(400, "invalid");
        assert_eq!(problem["at"], at, "{query}: {problem}");
        assert!(problem["detail"].as_str().unwrap().contains(&format!("after the head {head}")), "{problem}");
    }
    // The same rule as a revision asked for elsewhere.
    server.get(&format!("/v1/books/a/glossary?as_of={past}")).problem(400, "invalid");
    server.get(&format!("/v1/books/a/diff?from=1&to={past}")).problem(400, "invalid");
    let last = server.get(&format!("/v1/books/a/events?from={head}"));
    assert_eq!((last.status, last.text().lines().count()), (200, 1), "{}", last.text());
}

#[test]
fn terms_sharing_a_rendering_are_one_warning_in_the_answer() {
    // 3,000 terms with one rendering used to answer their 4.5 million pairs.
    let (_root, server) = library_with_a_book(&[]);
    let first: Vec<char> = "林沈白云叶苏陆顾江秦楚韩柳宁谢温燕唐方姜".chars().collect();
    let rest: Vec<char> = "炎照川衣山天寒风月雪霜星辰海岳河清明远舟".chars().collect();
    let lines: Vec<String> = (0..3_000)
        .map(|index| {
            let src: String = [first[index / 400], rest[index / 20 % 20], rest[index % 20]].into_iter().collect();
            term_line(&format!("T-{}", index + 3), &src, "сяо янь")
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let reply = server.append_lines("a", "actor=human:test", &lines);
    let answer = reply.ok();
    let warnings = answer["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{} warnings", warnings.len());
    // T-1 萧炎 "Сяо Янь" was in the book: the group is it and the 3,000.
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with(r#"3001 terms with different sources render as "Сяо Янь" in overlapping windows: T-1 "萧炎" (ch 1..), T-3 "林炎炎""#),
        "{warning}"
    );
    assert!(warning.ends_with(" and 2981 more"), "{warning}");
    assert!(reply.body.len() < 4_096, "{} bytes answered", reply.body.len());
}

/// A chunk of a book whose assembler is built is assembled on the async worker (the
/// route's `assembler_at_hand`), and a recording there awaits its commit; the first
/// request, a whole chapter, and a party's run after a receipt take the blocking
/// pool. Each answers what the other would.
#[test]
fn a_chunk_answers_the_same_on_the_worker_as_on_the_blocking_pool() {
    let (_root, server) = library_with_a_book(&[]);
    let text = "萧炎看着药老。药老笑了。";
    let chunk = |prev: &Value| json!({ "chapter": 1, "chunk": "c2", "text": text, "prev": prev, "record": false });
    let chapter = |prev: &Value| json!({ "chunks": [{ "key": "c2", "text": text }], "prev": prev, "record": false });
    // The first builds the head's assembler on the blocking pool; the second finds it.
    let first = server.post("/v1/books/a/assemble", &chunk(&Value::Null)).ok();
    let again = server.post("/v1/books/a/assemble", &chunk(&Value::Null)).ok();
    assert_eq!(first, again);
    assert_eq!(first["hits"].as_array().unwrap().len(), 3, "{first}");

    // After a recorded chunk (which leaves the head where it is), with it as the
    // previous receipt: a chapter's assembly always takes the blocking pool.
    let recorded = server.post("/v1/books/a/assemble", &json!({ "chapter": 1, "chunk": "c1", "text": "萧炎。" })).ok();
    assert_eq!(recorded["recorded"], true, "{recorded}");
    let pooled = json!({ "chunks": [{ "key": "c1", "text": "萧炎。" }] });
    let pooled = server.post("/v1/books/a/chapters/1/assemble", &pooled).ok();
    assert_eq!(pooled["chunks"][0]["receipt"], recorded["receipt"], "{pooled}");
    // Its answer came after the commit: the receipt is there to be read.
    let id = recorded["receipt"].as_str().unwrap();
    assert_eq!(server.get(&format!("/v1/books/a/receipts/{id}")).ok()["receipt"], recorded["receipt"]);
    let prev = recorded["receipt"].clone();
    let at_hand = server.post("/v1/books/a/assemble", &chunk(&prev)).ok();
    let pooled = server.post("/v1/books/a/chapters/1/assemble", &chapter(&prev)).ok();
    assert_eq!(at_hand["prev"], prev, "{at_hand}");
    for field in ["receipt", "context", "hits", "injected", "snapshot", "revision"] {
        assert_eq!(at_hand[field], pooled["chunks"][0][field], "{field}: {at_hand} against {pooled}");
    }
    assert_ne!(at_hand["receipt"], first["receipt"], "the previous receipt is part of the receipt");

    // What is refused is refused alike.
    let unknown = json!("00000000deadbeef");
    let refused = server.post("/v1/books/a/assemble", &chunk(&unknown)).problem(404, "not-found");
    let refused_pooled = server.post("/v1/books/a/chapters/1/assemble", &chapter(&unknown)).problem(404, "not-found");
    assert_eq!(refused["detail"], refused_pooled["detail"]);
    let bad_key = json!({ "chapter": 1, "chunk": "", "text": text, "record": false });
    let refused = server.post("/v1/books/a/assemble", &bad_key).problem(400, "invalid");
    let pooled_key = json!({ "chunks": [{ "key": "", "text": text }], "record": false });
    let refused_pooled = server.post("/v1/books/a/chapters/1/assemble", &pooled_key).problem(400, "invalid");
    assert_eq!(refused["detail"], refused_pooled["detail"]);
}

#[test]
fn hits_false_leaves_the_hit_list_out_of_an_assembly_and_nothing_else() {
    let (_root, server) = library_with_a_book(&[]);
    let body = json!({ "chapter": 1, "chunk": "c1", "text": "萧炎看着药老。", "record": false });
    let full = server.post("/v1/books/a/assemble", &body).ok();
    let lean = server.post("/v1/books/a/assemble?hits=false", &body).ok();
    assert_eq!(full["hits"].as_array().unwrap().len(), 2, "{full}");
    assert!(lean.get("hits").is_none(), "{lean}");
    let mut without = full.clone();
    without.as_object_mut().unwrap().remove("hits");
    assert_eq!(lean, without, "only the hit list differs");
    assert_eq!(server.post("/v1/books/a/assemble?hits=true", &body).ok(), full);
    let chapter = json!({ "chunks": [{ "key": "c1", "text": "萧炎看着药老。" }], "record": false });
    let lean = server.post("/v1/books/a/chapters/1/assemble?hits=false", &chapter).ok();
    assert!(lean["chunks"][0].get("hits").is_none() && lean["chunks"][0]["context"] == full["context"], "{lean}");
    for bad in ["?hits=maybe", "?hit=false", "?hits=false&hits=true"] {
        server.post(&format!("/v1/books/a/assemble{bad}"), &body).problem(400, "invalid");
    }
}
