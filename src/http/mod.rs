//! The HTTP/JSON API over a library of books (`/v1`, axum on tokio), with its
//! OpenAPI document, auth and problem answers.
//!
//! An adapter like the CLI: each handler parses, makes one call on the book
//! service, and renders. Books are opened on demand and closed when idle or least
//! recently used ([`book::Library`]); receipts recorded by concurrent requests on
//! one book are group-committed by its ledger's writer thread. docs/http.md is the
//! reference; `/openapi.json` (committed as docs/openapi.json) the contract. The
//! process that serves it (`lorebank serve`, with the audit pages beside it) is
//! the `serve` module; this module knows nothing of the pages.

pub mod api;
pub mod audit;
pub mod cluster;
pub mod problem;
pub mod proxy;
pub mod requests;
pub mod routes;

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use subtle::ConstantTimeEq;

use problem::Problem;
use projections::Reader;
use routes::Server;

/// The resident set size of this process, in bytes (0 where /proc is missing).
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|field| field.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// The API's routes over `server`: `/openapi.json` and every `/v1` route behind the
/// auth check. The process around them (timeouts, body limit, fallbacks, the pages)
/// is `serve::app`.
pub fn router(server: &Arc<Server>) -> Router<Arc<Server>> {
    let books = Router::new()
        .route("/v1/status", get(routes::status))
        .route("/v1/books", get(routes::list_books))
        .route("/v1/books/{book}", get(routes::book_info).put(routes::create_book))
        .route("/v1/books/{book}/events", get(routes::log).post(routes::append))
        .route("/v1/books/{book}/glossary", get(routes::glossary))
        .route("/v1/books/{book}/terms/{id}", get(routes::term_show).patch(routes::term_edit))
        .route("/v1/books/{book}/snapshot", get(routes::snapshot))
        .route("/v1/books/{book}/diff", get(routes::diff))
        .route("/v1/books/{book}/rollback", post(routes::rollback))
        .route("/v1/books/{book}/verify", post(routes::verify))
        .route("/v1/books/{book}/rebuild", post(routes::rebuild))
        .route("/v1/books/{book}/assemble", post(routes::assemble))
        .route("/v1/books/{book}/chapters/{chapter}/assemble", post(routes::assemble_chapter))
        .route("/v1/books/{book}/receipts/{id}", get(routes::receipt))
        .route("/v1/books/{book}/receipts/{id}/replay", post(routes::replay_receipt))
        .route("/v1/books/{book}/replay", post(routes::replay_snapshot))
        .route("/v1/books/{book}/audit", get(routes::audit))
        .route("/v1/books/{book}/impact", get(routes::impact).post(routes::impact_with))
        .route("/v1/books/{book}/names/lint", get(routes::names_lint))
        .route("/v1/books/{book}/import", post(routes::import))
        .route("/v1/books/{book}/export", get(routes::export))
        .route("/v1/books/{book}/receipts/{id}/check", post(routes::check))
        .route("/v1/books/{book}/review", get(routes::review_list))
        .route("/v1/books/{book}/review/{id}", get(routes::review_item))
        .route("/v1/books/{book}/review/{id}/accept", post(routes::review_accept))
        .route("/v1/books/{book}/review/{id}/reject", post(routes::review_reject))
        .route("/v1/books/{book}/review/{id}/verify", post(routes::review_verify))
        .route("/v1/books/{book}/chapters/{chapter}/scan", post(routes::scan))
        .route("/v1/books/{book}/profile", get(routes::profile_check))
        .route("/v1/books/{book}/coverage", get(routes::coverage))
        .route("/v1/books/{book}/expected", post(routes::expect_import))
        .route("/v1/books/{book}/source", get(routes::source_list).post(routes::source_import))
        .route("/v1/books/{book}/source/{chapter}", get(routes::source_show).put(routes::source_put))
        .route("/v1/books/{book}/embedding", get(routes::embedding_status).put(routes::embedding_set_model))
        .route("/v1/books/{book}/embedding/refresh", post(routes::embedding_refresh))
        .route("/v1/books/{book}/chapters/{chapter}/suggest", post(routes::suggest))
        .route("/v1/books/{book}/dedupe", post(routes::dedupe))
        .route("/v1/books/{book}/overview", get(audit::overview_json))
        .route("/v1/books/{book}/events/{seq}", get(audit::event_json))
        .route("/v1/books/{book}/chapters/{chapter}/audit", get(audit::chapter_json))
        .route("/v1/books/{book}/terms/{id}/timeline", get(audit::timeline_json))
        .route("/v1/books/{book}/rollback/preview", get(audit::preview_json))
        .route("/v1/books/{book}/review/queue", get(audit::queue_json))
        .route("/v1/books/{book}/records", get(audit::records_json))
        .merge(proxy_routes(server))
        .route_layer(middleware::from_fn_with_state(Arc::clone(server), authorize));
    Router::new().route("/openapi.json", get(openapi)).merge(books)
}

/// The translation proxy's routes (docs/proxy.md), when the server has an upstream;
/// not part of `/v1` or its OpenAPI document.
fn proxy_routes(server: &Arc<Server>) -> Router<Arc<Server>> {
    if server.upstream.is_none() {
        return Router::new();
    }
    let mut routes = Router::new();
    for prefix in
        ["/proxy/{book}", "/proxy/{book}/chapters/{chapter}", "/proxy/{book}/chapters/{chapter}/chunks/{chunk}"]
    {
        routes = routes
            .route(&format!("{prefix}/v1/chat/completions"), post(proxy::chat))
            .route(&format!("{prefix}/v1/models"), get(proxy::models));
    }
    routes
}

async fn openapi() -> Response {
    let mut response = api::document().into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

/// The routes a party may use (method, route): those that read through the party's
/// view of a book. Every other route reads or writes the book's full view.
pub const PARTY_ROUTES: &[(&str, &str)] = &[
    ("GET", "/v1/status"),
    ("GET", "/v1/books"),
    ("GET", "/v1/books/{book}"),
    ("GET", "/v1/books/{book}/glossary"),
    ("POST", "/v1/books/{book}/assemble"),
    ("POST", "/v1/books/{book}/chapters/{chapter}/assemble"),
    ("GET", "/v1/books/{book}/receipts/{id}"),
    ("POST", "/v1/books/{book}/receipts/{id}/replay"),
    ("POST", "/v1/books/{book}/replay"),
    ("GET", "/v1/books/{book}/export"),
];

/// The header a caller with the full view reads as a party with.
pub const PARTY_HEADER: &str = "lorebank-party";

/// The routes that append events (method, route), each through one claim of its
/// `Idempotency-Key` (`routes::write_once`; creating a book, the same claim on the
/// new book): the only routes that take the header. Every other route refuses it
/// (400), since nothing there would honour it.
pub const KEYED_ROUTES: &[(&str, &str)] = &[
    ("PUT", "/v1/books/{book}"),
    ("POST", "/v1/books/{book}/events"),
    ("PATCH", "/v1/books/{book}/terms/{id}"),
    ("POST", "/v1/books/{book}/rollback"),
    ("POST", "/v1/books/{book}/import"),
    ("POST", "/v1/books/{book}/receipts/{id}/check"),
    ("POST", "/v1/books/{book}/review/{id}/accept"),
    ("POST", "/v1/books/{book}/review/{id}/reject"),
    ("POST", "/v1/books/{book}/review/{id}/verify"),
    ("POST", "/v1/books/{book}/chapters/{chapter}/scan"),
    ("POST", "/v1/books/{book}/expected"),
    ("POST", "/v1/books/{book}/source"),
    ("PUT", "/v1/books/{book}/source/{chapter}"),
    ("PUT", "/v1/books/{book}/embedding"),
    ("POST", "/v1/books/{book}/chapters/{chapter}/suggest"),
    ("POST", "/v1/books/{book}/dedupe"),
];

/// The `Lorebank-Party` header of a request: `None` without one, 400 for one that
/// names no party `kind:name`.
pub fn asked_party(headers: &header::HeaderMap) -> Result<Option<String>, Problem> {
    match headers.get(PARTY_HEADER).map(|value| value.to_str()) {
        None => Ok(None),
        Some(Ok(party)) if ledger_model::validate::is_party(party.trim()) => Ok(Some(party.trim().to_owned())),
        Some(_) => Err(Problem::invalid("header Lorebank-Party: expected a party `kind:name`").at("Lorebank-Party")),
    }
}

/// The refusal of a `Lorebank-Party` header on `method route`, which reads the
/// book's full view (every route not in [`PARTY_ROUTES`], and every page under
/// `/ui/`).
pub fn party_refused(method: &str, route: &str) -> Problem {
    Problem::invalid(format!(
        "header Lorebank-Party: {method} {route} reads the book's full view; a party reads the glossary, assembles, replays its receipts and exports"
    ))
    .at("Lorebank-Party")
}

/// With tokens set, every `/v1` request must carry `Authorization: Bearer TOKEN`
/// (compared in constant time with every token). A token bound to a party reads as
/// that party, on the routes of [`PARTY_ROUTES`] only (403 elsewhere, and for a
/// `Lorebank-Party` header naming another party); a token bound to none, or no
/// token on a server without tokens, reads the full view, or the party its
/// `Lorebank-Party` header names. The reader goes to the handler as an extension.
async fn authorize(State(server): State<Arc<Server>>, mut request: Request, next: Next) -> Response {
    let mut bound: Option<Option<String>> = None;
    if !server.tokens.is_empty() {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            // The scheme is case-insensitive (RFC 9110, section 11.1).
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, given)| given.trim_start().as_bytes())
            .unwrap_or_default();
        // Every token is compared, so the time taken does not say which matched.
        let mut matched = None;
        for token in &server.tokens {
            if bool::from(given.ct_eq(&token.secret)) {
                matched = Some(token.party.clone());
            }
        }
        match matched {
            Some(party) => bound = Some(party),
            None => {
                return Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token")
                    .into_response();
            }
        }
    }
    let asked = match asked_party(request.headers()) {
        Ok(asked) => asked,
        Err(problem) => return problem.into_response(),
    };
    let route = request.extensions().get::<MatchedPath>().map(|path| path.as_str().to_owned()).unwrap_or_default();
    let party_route = PARTY_ROUTES.iter().any(|(method, path)| request.method().as_str() == *method && *path == route);
    let keyed_route = KEYED_ROUTES.iter().any(|(method, path)| request.method().as_str() == *method && *path == route);
    if request.headers().contains_key(routes::IDEMPOTENCY_KEY) && !keyed_route {
        return Problem::invalid(format!(
            "header Idempotency-Key: {} {route} appends no events, so nothing would honour the key; only the writes take one",
            request.method()
        ))
        .at("Idempotency-Key")
        .into_response();
    }
    let reader = match (bound.flatten(), asked) {
        (Some(bound), Some(asked)) if asked != bound => {
            return Problem::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("this token reads as {bound}; it cannot read as {asked}"),
            )
            .into_response();
        }
        (Some(bound), _) if !party_route => {
            return Problem::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "this token reads as {bound}, which may only read what is released to it (glossary, assemble, receipts, replay, export); {} {route} reads the book's full view",
                    request.method()
                ),
            )
            .into_response();
        }
        (None, Some(_)) if !party_route => {
            return party_refused(request.method().as_str(), &route).into_response();
        }
        (Some(party), _) | (None, Some(party)) => Reader::Party(party),
        (None, None) => Reader::Full,
    };
    request.extensions_mut().insert(reader);
    next.run(request).await
}
