//! `lorebank serve`: the HTTP/JSON API over a library of books (axum on tokio).
//!
//! An adapter like the CLI: each handler parses, makes one call on the book
//! service, and renders. Books are opened on demand and closed when idle or least
//! recently used ([`book::Library`]); receipts recorded by concurrent requests on
//! one book are group-committed by its ledger's writer thread. docs/http.md is the
//! reference; `/openapi.json` (committed as docs/openapi.json) the contract.

pub mod api;
pub mod audit;
pub mod cluster;
pub mod problem;
pub mod routes;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use book::{Library, LibraryLimits};
use subtle::ConstantTimeEq;

use crate::failure::Failure;
use problem::Problem;
use projections::Reader;
use routes::{Limits, Server, Token};

/// How the server is set up (the flags of `lorebank serve`).
#[derive(Clone, Debug)]
pub struct Settings {
    pub dir: PathBuf,
    pub listen: String,
    pub token_file: Option<PathBuf>,
    pub max_open_books: usize,
    /// The open books' memory by their own estimate, past which idle ones close.
    pub max_open_bytes: Option<u64>,
    pub idle_close: Duration,
    pub limits: Limits,
    /// The embedding model files (`--embed-model`, `--embed-tokenizer`).
    pub embed: Option<suggest::ModelFiles>,
    /// The replicated library to join (`--cluster`).
    pub cluster: Option<cluster::ClusterSettings>,
}

/// The resident set size of this process, in bytes (0 where /proc is missing).
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|field| field.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// The router over `server`: every route, the auth check, the timeout, the body
/// limit, and problem answers for unknown routes and methods.
pub fn router(server: Arc<Server>) -> Router {
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
        .route("/v1/books/{book}/impact", get(routes::impact))
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
        .route_layer(middleware::from_fn_with_state(Arc::clone(&server), authorize));
    let timeout = Duration::from_secs_f64(server.limits.timeout_s);
    let body_limit = server.limits.body_bytes_max;
    Router::new()
        .route("/openapi.json", get(openapi))
        .merge(books)
        .merge(crate::ui::router(Arc::clone(&server)))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Inside the timeout: a request run again after a stale write is still cut off.
        .layer(middleware::from_fn_with_state(Arc::clone(&server), cluster::replicated))
        .layer(middleware::from_fn(move |request: Request, next: Next| within(timeout, request, next)))
        .layer(middleware::from_fn(move |request: Request, next: Next| declared(body_limit, request, next)))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(server)
}

async fn openapi() -> Response {
    let mut response = api::document().into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

async fn not_found(request: Request) -> Response {
    let problem = Problem::not_found(format!("no route {} {}", request.method(), request.uri().path()));
    // A person following a link under /ui/ gets a page, a program a problem.
    if is_ui(&request) {
        return crate::ui::problem_page(&problem);
    }
    problem.into_response()
}

fn is_ui(request: &Request) -> bool {
    let path = request.uri().path();
    path == "/ui" || path.starts_with("/ui/")
}

async fn method_not_allowed(request: Request) -> Response {
    let problem = Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        format!("{} is not allowed on {}", request.method(), request.uri().path()),
    );
    if is_ui(&request) {
        return crate::ui::problem_page(&problem);
    }
    problem.into_response()
}

/// Cuts a request off after `timeout`, body reading included: a client that
/// trickles its body holds neither a book nor the writer, only its connection.
async fn within(timeout: Duration, request: Request, next: Next) -> Response {
    match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => Problem::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!(
                "the request took longer than {:.1} s; a write may still complete (retry with the same Idempotency-Key)",
                timeout.as_secs_f64()
            ),
        )
        .into_response(),
    }
}

/// Answers 413 at once to a request whose declared `Content-Length` is over the
/// body limit, instead of waiting for a body it would refuse anyway; a body streamed
/// without one is read to one byte past the limit and refused there (axum's
/// `DefaultBodyLimit`), and this names the limit in that answer too.
async fn declared(limit: usize, request: Request, next: Next) -> Response {
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if length.is_some_and(|length| length > limit as u64) {
        return Problem::body_too_large(Some(limit)).into_response();
    }
    let response = next.run(request).await;
    if response.extensions().get::<problem::BodyTooLarge>().is_some() {
        return Problem::body_too_large(Some(limit)).into_response();
    }
    response
}

/// The routes a party may use (method, route): those that read through the party's
/// view of a book. Every other route reads or writes the book's full view.
const PARTY_ROUTES: &[(&str, &str)] = &[
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
    ("POST", "/v1/books/{book}/review/{id}/accept"),
    ("POST", "/v1/books/{book}/review/{id}/reject"),
    ("POST", "/v1/books/{book}/review/{id}/verify"),
    ("POST", "/v1/books/{book}/chapters/{chapter}/scan"),
    ("POST", "/v1/books/{book}/expected"),
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

/// Reads the tokens of `--token-file`: one per line, at least 16 bytes, optionally
/// followed by a space and the party it reads as; blank lines and lines starting
/// with `#` are skipped.
fn read_tokens(path: &std::path::Path) -> Result<Vec<Token>, Failure> {
    let bytes = crate::input::read_bounded(path, crate::input::TOKEN_FILE)
        .map_err(|failure| Failure::invalid(format!("--token-file {}", failure.message)))?;
    let text = String::from_utf8(bytes)
        .map_err(|error| Failure::invalid(format!("--token-file {}: {error}", path.display())))?;
    let mut tokens = Vec::new();
    for (line_idx, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("--token-file {} line {}", path.display(), line_idx + 1);
        let (secret, party) = match line.split_once(char::is_whitespace) {
            Some((secret, party)) => (secret, Some(party.trim().to_owned())),
            None => (line, None),
        };
        if secret.len() < 16 {
            return Err(Failure::invalid(format!("{}: a token must be at least 16 characters", at())));
        }
        if let Some(party) = party.as_deref().filter(|party| !ledger_model::validate::is_party(party)) {
            return Err(Failure::invalid(format!("{}: {party:?} is not a party `kind:name`", at())));
        }
        if tokens.iter().any(|token: &Token| token.secret == secret.as_bytes()) {
            return Err(Failure::invalid(format!("{}: the token is given twice", at())));
        }
        tokens.push(Token { secret: secret.as_bytes().to_vec(), party });
    }
    if tokens.is_empty() {
        return Err(Failure::invalid(format!("--token-file {}: no token in it", path.display())));
    }
    Ok(tokens)
}

/// Runs the server until SIGTERM or SIGINT: then it stops accepting, finishes the
/// requests in flight, and closes every book (each waiting for its background
/// checkpoint). Every acknowledged write was durable before it was acknowledged.
pub fn run(settings: Settings) -> Result<(), Failure> {
    let address: SocketAddr = settings
        .listen
        .parse()
        .map_err(|_| Failure::invalid(format!("--listen {:?}: expected IP:PORT (127.0.0.1:7373)", settings.listen)))?;
    let tokens = settings.token_file.as_deref().map(read_tokens).transpose()?.unwrap_or_default();
    if !address.ip().is_loopback() && tokens.is_empty() {
        return Err(Failure::invalid(format!(
            "--listen {address} is not a loopback address: pass --token-file so that clients must authenticate"
        )));
    }
    let limits = LibraryLimits {
        max_open: settings.max_open_books,
        max_open_bytes: settings.max_open_bytes.unwrap_or(u64::MAX),
        idle: settings.idle_close,
        open_wait: Duration::from_secs(5),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::io(format!("cannot start the runtime: {error}")))?;
    let joined = match &settings.cluster {
        Some(cluster) => Some(Arc::new(runtime.block_on(cluster::connect(cluster))?)),
        None => None,
    };
    let library = match &joined {
        Some(joined) => {
            Library::with_origin(&settings.dir, limits, Arc::clone(&joined.origin) as Arc<dyn book::Origin>)?
        }
        None => Library::new(&settings.dir, limits)?,
    };
    let keys = crate::ui::Keys::generate().map_err(Failure::io)?;
    let mut server = Server::new(library, settings.limits, tokens, keys).with_embedding(settings.embed.clone());
    if let Some(joined) = &joined {
        server = server.with_cluster(Arc::clone(joined));
    }
    let server = Arc::new(server);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|error| Failure::io(format!("cannot listen on {address}: {error}")))?;
        let bound = listener.local_addr().map_err(|error| Failure::io(error.to_string()))?;
        // One line a supervisor (or a test) can wait for.
        match &settings.cluster {
            Some(cluster) => errln!(
                "lorebank serve: listening on http://{bound} (library {} through {}, copies in {})",
                cluster.library,
                cluster.urls,
                settings.dir.display()
            ),
            None => errln!("lorebank serve: listening on http://{bound} (books in {})", settings.dir.display()),
        }
        cluster::spawn_followers(Arc::clone(&server));
        let idle = Arc::clone(&server);
        let reaper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1).max(idle.library.status().limits.idle / 4));
            loop {
                tick.tick().await;
                let library = Arc::clone(&idle);
                let _ = tokio::task::spawn_blocking(move || library.library.close_idle()).await;
            }
        });
        let timeout = Duration::from_secs_f64(server.limits.timeout_s);
        serve(listener, router(Arc::clone(&server)), timeout).await;
        reaper.abort();
        Ok::<(), Failure>(())
    })?;
    // A node that stops leaves its newest checkpoints for the nodes that open its
    // books next.
    cluster::share_checkpoints(&server);
    let closed = server.library.close_all();
    errln!("lorebank serve: stopped; closed {closed} book(s)");
    Ok(())
}

/// Serves `app` on `listener` until SIGTERM or SIGINT, then stops accepting and
/// lets the requests in flight finish. A connection must send each request's
/// headers within `timeout`: a client that trickles them is cut off, like one that
/// trickles its body (axum::serve sets no timer, so hyper would wait forever).
async fn serve(listener: tokio::net::TcpListener, app: Router, timeout: Duration) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown_signal());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors or the like: wait a little, as axum::serve does.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(timeout);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // A connection's errors (a client that went away, a cut-off) are its own.
            let _ = connection.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    errln!("lorebank serve: shutting down; finishing the requests in flight");
}
