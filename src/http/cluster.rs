//! `lorebank serve --cluster`: the library's books are subjects of a NATS JetStream
//! stream and this node's files are their verified copies (`docs/scale.md`).
//!
//! What the server adds to a single node: the [`cluster::ClusterOrigin`] behind its
//! library; a middleware that catches a book up before a write when a prompt said it
//! has news (and before a read that asks for `Lorebank-Min-Revision`), and runs a
//! request again, caught up, when its write was stale (another node wrote first:
//! nothing of it was written); and the followers that keep open books current (a
//! prompt on every other node's publish, a sweep every 5 s) and share their
//! checkpoints every 30 s and when the server stops.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cluster::{ClusterOrigin, JetStream, JetStreamOptions, Policy};
use futures_util::StreamExt;

use super::problem::Problem;
use super::routes::Server;
use crate::failure::Failure;

/// How to join a library (the flags of `lorebank serve --cluster`).
#[derive(Clone, Debug)]
pub struct ClusterSettings {
    /// The NATS servers, comma-separated.
    pub urls: String,
    /// The library: the stream `lorebank-LIBRARY`.
    pub library: String,
    /// Replicas of the stream when this node creates it.
    pub replicas: usize,
    /// Publish books of their own found in the directory into the library.
    pub seed: bool,
}

/// A library joined: its origin and its log.
pub struct Cluster {
    pub origin: Arc<ClusterOrigin>,
    pub log: Arc<JetStream>,
    pub settings: ClusterSettings,
}

/// The header a client asks for read-your-writes with: the revision (a write's
/// `head`) the node must have before it answers.
pub const MIN_REVISION_HEADER: &str = "lorebank-min-revision";
/// Times a request whose write was stale is run in all (each lost race means another
/// write won it, so the book moves on; a request that loses this many in a row gets
/// the 409, as does one cut off by the request timeout first).
const ATTEMPTS: usize = 32;
/// How long a read waits for the revision it asked for.
const MIN_REVISION_WAIT: Duration = Duration::from_secs(5);

/// Joins the library: connects and finds or creates its stream (within 30 s).
pub async fn connect(settings: &ClusterSettings) -> Result<Cluster, Failure> {
    book::library::check_name(&settings.library).map_err(|error| Failure::invalid(format!("--library: {error}")))?;
    let options = JetStreamOptions {
        urls: settings.urls.clone(),
        library: settings.library.clone(),
        replicas: settings.replicas,
        timeout: Duration::from_secs(5),
    };
    let runtime = tokio::runtime::Handle::current();
    let log = tokio::time::timeout(Duration::from_secs(30), JetStream::connect(&options, runtime))
        .await
        .map_err(|_| Failure::io(format!("--cluster {}: no answer within 30 s", settings.urls)))?
        .map_err(|error| Failure::io(format!("--cluster {}: {error}", settings.urls)))?;
    let log = Arc::new(log);
    let policy = Policy { part_bytes_max: log.max_payload().saturating_sub(4096).max(4096), ..Policy::default() };
    let origin = ClusterOrigin::new(&settings.library, Arc::clone(&log) as Arc<dyn cluster::Log>, policy)
        .map_err(|error| Failure::invalid(error.to_string()))?
        .seeding(settings.seed);
    Ok(Cluster { origin: Arc::new(origin), log, settings: settings.clone() })
}

/// The book a request path names: `/v1/books/{book}…` or `/ui/books/{book}…`
/// (checked as a book name).
fn book_in(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/v1/books/").or_else(|| path.strip_prefix("/ui/books/"))?;
    let name = rest.split('/').next()?;
    book::library::check_name(name).ok().map(|()| name)
}

/// The head of book `name` after catching it up (in cluster mode; with `lazy`, only
/// when a prompt said the subject has news), or as it is, and why the catch-up
/// stopped short, if it did; `None` when the library has no such book (the handler
/// answers that).
async fn caught_up(server: &Arc<Server>, name: &str, lazy: bool) -> Result<Option<(u64, Option<String>)>, Problem> {
    let (server, name) = (Arc::clone(server), name.to_owned());
    super::routes::blocking(move || {
        let Ok(open) = server.library.open(&name) else { return Ok(None) };
        // A write meets a refusal again in the gate, which answers it; a read goes on
        // at the revision this node has.
        let cluster = server.cluster.as_ref().filter(|cluster| !lazy || cluster.origin.is_behind(&name));
        let refused = match cluster.and_then(|cluster| cluster.origin.sync(&name)) {
            Some(Err(error)) => Some(error.to_string()),
            _ => None,
        };
        let head = open.lock().ledger().head().map_err(book::BookError::from)?;
        Ok(Some((head.seq.0, refused)))
    })
    .await
}

/// Catches a book up before a write (when it was prompted), or before a read with
/// `Lorebank-Min-Revision` (waiting up to 5 s for that revision), and runs a request
/// again, after catching up, when its write was stale: another node of the library
/// wrote first, and nothing of this attempt was written (`docs/scale.md`).
pub async fn replicated(State(server): State<Arc<Server>>, request: Request, next: Next) -> Response {
    let Some(name) = book_in(request.uri().path()).map(str::to_owned) else { return next.run(request).await };
    let min_revision = match request.headers().get(MIN_REVISION_HEADER).map(|value| value.to_str()) {
        None => None,
        Some(Ok(text)) => match text.trim().parse::<u64>() {
            Ok(revision) => Some(revision),
            Err(_) => {
                return Problem::invalid("header Lorebank-Min-Revision: expected a revision (a write's `head`)")
                    .at("Lorebank-Min-Revision")
                    .into_response();
            }
        },
        Some(Err(_)) => {
            return Problem::invalid("header Lorebank-Min-Revision: expected a revision (a write's `head`)")
                .at("Lorebank-Min-Revision")
                .into_response();
        }
    };
    let write = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if let Some(revision) = min_revision {
        let deadline = Instant::now() + MIN_REVISION_WAIT;
        loop {
            let (head, refused) = match caught_up(&server, &name, false).await {
                Ok(Some(found)) => found,
                Ok(None) => break,
                Err(problem) => return problem.into_response(),
            };
            if head >= revision {
                break;
            }
            if Instant::now() >= deadline || server.cluster.is_none() || refused.is_some() {
                let why = refused.map_or_else(String::new, |refused| format!(": {refused}"));
                return Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    format!(
                        "book {name} is at revision {head} on this node; revision {revision} has not reached it{why}"
                    ),
                )
                .into_response();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    if server.cluster.is_none() || !write {
        return next.run(request).await;
    }
    // The body is kept so the request can run again.
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, server.limits.body_bytes_max).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Problem::body_too_large(Some(server.limits.body_bytes_max)).into_response();
        }
    };
    let mut pause = Duration::from_millis(2);
    for attempt in 1..=ATTEMPTS {
        // The first attempt catches up only when the book has news: the gate finds
        // out anyway if another node wrote first, and a stale attempt catches up.
        if let Err(problem) = caught_up(&server, &name, attempt == 1).await {
            return problem.into_response();
        }
        let response = next.clone().run(Request::from_parts(parts.clone(), Body::from(bytes.clone()))).await;
        if response.extensions().get::<super::problem::Stale>().is_none() || attempt == ATTEMPTS {
            return response;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    unreachable!("the last attempt returns its response")
}

/// Keeps the open books current: a catch-up of a book when a server tells this node
/// that its subject has a new message (a core NATS subscription, a prompt only), and
/// of every open book every 5 s; shares the books' checkpoints every 30 s. A refused
/// message is reported on stderr once, when it is first seen.
pub fn spawn_followers(server: Arc<Server>) {
    let Some(cluster) = server.cluster.as_ref() else { return };
    let (prompts, mut prompted) = tokio::sync::mpsc::unbounded_channel::<String>();
    let client = cluster.log.client();
    let origin = Arc::clone(&cluster.origin);
    let prefix = origin.prefix();
    tokio::spawn(async move {
        let Ok(mut subscriber) = client.subscribe(format!("{prefix}*")).await else { return };
        while let Some(message) = subscriber.next().await {
            if let Some(name) = origin.book_of(message.subject.as_str()) {
                origin.prompt(name);
                if prompts.send(name.to_owned()).is_err() {
                    return;
                }
            }
        }
    });
    tokio::spawn(async move {
        let mut sweep = tokio::time::interval(Duration::from_secs(5));
        let mut share =
            tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_secs(30), Duration::from_secs(30));
        let mut reported: BTreeMap<String, String> = BTreeMap::new();
        loop {
            let names: Vec<String> = tokio::select! {
                Some(first) = prompted.recv() => {
                    let mut names = vec![first];
                    while let Ok(name) = prompted.try_recv() {
                        names.push(name);
                    }
                    names.sort();
                    names.dedup();
                    names
                }
                _ = sweep.tick() => server.cluster.as_ref().map(|c| c.origin.books().into_iter().map(|book| book.name).collect()).unwrap_or_default(),
                _ = share.tick() => {
                    let server = Arc::clone(&server);
                    let _ = tokio::task::spawn_blocking(move || share_checkpoints(&server)).await;
                    continue;
                }
            };
            let follower = Arc::clone(&server);
            let errors = tokio::task::spawn_blocking(move || {
                let Some(cluster) = &follower.cluster else { return Vec::new() };
                names
                    .into_iter()
                    .map(|name| {
                        let error = match cluster.origin.sync(&name) {
                            Some(Err(error)) => Some(error.to_string()),
                            _ => None,
                        };
                        (name, error)
                    })
                    .collect()
            })
            .await
            .unwrap_or_default();
            for (name, error) in errors {
                match error {
                    Some(error) if reported.get(&name) != Some(&error) => {
                        errln!("lorebank serve: {error}");
                        reported.insert(name, error);
                    }
                    Some(_) => {}
                    None => {
                        reported.remove(&name);
                    }
                }
            }
        }
    });
}

/// Shares the checkpoints of the open books (blocking): every 30 s, and when the
/// server stops.
pub fn share_checkpoints(server: &Server) {
    let Some(cluster) = &server.cluster else { return };
    let ledgers: Vec<(String, Arc<ledger::Ledger>)> = cluster
        .origin
        .books()
        .into_iter()
        .filter_map(|book| {
            let open = server.library.open(&book.name).ok()?;
            let ledger = open.lock().ledger_handle();
            Some((book.name, ledger))
        })
        .collect();
    cluster.origin.share_checkpoints(&ledgers);
}

/// The cluster part of `GET /v1/status`.
pub fn status(cluster: &Cluster) -> serde_json::Value {
    let books: Vec<serde_json::Value> = cluster
        .origin
        .books()
        .into_iter()
        .map(|book| {
            serde_json::json!({
                "book": book.name,
                "position": book.position,
                "head": book.head.0,
                "halted": book.halted,
                "last_skipped": book.last_skipped,
                "checkpoint_taken": book.checkpoint_taken,
            })
        })
        .collect();
    serde_json::json!({
        "library": cluster.settings.library,
        "stream": cluster::nats::stream_name(&cluster.settings.library),
        "servers": cluster.settings.urls,
        "max_payload": cluster.log.max_payload(),
        "books": books,
    })
}
