//! A chat model as the book's batch jobs see it, and the store of what it was asked
//! and answered.
//!
//! **The model** is the caller's ([`Model`]): the adapters hand the book one (the
//! `chat` crate's endpoint); the book does no network I/O.
//!
//! **Exchanges.** Every request a job sends and the answer it gets are stored beside
//! the book as a blob ([`StoredExchange`], id the blake3 of its bytes), found by the
//! request's hash ([`request_hash`]) through index blobs (like a receipt's checks:
//! blobs are never rewritten, a request asked again gets the next entry, the last is
//! its latest answer). [`Book::ask`] answers a request from the store unless the job
//! asks `fresh`, so a job replays from what the model said, whatever it says next
//! time. The log never refers to an exchange: they are derived data, like checks.

use ledger_model::*;
use serde::{Deserialize, Serialize};

use crate::book::Book;
use crate::error::BookError;

/// The most bytes of a model's answer read (`limits::input::MODEL_ANSWER_BYTES_MAX`).
pub const ANSWER_BYTES_MAX: usize = ledger_model::limits::input::MODEL_ANSWER_BYTES_MAX;

/// blake3 `derive_key` context of a request's hash.
const REQUEST_CONTEXT: &str = "lorebank 2026 model request v1";
/// blake3 `derive_key` context of a stored exchange's id.
const EXCHANGE_CONTEXT: &str = "lorebank 2026 model exchange v1";
/// blake3 `derive_key` context of the id of a request's exchange index.
const INDEX_CONTEXT: &str = "lorebank 2026 model exchange index v1";
/// The byte form of [`StoredExchange`].
pub const EXCHANGE_FORMAT: u16 = 1;
/// A chat model the caller reaches: the adapters hand the book one (the `chat`
/// crate's endpoint); the book never reaches the network itself.
pub trait Model {
    /// The model's name, sent as the request's `model`.
    fn name(&self) -> &str;
    /// Sends a chat completion request (JSON bytes) and returns the body of a 2xx
    /// answer, or why there is none (unreachable, timed out, another status).
    fn complete(&self, request: &[u8]) -> Result<Vec<u8>, String>;
}

/// One request to a model and its answer, as stored beside the book.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredExchange {
    /// [`EXCHANGE_FORMAT`].
    pub format: u16,
    /// The job that asked (`extract`, `eval`).
    pub job: String,
    /// The prompt the job asked with: `vN`, its built-in version N, or `book@SEQ`,
    /// the book's own set by event SEQ.
    pub prompt: String,
    /// The request's bytes (JSON).
    pub request: String,
    /// The answer's body, as the model sent it (lossless when UTF-8, which a JSON
    /// answer is).
    pub answer: String,
    /// When it was asked, in unix milliseconds (informational only).
    pub recorded_at_ms: u64,
    /// Who asked.
    pub actor: String,
}

impl StoredExchange {
    /// The canonical bytes.
    pub fn encode(&self) -> Result<Vec<u8>, BookError> {
        ledger_model::codec::encode_large(self).map_err(|error| BookError::Invalid(format!("exchange: {error}")))
    }

    /// Decodes canonical bytes, refusing any other.
    pub fn decode(bytes: &[u8]) -> Result<StoredExchange, String> {
        ledger_model::codec::decode_large_strict(bytes).map_err(|error| error.to_string())
    }
}

/// The hash a request is found by.
pub fn request_hash(request: &[u8]) -> Hash32 {
    Hash32(*blake3::Hasher::new_derive_key(REQUEST_CONTEXT).update(request).finalize().as_bytes())
}

fn exchange_id(bytes: &[u8]) -> Hash32 {
    Hash32(*blake3::Hasher::new_derive_key(EXCHANGE_CONTEXT).update(bytes).finalize().as_bytes())
}

/// The id of the `n`th entry (from 0) of the exchange index of `request`: a blob
/// holding an exchange's id.
fn index_id(request: Hash32, n: u32) -> Hash32 {
    let mut hasher = blake3::Hasher::new_derive_key(INDEX_CONTEXT);
    Hash32(*hasher.update(&request.0).update(&n.to_le_bytes()).finalize().as_bytes())
}

/// The name of the model a job asks: `model`'s, or without one the caller's `named`
/// (whose stored answers are then read); `what` says what for in the error when
/// there is neither (`to extract with`).
pub fn model_name(model: Option<&dyn Model>, named: Option<&str>, what: &str) -> Result<String, BookError> {
    match (model, named) {
        (Some(model), _) => Ok(model.name().to_owned()),
        (None, Some(name)) => Ok(name.to_owned()),
        (None, None) => Err(BookError::InvalidField { field: "model", message: format!("no model named {what}") }),
    }
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct ResponseFormat {
    r#type: &'static str,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    temperature: u8,
    messages: [Message<'a>; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat>,
}

/// The bytes of a job's chat completion request: `system` and `user` messages,
/// temperature 0, and with `json_answer` a JSON object asked for
/// (`response_format: {"type": "json_object"}`). The same arguments, the same bytes.
pub fn chat_request(model: &str, system: &str, user: &str, json_answer: bool) -> Vec<u8> {
    let request = Request {
        model,
        temperature: 0,
        messages: [Message { role: "system", content: system }, Message { role: "user", content: user }],
        response_format: json_answer.then_some(ResponseFormat { r#type: "json_object" }),
    };
    serde_json::to_vec(&request).unwrap_or_default()
}

/// The message text of a chat completion's body, with the body parsed (for its
/// `usage`), or why it is not one.
pub fn message_of(body: &[u8]) -> Result<(String, serde_json::Value), String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|error| format!("not a JSON chat completion: {error}"))?;
    let text = value
        .pointer("/choices/0/message/content")
        .and_then(serde_json::Value::as_str)
        .ok_or("no choices[0].message.content string in it")?
        .to_owned();
    Ok((text, value))
}

/// The prompt a job asks with: the book's own (`model_prompt_set`) or the built-in
/// one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// `book@SEQ` for the book's own, set by event SEQ; `vN` for the built-in version N.
    pub name: String,
    /// The text.
    pub text: String,
}

impl Prompt {
    /// The prompt of `job` in `state`: the book's own, else `builtin` (version
    /// `version`).
    pub fn of(state: &projections::State, job: &str, builtin: &str, version: u32) -> Prompt {
        match state.model_prompt(job) {
            Some((text, provenance)) => Prompt { name: format!("book@{}", provenance.seq.0), text: text.to_owned() },
            None => Prompt { name: format!("v{version}"), text: builtin.to_owned() },
        }
    }
}

/// An answer to one request.
#[derive(Debug)]
pub struct Asked {
    /// The request's hash.
    pub request: Hash32,
    /// The stored exchange holding the answer.
    pub exchange: Hash32,
    /// The answer's body.
    pub answer: String,
    /// Read from the store, not asked of the model.
    pub stored: bool,
    /// The blobs that store a new exchange (the exchange and its index entry), for
    /// the caller to file with its write; empty for a stored one.
    pub blobs: Vec<(Hash32, Vec<u8>)>,
}

/// Who asks, and how.
#[derive(Clone, Debug)]
pub struct Asking<'a> {
    /// The model, or `None` to use stored answers only.
    pub model: Option<&'a dyn Model>,
    /// The model's name, for messages.
    pub model_name: &'a str,
    /// The job (`extract`, `eval`), stored with the exchange.
    pub job: &'a str,
    /// The name of the job's prompt ([`Prompt::name`]), stored with the exchange.
    pub prompt: &'a str,
    /// Ask the model even when the store holds an answer.
    pub fresh: bool,
    /// When, stored with a new exchange.
    pub recorded_at_ms: u64,
    /// Who asks, stored with a new exchange.
    pub actor: &'a str,
}

impl std::fmt::Debug for dyn Model + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Model({})", self.name())
    }
}

impl Book {
    /// The latest stored exchange answering the request of hash `request`, if any.
    pub fn stored_exchange(&self, request: Hash32) -> Result<Option<(Hash32, StoredExchange)>, BookError> {
        let mut latest = None;
        for (n, (_, bytes)) in self.index_entries(|n| index_id(request, n))?.iter().enumerate() {
            let id = <[u8; 32]>::try_from(bytes.as_slice())
                .map(Hash32)
                .map_err(|_| BookError::Corrupted(format!("exchange index {request} entry {n}: not an id")))?;
            latest = Some(id);
        }
        let Some(id) = latest else { return Ok(None) };
        Ok(Some((id, self.exchange(id)?)))
    }

    /// The stored exchange `id`.
    pub fn exchange(&self, id: Hash32) -> Result<StoredExchange, BookError> {
        let bytes = self.ledger().blob(id)?.ok_or_else(|| BookError::NotFound { what: format!("exchange {id}") })?;
        if exchange_id(&bytes) != id {
            return Err(BookError::Corrupted(format!("exchange {id}: its bytes do not hash to its id")));
        }
        StoredExchange::decode(&bytes).map_err(|why| BookError::Corrupted(format!("exchange {id}: {why}")))
    }

    /// The stored exchange named by `hex`: an exchange's id, or the hash of a request
    /// (its latest answer), as `extract`, `adjudicate` and `eval` report them. Its id
    /// and the exchange.
    pub fn exchange_named(&self, hex: &str) -> Result<(Hash32, StoredExchange), BookError> {
        let id = Hash32::from_hex(hex.trim()).ok_or_else(|| BookError::InvalidField {
            field: "exchange",
            message: format!("{hex:?}: expected the 64 hex digits of an exchange or of a request"),
        })?;
        match self.exchange(id) {
            Err(BookError::NotFound { .. }) => self
                .stored_exchange(id)?
                .ok_or_else(|| BookError::NotFound { what: format!("exchange or request {id}") }),
            found => found.map(|exchange| (id, exchange)),
        }
    }

    /// `error`, after filing `blobs` (the exchanges of the answers a job accepted before
    /// it failed) unless `dry_run`, so that the next run finds them in the store and
    /// does not ask again; the error then says they were kept. The log is untouched.
    pub(crate) fn failed_after(&self, blobs: Vec<(Hash32, Vec<u8>)>, dry_run: bool, error: BookError) -> BookError {
        let answers = blobs.len() / 2;
        if dry_run || answers == 0 {
            return error;
        }
        match (self.ledger().file_documents(Vec::<ledger::Document>::new(), blobs), error) {
            (Ok(()), BookError::Model(message)) => BookError::Model(format!(
                "{message} (the {answers} answer(s) accepted before it are kept in the book's store: the next run \
                 does not ask for them again)"
            )),
            (_, error) => error,
        }
    }

    /// The answer to `request` (its bytes): the store's latest unless `asking.fresh`,
    /// else the model's, checked to be at most [`ANSWER_BYTES_MAX`] bytes of UTF-8,
    /// with the blobs that would store it. `where_` names the request in errors
    /// (`chapter 3 part 1`). `pending` are blobs the caller holds but has not filed
    /// yet (index entries of this same run), counted when numbering the index.
    pub fn ask(
        &self,
        asking: &Asking,
        request: &[u8],
        where_: &str,
        pending: &[(Hash32, Vec<u8>)],
    ) -> Result<Asked, BookError> {
        let name = asking.model_name;
        let hash = request_hash(request);
        if !asking.fresh {
            if let Some((id, exchange)) = self.stored_exchange(hash)? {
                return Ok(Asked {
                    request: hash,
                    exchange: id,
                    answer: exchange.answer,
                    stored: true,
                    blobs: Vec::new(),
                });
            }
        }
        let Some(model) = asking.model else {
            return Err(BookError::Model(format!(
                "{where_}: no stored answer of {name} to this request, and no model to ask (give --model-url)"
            )));
        };
        let body =
            model.complete(request).map_err(|why| BookError::Model(format!("{where_}: the model {name}: {why}")))?;
        if body.len() > ANSWER_BYTES_MAX {
            return Err(BookError::Model(format!("{where_}: the answer is longer than {ANSWER_BYTES_MAX} bytes")));
        }
        let answer = String::from_utf8(body)
            .map_err(|_| BookError::Model(format!("{where_}: the model's answer is not UTF-8")))?;
        let stored = StoredExchange {
            format: EXCHANGE_FORMAT,
            job: asking.job.to_owned(),
            prompt: asking.prompt.to_owned(),
            request: String::from_utf8_lossy(request).into_owned(),
            answer: answer.clone(),
            recorded_at_ms: asking.recorded_at_ms,
            actor: asking.actor.to_owned(),
        };
        let bytes = stored.encode()?;
        let id = exchange_id(&bytes);
        // After the stored entries and those this run holds but has not filed yet.
        let mut entry = self.index_entries(|n| index_id(hash, n))?.len() as u32;
        while pending.iter().any(|(known, _)| *known == index_id(hash, entry)) {
            entry += 1;
        }
        let blobs = vec![(id, bytes), (index_id(hash, entry), id.0.to_vec())];
        Ok(Asked { request: hash, exchange: id, answer, stored: false, blobs })
    }
}
