//! `lorebank serve`: one process serving the HTTP API (`crate::http`) and the audit
//! pages (`crate::ui`) over a library of books, with the limits every request
//! shares (a timeout, a body limit), the tokens, and a graceful stop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use book::{Library, LibraryLimits};

use crate::failure::Failure;
use crate::http::cluster;
use crate::http::problem::{self, Problem};
use crate::http::routes::{Limits, Server, Token};

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
    /// The translation proxy's upstream (`--upstream`).
    pub upstream: Option<UpstreamSettings>,
}

/// The translation proxy's flags (docs/proxy.md).
#[derive(Clone, Debug)]
pub struct UpstreamSettings {
    pub url: String,
    /// A PEM file of certificates to trust besides the system's (`--upstream-ca`).
    pub ca: Option<PathBuf>,
    /// The environment variable holding the upstream's key.
    pub key_env: Option<String>,
    /// The file holding the upstream's key.
    pub key_file: Option<PathBuf>,
    pub timeout: Duration,
    pub unplaced: crate::http::proxy::Unplaced,
    pub propose: bool,
}

/// The upstream of `settings`, its key read from the variable or file named (and
/// never printed).
fn upstream(settings: &UpstreamSettings) -> Result<crate::http::proxy::Upstream, Failure> {
    let endpoint = crate::input::endpoint(&crate::input::EndpointSettings {
        flags: crate::http::proxy::FLAGS,
        key_flags: ("--upstream-key-env", "--upstream-key-file"),
        url: &settings.url,
        ca: settings.ca.as_deref(),
        key_env: settings.key_env.as_deref(),
        key_file: settings.key_file.as_deref(),
        timeout: settings.timeout,
    })?;
    Ok(crate::http::proxy::Upstream {
        endpoint,
        timeout: settings.timeout,
        unplaced: settings.unplaced,
        propose: settings.propose,
    })
}

/// The whole server over `server`: the API and the pages, the timeout, the body
/// limit, and problem answers (or problem pages under `/ui/`) for unknown routes
/// and methods.
pub fn app(server: Arc<Server>, keys: Arc<crate::ui::Keys>) -> Router {
    let timeout = Duration::from_secs_f64(server.limits.timeout_s);
    let body_limit = server.limits.body_bytes_max;
    Router::new()
        .merge(crate::http::router(&server))
        .merge(crate::ui::router(&server, keys))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Inside the timeout: a request run again after a stale write is still cut off.
        .layer(middleware::from_fn_with_state(Arc::clone(&server), cluster::replicated))
        .layer(middleware::from_fn(move |request: Request, next: Next| within(timeout, request, next)))
        .layer(middleware::from_fn(move |request: Request, next: Next| declared(body_limit, request, next)))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(server)
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
    // The translation proxy bounds its own wait for the upstream (--upstream-timeout).
    if request.uri().path().starts_with("/proxy/") {
        return next.run(request).await;
    }
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
        return closing(Problem::body_too_large(Some(limit)).into_response());
    }
    let response = next.run(request).await;
    if response.extensions().get::<problem::BodyTooLarge>().is_some() {
        return closing(Problem::body_too_large(Some(limit)).into_response());
    }
    response
}

/// `response` with `Connection: close`: the request's body was not read to its end,
/// so the connection cannot carry another request, and a client that keeps
/// connections open is told so instead of finding it closed under its next request.
fn closing(mut response: Response) -> Response {
    response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    response
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
    let upstream = settings.upstream.as_ref().map(upstream).transpose()?;
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
    let keys = Arc::new(crate::ui::Keys::generate().map_err(Failure::io)?);
    let mut server =
        Server::new(library, settings.limits, tokens).with_embedding(settings.embed.clone()).with_upstream(upstream);
    if let Some(joined) = &joined {
        server = server.with_cluster(Arc::clone(joined));
    }
    let server = Arc::new(server);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|error| Failure::io(format!("cannot listen on {address}: {error}")))?;
        let bound = listener.local_addr().map_err(|error| Failure::io(error.to_string()))?;
        // The signal handlers are in place before anyone is told the server listens:
        // a SIGTERM sent right after the first answer stops it gracefully, even if the
        // accept loop has not come round to wait for the signal yet.
        let shutdown = shutdown_signal();
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
        serve(listener, app(Arc::clone(&server), keys), timeout, shutdown).await;
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
async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    timeout: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
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

/// SIGTERM or SIGINT. The handlers are registered when this is called (inside the
/// runtime), not when the future is first polled: a signal in between would
/// otherwise take its default action and kill the process without finishing what is
/// in flight.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let registered = {
        use tokio::signal::unix::{signal, SignalKind};
        signal(SignalKind::terminate()).and_then(|terminate| Ok((terminate, signal(SignalKind::interrupt())?)))
    };
    async move {
        #[cfg(unix)]
        match registered {
            Ok((mut terminate, mut interrupt)) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = interrupt.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        errln!("lorebank serve: shutting down; finishing the requests in flight");
    }
}
