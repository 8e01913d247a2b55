//! Assembling chunks against a book, recording receipts, and reading them back:
//! replay (byte equality with the recorded output), audit and impact.

use std::collections::BTreeMap;
use std::sync::Arc;

use ledger::{AppendError, Document, Ledger};
use ledger_model::*;
use projections::frozen::Frozen;
use projections::{Reader, SnapshotId, State};

use crate::book::Book;
use crate::error::BookError;
use crate::service::{Labelled, WriteOptions};
use assembly::assemble::{assemble, assemble_with, Assembly, Example, Previous};
use assembly::receipt::{
    text_id, Receipt, ReceiptCascade, ReceiptEntry, ReceiptHit, ReceiptRule, RECEIPT_FORMAT, RECEIPT_FORMAT_3,
    RECEIPT_FORMAT_4,
};

// The chunk limit the CLI reads `--text` through is the matcher's limit on a text.
const _: () = assert!(limits::input::CHUNK_BYTES_MAX == matcher::TEXT_BYTES_MAX);

/// A refused filing, in the receipt's terms: the document key is the chunk key, the
/// document the receipt.
pub(crate) fn receipt_refused(error: AppendError) -> BookError {
    match error {
        AppendError::DocumentKey { key, reason } => BookError::Invalid(format!("chunk key {key:?}: {reason}")),
        AppendError::DocumentTooLarge { n_bytes, bytes_max } => {
            BookError::Invalid(format!("receipt of {n_bytes} bytes is over the limit of {bytes_max} bytes"))
        }
        other => other.into(),
    }
}

/// What recording `assembled` (of chunk text `text`) files: the receipt, a document
/// filed under its chapter and chunk key, and its input and output texts as blobs.
pub(crate) fn receipt_filing(assembled: &Assembled, text: &str) -> (Document, [(Hash32, Vec<u8>); 2]) {
    let document = Document {
        id: assembled.id,
        bytes: assembled.receipt.encode(),
        group: assembled.receipt.chapter,
        key: assembled.receipt.chunk_key.clone(),
    };
    let texts = [
        (assembled.receipt.input, text.as_bytes().to_vec()),
        (assembled.receipt.output, assembled.assembly.context.as_bytes().to_vec()),
    ];
    (document, texts)
}

/// An assembly and its receipt.
#[derive(Clone, Debug)]
pub struct Assembled {
    /// What was assembled.
    pub assembly: Assembly,
    /// Its receipt.
    pub receipt: Receipt,
    /// The receipt's id.
    pub id: Hash32,
}

/// The outcome of replaying a receipt.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The receipt replayed.
    pub receipt: Receipt,
    /// The context assembled now.
    pub context: String,
    /// Whether its content id equals the recorded output's.
    pub identical: bool,
    /// The first byte at which the new context differs from the recorded one.
    pub first_difference: Option<usize>,
}

/// One recorded chunk whose context would change under the head snapshot.
#[derive(Clone, Debug)]
pub struct Impacted {
    /// Chapter.
    pub chapter: u32,
    /// Chunk key.
    pub chunk_key: String,
    /// The latest receipt of the chunk.
    pub receipt: Hash32,
    /// The chunk's text (the receipt's input): what is to be translated again.
    pub text: String,
    /// Terms whose lines differ (added, removed or changed).
    pub terms: Vec<u32>,
}

fn term_id(number: u32) -> RecordId {
    RecordId::new(RecordKind::Term, number).expect("term numbers in a snapshot are valid")
}

/// The version of every term of a state (the seq of the put in force; 0 for a term
/// it does not hold), by number: built once per [`Assembler`], so each of the many
/// terms a receipt names (every hit, every injected line) costs a binary search in
/// one array instead of a walk of the state's map of every term.
struct TermVersions {
    /// Term numbers, ascending: 4 bytes a term, so the search stays in the cache.
    numbers: Vec<u32>,
    /// The version of the term at the same index.
    versions: Vec<u64>,
}

impl TermVersions {
    fn of(state: &State) -> TermVersions {
        let mut pairs: Vec<(u32, u64)> =
            state.terms().iter().map(|(id, term)| (id.number(), term.put_by.seq.0)).collect();
        pairs.sort_unstable_by_key(|&(number, _)| number);
        let (numbers, versions) = pairs.into_iter().unzip();
        TermVersions { numbers, versions }
    }

    fn get(&self, number: u32) -> u64 {
        self.numbers.binary_search(&number).map_or(0, |at| self.versions[at])
    }
}

/// The seq of the put in force for rule `number` in `state` (0 if unknown).
fn rule_version(state: &State, number: u32) -> u64 {
    let id = RecordId::new(RecordKind::Rule, number).expect("rule numbers in a snapshot are valid");
    state.rules().get(&id).map_or(0, |rule| rule.put_by.seq.0)
}

#[allow(clippy::too_many_arguments, reason = "a receipt is made of all of them")]
fn receipt_of(
    snapshot: SnapshotId,
    reader: &Reader,
    state: &State,
    chapter: u32,
    chunk_key: &str,
    text: &str,
    prev: Option<Hash32>,
    assembly: &Assembly,
    versions: &TermVersions,
) -> Receipt {
    Receipt {
        format: if !assembly.examples.is_empty() {
            RECEIPT_FORMAT_4
        } else if !assembly.cascade.is_empty() {
            RECEIPT_FORMAT_3
        } else {
            RECEIPT_FORMAT
        },
        snapshot: snapshot.0,
        revision: state.revision(),
        chapter,
        chunk_key: chunk_key.to_owned(),
        input: text_id(text),
        prev,
        sticky_in: assembly.sticky_in.clone(),
        hits: assembly
            .hits
            .iter()
            .map(|hit| ReceiptHit {
                term: hit.term,
                version: versions.get(hit.term),
                text: hit.text.clone(),
                bytes: hit.bytes,
                chars: hit.chars,
                disposition: hit.disposition,
                reason: hit.reason,
            })
            .collect(),
        injected: assembly
            .injected
            .iter()
            .map(|entry| ReceiptEntry {
                term: entry.term,
                version: versions.get(entry.term),
                via: entry.via,
                unverified: entry.unverified,
            })
            .collect(),
        evicted: assembly.evicted.clone(),
        summaries: assembly.summaries.clone(),
        recent: assembly.recent.clone(),
        retrieval: assembly.retrieval,
        render_format: state.assembly().render_format,
        output: text_id(&assembly.context),
        party: reader.party().map(str::to_owned),
        rules: assembly
            .rules
            .iter()
            .map(|decision| ReceiptRule {
                rule: decision.rule,
                version: rule_version(state, decision.rule),
                disposition: decision.disposition,
                reason: decision.reason,
            })
            .collect(),
        cascade: assembly
            .cascade
            .iter()
            .map(|decision| ReceiptCascade {
                term: decision.term,
                version: versions.get(decision.term),
                by: decision.by,
                depth: decision.depth,
                disposition: decision.disposition,
                reason: decision.reason,
            })
            .collect(),
        examples: assembly.examples.iter().map(|shown| shown.example.clone()).collect(),
    }
}

/// The reader a receipt was assembled for.
pub fn reader_of(receipt: &Receipt) -> Reader {
    Reader::from_party(receipt.party.clone())
}

/// Index of the first byte where `a` and `b` differ, if they do.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// A stored receipt by id or unique hex prefix (at least 8 digits), checked
/// against its id.
pub(crate) fn receipt_in(ledger: &Ledger, id_or_prefix: &str) -> Result<(Hash32, Receipt), BookError> {
    let id = match Hash32::from_hex(id_or_prefix) {
        Some(id) => id,
        None => {
            if id_or_prefix.len() < 8 || !id_or_prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(BookError::Receipt(format!(
                    "{id_or_prefix:?} is not a receipt id (64 hex digits, or a prefix of at least 8)"
                )));
            }
            let found = ledger.documents_with_prefix(id_or_prefix, 2)?;
            match found.as_slice() {
                [one] => *one,
                [] => return Err(BookError::NotFound { what: format!("receipt {id_or_prefix}") }),
                _ => return Err(BookError::Receipt(format!("receipt prefix {id_or_prefix} is ambiguous"))),
            }
        }
    };
    let bytes = ledger
        .document(id)
        .map_err(|error| match error {
            ledger::ReadError::Damaged { object, detail } => {
                ledger::ReadError::Damaged { object: crate::book::receipt_object(&object), detail }
            }
            other => other,
        })?
        .ok_or_else(|| BookError::NotFound { what: format!("receipt {id}") })?;
    let receipt = Receipt::decode(&bytes)
        .map_err(|error| BookError::Corrupted(format!("receipt {id} does not decode: {error}")))?;
    if receipt.id() != id {
        return Err(BookError::Corrupted(format!("receipt {id} hashes to {}", receipt.id())));
    }
    Ok((id, receipt))
}

/// A stored text (a receipt's input or output), checked against its id.
pub(crate) fn text_in(ledger: &Ledger, id: Hash32, what: &str) -> Result<String, BookError> {
    let bytes = ledger.blob(id)?.ok_or_else(|| BookError::Corrupted(format!("{what} {id} is not stored")))?;
    let text = String::from_utf8(bytes).map_err(|_| BookError::Corrupted(format!("{what} {id} is not UTF-8")))?;
    if text_id(&text) != id {
        return Err(BookError::Corrupted(format!("{what} {id} does not hash to its id")));
    }
    Ok(text)
}

/// The receipt `prev` names, which must be of `chapter`.
pub(crate) fn previous_in(ledger: &Ledger, prev: Option<Hash32>, chapter: u32) -> Result<Option<Receipt>, BookError> {
    let Some(prev) = prev else { return Ok(None) };
    let (_, receipt) = receipt_in(ledger, &prev.to_hex())?;
    if receipt.chapter != chapter {
        return Err(BookError::Receipt(format!(
            "previous receipt {} is of chapter {}, not {chapter}",
            &prev.to_hex()[..16],
            receipt.chapter
        )));
    }
    Ok(Some(receipt))
}

/// One chunk of a chapter to assemble: its key and text.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// Key of the chunk within the chapter.
    pub key: String,
    /// The chunk text.
    pub text: String,
}

/// The head of a book as shared, immutable values: everything assembling a chunk
/// against it needs. Many threads assemble through clones of one `Assembler` at
/// once, without the book; recording goes through the ledger's writer thread, which
/// group-commits the receipts of concurrent callers.
#[derive(Clone)]
pub struct Assembler {
    ledger: Arc<Ledger>,
    state: Arc<State>,
    frozen: Arc<Frozen>,
    snapshot: SnapshotId,
    reader: Reader,
    examples: crate::examples::SharedExtracts,
    versions: Arc<TermVersions>,
}

impl std::fmt::Debug for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler")
            .field("revision", &self.state.revision())
            .field("snapshot", &self.snapshot)
            .field("reader", &self.reader)
            .finish()
    }
}

/// An [`Assembler`] without its state: what a dry run keeps of the head's assemblers
/// while it decides on the head in place ([`Book::dry_submit`]), to give them back
/// over the head it puts back as it was.
pub(crate) struct Detached {
    ledger: Arc<Ledger>,
    frozen: Arc<Frozen>,
    snapshot: SnapshotId,
    reader: Reader,
    examples: crate::examples::SharedExtracts,
    versions: Arc<TermVersions>,
}

impl Detached {
    /// The assembler again, over `state`: the state it was built on, or one equal to
    /// it.
    pub(crate) fn attach(self, state: Arc<State>) -> Assembler {
        let Detached { ledger, frozen, snapshot, reader, examples, versions } = self;
        Assembler { ledger, state, frozen, snapshot, reader, examples, versions }
    }
}

impl Assembler {
    /// Lets go of the state ([`Detached::attach`] gives it back).
    pub(crate) fn detach(self) -> Detached {
        let Assembler { ledger, state: _, frozen, snapshot, reader, examples, versions } = self;
        Detached { ledger, frozen, snapshot, reader, examples, versions }
    }

    /// The revision assembled against.
    pub fn revision(&self) -> Seq {
        self.state.revision()
    }

    /// Its snapshot ID.
    pub fn snapshot(&self) -> SnapshotId {
        self.snapshot
    }

    /// Whom it assembles for.
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// Whether an assembly reads the book's recorded checks for demonstrations
    /// (render format 3 and later): the first one of an open book reads hundreds of
    /// receipts, which is no work for a caller that must not wait.
    pub fn gathers_examples(&self) -> bool {
        self.state.assembly().render_format >= assembly::assemble::EXAMPLES_FORMAT
    }

    /// The demonstrations offered at `chapter` ([`crate::examples`]; none unless the
    /// book renders format 3).
    pub fn examples(&self, chapter: u32) -> Result<Vec<Example>, BookError> {
        crate::examples::pool(&self.ledger, &self.state, &self.reader, chapter, &self.examples)
    }

    /// Assembles one chunk; `prev` is the receipt before it in the chapter, when
    /// known (scene inertia).
    pub(crate) fn assemble_after(
        &self,
        chapter: u32,
        chunk_key: &str,
        text: &str,
        prev: Option<(Hash32, &Receipt)>,
        examples: &[Example],
    ) -> Result<Assembled, BookError> {
        // The key a recording would file the receipt under, checked whether or not
        // this assembly is recorded, so a dry run refuses what a recording would.
        ledger_model::validate::document_key(chunk_key).map_err(|reason| {
            BookError::Invalid(format!("chunk key {:?}: {reason}", chunk_key.chars().take(80).collect::<String>()))
        })?;
        let previous = prev.map(|(_, receipt)| Previous { chapter: receipt.chapter, recent: &receipt.recent });
        let assembly = assemble_with(&self.frozen, chapter, text, previous, examples)?;
        if let Some((id, receipt)) = prev {
            if reader_of(receipt) != self.reader {
                return Err(BookError::Receipt(format!(
                    "previous receipt {} was assembled for {}, not for {}",
                    &id.to_hex()[..16],
                    reader_of(receipt),
                    self.reader
                )));
            }
        }
        let receipt = receipt_of(
            self.snapshot,
            &self.reader,
            &self.state,
            chapter,
            chunk_key,
            text,
            prev.map(|(id, _)| id),
            &assembly,
            &self.versions,
        );
        let id = receipt.id();
        Ok(Assembled { assembly, receipt, id })
    }

    /// Assembles the chunks of one chapter in order, each chunk's previous receipt
    /// the one before it (the first one's is `prev`), and with `record` files every
    /// receipt, input and output in one group commit: all of them or none.
    pub fn assemble_chapter(
        &self,
        chapter: u32,
        chunks: &[Chunk],
        prev: Option<Hash32>,
        record: bool,
    ) -> Result<Vec<Assembled>, BookError> {
        let first_prev = previous_in(&self.ledger, prev, chapter)?;
        let examples = self.examples(chapter)?;
        let mut out: Vec<Assembled> = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let before = match out.last() {
                Some(last) => Some((last.id, &last.receipt)),
                None => prev.zip(first_prev.as_ref()),
            };
            let assembled = self.assemble_after(chapter, &chunk.key, &chunk.text, before, &examples)?;
            out.push(assembled);
        }
        if record {
            self.record(out.iter().zip(chunks).map(|(assembled, chunk)| (assembled, chunk.text.as_str())))?;
        }
        Ok(out)
    }

    /// Files the receipt, input and output of one assembled chunk without waiting
    /// for the commit ([`Assembler::assemble_chunk_then`]).
    fn record_then(
        &self,
        assembled: &Assembled,
        text: &str,
        then: impl FnOnce(Result<(), BookError>) + Send + 'static,
    ) -> Result<(), BookError> {
        let (document, texts) = receipt_filing(assembled, text);
        self.ledger
            .file_documents_then(vec![document], texts.into(), move |answer| then(answer.map_err(receipt_refused)))
            .map_err(receipt_refused)
    }

    /// Files receipts with their inputs and outputs, in one group commit.
    fn record<'a>(&self, chunks: impl Iterator<Item = (&'a Assembled, &'a str)>) -> Result<(), BookError> {
        let mut documents = Vec::new();
        let mut blobs = Vec::new();
        for (assembled, text) in chunks {
            let (document, texts) = receipt_filing(assembled, text);
            documents.push(document);
            blobs.extend(texts);
        }
        self.ledger.file_documents(documents, blobs).map_err(receipt_refused)
    }

    /// Assembles one chunk against the head and, with `record`, stores its receipt,
    /// input and output in the book.
    pub fn assemble_chunk(
        &self,
        chapter: u32,
        chunk_key: &str,
        text: &str,
        prev: Option<Hash32>,
        record: bool,
    ) -> Result<Assembled, BookError> {
        let previous = previous_in(&self.ledger, prev, chapter)?;
        let examples = self.examples(chapter)?;
        let assembled = self.assemble_after(chapter, chunk_key, text, prev.zip(previous.as_ref()), &examples)?;
        if record {
            self.record(std::iter::once((&assembled, text)))?;
        }
        Ok(assembled)
    }

    /// [`Assembler::assemble_chunk`] with `record`, without waiting for the commit:
    /// the receipt, input and output are queued for the ledger's group commit and
    /// `then` gets the answer on the ledger's writer thread once they are durable, so
    /// it must be quick (an async task's wake-up). What is refused before anything is
    /// queued (the assembly itself, a bad filing) comes back here, and `then` is not
    /// called; otherwise it is called exactly once.
    pub fn assemble_chunk_then(
        &self,
        chapter: u32,
        chunk_key: &str,
        text: &str,
        prev: Option<Hash32>,
        then: impl FnOnce(Result<(), BookError>) + Send + 'static,
    ) -> Result<Assembled, BookError> {
        let assembled = self.assemble_chunk(chapter, chunk_key, text, prev, false)?;
        self.record_then(&assembled, text, then)?;
        Ok(assembled)
    }
}

impl Book {
    /// The head as an [`Assembler`] for the full view ([`Book::assembler_for`]).
    pub fn assembler(&mut self) -> Result<Assembler, BookError> {
        self.assembler_for(&Reader::Full)
    }

    /// The head as an [`Assembler`] for `reader` (assembling with the reader's view of
    /// the head): built once per head revision and reader, and shared.
    pub fn assembler_for(&mut self, reader: &Reader) -> Result<Assembler, BookError> {
        if let Some(assembler) = self.assembler_built(reader)? {
            return Ok(assembler);
        }
        let state = self.state(None)?;
        self.check_reader(&state, reader)?;
        let (frozen, _) = self.frozen_for(&state, reader)?;
        let snapshot = self.snapshot_id(&state);
        let versions = Arc::new(TermVersions::of(&state));
        let assembler = Assembler {
            ledger: self.ledger_handle(),
            state,
            frozen,
            snapshot,
            reader: reader.clone(),
            examples: self.example_extracts(),
            versions,
        };
        self.set_assembler_cache(reader.clone(), assembler.clone());
        Ok(assembler)
    }

    /// The head's [`Assembler`] for `reader` if it is already built (`None` when
    /// [`Book::assembler_for`] would have to build it: a new head, a new reader).
    /// Costs one read of the ledger's head, never a fold or a projection.
    pub fn assembler_built(&self, reader: &Reader) -> Result<Option<Assembler>, BookError> {
        let revision = self.ledger().head()?.seq;
        Ok(self.assembler_cache(reader).filter(|assembler| assembler.revision() == revision))
    }

    /// A stored receipt by id or unique hex prefix (at least 8 digits).
    pub fn receipt(&self, id_or_prefix: &str) -> Result<(Hash32, Receipt), BookError> {
        receipt_in(self.ledger(), id_or_prefix)
    }

    /// A stored text by id, checked.
    pub(crate) fn text(&self, id: Hash32, what: &str) -> Result<String, BookError> {
        text_in(self.ledger(), id, what)
    }

    /// The input and output texts of a receipt.
    pub fn receipt_texts(&self, receipt: &Receipt) -> Result<(String, String), BookError> {
        Ok((self.text(receipt.input, "input")?, self.text(receipt.output, "output")?))
    }

    fn previous(&self, prev: Option<Hash32>, chapter: u32) -> Result<Option<Receipt>, BookError> {
        previous_in(self.ledger(), prev, chapter)
    }

    /// Assembles a chunk against the head for `reader` and, with `record`, stores its
    /// receipt, input and output in the book.
    pub fn assemble_chunk(
        &mut self,
        reader: &Reader,
        chapter: u32,
        chunk_key: &str,
        text: &str,
        prev: Option<Hash32>,
        record: bool,
    ) -> Result<Assembled, BookError> {
        self.assembler_for(reader)?.assemble_chunk(chapter, chunk_key, text, prev, record)
    }

    /// A stored receipt that `reader` may read: the full view reads every receipt, a
    /// party only those assembled for it (another party's would show what that party
    /// was given).
    ///
    /// A party reads its receipt only while the head still releases to it everything
    /// the receipt names ([`Book::read_at`] at the receipt's revision): a record any
    /// of its hits, injected entries, sticky or evicted records, summaries or rules
    /// name must read the same in the party's view cut by the head as it did then
    /// (its note and aliases included). Otherwise the receipt is no longer the
    /// party's to read (the full view still reads it).
    pub fn receipt_for(&mut self, reader: &Reader, id_or_prefix: &str) -> Result<(Hash32, Receipt), BookError> {
        let (id, receipt) = self.receipt(id_or_prefix)?;
        if *reader == Reader::Full {
            return Ok((id, receipt));
        }
        if reader_of(&receipt) != *reader {
            return Err(BookError::NotFound { what: format!("receipt {id_or_prefix} assembled for {reader}") });
        }
        let read = self.read_at(reader, Some(receipt.revision))?;
        if read.cut {
            let then = read.full.view_for(reader);
            let now = read.view();
            let term = |number: u32| RecordId::new(RecordKind::Term, number);
            let named_terms = receipt
                .hits
                .iter()
                .map(|hit| hit.term)
                .chain(receipt.injected.iter().map(|entry| entry.term))
                .chain(receipt.sticky_in.iter().copied())
                .chain(receipt.evicted.iter().copied())
                .chain(receipt.recent.iter().flatten().copied())
                .filter_map(term);
            let withdrawn = named_terms
                .filter(|id| then.terms().get(id) != now.terms().get(id))
                .chain(
                    receipt
                        .summaries
                        .iter()
                        .filter_map(|&number| RecordId::new(RecordKind::Summary, number))
                        .filter(|id| then.summaries().contains_key(id) != now.summaries().contains_key(id)),
                )
                .chain(
                    receipt
                        .rules
                        .iter()
                        .filter_map(|rule| RecordId::new(RecordKind::Rule, rule.rule))
                        .filter(|id| then.rules().contains_key(id) != now.rules().contains_key(id)),
                )
                .next();
            if let Some(record) = withdrawn {
                return Err(BookError::NotFound {
                    what: format!(
                        "receipt {id_or_prefix} that {reader} may read now: it names {record}, which the head no \
                         longer releases to it as it did at revision {}",
                        receipt.revision
                    ),
                });
            }
        }
        Ok((id, receipt))
    }

    /// Re-assembles a receipt's stored input against its snapshot (rebuilt from the
    /// log at its revision), for the reader it was assembled for, and compares with
    /// the recorded output. `reader` must be the full view or that reader.
    pub fn replay(&mut self, reader: &Reader, id_or_prefix: &str) -> Result<Replayed, BookError> {
        let (_, receipt) = self.receipt_for(reader, id_or_prefix)?;
        let frozen = self.frozen_at_for(SnapshotId(receipt.snapshot), receipt.revision, &reader_of(&receipt))?;
        let text = self.text(receipt.input, "input")?;
        let previous = self.previous(receipt.prev, receipt.chapter)?;
        let previous_view = previous.as_ref().map(|r| Previous { chapter: r.chapter, recent: &r.recent });
        let assembly = assemble_with(&frozen, receipt.chapter, &text, previous_view, &receipt.examples)?;
        let identical = text_id(&assembly.context) == receipt.output;
        let first_difference = if identical {
            None
        } else {
            let recorded = self.text(receipt.output, "output")?;
            first_difference(recorded.as_bytes(), assembly.context.as_bytes())
        };
        Ok(Replayed { receipt, context: assembly.context, identical, first_difference })
    }

    /// Assembles `text` against a past snapshot (found through the snapshot index),
    /// for `reader`.
    pub fn assemble_at_snapshot(
        &mut self,
        reader: &Reader,
        snapshot: SnapshotId,
        chapter: u32,
        text: &str,
    ) -> Result<Assembly, BookError> {
        let revision = self
            .ledger()
            .snapshot_revision(snapshot.0)?
            .ok_or_else(|| BookError::Receipt(format!("snapshot {snapshot} is not in the book's index")))?;
        let read = self.read_at(reader, Some(revision))?;
        let frozen = self.frozen_of(&read, reader)?;
        Ok(assemble(&frozen, chapter, text, None)?)
    }

    /// The latest receipt of every recorded chunk (of one chapter, or all), in
    /// chapter and chunk-key order.
    pub fn latest_receipts(&self, chapter: Option<u32>) -> Result<Vec<(Hash32, Receipt)>, BookError> {
        self.latest_receipt_ids(chapter)?.into_iter().map(|id| self.receipt(&id.to_hex())).collect()
    }

    /// The id of the latest receipt of every recorded chunk (of one chapter, or all),
    /// in chapter and chunk-key order, read from the index alone.
    pub(crate) fn latest_receipt_ids(&self, chapter: Option<u32>) -> Result<Vec<Hash32>, BookError> {
        let mut latest: Vec<(u32, String, u64, Hash32)> = Vec::new();
        for entry in self.ledger().filed(chapter)? {
            match latest.last_mut() {
                Some(last) if last.0 == entry.0 && last.1 == entry.1 => *last = entry,
                _ => latest.push(entry),
            }
        }
        Ok(latest.into_iter().map(|(_, _, _, id)| id).collect())
    }

    /// Re-assembles the recorded chunk `id` and every chunk before it in its chapter
    /// (following `prev`) against `state`, each fed the *re-assembled* previous
    /// result, so a change that travels through sticky records reaches every later
    /// chunk. Results are kept in `memo` by receipt id.
    fn reassemble_chain(
        &mut self,
        at: At<'_>,
        id: Hash32,
        memo: &mut BTreeMap<Hash32, Assembly>,
    ) -> Result<(), BookError> {
        let mut chain = Vec::new();
        let mut next = Some(id);
        while let Some(current) = next {
            if memo.contains_key(&current) {
                break;
            }
            let (_, receipt) = self.receipt(&current.to_hex())?;
            if let Some((_, later)) = chain.last() {
                let later: &Receipt = later;
                if later.chapter != receipt.chapter {
                    return Err(BookError::Receipt(format!(
                        "previous receipt {} is of chapter {}, not {}",
                        &current.to_hex()[..16],
                        receipt.chapter,
                        later.chapter
                    )));
                }
            }
            next = receipt.prev;
            chain.push((current, receipt));
        }
        for (current, receipt) in chain.into_iter().rev() {
            let text = self.text(receipt.input, "input")?;
            let (frozen, _) = self.frozen_view(at.state, at.snapshot, &reader_of(&receipt), at.store)?;
            let previous = receipt
                .prev
                .and_then(|prev| memo.get(&prev))
                .map(|assembly| Previous { chapter: receipt.chapter, recent: &assembly.recent });
            let assembly = assemble_with(&frozen, receipt.chapter, &text, previous, &receipt.examples)?;
            memo.insert(current, assembly);
        }
        Ok(())
    }

    /// Recorded chunks whose context would differ under the head snapshot. Every
    /// chunk is re-assembled in chapter order, each fed the re-assembled previous
    /// chunk. Without `since`, each is compared with its recorded output; with
    /// `since`, with the same re-assembly at that revision. With `term`, only chunks
    /// where that term's line would be added, removed or changed.
    pub fn impact(&mut self, since: Option<Seq>, term: Option<RecordId>) -> Result<Vec<Impacted>, BookError> {
        // Revision 0 is the book before its first event: no config, so no chunk can
        // be assembled against it. That is bad input, not a damaged book.
        if since == Some(Seq::ZERO) {
            return Err(BookError::InvalidField {
                field: "since",
                message: "impact since revision 0: revisions start at 1 (revision 0 is the empty book)".into(),
            });
        }
        let head = self.state(None)?;
        let head = At::of_log(self, &head);
        let base = since.map(|revision| self.state(Some(revision))).transpose()?;
        let mut now_memo = BTreeMap::new();
        let mut base_memo = BTreeMap::new();
        let mut out = Vec::new();
        for (id, receipt) in self.latest_receipts(None)? {
            self.reassemble_chain(head, id, &mut now_memo)?;
            let now = &now_memo[&id];
            // What the chunk is compared with: its context hash, its injected lines,
            // and the terms it injected.
            let (before_hash, before_lines, before_terms): (Hash32, Vec<String>, Vec<u32>) = match &base {
                Some(base) => {
                    let base = At::of_log(self, base);
                    self.reassemble_chain(base, id, &mut base_memo)?;
                    let then = &base_memo[&id];
                    (
                        text_id(&then.context),
                        then.injected.iter().map(|entry| entry.line.clone()).collect(),
                        then.injected.iter().map(|entry| entry.term).collect(),
                    )
                }
                None => {
                    let recorded = self.text(receipt.output, "output")?;
                    (
                        receipt.output,
                        recorded.lines().map(str::to_owned).collect(),
                        receipt.injected.iter().map(|entry| entry.term).collect(),
                    )
                }
            };
            if text_id(&now.context) == before_hash {
                continue;
            }
            let mut terms: Vec<u32> = Vec::new();
            for entry in &now.injected {
                if !before_lines.contains(&entry.line) {
                    terms.push(entry.term);
                }
            }
            for before in before_terms {
                if !now.injected.iter().any(|now| now.term == before) {
                    terms.push(before);
                }
            }
            terms.sort_unstable();
            terms.dedup();
            if term.is_some_and(|term| !terms.contains(&term.number())) {
                continue;
            }
            let text = self.text(receipt.input, "input")?;
            out.push(Impacted {
                chapter: receipt.chapter,
                chunk_key: receipt.chunk_key.clone(),
                receipt: id,
                text,
                terms,
            });
        }
        Ok(out)
    }

    /// What-if before writing: `bodies` decided as one batch against the head, as
    /// [`Book::check_labelled`] decides it (the same refusals, named by label), and
    /// every recorded chunk's latest receipt reassembled at the head and at the state
    /// the batch would make. The chunks whose context would change come back with the
    /// lines it would lose and gain and the terms whose lines change. Nothing is
    /// written: not the batch, not a frozen projection of its state, not its snapshot
    /// ID; the head is unchanged. An expected head in `write` that is not the head is
    /// a conflict, as for a write.
    pub fn impact_with(&mut self, write: &WriteOptions, mut bodies: Vec<Labelled>) -> Result<WhatIf, BookError> {
        let blobs = crate::service::with_profiles(&mut bodies, Vec::new())?;
        let (events, labels) = crate::service::labelled_events(write, bodies)?;
        let head = self.state(None)?;
        let mut after = State::clone(&head);
        let decided = self
            .decide_against(&mut after, &events, write.expect_head, &blobs, None)
            .map_err(|error| crate::service::name_refusal(error, &labels))?;
        let snapshot = after.snapshot_id();
        let projections::Decided { events, dropped, warnings } = decided;
        let submitted = crate::book::Submitted {
            decision: crate::book::Accepted { events, dropped, warnings },
            revision: after.revision(),
            appended: None,
            snapshot,
        };
        let written = crate::service::Written { submitted, labels, warnings: Vec::new() };
        let now = At::of_log(self, &head);
        let then = At { state: &after, snapshot, store: false };
        let mut chunks = Vec::new();
        // The same snapshot assembles every chunk the same way.
        if snapshot != now.snapshot {
            let (mut now_memo, mut then_memo) = (BTreeMap::new(), BTreeMap::new());
            for (id, receipt) in self.latest_receipts(None)? {
                self.reassemble_chain(now, id, &mut now_memo)?;
                self.reassemble_chain(then, id, &mut then_memo)?;
                let (before, after) = (&now_memo[&id], &then_memo[&id]);
                if before.context == after.context {
                    continue;
                }
                let lines = |assembly: &Assembly| assembly.context.lines().map(str::to_owned).collect::<Vec<_>>();
                let (before_lines, after_lines) = (lines(before), lines(after));
                let removed: Vec<String> =
                    before_lines.iter().filter(|line| !after_lines.contains(line)).cloned().collect();
                let added: Vec<String> =
                    after_lines.iter().filter(|line| !before_lines.contains(line)).cloned().collect();
                let mut terms: Vec<u32> = Vec::new();
                for (one, other) in [(after, before), (before, after)] {
                    for entry in &one.injected {
                        if !other.injected.iter().any(|same| same.line == entry.line) {
                            terms.push(entry.term);
                        }
                    }
                }
                terms.sort_unstable();
                terms.dedup();
                let text = self.text(receipt.input, "input")?;
                let chunk = Impacted {
                    chapter: receipt.chapter,
                    chunk_key: receipt.chunk_key.clone(),
                    receipt: id,
                    text,
                    terms,
                };
                chunks.push(Reopened { chunk, removed, added });
            }
        }
        Ok(WhatIf { written, head_snapshot: now.snapshot, chunks })
    }
}

/// A state to reassemble recorded chunks at, with its snapshot ID, and whether its
/// frozen projections may go to the book's cache: a state of the log, or a batch
/// decided and not written (nothing of it is stored, and its ID is not remembered
/// under the revision it would have had).
#[derive(Clone, Copy)]
struct At<'s> {
    state: &'s State,
    snapshot: SnapshotId,
    store: bool,
}

impl<'s> At<'s> {
    fn of_log(book: &mut Book, state: &'s State) -> At<'s> {
        At { state, snapshot: book.snapshot_id(state), store: true }
    }
}

/// What a batch would do, decided against the head and written nowhere
/// ([`Book::impact_with`]).
#[derive(Debug)]
pub struct WhatIf {
    /// The decision as a dry run answers it: the events that would be appended, the
    /// no-ops dropped, the warnings, the revision and the snapshot it would make.
    pub written: crate::service::Written,
    /// The snapshot at the head, which the batch would leave.
    pub head_snapshot: SnapshotId,
    /// The recorded chunks whose context would change, in chapter and chunk order.
    pub chunks: Vec<Reopened>,
}

/// A recorded chunk whose context a batch would change: what to translate again, and
/// how its context would differ from the one it gets at the head.
#[derive(Clone, Debug)]
pub struct Reopened {
    /// The chunk, its latest receipt and text, and the terms whose lines would change.
    pub chunk: Impacted,
    /// Lines of the context at the head that the batch would take out, in order.
    pub removed: Vec<String>,
    /// Lines the batch would put in, in order.
    pub added: Vec<String>,
}

/// How an injected entry of a past receipt stands at the head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Staleness {
    /// The same content is still in force: the version injected, or a later put of
    /// exactly the same content (a rollback that restored it, say).
    Current,
    /// Other content was put at this seq.
    Revised(u64),
    /// The record was retired.
    Retired,
}

/// Whether an injected entry is stale at `head`. `injected` is the content of the
/// version the entry names, when the caller has it: a later put of the same content
/// is not a revision.
pub fn staleness(head: &State, entry: &ReceiptEntry, injected: Option<&TermPut>) -> Staleness {
    match head.terms().get(&term_id(entry.term)) {
        Some(term) if term.retired => Staleness::Retired,
        Some(term) if term.put_by.seq.0 != entry.version && injected != Some(&term.put) => {
            Staleness::Revised(term.put_by.seq.0)
        }
        Some(_) => Staleness::Current,
        None => Staleness::Retired,
    }
}
