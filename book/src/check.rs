//! The post-check of a translation against the receipt of its chunk, stored beside
//! the receipt, and the proposals a failing check makes for a reviewer.
//!
//! The check itself is the pure `postcheck` crate; this module feeds it the records
//! the receipt injected (each at the version the receipt names) and files the result.
//!
//! **Storage.** A check is a blob whose id is the blake3 hash of its bytes (it holds
//! the receipt id, the translation's hash, the translation itself and the result, so
//! it can be re-run and compared); the checks of one receipt are listed, in the order
//! they were filed, by index blobs whose ids are derived from the receipt id and a
//! position (blobs are never rewritten). An index entry is a *filing*
//! ([`CheckFiling`]): the check's id, when it was recorded and by whom. A check is
//! filed again when it is not already the receipt's latest (a translation checked,
//! replaced and checked again becomes the latest again), never twice in a row. Both
//! are derived data: the log never refers to them.

use ledger::Document;
use ledger_model::*;
use postcheck::{Check, Rendering, Verdict as CheckVerdict};
use serde::{Deserialize, Serialize};

use crate::book::Book;
use crate::error::BookError;
use crate::service::{Labelled, WriteOptions, Written};
use assembly::assemble::Disposition;
use assembly::receipt::Receipt;

/// blake3 `derive_key` context of a check's id.
const CHECK_CONTEXT: &str = "lorebank 2026 postcheck v1";
/// blake3 `derive_key` context of the id of a receipt's check index.
const INDEX_CONTEXT: &str = "lorebank 2026 postcheck index v1";
/// The byte form of [`StoredCheck`].
pub const CHECK_FORMAT: u16 = 1;
/// The byte form of a [`CheckFiling`] that records its time and actor. An index
/// entry of exactly 32 bytes is the bare check id filed before filings held them.
pub const FILING_FORMAT: u16 = 1;

/// A check as stored: what was checked and what was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCheck {
    /// [`CHECK_FORMAT`].
    pub format: u16,
    /// The receipt checked.
    pub receipt: Hash32,
    /// blake3 of the translation's UTF-8 bytes.
    pub translation_hash: Hash32,
    /// The translation.
    pub translation: String,
    /// The result (with the rule version and the generated forms it used).
    pub check: Check,
}

impl StoredCheck {
    /// The canonical bytes.
    pub fn encode(&self) -> Result<Vec<u8>, BookError> {
        ledger_model::codec::encode_large(self).map_err(|error| BookError::Invalid(format!("check: {error}")))
    }

    /// Decodes canonical bytes, refusing any other.
    pub fn decode(bytes: &[u8]) -> Result<StoredCheck, String> {
        ledger_model::codec::decode_large_strict(bytes).map_err(|error| error.to_string())
    }
}

/// One entry of a receipt's check index: which check was filed, and when and by whom
/// it was recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFiling {
    /// The check's id.
    pub check: Hash32,
    /// When it was recorded (unix milliseconds, informational only) and by which
    /// actor; `None` for an entry filed before filings held them.
    pub recorded: Option<(u64, String)>,
}

/// The byte form of a filing with its time and actor.
#[derive(Serialize, Deserialize)]
struct FilingBytes {
    /// [`FILING_FORMAT`].
    format: u16,
    check: Hash32,
    recorded_at_ms: u64,
    actor: String,
}

impl CheckFiling {
    /// The bytes of an index entry: the bare check id without a time and an actor,
    /// else the canonical bytes of the filing ([`FILING_FORMAT`]).
    pub fn to_bytes(&self) -> Result<Vec<u8>, BookError> {
        let Some((recorded_at_ms, actor)) = &self.recorded else { return Ok(self.check.0.to_vec()) };
        let bytes = FilingBytes {
            format: FILING_FORMAT,
            check: self.check,
            recorded_at_ms: *recorded_at_ms,
            actor: actor.clone(),
        };
        ledger_model::codec::encode(&bytes).map_err(|error| BookError::Invalid(format!("check filing: {error}")))
    }

    /// Reads an index entry, refusing any bytes [`CheckFiling::to_bytes`] would not
    /// write.
    pub fn from_bytes(bytes: &[u8]) -> Result<CheckFiling, String> {
        if let Ok(id) = <[u8; 32]>::try_from(bytes) {
            return Ok(CheckFiling { check: Hash32(id), recorded: None });
        }
        let filing: FilingBytes = ledger_model::codec::decode_strict(bytes).map_err(|error| error.to_string())?;
        if filing.format != FILING_FORMAT {
            return Err(format!("filing format {} is not {FILING_FORMAT}", filing.format));
        }
        Ok(CheckFiling { check: filing.check, recorded: Some((filing.recorded_at_ms, filing.actor)) })
    }
}

/// The content id of a check's bytes.
fn check_id(bytes: &[u8]) -> Hash32 {
    Hash32(*blake3::Hasher::new_derive_key(CHECK_CONTEXT).update(bytes).finalize().as_bytes())
}

/// The id of the `n`th entry (from 0) of the check index of `receipt`: a blob
/// holding that filing ([`CheckFiling`]). Blobs are never rewritten, so the index grows by
/// one blob per check.
fn index_id(receipt: Hash32, n: u32) -> Hash32 {
    let mut hasher = blake3::Hasher::new_derive_key(INDEX_CONTEXT);
    Hash32(*hasher.update(&receipt.0).update(&n.to_le_bytes()).finalize().as_bytes())
}

/// What a check did.
#[derive(Debug)]
pub struct Checked {
    /// The check's id.
    pub id: Hash32,
    /// The check as stored.
    pub stored: StoredCheck,
    /// The source surface of each checked term, by term number, for the report.
    pub surfaces: Vec<(u32, String, String)>,
    /// The proposals written for a reviewer (with `propose`), if any.
    pub proposed: Option<Written>,
}

impl Checked {
    /// Whether any item failed (missing, wrong rendering, or a gender flag).
    pub fn failed(&self) -> bool {
        self.stored.check.items.iter().any(|item| {
            matches!(item.verdict, CheckVerdict::Missing | CheckVerdict::WrongRendering) || !item.agreement.is_empty()
        })
    }
}

/// How to check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Store the check beside the receipt.
    pub record: bool,
    /// Write a `verify` disposition (reason `postcheck_missing` or
    /// `postcheck_wrong_rendering`) for each failing record, for a reviewer.
    pub propose: bool,
    /// Who checks: the actor a recorded check is filed with, and who proposes.
    pub actor: String,
    /// When, in unix milliseconds (informational only): the time a recorded check is
    /// filed with, and the proposals'.
    pub recorded_at_ms: u64,
}

/// Blobs to file, each with its id.
type Blobs = Vec<(Hash32, Vec<u8>)>;

impl Book {
    /// Checks `translation` (the Russian output of the chunk whose receipt is
    /// `receipt`, by id or prefix) against every record that receipt injected for a
    /// hit: the record's rendering, declared forms and generated forms, at the
    /// version the receipt used. Never changes the translation.
    pub fn check(&mut self, receipt: &str, translation: &str, options: &CheckOptions) -> Result<Checked, BookError> {
        let (receipt_id, receipt) = self.receipt(receipt)?;
        let (checked, blobs) = self.check_filed(receipt_id, &receipt, translation, options)?;
        if !blobs.is_empty() {
            self.ledger().file_documents(Vec::<Document>::new(), blobs)?;
        }
        self.check_proposed(receipt_id, checked, options)
    }

    /// The check of `translation` against `receipt` (id `receipt_id`, which need not
    /// be stored yet) and, with `options.record`, the blobs that file it (the check,
    /// and its index entry unless it is the latest already), written by the caller:
    /// [`Book::check`] alone, the proxy with the receipt, in one commit.
    pub(crate) fn check_filed(
        &mut self,
        receipt_id: Hash32,
        receipt: &Receipt,
        translation: &str,
        options: &CheckOptions,
    ) -> Result<(Checked, Blobs), BookError> {
        let then = self.state(Some(receipt.revision))?;
        let mut renderings: Vec<Rendering> = Vec::new();
        let mut surfaces = Vec::new();
        for hit in receipt.hits.iter().filter(|hit| hit.disposition != Disposition::Rejected) {
            if let Some(rendering) = renderings.iter_mut().find(|rendering| rendering.term == hit.term) {
                rendering.source_count += 1;
                rendering.review |= hit.disposition == Disposition::Ambiguous;
                continue;
            }
            let Some(term) = RecordId::new(RecordKind::Term, hit.term).and_then(|id| then.terms().get(&id)) else {
                continue;
            };
            let put = &term.put;
            surfaces.push((hit.term, put.src.clone(), put.dst.clone()));
            renderings.push(Rendering {
                term: hit.term,
                dst: put.dst.clone(),
                decl: put.decl.clone(),
                gender: put.gender,
                kind: put.kind.clone(),
                source_count: 1,
                review: hit.disposition == Disposition::Ambiguous,
            });
        }
        let check = postcheck::check(translation, &renderings);
        let stored = StoredCheck {
            format: CHECK_FORMAT,
            receipt: receipt_id,
            translation_hash: Hash32(*blake3::hash(translation.as_bytes()).as_bytes()),
            translation: translation.to_owned(),
            check,
        };
        let bytes = stored.encode()?;
        // A stored check must decode again, and the decoder refuses more than this.
        if bytes.len() > limits::DOCUMENT_BYTES_MAX {
            return Err(BookError::Invalid(format!(
                "the translation makes a check of {} bytes, over the limit of {}; check the chunk's translation, \
                 not a whole book",
                bytes.len(),
                limits::DOCUMENT_BYTES_MAX
            )));
        }
        let id = check_id(&bytes);
        let mut blobs = Vec::new();
        if options.record {
            // The filing stores the actor, so it is held to the rule of an event's.
            ledger_model::validate::validate_envelope(&options.actor, "postcheck")
                .map_err(|error| BookError::InvalidField { field: "actor", message: error.to_string() })?;
            let filings = self.check_filings(receipt_id)?;
            blobs.push((id, bytes));
            if filings.last().is_none_or(|last| last.check != id) {
                let n = u32::try_from(filings.len()).map_err(|_| BookError::Invalid("too many checks".into()))?;
                let filing = CheckFiling { check: id, recorded: Some((options.recorded_at_ms, options.actor.clone())) };
                blobs.push((index_id(receipt_id, n), filing.to_bytes()?));
            }
        }
        Ok((Checked { id, stored, surfaces, proposed: None }, blobs))
    }

    /// With `options.propose`, writes a `verify` verdict for each record `checked`
    /// finds missing or wrongly rendered, for a reviewer.
    pub(crate) fn check_proposed(
        &mut self,
        receipt_id: Hash32,
        mut checked: Checked,
        options: &CheckOptions,
    ) -> Result<Checked, BookError> {
        if options.propose {
            let short = &receipt_id.to_hex()[..16];
            let bodies: Vec<Labelled> = checked
                .stored
                .check
                .items
                .iter()
                .filter_map(|item| {
                    let reason = match item.verdict {
                        CheckVerdict::Missing => "postcheck_missing",
                        CheckVerdict::WrongRendering => "postcheck_wrong_rendering",
                        _ => return None,
                    };
                    let target = RecordId::new(RecordKind::Term, item.term)?;
                    let note = format!(
                        "receipt {short}: rendered {} of {} in translation {}",
                        item.found_count,
                        item.source_count,
                        &checked.stored.translation_hash.to_hex()[..16]
                    );
                    Some(Labelled {
                        label: format!("{target}"),
                        default_source: format!("postcheck:{short}"),
                        body: Body::DispositionSet(DispositionSet {
                            target,
                            verdict: Verdict::Verify,
                            reason: reason.into(),
                            note: Some(note),
                        }),
                    })
                })
                .collect();
            if !bodies.is_empty() {
                let write = WriteOptions {
                    actor: options.actor.clone().into(),
                    source: None,
                    expect_head: None,
                    recorded_at_ms: options.recorded_at_ms,
                };
                checked.proposed = Some(self.submit_labelled(&write, bodies, Vec::new())?);
            }
        }
        Ok(checked)
    }

    /// The filings of the checks of `receipt`, oldest first.
    pub fn check_filings(&self, receipt: Hash32) -> Result<Vec<CheckFiling>, BookError> {
        let entries = self.index_entries(|n| index_id(receipt, n))?;
        entries
            .iter()
            .enumerate()
            .map(|(n, (_, bytes))| {
                CheckFiling::from_bytes(bytes).map_err(|error| {
                    BookError::Corrupted(format!("check index entry {n} of receipt {receipt} is not a filing: {error}"))
                })
            })
            .collect()
    }

    /// The stored check `id` of receipt `receipt`. A check that is missing, no longer
    /// decodes or hashes to its id is corruption (its filing names it).
    pub fn stored_check(&self, receipt: Hash32, id: Hash32) -> Result<StoredCheck, BookError> {
        let bytes = self
            .ledger()
            .blob(id)?
            .ok_or_else(|| BookError::Corrupted(format!("check {id} of receipt {receipt} is not stored")))?;
        let stored = StoredCheck::decode(&bytes)
            .map_err(|error| BookError::Corrupted(format!("check {id} does not decode: {error}")))?;
        if check_id(&bytes) != id || stored.receipt != receipt {
            return Err(BookError::Corrupted(format!("check {id} is not the check it is filed as")));
        }
        Ok(stored)
    }

    /// The stored checks of receipt `receipt`, one per filing, oldest first (a check
    /// filed again after another is listed again). A check that no longer decodes or
    /// hashes to its id is corruption.
    pub fn checks_of(&self, receipt: Hash32) -> Result<Vec<(Hash32, StoredCheck)>, BookError> {
        self.check_filings(receipt)?
            .into_iter()
            .map(|filing| Ok((filing.check, self.stored_check(receipt, filing.check)?)))
            .collect()
    }
}

/// Whether `receipt`'s check index has an `n`th filing (from 0).
pub(crate) fn has_filing(ledger: &ledger::Ledger, receipt: Hash32, n: u32) -> Result<bool, BookError> {
    Ok(ledger.blob(index_id(receipt, n))?.is_some())
}

/// How many checks `receipt` has filed, and the latest (its last filing), checked as
/// [`Book::stored_check`] checks it.
pub(crate) fn latest_check_in(
    ledger: &ledger::Ledger,
    receipt: Hash32,
) -> Result<(u32, Option<(Hash32, StoredCheck)>), BookError> {
    let mut last = None;
    for n in 0.. {
        let Some(bytes) = ledger.blob(index_id(receipt, n))? else { break };
        last = Some((n, bytes));
    }
    let Some((n, bytes)) = last else { return Ok((0, None)) };
    let filing = CheckFiling::from_bytes(&bytes).map_err(|error| {
        BookError::Corrupted(format!("check index entry {n} of receipt {receipt} is not a filing: {error}"))
    })?;
    let bytes = ledger
        .blob(filing.check)?
        .ok_or_else(|| BookError::Corrupted(format!("check {} of receipt {receipt} is not stored", filing.check)))?;
    let stored = StoredCheck::decode(&bytes)
        .map_err(|error| BookError::Corrupted(format!("check {} does not decode: {error}", filing.check)))?;
    if check_id(&bytes) != filing.check || stored.receipt != receipt {
        return Err(BookError::Corrupted(format!("check {} is not the check it is filed as", filing.check)));
    }
    Ok((n + 1, Some((filing.check, stored))))
}
