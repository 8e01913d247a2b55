//! The translation proxy's rules (issue 27, items 3 and 4): which chunk a tool's
//! request translates, the context injected into its system message, and what an
//! answered request records.
//!
//! The adapter (`lorebank serve --upstream`) only parses the tool's request, calls
//! [`Book::proxy_prepare`], forwards the request with [`Prepared::system`] as its
//! system message, and hands what the upstream answered to [`Book::proxy_record`].
//!
//! **The chunk.** With a chapter and a chunk key given (the `Lorebank-Chapter` and
//! `Lorebank-Chunk` headers of a scripted pipeline, or the path), the chunk is the
//! text of the request's last user message, and nothing is searched. Otherwise the
//! book's source text is searched ([`locate`], within the given chapter when only
//! the chapter is given), and the chunk is the registered span found: its text is the
//! chapter's original text of the span (never the tool's wrapper, whose glossary
//! would activate entries), its key `src-SSSSSSSS-EEEEEEEE` (the span's byte range in
//! the chapter, zero-padded so keys sort in source order).
//!
//! **`prev`.** The receipt of the chunk before it in the chapter: for a located
//! chunk, the latest receipt of the source chunk ending nearest before its start; for
//! a named chunk, the latest receipt of the chapter's chunk key sorting just before
//! its own. Only receipts of the full view count.
//!
//! **The template.** The book's template (`proxy_template_set`, in the state and its
//! snapshot), else the built-in [`TEMPLATE`] (named [`TEMPLATE_NAME`]), puts the
//! rendered context into the system message where it says `{context}`: appended to
//! the request's first message when that is a system message (after a blank line),
//! otherwise as a new system message prepended to the messages ([`Template::system`]).
//! An empty context injects nothing. The template is the one in force at the
//! receipt's revision ([`Template::of`]); a record names it (`book@SEQ`, the seq of
//! the `proxy_template_set` that set it, or the built-in's name) with its hash, and
//! a replay takes the template in force at the receipt's revision again, so a
//! template changed later changes no replay.
//!
//! **What is recorded** ([`Book::proxy_record`]), in one commit: the receipt (with
//! its input and output texts, as `assemble` records), a [`ProxyRecord`] (the
//! template, the original system text, the hash of the injected system message, the
//! hash of the exact upstream request, the model and usage reported, the spans) filed
//! as a blob whose id derives from the receipt id and a position, and a marker whose
//! id derives from the request's fingerprint; then the response text is post-checked
//! as `check` does and stored beside the receipt. A request whose marker is stored
//! (a retry of the same body) records nothing again. Replay: the receipt replays its
//! context, and [`Book::proxy_replay`] rebuilds each recorded system message from it.

use std::ops::Range;
use std::sync::Arc;

use ledger_model::*;
use projections::{Reader, State};
use serde::{Deserialize, Serialize};

use crate::book::Book;
use crate::check::{CheckOptions, Checked};
use crate::chunks::{previous_in, reader_of, receipt_filing, receipt_refused, Assembled};
use crate::error::BookError;

/// The name of the built-in template, recorded with every proxy record.
pub const TEMPLATE_NAME: &str = "lorebank-proxy-1";
/// The built-in template: `{context}` is replaced by the assembled context.
pub const TEMPLATE: &str = "Glossary and context for the text to translate, from the book's memory (lorebank). \
Use these renderings exactly.\n\n{context}";
/// The byte form of a [`ProxyRecord`].
pub const PROXY_RECORD_FORMAT: u16 = 1;
/// The prefix of a located chunk's key.
pub const SOURCE_KEY_PREFIX: &str = "src-";

/// blake3 `derive_key` context of a proxy record's id (receipt id and position).
const RECORD_CONTEXT: &str = "lorebank 2026 proxy record v1";
/// blake3 `derive_key` context of a request's fingerprint and of its marker's id.
const REQUEST_CONTEXT: &str = "lorebank 2026 proxy request v1";

/// The prefix of the name of a book's own template: `book@SEQ`.
pub const BOOK_TEMPLATE_PREFIX: &str = "book@";

/// The hash of the built-in template's text.
pub fn template_hash() -> Hash32 {
    hash_of(TEMPLATE)
}

/// The template a proxied request's system message is made with: its name (the
/// built-in [`TEMPLATE_NAME`], or `book@SEQ` for the book's own, set by event SEQ)
/// and its text, `{context}` once in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// The name recorded.
    pub name: String,
    /// The text.
    pub text: String,
}

impl Template {
    /// The built-in template.
    pub fn builtin() -> Template {
        Template { name: TEMPLATE_NAME.to_owned(), text: TEMPLATE.to_owned() }
    }

    /// The template in force in `state`: the book's, else the built-in one.
    pub fn of(state: &State) -> Template {
        match state.proxy_template() {
            Some((text, provenance)) => {
                Template { name: format!("{BOOK_TEMPLATE_PREFIX}{}", provenance.seq.0), text: text.to_owned() }
            }
            None => Template::builtin(),
        }
    }

    /// The blake3 of its text.
    pub fn hash(&self) -> Hash32 {
        hash_of(&self.text)
    }

    /// The system message a request is sent with: the template filled with `context`,
    /// after the request's own system text `original` (a blank line between) when it
    /// has one. `None` when there is neither (an empty context injects nothing).
    pub fn system(&self, context: &str, original: Option<&str>) -> Option<String> {
        if context.is_empty() {
            return original.map(str::to_owned);
        }
        // `{context}` is in the template once (validated), so one replacement fills it
        // and a `{context}` inside the context itself is left as it is.
        let block = self.text.replacen("{context}", context, 1);
        Some(match original {
            Some(original) => format!("{original}\n\n{block}"),
            None => block,
        })
    }
}

/// The system message of the built-in template ([`Template::system`]).
pub fn system_message(context: &str, original: Option<&str>) -> Option<String> {
    Template::builtin().system(context, original)
}

/// The key of the located chunk at `span` (bytes of its chapter's text).
pub fn source_chunk_key(span: &Range<usize>) -> String {
    format!("{SOURCE_KEY_PREFIX}{:08}-{:08}", span.start, span.end)
}

/// The span a located chunk's key names.
pub fn source_span_of_key(key: &str) -> Option<Range<usize>> {
    let (start, end) = key.strip_prefix(SOURCE_KEY_PREFIX)?.split_once('-')?;
    let (start, end) = (start.parse().ok()?, end.parse().ok()?);
    (start <= end).then_some(start..end)
}

/// What the caller says of the chunk, overriding the search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hint {
    /// The chapter (search only it).
    pub chapter: Option<u32>,
    /// The chunk key (with the chapter: no search, the request text is the chunk).
    pub chunk: Option<String>,
}

/// The chunk a request translates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyChunk {
    /// The chapter.
    pub chapter: u32,
    /// Its key.
    pub chunk_key: String,
    /// The text assembled over.
    pub text: String,
    /// The span of the chapter's source text, when located.
    pub source: Option<Range<usize>>,
    /// The span of the request text it was found in, when located.
    pub request: Option<Range<usize>>,
    /// The receipt of the chunk before it in the chapter, when there is one.
    pub prev: Option<Hash32>,
}

/// Where a request stands: its chunk, or why none was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placed {
    /// The chunk.
    Chunk(ProxyChunk),
    /// No single chunk of the source text is in the request: why, for the caller's
    /// message.
    Unplaced(String),
}

/// A request made ready to forward: its chunk, the assembly, and the system message.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The chunk.
    pub chunk: ProxyChunk,
    /// The assembly and its receipt (not recorded yet).
    pub assembled: Assembled,
    /// The request's own system text (its first message's, when a system message).
    pub original_system: Option<String>,
    /// The template in force at the receipt's revision.
    pub template: Template,
    /// The system message to send ([`system_message`]).
    pub system: Option<String>,
}

/// The token counts the upstream reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens.
    pub completion_tokens: Option<u64>,
    /// Total tokens.
    pub total_tokens: Option<u64>,
}

/// What the upstream answered, for [`Book::proxy_record`].
#[derive(Clone, Debug)]
pub struct Answered {
    /// The request's fingerprint ([`fingerprint`]).
    pub fingerprint: Hash32,
    /// blake3 of the exact bytes of the upstream request's body.
    pub upstream_request: Hash32,
    /// The model the upstream reported (or the request named).
    pub model: String,
    /// The usage it reported.
    pub usage: Option<Usage>,
    /// The response text: the chunk's translation.
    pub translation: String,
    /// Whether it was streamed.
    pub streamed: bool,
}

/// One proxied request as stored beside its receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyRecord {
    /// [`PROXY_RECORD_FORMAT`].
    pub format: u16,
    /// The receipt.
    pub receipt: Hash32,
    /// The template's name and the blake3 of its text.
    pub template: String,
    /// blake3 of the template's text.
    pub template_hash: Hash32,
    /// The request's own system text.
    pub original_system: Option<String>,
    /// blake3 of the system message sent, when one was.
    pub system_hash: Option<Hash32>,
    /// The request's fingerprint.
    pub fingerprint: Hash32,
    /// blake3 of the exact upstream request body.
    pub upstream_request: Hash32,
    /// The model reported.
    pub model: String,
    /// The usage reported.
    pub usage: Option<Usage>,
    /// The span of the chapter's source text (bytes), when located.
    pub source: Option<(u64, u64)>,
    /// The span of the request text (bytes), when located.
    pub request: Option<(u64, u64)>,
    /// Whether the answer was streamed.
    pub streamed: bool,
    /// blake3 of the translation (stored in the check).
    pub translation_hash: Hash32,
    /// When (unix milliseconds, informational) and by whom it was recorded.
    pub recorded_at_ms: u64,
    /// Who recorded it.
    pub actor: String,
}

impl ProxyRecord {
    /// The canonical bytes.
    pub fn encode(&self) -> Result<Vec<u8>, BookError> {
        ledger_model::codec::encode_large(self).map_err(|error| BookError::Invalid(format!("proxy record: {error}")))
    }

    /// Decodes canonical bytes, refusing any other.
    pub fn decode(bytes: &[u8]) -> Result<ProxyRecord, String> {
        let record: ProxyRecord = ledger_model::codec::decode_large_strict(bytes).map_err(|error| error.to_string())?;
        if record.format != PROXY_RECORD_FORMAT {
            return Err(format!("proxy record format {} is not {PROXY_RECORD_FORMAT}", record.format));
        }
        Ok(record)
    }
}

/// What [`Book::proxy_record`] stored.
#[derive(Debug)]
pub struct Recorded {
    /// The receipt.
    pub receipt: Hash32,
    /// The proxy record's id.
    pub record: Hash32,
    /// The post-check, stored beside the receipt.
    pub checked: Checked,
}

/// A proxied request replayed: the receipt's context and each recorded system
/// message rebuilt from it.
#[derive(Debug)]
pub struct ProxyReplayed {
    /// The receipt's replay.
    pub replayed: crate::chunks::Replayed,
    /// Per proxy record: its id, the system message rebuilt, and whether it hashes to
    /// the one recorded.
    pub systems: Vec<(Hash32, Option<String>, bool)>,
}

/// The fingerprint of a request: the book, the parts that name its chunk (path and
/// headers) and the body, each hashed with its length.
pub fn fingerprint(book: &str, parts: &[&[u8]]) -> Hash32 {
    let mut hasher = blake3::Hasher::new_derive_key(REQUEST_CONTEXT);
    hasher.update(b"request\0").update(book.as_bytes()).update(b"\0");
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes()).update(part);
    }
    Hash32(*hasher.finalize().as_bytes())
}

fn marker_id(fingerprint: Hash32) -> Hash32 {
    let mut hasher = blake3::Hasher::new_derive_key(REQUEST_CONTEXT);
    Hash32(*hasher.update(b"marker\0").update(&fingerprint.0).finalize().as_bytes())
}

fn record_id(receipt: Hash32, n: u32) -> Hash32 {
    let mut hasher = blake3::Hasher::new_derive_key(RECORD_CONTEXT);
    Hash32(*hasher.update(&receipt.0).update(&n.to_le_bytes()).finalize().as_bytes())
}

fn hash_of(text: &str) -> Hash32 {
    Hash32(*blake3::hash(text.as_bytes()).as_bytes())
}

fn span(range: &Option<Range<usize>>) -> Option<(u64, u64)> {
    range.as_ref().map(|range| (range.start as u64, range.end as u64))
}

impl Book {
    /// The index of the book's source text at the head. It is a function of the
    /// chapters' texts and the profile only, so it is kept under a key made of them
    /// (each chapter's number and text id, and the profile's table): a write that
    /// changes neither (a receipt, a verdict, a term) keeps it, and a `source_set`
    /// or a new profile builds it again.
    fn proxy_index(&mut self) -> Result<Arc<locate::Index>, BookError> {
        let state = self.state(None)?;
        let profile = self
            .profile(&state)?
            .ok_or_else(|| BookError::Profile("the book has no config_set yet (run `lorebank init`)".into()))?;
        let mut key = blake3::Hasher::new();
        key.update(&profile.id().0);
        let sources: Vec<SourceSet> = state.source_chapters().map(|(source, _)| source.clone()).collect();
        for source in &sources {
            key.update(&source.chapter.to_le_bytes());
            key.update(&source.text.map(|id| id.0).unwrap_or_default());
        }
        let key = Hash32(*key.finalize().as_bytes());
        if let Some((kept, index)) = &self.proxy_index {
            if *kept == key {
                return Ok(Arc::clone(index));
            }
        }
        drop(state);
        let mut chapters = Vec::with_capacity(sources.len());
        for source in &sources {
            chapters.push((source.chapter, self.stored_text(source)?));
        }
        let index = locate::Index::build(&profile, chapters.iter().map(|(number, text)| (*number, text.as_str())))
            .map_err(|error| BookError::Invalid(format!("the source text cannot be indexed: {error}")))?;
        let index = Arc::new(index);
        self.proxy_index = Some((key, Arc::clone(&index)));
        Ok(index)
    }

    /// The chunk `request_text` (the text of a tool's last user message) translates:
    /// named by `hint` (chapter and chunk: no search), or found in the book's source
    /// text (within the hint's chapter, when it names one).
    pub fn proxy_locate(&mut self, request_text: &str, hint: &Hint) -> Result<Placed, BookError> {
        if let Some(chunk_key) = &hint.chunk {
            let Some(chapter) = hint.chapter else {
                return Err(BookError::InvalidField {
                    field: "Lorebank-Chunk",
                    message: "a chunk key needs its chapter (Lorebank-Chapter)".into(),
                });
            };
            if request_text.trim().is_empty() {
                return Err(BookError::InvalidField {
                    field: "messages",
                    message: "the last user message holds no text to translate".into(),
                });
            }
            let prev = self.proxy_prev(chapter, |key| key < chunk_key.as_str(), |a, b| a < b)?;
            return Ok(Placed::Chunk(ProxyChunk {
                chapter,
                chunk_key: chunk_key.clone(),
                text: request_text.to_owned(),
                source: None,
                request: None,
                prev,
            }));
        }
        let index = self.proxy_index()?;
        if index.chapters().len() == 0 {
            return Ok(Placed::Unplaced(
                "the book has no source text to find the chunk in (add it with `lorebank source add`), or name \
                 the chunk with the Lorebank-Chapter and Lorebank-Chunk headers"
                    .into(),
            ));
        }
        let options = locate::Options { chapter: hint.chapter, ..locate::Options::default() };
        let outcome = index
            .locate_with(request_text, &options)
            .map_err(|error| BookError::InvalidField { field: "messages", message: error.to_string() })?;
        let located = match outcome {
            locate::Outcome::Found { chunk, .. } => chunk,
            locate::Outcome::Ambiguous { candidates, .. } => {
                let places: Vec<String> = candidates
                    .iter()
                    .map(|candidate| format!("chapter {} bytes {:?}", candidate.chapter, candidate.source))
                    .collect();
                return Ok(Placed::Unplaced(format!(
                    "the request matches several places of the source text equally well ({}); name the chapter \
                     with the Lorebank-Chapter header",
                    places.join(", ")
                )));
            }
            locate::Outcome::NotFound { coverage, .. } => {
                return Ok(Placed::Unplaced(format!(
                    "no chunk of the book's source text{} is in the request ({} of its {} CJK letters are \
                     registered text)",
                    hint.chapter.map(|chapter| format!(" of chapter {chapter}")).unwrap_or_default(),
                    coverage.registered_cjk,
                    coverage.request_cjk
                )));
            }
        };
        let text = index
            .chapter_text(located.chapter)
            .and_then(|text| text.get(located.source.clone()))
            .ok_or_else(|| BookError::Corrupted("the located span is not in its chapter".into()))?
            .to_owned();
        let start = located.source.start;
        let prev = self.proxy_prev(
            located.chapter,
            |key| source_span_of_key(key).is_some_and(|span| span.end <= start),
            |a, b| source_span_of_key(a).map(|span| span.end) < source_span_of_key(b).map(|span| span.end),
        )?;
        Ok(Placed::Chunk(ProxyChunk {
            chapter: located.chapter,
            chunk_key: source_chunk_key(&located.source),
            text,
            source: Some(located.source),
            request: Some(located.request),
            prev,
        }))
    }

    /// The latest full-view receipt of `chapter` whose key is `before` this chunk's,
    /// the greatest by `less`.
    fn proxy_prev(
        &self,
        chapter: u32,
        before: impl Fn(&str) -> bool,
        less: impl Fn(&str, &str) -> bool,
    ) -> Result<Option<Hash32>, BookError> {
        let mut best: Option<(Hash32, String)> = None;
        for (id, receipt) in self.latest_receipts(Some(chapter))? {
            if !before(&receipt.chunk_key) || reader_of(&receipt) != Reader::Full {
                continue;
            }
            if best.as_ref().is_none_or(|(_, key)| !less(&receipt.chunk_key, key)) {
                best = Some((id, receipt.chunk_key));
            }
        }
        Ok(best.map(|(id, _)| id))
    }

    /// Places a request ([`Book::proxy_locate`]) and assembles its chunk against the
    /// head for the full view, without recording; `original_system` is the request's
    /// own system text.
    pub fn proxy_prepare(
        &mut self,
        request_text: &str,
        hint: &Hint,
        original_system: Option<&str>,
    ) -> Result<Result<Prepared, String>, BookError> {
        let chunk = match self.proxy_locate(request_text, hint)? {
            Placed::Chunk(chunk) => chunk,
            Placed::Unplaced(why) => return Ok(Err(why)),
        };
        let assembler = self.assembler_for(&Reader::Full)?;
        let previous = previous_in(self.ledger(), chunk.prev, chunk.chapter)?;
        let examples = assembler.examples(chunk.chapter)?;
        let assembled = assembler.assemble_after(
            chunk.chapter,
            &chunk.chunk_key,
            &chunk.text,
            chunk.prev.zip(previous.as_ref()),
            &examples,
        )?;
        let template = Template::of(&*self.state(Some(assembled.receipt.revision))?);
        let system = template.system(&assembled.assembly.context, original_system);
        Ok(Ok(Prepared { chunk, assembled, original_system: original_system.map(str::to_owned), template, system }))
    }

    /// Whether a request with this fingerprint was recorded.
    pub fn proxy_recorded(&self, fingerprint: Hash32) -> Result<bool, BookError> {
        Ok(self.ledger().blob(marker_id(fingerprint))?.is_some())
    }

    /// Records an answered request: the receipt, the proxy record, the post-check of
    /// the translation (filed as `check` files it) and the request's marker in one
    /// commit, so a crash leaves all of them or none (and a retry records them); then,
    /// with `options.propose`, the check's verdicts. `None` when a request with the
    /// same fingerprint was recorded already: nothing is written.
    pub fn proxy_record(
        &mut self,
        prepared: &Prepared,
        answered: &Answered,
        options: &CheckOptions,
    ) -> Result<Option<Recorded>, BookError> {
        if self.proxy_recorded(answered.fingerprint)? {
            return Ok(None);
        }
        ledger_model::validate::validate_envelope(&options.actor, "proxy")
            .map_err(|error| BookError::InvalidField { field: "actor", message: error.to_string() })?;
        let receipt = prepared.assembled.id;
        let mut n = 0u32;
        while self.ledger().blob(record_id(receipt, n))?.is_some() {
            n = n.checked_add(1).ok_or_else(|| BookError::Invalid("too many proxy records".into()))?;
        }
        let record = ProxyRecord {
            format: PROXY_RECORD_FORMAT,
            receipt,
            template: prepared.template.name.clone(),
            template_hash: prepared.template.hash(),
            original_system: prepared.original_system.clone(),
            system_hash: prepared.system.as_deref().map(hash_of),
            fingerprint: answered.fingerprint,
            upstream_request: answered.upstream_request,
            model: answered.model.clone(),
            usage: answered.usage.clone(),
            source: span(&prepared.chunk.source),
            request: span(&prepared.chunk.request),
            streamed: answered.streamed,
            translation_hash: hash_of(&answered.translation),
            recorded_at_ms: options.recorded_at_ms,
            actor: options.actor.clone(),
        };
        let bytes = record.encode()?;
        if bytes.len() > limits::DOCUMENT_BYTES_MAX {
            return Err(BookError::Invalid(format!(
                "the proxy record of {} bytes is over the limit of {}",
                bytes.len(),
                limits::DOCUMENT_BYTES_MAX
            )));
        }
        let id = record_id(receipt, n);
        let (checked, check_blobs) =
            self.check_filed(receipt, &prepared.assembled.receipt, &answered.translation, options)?;
        let (document, texts) = receipt_filing(&prepared.assembled, &prepared.chunk.text);
        let mut blobs: Vec<(Hash32, Vec<u8>)> = texts.into_iter().collect();
        blobs.push((id, bytes));
        blobs.extend(check_blobs);
        blobs.push((marker_id(answered.fingerprint), id.0.to_vec()));
        self.ledger().file_documents(vec![document], blobs).map_err(receipt_refused)?;
        let checked = self.check_proposed(receipt, checked, options)?;
        Ok(Some(Recorded { receipt, record: id, checked }))
    }

    /// The proxy records of `receipt`, oldest first.
    pub fn proxy_records(&self, receipt: Hash32) -> Result<Vec<(Hash32, ProxyRecord)>, BookError> {
        let mut out = Vec::new();
        for (id, bytes) in self.index_entries(|n| record_id(receipt, n))? {
            let record = ProxyRecord::decode(&bytes)
                .map_err(|error| BookError::Corrupted(format!("proxy record {id} does not decode: {error}")))?;
            if record.receipt != receipt {
                return Err(BookError::Corrupted(format!("proxy record {id} is not of receipt {receipt}")));
            }
            out.push((id, record));
        }
        Ok(out)
    }

    /// Replays a proxied receipt and rebuilds, from the context replayed and the
    /// template in force at the receipt's revision, the system message each of its
    /// proxy records sent, comparing it with the hash recorded.
    pub fn proxy_replay(&mut self, id_or_prefix: &str) -> Result<ProxyReplayed, BookError> {
        let replayed = self.replay(&Reader::Full, id_or_prefix)?;
        let (receipt, _) = self.receipt(id_or_prefix)?;
        let template = Template::of(&*self.state(Some(replayed.receipt.revision))?);
        let mut systems = Vec::new();
        for (id, record) in self.proxy_records(receipt)? {
            if record.template != template.name || record.template_hash != template.hash() {
                return Err(BookError::Corrupted(format!(
                    "proxy record {id} names template {} ({}), but the template at revision {} is {} ({})",
                    record.template,
                    record.template_hash,
                    replayed.receipt.revision,
                    template.name,
                    template.hash()
                )));
            }
            let system = template.system(&replayed.context, record.original_system.as_deref());
            let same = system.as_deref().map(hash_of) == record.system_hash;
            systems.push((id, system, same));
        }
        Ok(ProxyReplayed { replayed, systems })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_appends_to_a_system_message_or_stands_alone_and_injects_nothing_empty() {
        assert_eq!(system_message("", None), None);
        assert_eq!(system_message("", Some("sys")).as_deref(), Some("sys"));
        let alone = system_message("T-1 孙悟空 → Сунь Укун", None).unwrap();
        assert!(alone.starts_with("Glossary and context") && alone.ends_with("\n\nT-1 孙悟空 → Сунь Укун"));
        assert_eq!(
            system_message("ctx", Some("sys")).unwrap(),
            format!("sys\n\n{}", system_message("ctx", None).unwrap())
        );
    }

    #[test]
    fn source_keys_sort_in_source_order_and_parse_back() {
        let key = source_chunk_key(&(12..3456));
        assert_eq!(key, "src-00000012-00003456");
        assert_eq!(source_span_of_key(&key), Some(12..3456));
        assert!(source_chunk_key(&(9..20)) < source_chunk_key(&(10..20)));
        assert_eq!(source_span_of_key("src-5-2"), None);
        assert_eq!(source_span_of_key("0001"), None);
    }
}
