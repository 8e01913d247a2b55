//! The handlers: each parses its request, makes one call on the library's book
//! service (off the async threads), and renders the result as the same JSON the
//! CLI's `--json` prints (`crate::render::json`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::{Body as HttpBody, Bytes};
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use book::{Actor, Book, BookError, Chunk, Claim, Labelled, Library, OpenBook, Seen, WriteOptions};
use ledger_model::*;
use projections::Reader;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::problem::Problem;
use super::requests::*;
use crate::render::json::assembled::{AssembledAnswer, ChapterAnswer};

/// What the server holds: the library, its limits, and the answers of recent
/// idempotent writes.
pub struct Server {
    pub library: Library,
    pub limits: Limits,
    /// The bearer tokens, each with the party it reads as (`None`: the full view);
    /// empty when the server takes requests without a token (loopback only).
    pub tokens: Vec<Token>,
    /// The replicated library this node belongs to (`--cluster`), if any.
    pub cluster: Option<Arc<super::cluster::Cluster>>,
    answers: Mutex<Answers>,
    /// The embedding model files and the models loaded from them.
    pub embedding: Embedding,
    /// The translation proxy's upstream (`--upstream`), if any.
    pub upstream: Option<Arc<super::proxy::Upstream>>,
}

/// One bearer token of `--token-file`.
pub struct Token {
    /// Its bytes.
    pub secret: Vec<u8>,
    /// The party a request with it reads as; `None`, the book's full view.
    pub party: Option<String>,
}

/// Limits on what one request may ask.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Events in one append.
    pub events_max: usize,
    /// Chunks in one chapter request.
    pub chunks_max: usize,
    /// Events in one page of the log.
    pub log_page_max: u64,
    /// Request body bytes.
    pub body_bytes_max: usize,
    /// Seconds a request may take.
    pub timeout_s: f64,
}

/// The answers of recent writes made with an idempotency key, so that a retry gets
/// the same answer (the durable marker in the book guards against a second append
/// even when the answer is no longer here): by book and key, the fingerprint of the
/// request, and the status and body answered.
#[derive(Default)]
struct Answers {
    by_key: BTreeMap<(String, String), (Hash32, StatusCode, Value)>,
    order: VecDeque<(String, String)>,
}

const ANSWERS_KEPT: usize = 10_000;

impl Server {
    pub fn new(library: Library, limits: Limits, tokens: Vec<Token>) -> Server {
        Server {
            library,
            limits,
            tokens,
            cluster: None,
            answers: Mutex::new(Answers::default()),
            embedding: Embedding::default(),
            upstream: None,
        }
    }

    /// The server of a translation proxy (`--upstream`).
    pub fn with_upstream(mut self, upstream: Option<super::proxy::Upstream>) -> Server {
        self.upstream = upstream.map(Arc::new);
        self
    }

    /// The server of a node of a replicated library.
    pub fn with_cluster(mut self, cluster: Arc<super::cluster::Cluster>) -> Server {
        self.cluster = Some(cluster);
        self
    }

    fn answers(&self) -> std::sync::MutexGuard<'_, Answers> {
        self.answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answer kept for `key` on `book`, if any: refused when the key came with
    /// another request.
    fn kept_answer(&self, book: &str, key: &str, claim: &Claim) -> Result<Option<(StatusCode, Value)>, Problem> {
        match self.answers().by_key.get(&(book.to_owned(), key.to_owned())) {
            Some((seen, _, _)) if *seen != claim.fingerprint() => Err(reused_key()),
            Some((_, status, answer)) => Ok(Some((*status, answer.clone()))),
            None => Ok(None),
        }
    }

    /// Keeps the answer of a write made with `key` on `book`.
    fn keep_answer(&self, book: &str, key: String, claim: &Claim, status: StatusCode, answer: &Value) {
        let mut answers = self.answers();
        let slot = (book.to_owned(), key);
        answers.order.push_back(slot.clone());
        answers.by_key.insert(slot, (claim.fingerprint(), status, answer.clone()));
        while answers.order.len() > ANSWERS_KEPT {
            if let Some(old) = answers.order.pop_front() {
                answers.by_key.remove(&old);
            }
        }
    }
}

pub type Shared = State<Arc<Server>>;

/// Runs `work` on the blocking pool: book calls read and write files.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Problem> + Send + 'static,
) -> Result<T, Problem> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(error) => {
            Err(Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "io", format!("the request's worker failed: {error}")))
        }
    }
}

pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut response = (status, serde_json::to_vec(value).unwrap_or_default()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(crate) fn ok(value: Value) -> Result<Response, Problem> {
    Ok(json_response(StatusCode::OK, &value))
}

/// A typed answer serialized to its JSON bytes, on the thread that made it.
pub(crate) fn json_bytes(answer: &impl serde::Serialize) -> Result<Vec<u8>, Problem> {
    serde_json::to_vec(answer).map_err(|error| {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the answer did not serialize: {error}"))
    })
}

/// 200 with JSON bytes made by [`json_bytes`].
pub(crate) fn ok_bytes(bytes: Vec<u8>) -> Result<Response, Problem> {
    let mut response = (StatusCode::OK, bytes).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as u64)
}

/// The book name of a path, checked before anything touches the file system.
pub(crate) fn book_name(path: Result<Path<String>, PathRejection>) -> Result<String, Problem> {
    let Path(name) = path.map_err(|rejection| Problem::invalid(format!("path: {}", rejection.body_text())))?;
    book::library::check_name(&name)?;
    Ok(name)
}

pub(crate) fn book_and<T: DeserializeOwned>(
    path: Result<Path<(String, T)>, PathRejection>,
    what: &str,
) -> Result<(String, T), Problem> {
    let Path((name, value)) =
        path.map_err(|rejection| Problem::invalid(format!("path ({what}): {}", rejection.body_text())))?;
    book::library::check_name(&name)?;
    Ok((name, value))
}

/// The query string as name → value; a repeated or unknown name is invalid.
pub(crate) struct Query(BTreeMap<String, String>);

impl Query {
    pub(crate) fn parse(raw: Option<String>, known: &[&str]) -> Result<Query, Problem> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.as_deref().unwrap_or(""))
            .map_err(|error| Problem::invalid(format!("query: {error}")))?;
        let mut map = BTreeMap::new();
        for (name, value) in pairs {
            if !known.contains(&name.as_str()) {
                return Err(Problem::invalid(format!(
                    "query parameter {name:?} is not known here (expected: {})",
                    known.join(", ")
                ))
                .at(name));
            }
            if map.insert(name.clone(), value).is_some() {
                return Err(Problem::invalid(format!("query parameter {name:?} is given twice")).at(name));
            }
        }
        Ok(Query(map))
    }

    pub(crate) fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, Problem> {
        self.0
            .get(name)
            .map(|text| {
                text.parse().map_err(|_| {
                    Problem::invalid(format!("query parameter {name}: {text:?} is not a non-negative integer in range"))
                        .at(name)
                })
            })
            .transpose()
    }

    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// Reads a query string into a request struct of [`super::requests`]: a name the
/// struct does not have, or one given twice, is invalid ([`Query::parse`]), and so is
/// a value that is not what its field holds (a number, `true` or `false`), named
/// with its parameter.
pub(crate) fn query<T: serde::de::DeserializeOwned>(raw: Option<String>) -> Result<T, Problem> {
    let query = Query::parse(raw, field_names::<T>())?;
    T::deserialize(QueryFields(&query.0)).map_err(|error| error.0)
}

/// A refusal of a query parameter while reading a query into a struct.
#[derive(Debug)]
struct QueryError(Problem);

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.detail)
    }
}

impl std::error::Error for QueryError {}

impl serde::de::Error for QueryError {
    fn custom<M: std::fmt::Display>(message: M) -> QueryError {
        QueryError(Problem::invalid(format!("query: {message}")))
    }
}

/// The parameters of a query, as a map of texts.
struct QueryFields<'a>(&'a BTreeMap<String, String>);

impl<'de> serde::Deserializer<'de> for QueryFields<'_> {
    type Error = QueryError;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_map(QueryEntries { entries: self.0.iter(), value: None })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct QueryEntries<'a> {
    entries: std::collections::btree_map::Iter<'a, String, String>,
    value: Option<(&'a str, &'a str)>,
}

impl<'de> serde::de::MapAccess<'de> for QueryEntries<'_> {
    type Error = QueryError;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, QueryError> {
        let Some((name, text)) = self.entries.next() else { return Ok(None) };
        self.value = Some((name, text));
        seed.deserialize(serde::de::value::StrDeserializer::<QueryError>::new(name)).map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, QueryError> {
        let (name, text) = self.value.take().unwrap_or_default();
        seed.deserialize(QueryValue { name, text })
    }
}

/// One parameter's value.
struct QueryValue<'a> {
    name: &'a str,
    text: &'a str,
}

impl QueryValue<'_> {
    fn number<N: std::str::FromStr>(&self) -> Result<N, QueryError> {
        self.text.parse().map_err(|_| {
            QueryError(
                Problem::invalid(format!(
                    "query parameter {}: {:?} is not a non-negative integer in range",
                    self.name, self.text
                ))
                .at(self.name),
            )
        })
    }
}

impl<'de> serde::Deserializer<'de> for QueryValue<'_> {
    type Error = QueryError;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_str(self.text)
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_some(self)
    }

    fn deserialize_bool<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        match self.text {
            "false" | "0" => visitor.visit_bool(false),
            "true" | "1" | "" => visitor.visit_bool(true),
            other => Err(QueryError(
                Problem::invalid(format!("query parameter {}: {other:?} is not true or false", self.name))
                    .at(self.name),
            )),
        }
    }

    fn deserialize_u32<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_u32(self.number()?)
    }

    fn deserialize_u64<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_u64(self.number()?)
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

pub(crate) fn chapter_number(chapter: u32, at: &str) -> Result<u32, Problem> {
    if chapter == 0 {
        return Err(Problem::invalid(format!("{at}: chapters start at 1")).at(at));
    }
    Ok(chapter)
}

pub(crate) fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, Problem> {
    body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => Problem::body_too_large(None),
        _ => Problem::invalid(format!("body: {}", rejection.body_text())),
    })
}

/// Parses a JSON request body, naming the field or position of an error.
fn json_body<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, Problem> {
    let bytes = body_bytes(body)?;
    crate::input::json_from_bytes(&bytes).map_err(|error| {
        Problem::invalid(format!(
            "body: line {}, column {}: {}",
            error.line(),
            error.column(),
            crate::input::message(&error)
        ))
    })
}

/// The body of a term edit: its members checked against the term's fields and the
/// write's (the edit's fields are flattened into the body, which serde cannot check
/// for unknown members itself), then read.
fn term_edit_body(bytes: &Bytes) -> Result<TermEditRequest, Problem> {
    let members: serde_json::Map<String, Value> = json_body(Ok(bytes.clone()))?;
    let known = TermEditRequest::members();
    if let Some(unknown) = members.keys().find(|member| !known.contains(&member.as_str())) {
        let expected: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
        return Err(Problem::invalid(format!(
            "body: unknown field `{unknown}`, expected one of {}",
            expected.join(", ")
        ))
        .at(unknown.clone()));
    }
    json_body(Ok(bytes.clone())).map_err(|problem| {
        // A flattened field's error is placed at the end of the body: name the member.
        let culprit = members.iter().find_map(|(name, value)| {
            let alone = Value::Object(serde_json::Map::from_iter([(name.clone(), value.clone())]));
            serde_json::from_value::<TermEditRequest>(alone).err().map(|error| (name, error))
        });
        match culprit {
            Some((name, error)) => {
                Problem::invalid(format!("body: {name}: {}", crate::input::message(&error))).at(name.clone())
            }
            None => problem,
        }
    })
}

/// The caller of a request without a `Lorebank-Actor` header: a valid `kind:name`,
/// since every event must have one.
pub const DEFAULT_ACTOR: &str = "tool:api";

/// The header that says who calls (`kind:name`): the actor a write records when it
/// names none and its use case has no default actor of its own. `lorebank --server`
/// sends the user at the terminal, as the CLI records locally.
pub const ACTOR_HEADER: &str = "lorebank-actor";

/// Who calls: the `Lorebank-Actor` header, else [`DEFAULT_ACTOR`].
pub struct Caller(String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, Problem> {
        match parts.headers.get(ACTOR_HEADER).map(|value| value.to_str()) {
            None => Ok(Caller(DEFAULT_ACTOR.to_owned())),
            Some(Ok(actor)) if !actor.trim().is_empty() => Ok(Caller(actor.trim().to_owned())),
            Some(_) => {
                Err(Problem::invalid("header Lorebank-Actor: expected an actor `kind:name`").at("Lorebank-Actor"))
            }
        }
    }
}

impl Caller {
    /// The actor a request names, or this caller.
    pub(crate) fn actor(&self, named: Option<String>) -> Actor {
        named.map_or_else(|| Actor::Caller(self.0.clone()), Actor::Named)
    }

    /// The write options of a request: its actor (or this caller), source and
    /// expected head.
    pub(crate) fn write(
        &self,
        actor: Option<String>,
        source: Option<String>,
        expected_head: Option<u64>,
    ) -> WriteOptions {
        write_options(self.actor(actor), source, expected_head)
    }
}

pub(crate) fn write_options(actor: Actor, source: Option<String>, expected_head: Option<u64>) -> WriteOptions {
    WriteOptions { actor, source, expect_head: expected_head.map(Seq), recorded_at_ms: now_ms() }
}

pub(crate) fn record_id(text: &str, at: &str) -> Result<RecordId, Problem> {
    text.parse().map_err(|error: RecordIdError| Problem::invalid(format!("{at}: {error}")).at(at))
}

fn hash(text: &str, at: &str) -> Result<Hash32, Problem> {
    Hash32::from_hex(text).ok_or_else(|| Problem::invalid(format!("{at}: {text:?} is not 64 hex digits")).at(at))
}

/// Opens book `name` and runs `work` on it, on the blocking pool.
pub(crate) async fn on_book<T: Send + 'static>(
    server: Arc<Server>,
    name: String,
    work: impl FnOnce(&OpenBook) -> Result<T, Problem> + Send + 'static,
) -> Result<T, Problem> {
    let library = Arc::clone(&server);
    blocking(move || {
        let open = server.library.open(&name)?;
        work(&open)
    })
    .await
    .map_err(|problem| in_library(&library, problem))
}

/// A problem names a book's file relative to the library: where the library is on
/// the server's disk is none of a client's business.
pub(crate) fn in_library(server: &Server, mut problem: Problem) -> Problem {
    let dir = server.library.status().dir;
    let prefix = format!("{}{}", dir.display(), std::path::MAIN_SEPARATOR);
    problem.detail = problem.detail.replace(&prefix, "");
    problem
}

// ----- the server and its books -----

pub async fn status(State(server): Shared) -> Result<Response, Problem> {
    let status = server.library.status();
    let limits = server.limits;
    ok(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "open_books": status.open,
        "n_open_books": status.open.len(),
        "max_open_books": status.limits.max_open,
        "idle_close_s": status.limits.idle.as_secs_f64(),
        "n_opened": status.n_opened,
        "n_closed": status.n_closed,
        "rss_bytes": super::rss_bytes(),
        "open_bytes": status.open_bytes,
        "max_open_bytes": (status.limits.max_open_bytes < u64::MAX).then_some(status.limits.max_open_bytes),
        "cluster": server.cluster.as_deref().map(super::cluster::status),
        "limits": {
            "events_max": limits.events_max,
            "chunks_max": limits.chunks_max,
            "log_page_max": limits.log_page_max,
            "body_bytes_max": limits.body_bytes_max,
            "timeout_s": limits.timeout_s,
        },
    }))
}

pub async fn list_books(State(server): Shared) -> Result<Response, Problem> {
    let names = blocking(move || Ok(server.library.list()?)).await?;
    ok(json!({ "books": names }))
}

pub async fn create_book(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    let keyed = asked.claim(&name, &bytes)?;
    let request: CreateBook = json_body(Ok(bytes))?;
    let write = caller.write(request.actor, request.source, None);
    if let Some((key, claim)) = &keyed {
        if let Some((status, answer)) = server.kept_answer(&name, key, claim)? {
            return Ok(replayed(status, &answer));
        }
    }
    let library = Arc::clone(&server);
    let (status, value, replayed_now) = blocking(move || {
        let claim = keyed.as_ref().map(|(_, claim)| *claim);
        let languages = ledger_model::LanguagesSet { source: request.source_lang, target: request.target_lang };
        match server.library.create_claimed(&name, &request.profile, &languages, &write, claim) {
            Ok(initialized) => {
                let value = crate::render::json::initialized(&name, &initialized);
                if let Some((key, claim)) = keyed {
                    server.keep_answer(&name, key, &claim, StatusCode::CREATED, &value);
                }
                Ok((StatusCode::CREATED, value, false))
            }
            // The book is there: made by this key's first request, or by another.
            Err(exists @ BookError::Open(ledger::OpenError::Exists { .. })) => {
                let Some((_, claim)) = keyed else { return Err(exists.into()) };
                let open = server.library.open(&name)?;
                let book = open.lock();
                match marked(&book, &claim)? {
                    Some(answer) => Ok((StatusCode::OK, answer, true)),
                    None => Err(exists.into()),
                }
            }
            Err(error) => Err(error.into()),
        }
    })
    .await
    .map_err(|problem| in_library(&library, problem))?;
    Ok(if replayed_now { replayed(status, &value) } else { json_response(status, &value) })
}

pub async fn book_info(State(server): Shared, path: Result<Path<String>, PathRejection>) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let value = on_book(server, name.clone(), move |open| {
        let mut book = open.lock();
        let info = book.snapshot_info(None)?;
        let languages = book.languages(None)?;
        let head = book.ledger().head().map_err(BookError::from)?;
        Ok(json!({
            "book": name,
            "head": head.seq.0,
            "hash": head.hash.to_hex(),
            "snapshot": info.snapshot.to_string(),
            "source_lang": languages.source,
            "target_lang": languages.target,
        }))
    })
    .await?;
    ok(value)
}

// ----- writes -----

fn is_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/x-ndjson") || value.starts_with("application/jsonl"))
}

/// What a write route was asked, as its `Idempotency-Key` sees it: the method, the
/// path and query, and the key (checked when the write asks for its claim).
pub struct Asked {
    method: Method,
    uri: Uri,
    key: Option<HeaderValue>,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Asked {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Asked, Self::Rejection> {
        let key = parts.headers.get(IDEMPOTENCY_KEY).cloned();
        Ok(Asked { method: parts.method.clone(), uri: parts.uri.clone(), key })
    }
}

/// The header of a write's idempotency key.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

impl Asked {
    /// The key of the request and its claim on book `name`, if it has a key: the
    /// fingerprint is of the method, the path, the query and `body`, so a retry is
    /// the same request exactly when all four are.
    fn claim(&self, name: &str, body: &[u8]) -> Result<Option<(String, Claim)>, Problem> {
        let Some(value) = &self.key else { return Ok(None) };
        // Bytes that are no text are no key either: checked as the empty key.
        let key = std::str::from_utf8(value.as_bytes()).unwrap_or_default();
        book::idempotency::check_key(key)
            .map_err(|message| Problem::invalid(format!("header Idempotency-Key: {message}")).at("Idempotency-Key"))?;
        let line = format!("{} {}", self.method, self.uri.path());
        let query = self.uri.query().unwrap_or("");
        let claim = Claim::new(name, key, &[line.as_bytes(), query.as_bytes(), body]);
        Ok(Some((key.to_owned(), claim)))
    }
}

/// The answer of a marker stored by an earlier request with the same key (on any
/// node), when the first answer is no longer kept: where its batch began and the
/// current head. `None` when the key is new to the book; refused when it came with
/// another request.
fn marked(book: &Book, claim: &Claim) -> Result<Option<Value>, Problem> {
    match book.seen(claim)? {
        Seen::New => Ok(None),
        Seen::Other => Err(reused_key()),
        Seen::Same { first } => {
            let head = book.ledger().head().map_err(BookError::from)?;
            Ok(Some(json!({ "first": first, "head": head.seq.0, "hash": head.hash.to_hex() })))
        }
    }
}

fn replayed(status: StatusCode, value: &Value) -> Response {
    let mut response = json_response(status, value);
    response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}

/// Every write that appends events to an existing book goes through here: with an
/// `Idempotency-Key`, under the book's lock, a retry of the same request (the
/// answer kept in memory, or the marker stored in the book) is answered again with
/// `Idempotent-Replayed: true` and writes nothing, the same key with another request
/// is 422, and a new key's marker goes with the first batch `work` appends
/// ([`Book::claimed`]). `body` is the request body as received.
pub(crate) async fn write_once(
    server: Arc<Server>,
    name: String,
    asked: &Asked,
    body: &[u8],
    work: impl FnOnce(&mut Book) -> Result<Value, Problem> + Send + 'static,
) -> Result<Response, Problem> {
    let keyed = asked.claim(&name, body)?;
    let (value, replayed_now) = on_book(Arc::clone(&server), name.clone(), move |open| {
        let mut book = open.lock();
        let Some((key, claim)) = keyed else { return Ok((work(&mut book)?, false)) };
        if let Some((_, answer)) = server.kept_answer(&name, &key, &claim)? {
            return Ok((answer, true));
        }
        if let Some(answer) = marked(&book, &claim)? {
            return Ok((answer, true));
        }
        let value = book.claimed(Some(claim), work)?;
        server.keep_answer(&name, key, &claim, StatusCode::OK, &value);
        Ok((value, false))
    })
    .await?;
    Ok(if replayed_now { replayed(StatusCode::OK, &value) } else { json_response(StatusCode::OK, &value) })
}

pub async fn append(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    let (bodies, write, replace) = event_bodies(&server, raw, &headers, &caller, &bytes)?;
    write_once(server, name, &asked, &bytes, move |book| {
        let written = book.append(&write, bodies, replace)?;
        Ok(crate::render::json::submitted(&written))
    })
    .await
}

/// What-if before writing (`POST …/impact`, `lorebank impact --with`): the body of an
/// append, decided against the head and never written; the chunks it would re-open.
pub async fn impact_with(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    // `replace` only silences warnings of a write; a what-if writes nothing.
    let (bodies, write, _replace) = event_bodies(&server, raw, &headers, &caller, &bytes)?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::what_if(&open.lock().impact_with(&write, bodies)?)))
            .await?;
    ok(value)
}

/// The events of an append's body, as `POST …/events` and `POST …/impact` read it:
/// NDJSON (one event body per line, as `lorebank apply`, with the write's fields in
/// the query) or a JSON `AppendRequest`; at most the server's `events_max`. Returns the
/// bodies, the write and whether a replacing put is meant.
fn event_bodies(
    server: &Server,
    raw: Option<String>,
    headers: &HeaderMap,
    caller: &Caller,
    bytes: &Bytes,
) -> Result<(Vec<Labelled>, WriteOptions, bool), Problem> {
    let (bodies, write, replace) = if is_ndjson(headers) {
        let query: AppendQuery = query(raw)?;
        let text = std::str::from_utf8(bytes)
            .map_err(|error| Problem::invalid(format!("body: not UTF-8 at byte {}", error.valid_up_to())).at("body"))?;
        let bodies =
            crate::input::event_lines(query.file.as_deref().unwrap_or("body"), text).map_err(Problem::invalid)?;
        let write = caller.write(query.actor, query.source, query.expected_head);
        (bodies, write, query.replace.unwrap_or(false))
    } else {
        Query::parse(raw, &[])?;
        let request: AppendRequest = json_body(Ok(bytes.clone()))?;
        let mut bodies = Vec::with_capacity(request.events.len());
        for (index, value) in request.events.into_iter().enumerate() {
            let label = format!("events[{index}]");
            let body: Body = serde_json::from_value(value)
                .map_err(|error| Problem::invalid(format!("{label}: {error}")).at(label.clone()))?;
            bodies.push(Labelled::at(label, body));
        }
        if bodies.is_empty() {
            return Err(Problem::invalid("events: no events").at("events"));
        }
        let write = caller.write(request.actor, request.source, request.expected_head);
        (bodies, write, request.replace.unwrap_or(false))
    };
    if bodies.len() > server.limits.events_max {
        return Err(Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            format!("{} events in one append; the limit is {}", bodies.len(), server.limits.events_max),
        ));
    }
    Ok((bodies, write, replace))
}

fn reused_key() -> Problem {
    Problem::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid",
        "Idempotency-Key was already used with a different request; nothing was written",
    )
    .at("Idempotency-Key")
}

pub async fn rollback(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    let request: RollbackRequest = json_body(Ok(bytes.clone()))?;
    let write = caller.write(request.actor, request.source, request.expected_head);
    write_once(server, name, &asked, &bytes, move |book| {
        let written = book.rollback(Seq(request.to), request.reason, &write)?;
        Ok(crate::render::json::submitted(&written))
    })
    .await
}

pub async fn term_edit(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "term id")?;
    let id = record_id(&id, "id")?;
    let bytes = body_bytes(body)?;
    let request = term_edit_body(&bytes)?;
    let edit = request.edit;
    let write = caller.write(request.write.actor, request.write.source, request.write.expected_head);
    write_once(server, name, &asked, &bytes, move |book| {
        let written = book.term_edit(id, &edit, &write)?;
        Ok(crate::render::json::submitted(&written))
    })
    .await
}

// ----- reads -----

pub async fn glossary(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: GlossaryQuery = query(raw)?;
    let chapter = query.chapter.map(|chapter| chapter_number(chapter, "chapter")).transpose()?;
    let as_of = query.as_of.map(Seq);
    let value = on_book(server, name, move |open| {
        let glossary = open.lock().glossary(&reader, as_of, chapter)?;
        Ok(crate::render::json::glossary(&glossary))
    })
    .await?;
    ok(value)
}

pub async fn term_show(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "term id")?;
    let id = record_id(&id, "id")?;
    let as_of = query::<AsOfQuery>(raw)?.as_of.map(Seq);
    let value = on_book(server, name, move |open| {
        let versions = open.lock().term_history(id, as_of)?;
        Ok(crate::render::json::term_history(id, &versions))
    })
    .await?;
    ok(value)
}

pub async fn snapshot(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let as_of = query::<AsOfQuery>(raw)?.as_of.map(Seq);
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::snapshot(&open.lock().snapshot_info(as_of)?)))
            .await?;
    ok(value)
}

pub async fn diff(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: DiffQuery = query(raw)?;
    let from = query.from.ok_or_else(|| Problem::invalid("query parameter from: required").at("from"))?;
    let to = query.to;
    let diff = super::audit::diff(server, name, from, to).await?;
    ok(crate::render::json::diff(&diff.old, &diff.new, &diff.records, &diff.config))
}

pub async fn verify(State(server): Shared, path: Result<Path<String>, PathRejection>) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let value = on_book(server, name, move |open| match open.lock().verify() {
        Ok(report) => Ok(crate::render::json::verified(&report)),
        Err(error) => {
            let error = BookError::from(error);
            crate::render::json::verify_failed(&error).ok_or_else(|| error.into())
        }
    })
    .await?;
    ok(value)
}

pub async fn rebuild(State(server): Shared, path: Result<Path<String>, PathRejection>) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::rebuilt(&open.lock().rebuild(|_, _| {})?))).await?;
    ok(value)
}

/// The log as NDJSON, one event per line, streamed: `from` (default 1) to `to`
/// (default the head), at most `limit` events (default and most: the server's
/// page size). When more remain, `Lorebank-Next-From` names the next page's `from`.
pub async fn log(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: LogQuery = query(raw)?;
    let from = query.from.unwrap_or(1).max(1);
    let to = query.to;
    let page_max = server.limits.log_page_max;
    let limit = query.limit.unwrap_or(page_max);
    if limit == 0 || limit > page_max {
        return Err(Problem::invalid(format!("query parameter limit: expected 1 to {page_max}")).at("limit"));
    }
    // A revision past the head is out of range, as for every read that names one.
    let (ledger, end) = on_book(server, name, move |open| {
        let book = open.lock();
        let (_, end) = book.log_range(Seq(from), to.map(Seq)).map_err(|error| match &error {
            BookError::BeyondHead { revision, .. } if *revision == Seq(from) => Problem::from(error).at("from"),
            BookError::BeyondHead { .. } => Problem::from(error).at("to"),
            _ => Problem::from(error),
        })?;
        Ok((book.ledger_handle(), end.0))
    })
    .await?;
    let last = end.min(from.saturating_add(limit - 1));
    let next = (last < end).then_some(last + 1);
    let (lines, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    if from <= last {
        tokio::task::spawn_blocking(move || {
            let scanned = ledger.scan(Seq(from), Seq(last), |event| {
                let mut line = crate::render::json::event(&event).to_string();
                line.push('\n');
                // A client that went away ends the scan.
                if lines.blocking_send(Ok(Bytes::from(line))).is_ok() {
                    std::ops::ControlFlow::Continue(())
                } else {
                    std::ops::ControlFlow::Break(())
                }
            });
            if let Err(error) = scanned {
                // The status is sent; the stream ends with an error line instead.
                let problem = Problem::from(BookError::from(error));
                let line = json!({ "error": { "type": format!("urn:lorebank:problem:{}", problem.kind), "detail": problem.detail } });
                let _ = lines.blocking_send(Ok(Bytes::from(format!("{line}\n"))));
            }
        });
    }
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    });
    let mut response = HttpBody::from_stream(stream).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    if let Some(next) = next {
        if let Ok(value) = HeaderValue::from_str(&next.to_string()) {
            response.headers_mut().insert("lorebank-next-from", value);
        }
    }
    Ok(response)
}

// ----- chunks -----

fn prev_receipt(open: &OpenBook, reader: &Reader, prev: Option<&str>) -> Result<Option<Hash32>, Problem> {
    Ok(prev.map(|prev| open.lock().receipt_for(reader, prev).map(|(id, _)| id)).transpose()?)
}

/// The head's assembler, and the previous receipt's id, for a chunk that can be
/// assembled right here on the async worker instead of the blocking pool, whose two
/// thread hand-offs cost a dry run about as much CPU as its parse and answer
/// together (docs/benchmarks.md, "A chunk on the worker"): when the book is open, no
/// other use case holds it, its assembler for `reader` is built for the head, the
/// book gathers no demonstrations, and the previous receipt, if any, is the full
/// view's (a party's is checked against the head's view, a fold). Then what is left
/// is a read of the ledger's head and pure assembly; a recording awaits its group
/// commit without holding a thread. `None` when any of that fails: the request takes
/// the blocking pool, where the same calls answer the same.
fn assembler_at_hand(
    server: &Server,
    name: &str,
    reader: &Reader,
    prev: Option<&str>,
) -> Option<Result<(book::Assembler, Option<Hash32>), Problem>> {
    if prev.is_some() && *reader != Reader::Full {
        return None;
    }
    let open = server.library.open_now(name)?;
    let mut book = open.try_lock()?;
    let assembler = match book.assembler_built(reader) {
        Ok(built) => built.filter(|assembler| !assembler.gathers_examples())?,
        Err(error) => return Some(Err(error.into())),
    };
    let prev = prev.map(|prev| book.receipt_for(reader, prev).map(|(id, _)| id)).transpose();
    Some(prev.map(|prev| (assembler, prev)).map_err(Problem::from))
}

/// Assembles one chunk with an assembler at hand ([`assembler_at_hand`]): a dry run
/// is `Assembler::assemble_chunk`, a recording `Assembler::assemble_chunk_then`,
/// whose commit is awaited without holding a thread.
async fn assemble_at_hand(
    at_hand: Result<(book::Assembler, Option<Hash32>), Problem>,
    chapter: u32,
    chunk: &str,
    text: &str,
    record: bool,
    hits: bool,
) -> Result<Vec<u8>, Problem> {
    let (assembler, prev) = at_hand?;
    if !record {
        let assembled = assembler.assemble_chunk(chapter, chunk, text, prev, false)?;
        return json_bytes(&AssembledAnswer::of(&assembled, record, hits));
    }
    let (filed, answer) = tokio::sync::oneshot::channel();
    let assembled = assembler.assemble_chunk_then(chapter, chunk, text, prev, move |result| {
        let _ = filed.send(result);
    })?;
    match answer.await {
        Ok(result) => result?,
        Err(_) => {
            let detail = "the book's writer stopped before answering";
            return Err(Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "io", detail.to_owned()));
        }
    }
    json_bytes(&AssembledAnswer::of(&assembled, record, hits))
}

pub async fn assemble(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let hits = query::<AssembleQuery>(raw)?.hits.unwrap_or(true);
    let request: AssembleRequest = json_body(body)?;
    let chapter = chapter_number(request.chapter, "chapter")?;
    let record = request.record.unwrap_or(true);
    if let Some(at_hand) = assembler_at_hand(&server, &name, &reader, request.prev.as_deref()) {
        let answer = assemble_at_hand(at_hand, chapter, &request.chunk, &request.text, record, hits).await;
        return ok_bytes(answer.map_err(|problem| in_library(&server, problem))?);
    }
    let bytes = on_book(server, name, move |open| {
        let prev = prev_receipt(open, &reader, request.prev.as_deref())?;
        // The book is locked only to get the head; assembling and recording run
        // beside other requests, and the receipts of concurrent requests are
        // group-committed together.
        let assembler = open.lock().assembler_for(&reader)?;
        let assembled = assembler.assemble_chunk(chapter, &request.chunk, &request.text, prev, record)?;
        json_bytes(&AssembledAnswer::of(&assembled, record, hits))
    })
    .await?;
    ok_bytes(bytes)
}

pub async fn assemble_chapter(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<(String, u32)>, PathRejection>,
    RawQuery(raw): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, chapter) = book_and::<u32>(path, "chapter")?;
    let hits = query::<AssembleQuery>(raw)?.hits.unwrap_or(true);
    let chapter = chapter_number(chapter, "chapter")?;
    let request: ChapterRequest = json_body(body)?;
    if request.chunks.is_empty() {
        return Err(Problem::invalid("chunks: no chunks").at("chunks"));
    }
    if request.chunks.len() > server.limits.chunks_max {
        return Err(Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            format!("{} chunks in one request; the limit is {}", request.chunks.len(), server.limits.chunks_max),
        ));
    }
    let record = request.record.unwrap_or(true);
    let chunks: Vec<Chunk> =
        request.chunks.into_iter().map(|chunk| Chunk { key: chunk.key, text: chunk.text }).collect();
    let bytes = on_book(server, name, move |open| {
        let prev = prev_receipt(open, &reader, request.prev.as_deref())?;
        let assembler = open.lock().assembler_for(&reader)?;
        let assembled = assembler.assemble_chapter(chapter, &chunks, prev, record)?;
        let at = (assembler.revision().0, assembler.snapshot().to_string());
        json_bytes(&ChapterAnswer::of(chapter, &assembled, record, hits, at))
    })
    .await?;
    ok_bytes(bytes)
}

pub async fn receipt(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "receipt")?;
    let value = on_book(server, name, move |open| {
        let mut book = open.lock();
        let (id, receipt) = book.receipt_for(&reader, &id)?;
        let (input, output) = book.receipt_texts(&receipt)?;
        Ok(crate::render::json::receipt(id, &receipt, &input, &output))
    })
    .await?;
    ok(value)
}

pub async fn replay_receipt(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "receipt")?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::replayed(&open.lock().replay(&reader, &id)?)))
            .await?;
    ok(value)
}

pub async fn replay_snapshot(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let request: SnapshotAssembleRequest = json_body(body)?;
    let snapshot = projections::SnapshotId(hash(&request.snapshot, "snapshot")?);
    let chapter = chapter_number(request.chapter, "chapter")?;
    let value = on_book(server, name, move |open| {
        let assembly = open.lock().assemble_at_snapshot(&reader, snapshot, chapter, &request.text)?;
        let mut value = crate::render::json::assembly(&assembly);
        value["snapshot"] = json!(snapshot.to_string());
        Ok(value)
    })
    .await?;
    ok(value)
}

pub async fn audit(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let chapter = query::<ChapterQuery>(raw)?
        .chapter
        .ok_or_else(|| Problem::invalid("query parameter chapter: required").at("chapter"))?;
    let chapter = chapter_number(chapter, "chapter")?;
    let value = on_book(server, name, move |open| Ok(crate::render::json::audit(&open.lock().audit(chapter)?))).await?;
    ok(value)
}

pub async fn impact(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: ImpactQuery = query(raw)?;
    let since = query.since.map(Seq);
    let term = query.term.as_deref().map(|term| record_id(term, "term")).transpose()?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::impact(&open.lock().impact(since, term)?))).await?;
    ok(value)
}

/// `GET …/names/lint` (`lorebank names lint`): the character and place terms whose
/// rendering differs from the standard transcription of their source.
pub async fn names_lint(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    Query::parse(raw, &[])?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::name_lint(&open.lock().names_lint()?))).await?;
    ok(value)
}

// ----- interchange -----

fn format_param(format: Option<&str>) -> Result<Option<formats::Format>, Problem> {
    format
        .map(|name| {
            formats::Format::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = formats::Format::ALL.iter().map(|format| format.name()).collect();
                Problem::invalid(format!(
                    "query parameter format: unknown format {name:?}; one of {}",
                    names.join(", ")
                ))
                .at("format")
            })
        })
        .transpose()
}

pub async fn import(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    asked: Asked,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: ImportQuery = query(raw)?;
    let file = query.file.unwrap_or_else(|| "upload".to_owned());
    let dry_run = query.dry_run.unwrap_or(false);
    let options = book::ImportOptions {
        format: format_param(query.format.as_deref())?,
        strict: query.strict.unwrap_or(false),
        dry_run,
        actor: query.actor,
        expect_head: query.expected_head.map(Seq),
        recorded_at_ms: now_ms(),
        source_lang: query.source_lang,
        target_lang: query.target_lang,
    };
    let bytes = body_bytes(body)?;
    write_once(server, name, &asked, &bytes.clone(), move |book| {
        let report = book.import(&file, &bytes, &options)?;
        Ok(crate::render::json::import_report(&report, dry_run))
    })
    .await
}

/// The media type of a translation-memory export (TMX has no registered one).
pub const TMX_MEDIA_TYPE: &str = "application/x-tmx+xml";

pub async fn export(
    State(server): Shared,
    Extension(reader): Extension<Reader>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: ExportQuery = query(raw)?;
    let form = match query.format.as_deref() {
        None => return Err(Problem::invalid("query parameter format: required").at("format")),
        Some(name) => book::ExportForm::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = formats::Format::ALL.iter().map(|format| format.name()).collect();
            Problem::invalid(format!(
                "query parameter format: unknown format {name:?}; one of {}, profile or tmx",
                names.join(", ")
            ))
            .at("format")
        })?,
    };
    let chapter = query.chapter.map(|chapter| chapter_number(chapter, "chapter")).transpose()?;
    let as_of = query.as_of.map(Seq);
    let target_lang = query.target_lang;
    let exported = on_book(server, name, move |open| {
        Ok(open.lock().export_as(&reader, form, chapter, as_of, target_lang.as_deref())?)
    })
    .await?;
    let (mut response, revision, snapshot, report) = match exported {
        book::Exported::Profile(export) => {
            let report = crate::render::json::exported_profile(&export, None);
            let mut response = (StatusCode::OK, export.text).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
            (response, export.revision, export.snapshot, report)
        }
        book::Exported::Tool(export) => {
            let report = crate::render::json::export(&export, None);
            let lost: Vec<String> =
                export.lost.iter().map(|group| format!("{}={}", group.what, group.at.len())).collect();
            let format = export.format;
            let mut response = (StatusCode::OK, export.bytes).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(format.media_type()));
            let file = format!("attachment; filename=\"glossary.{}\"", format.extension());
            headers.insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&file).map_err(|_| Problem::invalid("file name"))?,
            );
            // Field names are ASCII (lorebank's own, or the format's): a header can carry them.
            let lost = HeaderValue::from_str(&lost.join(", ")).unwrap_or_else(|_| HeaderValue::from_static("?"));
            headers.insert("lorebank-lost", lost);
            (response, export.revision, export.snapshot, report)
        }
        book::Exported::Tmx(export) => {
            let report = crate::render::json::exported_tmx(&export, None);
            let mut response = (StatusCode::OK, export.bytes).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(TMX_MEDIA_TYPE));
            headers.insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"translations.tmx\""),
            );
            (response, export.revision, export.snapshot, report)
        }
    };
    let headers = response.headers_mut();
    headers.insert("lorebank-revision", HeaderValue::from(revision.0));
    headers.insert(
        "lorebank-snapshot",
        HeaderValue::from_str(&snapshot.to_string()).map_err(|_| Problem::invalid("snapshot"))?,
    );
    // The report `export --json` prints (without `output`), as ASCII JSON.
    if let Ok(report) = HeaderValue::from_str(&ascii_json(&report)) {
        headers.insert("lorebank-export", report);
    }
    Ok(response)
}

/// `value` as JSON with every character outside printable ASCII escaped (`\\uXXXX`),
/// so that a header can carry it.
fn ascii_json(value: &Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        if (' '..='~').contains(&c) {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

// ----- post-check, review, names -----

pub async fn check(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, receipt) = book_and::<String>(path, "receipt")?;
    let bytes = body_bytes(body)?;
    let request: CheckRequest = json_body(Ok(bytes.clone()))?;
    let record = request.record.unwrap_or(true);
    let options = book::check::CheckOptions {
        record,
        propose: request.propose.unwrap_or(false),
        actor: caller.actor(request.actor).as_str().to_owned(),
        recorded_at_ms: now_ms(),
    };
    // A check that proposes verdicts appends them: its key is claimed like every
    // write's (a check that appends nothing leaves no marker, and filing the same
    // check again files nothing).
    write_once(server, name, &asked, &bytes, move |book| {
        let checked = book.check(&receipt, &request.translation, &options)?;
        Ok(crate::render::json::checked(&checked, record))
    })
    .await
}

pub async fn review_item(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "id")?;
    let id = record_id(&id, "id")?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::review_item(&open.lock().review_item(id)?))).await?;
    ok(value)
}

pub async fn review_list(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let owner = query::<ReviewQuery>(raw)?.owner;
    let value = on_book(server, name, move |open| {
        Ok(crate::render::json::review_list(&open.lock().review_list(owner.as_deref())?))
    })
    .await?;
    ok(value)
}

pub async fn review_accept(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "id")?;
    let id = record_id(&id, "id")?;
    let bytes = body_bytes(body)?;
    let request: AcceptRequest = json_body(Ok(bytes.clone()))?;
    let term = request.term.as_deref().map(|term| record_id(term, "term")).transpose()?;
    let acceptance = book::review::Acceptance {
        dst: request.dst,
        gender: request.gender,
        kind: request.kind,
        note: request.note,
        term,
    };
    let write = caller.write(request.actor, request.source, request.expected_head);
    write_once(server, name, &asked, &bytes, move |book| {
        let written = book.review_accept(id, &acceptance, &write)?;
        Ok(crate::render::json::submitted(&written))
    })
    .await
}

async fn judge(
    server: Arc<Server>,
    path: Result<Path<(String, String)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
    verdict: Verdict,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "id")?;
    let id = record_id(&id, "id")?;
    let bytes = body_bytes(body)?;
    let request: JudgeRequest = json_body(Ok(bytes.clone()))?;
    let reason = request.reason.unwrap_or_else(|| book::review::default_reason(verdict).to_owned());
    let write = caller.write(request.actor, request.source, request.expected_head);
    write_once(server, name, &asked, &bytes, move |book| {
        let written = book.review_judge(id, verdict, &reason, request.note, &write)?;
        Ok(crate::render::json::submitted(&written))
    })
    .await
}

pub async fn review_reject(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    judge(server, path, asked, caller, body, Verdict::Reject).await
}

pub async fn review_verify(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    judge(server, path, asked, caller, body, Verdict::Verify).await
}

pub async fn scan(
    State(server): Shared,
    path: Result<Path<(String, u32)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, chapter) = book_and::<u32>(path, "chapter")?;
    let chapter = chapter_number(chapter, "chapter")?;
    let bytes = body_bytes(body)?;
    let request: ScanRequest = json_body(Ok(bytes.clone()))?;
    let dry_run = request.dry_run.unwrap_or(false);
    let write = caller.write(request.actor, request.source, request.expected_head);
    write_once(server, name, &asked, &bytes, move |book| {
        let scanned = book.scan(chapter, request.chunk.as_deref(), request.text.as_deref(), dry_run, &write)?;
        Ok(crate::render::json::scanned(&scanned, dry_run))
    })
    .await
}

// ----- source text -----

pub async fn source_put(
    State(server): Shared,
    path: Result<Path<(String, u32)>, PathRejection>,
    RawQuery(raw): RawQuery,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, chapter) = book_and::<u32>(path, "chapter")?;
    let chapter = chapter_number(chapter, "chapter")?;
    let query: SourceQuery = query(raw)?;
    let write = caller.write(query.actor, query.source, query.expected_head);
    let bytes = body_bytes(body)?;
    let title = query.title;
    write_once(server, name, &asked, &bytes.clone(), move |book| {
        let written = book.source_add(chapter, title, &bytes, &write)?;
        Ok(crate::render::json::source_written(&written))
    })
    .await
}

pub async fn source_import(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    let request: SourceImportRequest = json_body(Ok(bytes.clone()))?;
    let write = caller.write(request.actor, request.source, request.expected_head);
    let files: Vec<(String, Vec<u8>)> =
        request.files.into_iter().map(|file| (file.name, file.text.into_bytes())).collect();
    write_once(server, name, &asked, &bytes, move |book| {
        let written = book.source_import(files, &write)?;
        Ok(crate::render::json::source_written(&written))
    })
    .await
}

pub async fn source_list(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::source_list(&open.lock().source_list()?))).await?;
    ok(value)
}

pub async fn source_show(
    State(server): Shared,
    path: Result<Path<(String, u32)>, PathRejection>,
) -> Result<Response, Problem> {
    let (name, chapter) = book_and::<u32>(path, "chapter")?;
    let chapter = chapter_number(chapter, "chapter")?;
    let value = on_book(server, name, move |open| {
        let (chapter, text) = open.lock().source_text(chapter)?;
        Ok(crate::render::json::source_shown(&chapter, &text))
    })
    .await?;
    ok(value)
}

// ----- governance -----

pub async fn profile_check(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::profile_report(&open.lock().profile_check()?)))
            .await?;
    ok(value)
}

pub async fn coverage(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let chapter = query::<ChapterQuery>(raw)?.chapter.map(|chapter| chapter_number(chapter, "chapter")).transpose()?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::coverage(&open.lock().coverage(chapter)?))).await?;
    ok(value)
}

pub async fn expect_import(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query: ExpectQuery = query(raw)?;
    let format = format_param(query.format.as_deref())?;
    let file = query.file.unwrap_or_else(|| "cast list".to_owned());
    let dry_run = query.dry_run.unwrap_or(false);
    let write = caller.write(query.actor, query.source, query.expected_head);
    let bytes = body_bytes(body)?;
    write_once(server, name, &asked, &bytes.clone(), move |book| {
        let imported = book.expect_import(&file, &bytes, format, dry_run, &write)?;
        Ok(crate::render::json::expect_imported(&imported, dry_run))
    })
    .await
}

// ----- embedding -----

/// The embedding model files the server was started with (`--embed-model`), and the
/// models it has loaded from them ([`suggest::Models`]).
#[derive(Default)]
pub struct Embedding {
    models: Option<suggest::Models>,
}

impl Embedding {
    /// The server's models, or the problem of a server without model files.
    fn models(&self) -> Result<&suggest::Models, Problem> {
        self.models.as_ref().ok_or_else(|| {
            Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "embedding-unavailable",
                "this server has no embedding model: start `lorebank serve` with --embed-model FILE (and \
                 --embed-tokenizer FILE), after ./scripts/setup.sh has installed the ONNX Runtime library",
            )
        })
    }

    /// Runs `work` with the book's model ([`suggest::Models::with_model`]).
    fn with_model<T>(
        &self,
        book: &mut book::Book,
        work: impl FnOnce(&mut book::Book, &mut suggest::Model) -> Result<T, suggest::SuggestError>,
    ) -> Result<T, Problem> {
        Ok(self.models()?.with_model(book, work)?)
    }
}

impl Server {
    /// The server with embedding model files: the embedding routes use them.
    pub fn with_embedding(mut self, files: Option<suggest::ModelFiles>) -> Server {
        self.embedding = Embedding { models: files.map(suggest::Models::new) };
        self
    }
}

pub async fn embedding_status(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let value =
        on_book(server, name, move |open| Ok(crate::render::json::embed::status(&suggest::status(&mut open.lock())?)))
            .await?;
    ok(value)
}

pub async fn embedding_set_model(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    let request: EmbeddingModelRequest = json_body(Ok(bytes.clone()))?;
    let options = suggest::ModelOptions {
        output: request.output,
        dim: request.dim,
        suggest_min_score: request.suggest_min_score.unwrap_or(suggest::SUGGEST_MIN_SCORE_DEFAULT),
        dedupe_min_score: request.dedupe_min_score.unwrap_or(suggest::DEDUPE_MIN_SCORE_DEFAULT),
        ..suggest::ModelOptions::new(
            request.name,
            request.pooling.unwrap_or(EmbeddingPooling::Mean),
            request.normalize.unwrap_or(true),
        )
    };
    let write = caller.write(request.actor, request.source, request.expected_head);
    let embedding = Arc::clone(&server);
    write_once(server, name, &asked, &bytes, move |book| {
        let files = embedding.embedding.models()?.files();
        let set = suggest::set_model(book, files, &options, &write)?;
        let status = suggest::status(book)?;
        Ok(crate::render::json::embed::set_model(&set, &status))
    })
    .await
}

pub async fn embedding_refresh(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let request: RefreshRequest = json_body(body)?;
    let embedding = Arc::clone(&server);
    let value = on_book(server, name, move |open| {
        embedding.embedding.with_model(&mut open.lock(), |book, model| {
            let refreshed = suggest::refresh(book, model, request.all.unwrap_or(false), |_, _| {})?;
            Ok(crate::render::json::embed::refreshed(&model.id().to_string(), &refreshed))
        })
    })
    .await?;
    ok(value)
}

pub async fn suggest(
    State(server): Shared,
    path: Result<Path<(String, u32)>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let (name, chapter) = book_and::<u32>(path, "chapter")?;
    let chapter = chapter_number(chapter, "chapter")?;
    let bytes = body_bytes(body)?;
    let request: SuggestRequest = json_body(Ok(bytes.clone()))?;
    let dry_run = request.dry_run.unwrap_or(false);
    let write = caller.write(request.actor, request.source, request.expected_head);
    let embedding = Arc::clone(&server);
    write_once(server, name, &asked, &bytes, move |book| {
        embedding.embedding.with_model(book, |book, model| {
            let options = suggest::SuggestOptions {
                min_score: request.min_score,
                phrases: request.phrases.unwrap_or(false),
                dry_run,
            };
            let suggested = suggest::suggest(book, model, chapter, &request.chunk, &request.text, &options, &write)?;
            Ok(crate::render::json::embed::suggested(&suggested, dry_run))
        })
    })
    .await
}

pub async fn dedupe(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    asked: Asked,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let bytes = body_bytes(body)?;
    let request: DedupeRequest = json_body(Ok(bytes.clone()))?;
    let dry_run = request.dry_run.unwrap_or(false);
    let write = caller.write(request.actor, request.source, request.expected_head);
    let embedding = Arc::clone(&server);
    write_once(server, name, &asked, &bytes, move |book| {
        embedding.embedding.with_model(book, |book, model| {
            let deduped = suggest::dedupe(book, model, request.min_score, dry_run, &write)?;
            Ok(crate::render::json::embed::deduped(&deduped, dry_run))
        })
    })
    .await
}
