//! What the contract run (scripts/contract.sh, schemathesis) found in the HTTP API,
//! each held by a test against a live `lorebank serve`, and the committed OpenAPI
//! document kept equal to the one the server serves.

#[path = "common/http_server.rs"]
mod serve;
use serve::{request, Server};

/// A server on a fresh library with book `b` created by the request body `create`.
fn server_with_book(create: &str) -> (tempfile::TempDir, Server) {
    let books = tempfile::tempdir().unwrap();
    let server = Server::start(books.path());
    let created = request(&server.url, "PUT", "/v1/books/b", &[], create);
    assert_eq!(created.status, 201, "{}", created.body);
    (books, server)
}

/// A write that names no actor was refused (400: the default actor was not a valid
/// `kind:name`), so a client could not create a book without naming itself.
#[test]
fn writes_without_an_actor_are_made_by_the_default_actor() {
    let (_books, server) = server_with_book(r#"{"profile":"zh"}"#);
    let events = r#"{"events":[{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао"}}]}"#;
    let appended = request(&server.url, "POST", "/v1/books/b/events", &[("Content-Type", "application/json")], events);
    assert_eq!(appended.status, 200, "{}", appended.body);
    let lines = "{\"term_put\":{\"id\":\"T-2\",\"src\":\"灯宗\",\"dst\":\"Секта Фонаря\"}}\n";
    let ndjson = [("Content-Type", "application/x-ndjson")];
    let appended = request(&server.url, "POST", "/v1/books/b/events", &ndjson, lines);
    assert_eq!(appended.status, 200, "{}", appended.body);
    let edited = request(&server.url, "PATCH", "/v1/books/b/terms/T-1", &[], r#"{"note":"главный герой"}"#);
    assert_eq!(edited.status, 200, "{}", edited.body);

    let log = request(&server.url, "GET", "/v1/books/b/events", &[], "");
    assert_eq!(log.status, 200, "{}", log.body);
    let actors: Vec<String> = log
        .body
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["actor"].as_str().unwrap().to_owned())
        .collect();
    // A book's first event is the use case's own actor's, over HTTP as in the CLI.
    assert_eq!(actors, ["system:init", "tool:api", "tool:api", "tool:api"], "{}", log.body);
    server.stop();
}

/// `impact?since=0` answered 500 (`corrupted`): revision 0 has no config, so
/// nothing can be assembled against it. It is a bad request.
#[test]
fn impact_since_revision_0_is_a_bad_request() {
    let (_books, server) = server_with_book(r#"{"profile":"zh","actor":"human:editor"}"#);
    let answer = request(&server.url, "GET", "/v1/books/b/impact?since=0", &[], "");
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/problem+json"));
    let problem = answer.json();
    assert_eq!(problem["type"], "urn:lorebank:problem:invalid");
    assert_eq!(problem["at"], "since");
    assert_eq!(problem["detail"], "impact since revision 0: revisions start at 1 (revision 0 is the empty book)");
    let answer = request(&server.url, "GET", "/v1/books/b/impact?since=1", &[], "");
    assert_eq!(answer.status, 200, "{}", answer.body);
    server.stop();
}

#[test]
fn the_committed_openapi_document_is_the_served_one() {
    let books = tempfile::tempdir().unwrap();
    let server = Server::start(books.path());
    let served = request(&server.url, "GET", "/openapi.json", &[], "");
    server.stop();
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json")).unwrap();
    assert_eq!(served.status, 200);
    assert!(
        served.body == committed,
        "docs/openapi.json is stale: run `target/debug/lorebank openapi > docs/openapi.json`"
    );
}
