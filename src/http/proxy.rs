//! The translation proxy (`lorebank serve --upstream URL`, docs/proxy.md): an
//! OpenAI-compatible chat endpoint per book that injects the book's context into a
//! tool's request and records what the upstream answered.
//!
//! An adapter like the routes: it parses the tool's request (the last user message's
//! text, the first message's system text, the chunk named by the path or the
//! `Lorebank-Chapter` and `Lorebank-Chunk` headers), calls the book service
//! ([`book::Book::proxy_prepare`], which locates the chunk, assembles it and makes the
//! system message), forwards the request with that system message, passes the
//! upstream's answer through as it comes (a stream chunk by chunk), and hands a
//! complete answer to [`book::Book::proxy_record`]. An upstream error, a timeout or a
//! cut stream reaches the tool as it came, and nothing is recorded for it.
//!
//! The upstream's credential is the server's own (`--upstream-key-env`,
//! `--upstream-key-file`), sent as `Authorization: Bearer` and never taken from a
//! request, logged or stored; the tool's `Authorization` is lorebank's own token.
//!
//! An `https` upstream is reached over TLS (rustls with the ring provider, through
//! tokio-rustls): HTTP/1.1 (ALPN `http/1.1`), the URL's host as the server name (SNI
//! and the certificate's name), trusting the system's root certificates and those of
//! `--upstream-ca`. The handshake is part of connecting; a refused certificate is an
//! `upstream-unavailable` problem that says what was wrong with it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body as HttpBody, Bytes};
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use book::proxy::{Answered, Hint, Prepared, Usage};
use futures_util::StreamExt;
use ledger_model::Hash32;
use serde_json::{json, Value};

use super::problem::Problem;
use super::routes::{blocking, body_bytes, chapter_number, in_library, now_ms, Server, Shared, ACTOR_HEADER};

/// The header naming the chapter of the chunk.
pub const CHAPTER_HEADER: &str = "lorebank-chapter";
/// The header naming the chunk's key (with the chapter: no search).
pub const CHUNK_HEADER: &str = "lorebank-chunk";
/// The answer's header with the receipt of the chunk.
pub const RECEIPT_HEADER: &str = "lorebank-receipt";
/// The answer's header that says whether context was injected (`context`, `none`).
pub const INJECTED_HEADER: &str = "lorebank-injected";
/// The answer's header that says why no chunk was found (forwarded without context).
pub const UNPLACED_HEADER: &str = "lorebank-unplaced";
/// The actor a proxied check is recorded by when the request names none.
pub const PROXY_ACTOR: &str = "tool:proxy";
/// The most response text collected for recording (a longer answer is passed
/// through and not recorded).
pub const COLLECTED_BYTES_MAX: usize = 4 << 20;

/// What to do with a request in which no chunk of the book is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unplaced {
    /// Refuse it with a `chunk-not-found` problem (422).
    Refuse,
    /// Forward it without context, saying so in `Lorebank-Injected: none`.
    Forward,
}

/// The flags an upstream is configured by, named in its errors.
pub const FLAGS: chat::Flags = chat::Flags {
    noun: "upstream",
    url: "--upstream",
    ca: "--upstream-ca",
    key: "--upstream-key-env or --upstream-key-file",
};

/// The upstream the proxy forwards to: the workspace's one client
/// ([`chat::Endpoint`]) and what the proxy does around it.
#[derive(Clone, Debug)]
pub struct Upstream {
    pub endpoint: chat::Endpoint,
    /// The longest wait for the response's headers, and between two pieces of its
    /// body.
    pub timeout: Duration,
    pub unplaced: Unplaced,
    /// Post-check with `propose`, writing `verify` verdicts for failures.
    pub propose: bool,
}

impl Upstream {
    /// Sends one request upstream: connects (within [`chat::CONNECT_TIMEOUT`]) and
    /// waits for the response's headers (within `timeout`).
    async fn send(
        &self,
        method: Method,
        route: &str,
        body: Option<Bytes>,
    ) -> Result<axum::http::Response<hyper::body::Incoming>, Problem> {
        self.endpoint.send(method, route, body).await.map_err(|failure| match failure {
            chat::Failure::TimedOut { authority, after, .. } => timed_out(&authority, after),
            other => unavailable(other.to_string()),
        })
    }
}

fn unavailable(detail: String) -> Problem {
    Problem::new(StatusCode::BAD_GATEWAY, "upstream-unavailable", detail)
}

fn timed_out(authority: &str, after: Duration) -> Problem {
    Problem::new(
        StatusCode::GATEWAY_TIMEOUT,
        "upstream-timeout",
        format!("the upstream {authority} did not answer within {:.1} s", after.as_secs_f64()),
    )
}

/// The headers of the upstream's answer that go to the tool: all but the
/// connection's own.
fn passed_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        if matches!(
            name.as_str(),
            "connection" | "keep-alive" | "transfer-encoding" | "te" | "trailer" | "upgrade" | "proxy-connection"
        ) {
            continue;
        }
        to.append(name.clone(), value.clone());
    }
}

/// The path parameters of a proxy route.
type Params = Result<Path<BTreeMap<String, String>>, PathRejection>;

fn params(path: Params) -> Result<(String, Hint), Problem> {
    let Path(params) = path.map_err(|rejection| Problem::invalid(format!("path: {}", rejection.body_text())))?;
    let name = params.get("book").cloned().unwrap_or_default();
    book::library::check_name(&name)?;
    let chapter = params
        .get("chapter")
        .map(|chapter| {
            chapter
                .parse::<u32>()
                .map_err(|_| Problem::invalid(format!("chapter: {chapter:?} is not a chapter number")))
        })
        .transpose()?
        .map(|chapter| chapter_number(chapter, "chapter"))
        .transpose()?;
    Ok((name, Hint { chapter, chunk: params.get("chunk").cloned() }))
}

/// The hint of the path, with the headers'; a header that says otherwise than the
/// path is refused.
fn hint_of(mut hint: Hint, headers: &HeaderMap) -> Result<Hint, Problem> {
    let text = |name: &str| -> Result<Option<String>, Problem> {
        match headers.get(name).map(|value| value.to_str()) {
            None => Ok(None),
            Some(Ok(value)) if !value.trim().is_empty() => Ok(Some(value.trim().to_owned())),
            Some(_) => Err(Problem::invalid(format!("header {name}: expected visible text")).at(name)),
        }
    };
    if let Some(chapter) = text(CHAPTER_HEADER)? {
        let number = chapter
            .parse::<u32>()
            .map_err(|_| Problem::invalid(format!("header Lorebank-Chapter: {chapter:?} is not a chapter number")))?;
        let number = chapter_number(number, "Lorebank-Chapter")?;
        if hint.chapter.is_some_and(|path| path != number) {
            return Err(
                Problem::invalid("header Lorebank-Chapter: the path names another chapter").at("Lorebank-Chapter")
            );
        }
        hint.chapter = Some(number);
    }
    if let Some(chunk) = text(CHUNK_HEADER)? {
        if hint.chunk.as_ref().is_some_and(|path| *path != chunk) {
            return Err(Problem::invalid("header Lorebank-Chunk: the path names another chunk").at("Lorebank-Chunk"));
        }
        hint.chunk = Some(chunk);
    }
    if hint.chunk.is_some() && hint.chapter.is_none() {
        return Err(Problem::invalid("header Lorebank-Chunk: a chunk key needs its chapter (Lorebank-Chapter)")
            .at("Lorebank-Chunk"));
    }
    Ok(hint)
}

/// The text of a message's `content`: a string, or the text parts of an array.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

/// A chat request as the proxy reads it.
struct ChatRequest {
    body: Value,
    /// The last user message's text.
    text: String,
    /// The first message's text, when it is a system message.
    system: Option<String>,
    stream: bool,
}

fn chat_request(bytes: &[u8]) -> Result<ChatRequest, Problem> {
    let body: Value =
        crate::input::json_from_bytes(bytes).map_err(|error| Problem::invalid(format!("body: not JSON: {error}")))?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| Problem::invalid("messages: expected an array of chat messages").at("messages"))?;
    let role = |message: &Value| message.get("role").and_then(Value::as_str).map(str::to_owned);
    let text = messages
        .iter()
        .rev()
        .find(|message| role(message).as_deref() == Some("user"))
        .and_then(|message| message.get("content"))
        .and_then(content_text)
        .ok_or_else(|| Problem::invalid("messages: no user message with text").at("messages"))?;
    let system = messages
        .first()
        .filter(|message| matches!(role(message).as_deref(), Some("system" | "developer")))
        .and_then(|message| message.get("content"))
        .and_then(content_text);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    Ok(ChatRequest { body, text, system, stream })
}

/// The request's body with `system` as its system message: the first message's
/// content when it is a system message, otherwise a system message put first.
fn with_system(mut body: Value, system: &str, had_system: bool) -> Value {
    if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
        match messages.first_mut() {
            Some(first) if had_system => first["content"] = Value::String(system.to_owned()),
            _ => messages.insert(0, json!({ "role": "system", "content": system })),
        }
    }
    body
}

fn set_header(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(HeaderName::from_static(name), value);
    }
}

/// What a complete answer says: the text, the model and the usage.
#[derive(Default)]
struct Collected {
    text: String,
    model: Option<String>,
    usage: Option<Usage>,
    /// Over [`COLLECTED_BYTES_MAX`], or not an answer: never recorded.
    spoiled: bool,
}

fn usage_of(value: &Value) -> Option<Usage> {
    let usage = value.get("usage").filter(|usage| usage.is_object())?;
    let count = |name: &str| usage.get(name).and_then(Value::as_u64);
    Some(Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
        total_tokens: count("total_tokens"),
    })
}

impl Collected {
    fn push_text(&mut self, text: &str) {
        if self.text.len() + text.len() > COLLECTED_BYTES_MAX {
            self.spoiled = true;
        } else {
            self.text.push_str(text);
        }
    }

    /// One `data:` payload of a stream.
    fn event(&mut self, payload: &Value) {
        if let Some(model) = payload.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        if let Some(usage) = usage_of(payload) {
            self.usage = Some(usage);
        }
        let delta = payload.pointer("/choices/0/delta/content").and_then(Value::as_str);
        if let Some(delta) = delta {
            self.push_text(delta);
        }
    }
}

/// Reads a server-sent event stream as it passes: lines, `data:` payloads, `[DONE]`.
#[derive(Default)]
struct SseReader {
    line: Vec<u8>,
    done: bool,
    collected: Collected,
}

impl SseReader {
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte != b'\n' {
                if self.line.len() < COLLECTED_BYTES_MAX {
                    self.line.push(byte);
                } else {
                    self.collected.spoiled = true;
                }
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches('\r');
            let Some(data) = line.strip_prefix("data:") else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                self.done = true;
            } else if let Ok(payload) = serde_json::from_str::<Value>(data) {
                self.collected.event(&payload);
            }
        }
    }
}

/// `POST /proxy/{book}[/chapters/{chapter}[/chunks/{chunk}]]/v1/chat/completions`.
pub async fn chat(
    State(server): Shared,
    path: Params,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match chat_inner(server, path, headers, body).await {
        Ok(response) => response,
        Err(problem) => problem.into_response(),
    }
}

async fn chat_inner(
    server: Arc<Server>,
    path: Params,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let Some(upstream) = server.upstream.clone() else {
        return Err(Problem::not_found("this server has no --upstream"));
    };
    let (name, hint) = params(path)?;
    let hint = hint_of(hint, &headers)?;
    let bytes = body_bytes(body)?;
    let request = chat_request(&bytes)?;
    let actor = match headers.get(ACTOR_HEADER).map(|value| value.to_str()) {
        None => PROXY_ACTOR.to_owned(),
        Some(Ok(actor)) if !actor.trim().is_empty() => actor.trim().to_owned(),
        Some(_) => {
            return Err(Problem::invalid("header Lorebank-Actor: expected an actor `kind:name`").at("Lorebank-Actor"))
        }
    };
    let chapter_part = hint.chapter.map(|chapter| chapter.to_string()).unwrap_or_default();
    let chunk_part = hint.chunk.clone().unwrap_or_default();
    let fingerprint = book::proxy::fingerprint(&name, &[chapter_part.as_bytes(), chunk_part.as_bytes(), &bytes]);

    let placed = {
        let server = Arc::clone(&server);
        let name = name.clone();
        let text = request.text.clone();
        let system = request.system.clone();
        blocking(move || {
            let open = server.library.open(&name).map_err(|error| in_library(&server, error.into()))?;
            let mut book = open.lock();
            Ok(book.proxy_prepare(&text, &hint, system.as_deref())?)
        })
        .await?
    };
    let prepared = match placed {
        Ok(prepared) => Some(prepared),
        Err(why) if upstream.unplaced == Unplaced::Refuse => {
            return Err(Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "chunk-not-found", why));
        }
        Err(why) => {
            let response = upstream.send(Method::POST, "/chat/completions", Some(bytes)).await?;
            let mut answer = pass_through(response, upstream.timeout);
            set_header(answer.headers_mut(), INJECTED_HEADER, "none");
            set_header(answer.headers_mut(), UNPLACED_HEADER, &why);
            return Ok(answer);
        }
    };
    let prepared = prepared.expect("placed");
    let had_system = request.system.is_some();
    let stream = request.stream;
    let body = match &prepared.system {
        Some(system) => with_system(request.body, system, had_system),
        None => request.body,
    };
    let sent = Bytes::from(serde_json::to_vec(&body).unwrap_or_default());
    let answered = Answered {
        fingerprint,
        upstream_request: Hash32(*blake3::hash(&sent).as_bytes()),
        model: body.get("model").and_then(Value::as_str).unwrap_or_default().to_owned(),
        usage: None,
        translation: String::new(),
        streamed: stream,
    };
    let response = upstream.send(Method::POST, "/chat/completions", Some(sent)).await?;
    let recording =
        Recording { server, name, prepared: Arc::new(prepared), answered, actor, propose: upstream.propose };
    let mut answer = if !response.status().is_success() {
        pass_through(response, upstream.timeout)
    } else if stream {
        streamed(response, upstream.timeout, recording.clone())
    } else {
        whole(response, upstream.timeout, recording.clone()).await
    };
    let injected = if recording.prepared.assembled.assembly.context.is_empty() { "none" } else { "context" };
    set_header(answer.headers_mut(), INJECTED_HEADER, injected);
    set_header(answer.headers_mut(), RECEIPT_HEADER, &recording.prepared.assembled.id.to_hex());
    set_header(answer.headers_mut(), CHAPTER_HEADER, &recording.prepared.chunk.chapter.to_string());
    set_header(answer.headers_mut(), CHUNK_HEADER, &recording.prepared.chunk.chunk_key);
    Ok(answer)
}

/// What recording an answer needs.
#[derive(Clone)]
struct Recording {
    server: Arc<Server>,
    name: String,
    prepared: Arc<Prepared>,
    answered: Answered,
    actor: String,
    propose: bool,
}

impl Recording {
    /// Records a complete answer (on the blocking pool); a failure is logged, the
    /// tool already has its answer.
    async fn record(mut self, collected: Collected) {
        if collected.spoiled {
            return;
        }
        self.answered.translation = collected.text;
        if let Some(model) = collected.model {
            self.answered.model = model;
        }
        self.answered.usage = collected.usage;
        let name = self.name.clone();
        let result = blocking(move || {
            let open = self.server.library.open(&self.name)?;
            let mut book = open.lock();
            let options = book::check::CheckOptions {
                record: true,
                propose: self.propose,
                actor: self.actor.clone(),
                recorded_at_ms: now_ms(),
            };
            book.proxy_record(&self.prepared, &self.answered, &options)?;
            Ok(())
        })
        .await;
        if let Err(problem) = result {
            errln!("lorebank serve: proxy: book {name}: the answer was not recorded: {}", problem.detail);
        }
    }
}

/// The upstream's answer as it comes, recording nothing.
fn pass_through(response: axum::http::Response<hyper::body::Incoming>, timeout: Duration) -> Response {
    let (parts, body) = response.into_parts();
    let mut data = HttpBody::new(body).into_data_stream();
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        loop {
            match tokio::time::timeout(timeout, data.next()).await {
                Ok(Some(Ok(bytes))) => {
                    if sender.send(Ok(bytes)).await.is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Ok(Some(Err(error))) => {
                    let _ = sender.send(Err(std::io::Error::other(error.to_string()))).await;
                    return;
                }
                Err(_) => {
                    let _ = sender.send(Err(std::io::Error::other("upstream timed out"))).await;
                    return;
                }
            }
        }
    });
    answer_of(parts.status, &parts.headers, receiver)
}

fn answer_of(
    status: StatusCode,
    upstream: &HeaderMap,
    receiver: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
) -> Response {
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    });
    let mut answer = Response::new(HttpBody::from_stream(stream));
    *answer.status_mut() = status;
    passed_headers(upstream, answer.headers_mut());
    answer.headers_mut().remove(header::CONTENT_LENGTH);
    answer
}

/// A streamed answer: every piece passes to the tool as it arrives while the text is
/// collected; a stream that ends with `data: [DONE]` is recorded before the tool's
/// stream ends, one cut or timed out is passed on cut and recorded never.
fn streamed(
    response: axum::http::Response<hyper::body::Incoming>,
    timeout: Duration,
    recording: Recording,
) -> Response {
    let (parts, body) = response.into_parts();
    let mut data = HttpBody::new(body).into_data_stream();
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    tokio::spawn(async move {
        let mut reader = SseReader::default();
        loop {
            match tokio::time::timeout(timeout, data.next()).await {
                Ok(Some(Ok(bytes))) => {
                    reader.feed(&bytes);
                    // A tool that went away still gets its answer recorded.
                    let _ = sender.send(Ok(bytes)).await;
                }
                Ok(None) => break,
                Ok(Some(Err(error))) => {
                    let _ = sender.send(Err(std::io::Error::other(error.to_string()))).await;
                    return;
                }
                Err(_) => {
                    let _ = sender.send(Err(std::io::Error::other("upstream timed out"))).await;
                    return;
                }
            }
        }
        // A last line without its line break still counts.
        reader.feed(b"\n");
        if reader.done {
            recording.record(reader.collected).await;
        }
        drop(sender);
    });
    answer_of(parts.status, &parts.headers, receiver)
}

/// A whole answer: read (each piece within `timeout`), recorded when it is a chat
/// completion with text, then answered as the upstream sent it.
async fn whole(
    response: axum::http::Response<hyper::body::Incoming>,
    timeout: Duration,
    recording: Recording,
) -> Response {
    let (parts, body) = response.into_parts();
    let mut data = HttpBody::new(body).into_data_stream();
    let mut bytes = Vec::new();
    let mut spoiled = false;
    loop {
        match tokio::time::timeout(timeout, data.next()).await {
            Ok(Some(Ok(piece))) => {
                if bytes.len() + piece.len() > COLLECTED_BYTES_MAX {
                    spoiled = true;
                }
                bytes.extend_from_slice(&piece);
                if spoiled {
                    // Too long to record: the rest passes through as it comes.
                    let (sender, receiver) = tokio::sync::mpsc::channel(16);
                    let _ = sender.send(Ok(Bytes::from(std::mem::take(&mut bytes)))).await;
                    tokio::spawn(async move {
                        while let Ok(Some(piece)) = tokio::time::timeout(timeout, data.next()).await {
                            let piece = piece.map_err(|error| std::io::Error::other(error.to_string()));
                            let failed = piece.is_err();
                            if sender.send(piece).await.is_err() || failed {
                                return;
                            }
                        }
                    });
                    return answer_of(parts.status, &parts.headers, receiver);
                }
            }
            Ok(None) => break,
            Ok(Some(Err(error))) => {
                return Problem::new(
                    StatusCode::BAD_GATEWAY,
                    "upstream-unavailable",
                    format!("the upstream's answer was cut: {error}"),
                )
                .into_response()
            }
            Err(_) => return timed_out("answer", timeout).into_response(),
        }
    }
    if let Ok(value) = crate::input::json_from_bytes::<Value>(&bytes) {
        if let Some(text) = value.pointer("/choices/0/message/content").and_then(Value::as_str) {
            let mut collected = Collected::default();
            collected.push_text(text);
            collected.model = value.get("model").and_then(Value::as_str).map(str::to_owned);
            collected.usage = usage_of(&value);
            recording.record(collected).await;
        }
    }
    let mut answer = Response::new(HttpBody::from(bytes));
    *answer.status_mut() = parts.status;
    passed_headers(&parts.headers, answer.headers_mut());
    answer
}

/// `GET /proxy/{book}[/chapters/{chapter}[/chunks/{chunk}]]/v1/models`: the
/// upstream's list, passed through.
pub async fn models(State(server): Shared, path: Params) -> Response {
    let result = async {
        let Some(upstream) = server.upstream.clone() else {
            return Err(Problem::not_found("this server has no --upstream"));
        };
        params(path)?;
        let response = upstream.send(Method::GET, "/models", None).await?;
        Ok(pass_through(response, upstream.timeout))
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_read_across_pieces_and_done_ends_it() {
        let mut reader = SseReader::default();
        reader.feed(b"data: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"\xd0\x9f\xd1");
        reader.feed(b"\x80\"}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"!\"}}],\"usage\":{\"total_tokens\":3}}\n\n");
        assert!(!reader.done);
        reader.feed(b"data: [DONE]\n\n");
        assert!(reader.done);
        assert_eq!(reader.collected.text, "Пр!");
        assert_eq!(reader.collected.model.as_deref(), Some("m"));
        assert_eq!(reader.collected.usage.and_then(|usage| usage.total_tokens), Some(3));
    }

    #[test]
    fn the_system_message_is_set_or_put_first() {
        let body = json!({"messages": [{"role": "system", "content": "a"}, {"role": "user", "content": "b"}]});
        assert_eq!(with_system(body, "a+ctx", true)["messages"][0]["content"], "a+ctx");
        let body = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "b"}]}]});
        let request = chat_request(body.to_string().as_bytes()).unwrap();
        assert_eq!((request.text.as_str(), request.system.is_none()), ("b", true));
        let body = with_system(request.body, "ctx", false);
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "ctx"}));
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
    }
}
