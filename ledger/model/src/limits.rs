//! Named limits. Exceeding any of them is an error naming the limit, never a silent
//! truncation.

pub mod input;

/// Largest encoded payload of one event (envelope fields and body), in bytes.
pub const EVENT_BYTES_MAX: usize = 64 * 1024;
/// Most events in one atomic batch.
pub const BATCH_EVENTS_MAX: usize = 200_000;
/// Most encoded payload bytes in one atomic batch.
pub const BATCH_BYTES_MAX: usize = 64 * 1024 * 1024;
/// Most bytes one group commit writes (event payloads, blobs and documents of all
/// its batches): the writer stops adding batches to a group at this size. A single
/// batch over it still commits, alone.
pub const GROUP_BYTES_MAX: usize = 64 * 1024 * 1024;
/// Most cache entries waiting for the ledger's writer to file them
/// (`Ledger::cache_put_later`): one more is not queued, and is built again when it is
/// next needed. Each waits as the work that makes its bytes (a frozen projection the
/// book holds anyway), not as the bytes.
pub const CACHE_PUTS_QUEUED_MAX: usize = 4;
/// Most frozen projections an open book holds in memory (of snapshots and of
/// readers' views); past it, the least recently used is let go (and built, or loaded
/// from the book's cache, again when it is needed). The head's assemblers keep their
/// own.
pub const FROZEN_HELD_MAX: usize = 8;
/// Longest key of a document's shelf in the ledger, in characters (a chunk key,
/// `--chunk`, is one). A document key is a storage key: it must also be non-empty
/// and free of control characters (newlines included).
pub const DOCUMENT_KEY_CHARS_MAX: usize = 128;
/// Largest document the ledger files (a receipt is one), in bytes: below the
/// decoder's limit ([`crate::codec::DOCUMENT_BYTES_MAX`]), so every stored document
/// can be read back.
pub const DOCUMENT_BYTES_MAX: usize = 16 * 1024 * 1024;
/// Longest key (source surface, alias, secondary key, sense), in characters.
pub const KEY_CHARS_MAX: usize = 64;
/// Longest short label (dst, declension form, kind, actor, source, reason code), in
/// characters.
pub const LABEL_CHARS_MAX: usize = 128;
/// Longest free-text note (note, speech, evidence, reasons), in characters.
pub const NOTE_CHARS_MAX: usize = 2_000;
/// Longest summary text, in characters.
pub const SUMMARY_CHARS_MAX: usize = 8_000;
/// Most declension forms on one term.
pub const DECL_FORMS_MAX: usize = 16;
/// Most secondary keys on one term.
pub const SECONDARY_KEYS_MAX: usize = 16;
/// Largest token budget an assembly config may ask for.
pub const TOKEN_BUDGET_MAX: u32 = 100_000;
/// Most sticky chunks an assembly config may ask for.
pub const STICKY_CHUNKS_MAX: u32 = 64;
/// Largest `min_key_chars` an assembly config may set.
pub const MIN_KEY_CHARS_MAX: u32 = 16;
/// Default `min_key_chars`: a one-character key needs secondary keys.
pub const MIN_KEY_CHARS_DEFAULT: u32 = 2;
/// Most parties a book declares.
pub const PARTIES_MAX: usize = 64;
/// Most parties one `release_to` names.
pub const RELEASE_PARTIES_MAX: usize = 16;
/// Most record defaults a book declares.
pub const RECORD_DEFAULTS_MAX: usize = 64;
/// Most selectors in one scope (`applies_to`, `does_not_apply_to`) of a rule.
pub const SELECTORS_MAX: usize = 16;
/// Largest absolute candidate score, in millionths (a cosine similarity is at most 1).
pub const SCORE_MAX: i32 = 1_000_000;
/// Longest rule text, in characters.
pub const RULE_CHARS_MAX: usize = 2_000;
/// Longest name and runtime version of an embedding model, in UTF-8 bytes (what the
/// `embed` crate's model identity holds).
pub const EMBEDDING_TEXT_BYTES_MAX: usize = 256;
/// Largest vector dimension of an embedding model (the `embed` crate's `DIM_MAX`).
pub const EMBEDDING_DIM_MAX: u32 = 8_192;

/// The most custom-operator libraries an `embedding_model_set` names (the `embed`
/// crate's `OPERATOR_LIBRARIES_MAX`).
pub const EMBEDDING_OPERATOR_LIBRARIES_MAX: usize = 8;

/// Longest language tag of a book (`languages_set`), in characters (ASCII): RFC 5646
/// §4.4.1 asks for at least 35, and a tag with several variants and extensions fits.
pub const LANGUAGE_TAG_CHARS_MAX: usize = 64;

/// Largest source text of one chapter (`source_set.bytes`), in UTF-8 bytes: a long
/// novel chapter is well under 1 MiB, and the whole of the text is one blob.
pub const SOURCE_TEXT_BYTES_MAX: u64 = 16 * 1024 * 1024;
/// Longest chapter title (`source_set.title`), in characters.
pub const SOURCE_TITLE_CHARS_MAX: usize = 256;

/// Longest proxy template of a book (`proxy_template_set.template`), in characters:
/// a system message's preamble, not a document.
pub const PROXY_TEMPLATE_CHARS_MAX: usize = 8_192;

/// Longest prompt of a book's model job (`model_prompt_set.text`), in characters.
pub const MODEL_PROMPT_CHARS_MAX: usize = 8_192;
/// The model jobs a prompt may be set for (`model_prompt_set.job`).
pub const MODEL_JOBS: &[&str] = &["extract", "adjudicate", "eval"];

/// The classes of conflict a model party may be let decide (`model_policy_set.decides`):
/// a sense collision is settled by secondary keys or the conflict policy, never by a
/// model.
pub const MODEL_DECIDES: &[&str] = &["gender", "shared_rendering"];

/// Deepest cascading activation a book may declare (`cascade_set.depth`): each round
/// scans the notes of the records the round before brought in.
pub const CASCADE_DEPTH_MAX: u8 = 3;
/// Most terms one `cascade_set` list (`quiet`, `direct_only`) may name.
pub const CASCADE_LIST_MAX: usize = 10_000;
/// Longest list of terms an `examples_set` names (`always`, `never`).
pub const EXAMPLES_LIST_MAX: usize = 10_000;

/// Longest idempotency key a write may carry (`Idempotency-Key`), in bytes: visible
/// ASCII without space, so one byte a character.
pub const IDEMPOTENCY_KEY_BYTES_MAX: usize = 255;

// A summary at its limit, in 4-byte UTF-8, must still fit an event with room to spare
// for the envelope and the other fields.
const _: () = assert!(SUMMARY_CHARS_MAX * 4 + 4 * NOTE_CHARS_MAX < EVENT_BYTES_MAX);
// The largest term: every key and label at its limit, owner, role and both release
// lists full.
const _: () = assert!(
    (KEY_CHARS_MAX * (2 + SECONDARY_KEYS_MAX) + LABEL_CHARS_MAX * (6 + DECL_FORMS_MAX + 2 * RELEASE_PARTIES_MAX)) * 4
        + 2 * NOTE_CHARS_MAX * 4
        < EVENT_BYTES_MAX
);
// The largest rule: text, both scopes of kind selectors, owner, role and release.
const _: () =
    assert!((RULE_CHARS_MAX + LABEL_CHARS_MAX * (2 + 2 * SELECTORS_MAX + RELEASE_PARTIES_MAX)) * 4 < EVENT_BYTES_MAX);
// A governance_set with every list at its limit and every label at its own does not
// fit one event: it is refused by the encoder's EVENT_BYTES_MAX like any other
// oversized event, with the size and the limit.
const _: () = assert!(BATCH_EVENTS_MAX <= u32::MAX as usize);
const _: () = assert!(EVENT_BYTES_MAX <= u32::MAX as usize);
const _: () = assert!(DOCUMENT_BYTES_MAX <= crate::codec::DOCUMENT_BYTES_MAX);
const _: () = assert!(BATCH_BYTES_MAX <= GROUP_BYTES_MAX);
// An idempotency key is one header value: well inside the header bytes a server reads.
const _: () = assert!(IDEMPOTENCY_KEY_BYTES_MAX >= 16 && IDEMPOTENCY_KEY_BYTES_MAX <= 1024);

/// Most terms one same-rendering warning names: a group of terms with different
/// sources and one rendering is one warning, naming its first terms and counting
/// the rest, so the answer to a batch grows with its groups, not with their pairs.
pub const SAME_DST_TERMS_LISTED_MAX: usize = 20;
// A warning names at least the two terms of a pair, and its listed terms (source
// and id each) stay far below one event's size.
const _: () = assert!(SAME_DST_TERMS_LISTED_MAX >= 2);
const _: () = assert!(SAME_DST_TERMS_LISTED_MAX * (KEY_CHARS_MAX * 4 + 32) < EVENT_BYTES_MAX);

/// Most bytes of text (source texts and translations together, in UTF-8) one
/// translation-memory export (`lorebank export --format tmx`) gathers: the file it
/// writes grows with the stored chunks, so an export past this is refused, naming
/// the limit, before the document is built (export a chapter at a time).
pub const TMX_TEXT_BYTES_MAX: usize = 256 << 20;
/// Most chunks each list of a translation-memory export's report names (unchecked,
/// withheld, refused); it counts them all.
pub const TMX_CHUNKS_LISTED_MAX: usize = 20;
// A chapter's chunk and its translation fit one export.
const _: () = assert!(TMX_TEXT_BYTES_MAX >= input::CHUNK_BYTES_MAX + DOCUMENT_BYTES_MAX);
