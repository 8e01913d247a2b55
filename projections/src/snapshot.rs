//! Snapshots and their content-addressed IDs.
//!
//! A snapshot covers everything that can change an assembly: active terms with their
//! content, aliases and verdict; active summaries; the assembly config; the
//! normalization profile; and the format versions of everything that turns them into
//! bytes. Not the revision, not timestamps, not provenance, not verdict reasons, not
//! retired records, not past versions, not the review queue (candidates), not the
//! register of expected concepts, not the embedding model (vectors are derived data
//! beside the log and only ever become candidates). Equal states therefore share an ID, equal IDs give
//! equal assemblies, and a rollback to revision R lands on R's ID.
//!
//! Format 1 also covers fields no render format injects (a term's sense, speech and
//! note, an alias's kind, `min_key_chars`, the profile's name): they change the ID but
//! no assembly. IDs are stored in receipts and checked on replay, so leaving them out
//! takes a new snapshot format chosen per book (docs/format.md).
//!
//! The ID is the keyed blake3 ([`SNAPSHOT_CONTEXT`]) of the canonical encoding of a
//! [`SnapshotDoc`] (ledger-model's codec: bincode 2.0.1, fixed configuration),
//! followed, only when the book's governance can change an assembly, by the encoding
//! of a [`GovernanceDoc`]: a conflict policy other than `flag`, the active rules, and, once
//! the book restricts anything, every record's effective owner and release lists (a
//! party's assembly depends on them). A book that uses none of these has exactly the
//! bytes, and so the ID, it had before governance existed. Owners and roles of an
//! unrestricted book change no assembly and are not covered. Then, only while the
//! book has a proxy template, the encoding of a [`ProxyDoc`]: the template changes no
//! assembly, but it makes the system message the translation proxy sends with one,
//! and a receipt's snapshot must name what replays it. Its format ([`PROXY_FORMAT`])
//! is a value the governance part's format never takes, so the part that follows the
//! document is told by its first field; a book without a template keeps its bytes.
//! Last, only while the book cascades (a `cascade_set` of depth 1 or more), the
//! encoding of a [`CascadeDoc`] (its own format value, [`CASCADE_FORMAT`]): the depth,
//! and the active terms that opt out of triggering or of being brought. A book that
//! never cascades, or turned it off again, keeps its bytes.
//!
//! The document is written with schema-1 views of the records ([`TermV1`],
//! [`AliasV1`], [`SummaryV1`]): the fields schema 2 added to a record are covered by
//! the governance part or by nothing, never by the schema-1 part.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use ledger_model::codec;
use ledger_model::*;
use serde::Serialize;

use crate::state::State;

/// Version of the snapshot document layout below.
pub const SNAPSHOT_FORMAT: u16 = 1;
/// Version of the governance part ([`GovernanceDoc`]), its first field.
pub const GOVERNANCE_FORMAT: u16 = 1;
/// Version of the proxy template part ([`ProxyDoc`]), its first field: `px`, a value
/// distinct from [`GOVERNANCE_FORMAT`] so the part after the document is told apart
/// by it.
pub const PROXY_FORMAT: u16 = 0x7078;
/// Version of the cascading-activation part ([`CascadeDoc`]), its first field: `ca`,
/// a value neither [`GOVERNANCE_FORMAT`] nor [`PROXY_FORMAT`] takes.
pub const CASCADE_FORMAT: u16 = 0x6361;
/// blake3 `derive_key` context of snapshot IDs.
pub const SNAPSHOT_CONTEXT: &str = "lorebank 2026-11-29 snapshot v1";

/// A snapshot ID: 32 bytes, shown as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SnapshotId(pub Hash32);

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SnapshotId({})", self.0)
    }
}

/// The versions of every format that turns a snapshot into injected bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FormatVersions {
    /// [`SNAPSHOT_FORMAT`].
    pub snapshot: u16,
    /// The matcher's matching semantics.
    pub matcher: u16,
    /// The render format in the assembly config.
    pub render: u16,
    /// The token estimator in the assembly config.
    pub token_estimator: u16,
}

/// A term as schema 1 encoded it: the fields of [`TermPut`] before owners and
/// releases, in their order.
#[derive(Debug, Serialize)]
#[allow(missing_docs, reason = "the fields are those of TermPut")]
pub struct TermV1<'s> {
    pub id: RecordId,
    pub src: &'s str,
    pub sense: &'s Option<String>,
    pub dst: &'s str,
    pub kind: &'s Option<String>,
    pub gender: Option<Gender>,
    pub decl: &'s [String],
    pub speech: &'s Option<String>,
    pub note: &'s Option<String>,
    pub window: Window,
    pub status: Status,
    pub priority: i32,
    pub constant: bool,
    pub secondary: &'s Option<SecondaryKeys>,
    pub supersedes: Option<RecordId>,
}

impl<'s> TermV1<'s> {
    fn of(put: &'s TermPut) -> TermV1<'s> {
        TermV1 {
            id: put.id,
            src: &put.src,
            sense: &put.sense,
            dst: &put.dst,
            kind: &put.kind,
            gender: put.gender,
            decl: &put.decl,
            speech: &put.speech,
            note: &put.note,
            window: put.window,
            status: put.status,
            priority: put.priority,
            constant: put.constant,
            secondary: &put.secondary,
            supersedes: put.supersedes,
        }
    }
}

/// An alias as schema 1 encoded it.
#[derive(Debug, Serialize)]
#[allow(missing_docs, reason = "the fields are those of AliasAdded")]
pub struct AliasV1<'s> {
    pub id: RecordId,
    pub surface: &'s str,
    pub kind: AliasKind,
    pub window: Option<Window>,
}

/// A summary as schema 1 encoded it.
#[derive(Debug, Serialize)]
#[allow(missing_docs, reason = "the fields are those of SummaryPut")]
pub struct SummaryV1<'s> {
    pub id: RecordId,
    pub scope: Scope,
    pub text: &'s str,
    pub visible_from: Option<u32>,
}

impl<'s> SummaryV1<'s> {
    fn of(put: &'s SummaryPut) -> SummaryV1<'s> {
        SummaryV1 { id: put.id, scope: put.scope, text: &put.text, visible_from: put.visible_from }
    }
}

/// One active term as the snapshot sees it.
#[derive(Debug, Serialize)]
pub struct SnapshotTerm<'s> {
    /// The content.
    pub put: TermV1<'s>,
    /// Aliases, by surface.
    pub aliases: Vec<AliasV1<'s>>,
    /// The verdict (its reason code does not change assemblies).
    pub verdict: Option<Verdict>,
}

/// The canonical document a snapshot ID hashes.
#[derive(Debug, Serialize)]
pub struct SnapshotDoc<'s> {
    /// Format versions.
    pub formats: FormatVersions,
    /// Profile name and fold table id.
    pub profile: Option<&'s ProfileRef>,
    /// Assembly config in force.
    pub assembly: AssemblyConfig,
    /// Active terms by id.
    pub terms: Vec<SnapshotTerm<'s>>,
    /// Active summaries by id.
    pub summaries: Vec<SummaryV1<'s>>,
}

/// One active rule as the snapshot sees it: what assembly reads of it.
#[derive(Debug, Serialize)]
pub struct SnapshotRule<'s> {
    /// The id.
    pub id: RecordId,
    /// The instruction.
    pub text: &'s str,
    /// Where it applies.
    pub applies_to: &'s [Selector],
    /// Where it does not (an undeclared exclusion is none).
    pub does_not_apply_to: &'s [Selector],
    /// The spoiler gate.
    pub window: Window,
    /// Status.
    pub status: Status,
    /// Priority.
    pub priority: i32,
    /// The verdict.
    pub verdict: Option<Verdict>,
}

/// Who reads one active record of a restricted book: what a party's assembly
/// depends on. Release lists are sorted.
#[derive(Debug, Serialize)]
pub struct SnapshotRelease<'s> {
    /// The record.
    pub id: RecordId,
    /// Its effective owner.
    pub owner: Option<&'s str>,
    /// Its effective release list.
    pub release_to: Option<Vec<&'s str>>,
    /// Its note's release list.
    pub note_release_to: Option<Vec<&'s str>>,
    /// Release lists of its aliases that have one, by surface.
    pub aliases: Vec<(&'s str, Vec<&'s str>)>,
}

/// The part of a snapshot that governance adds, when it can change an assembly.
#[derive(Debug, Serialize)]
pub struct GovernanceDoc<'s> {
    /// [`GOVERNANCE_FORMAT`].
    pub format: u16,
    /// The conflict policy, unless it is `flag` (the policy of a book that declares
    /// none).
    pub conflict_policy: Option<ConflictPolicy>,
    /// Active rules by id.
    pub rules: Vec<SnapshotRule<'s>>,
    /// When the book restricts anything: who reads each active term, summary and
    /// rule, by id.
    pub release: Option<Vec<SnapshotRelease<'s>>>,
}

/// The part of a snapshot a book's proxy template adds, only while it has one.
#[derive(Debug, Serialize)]
pub struct ProxyDoc<'s> {
    /// [`PROXY_FORMAT`].
    pub format: u16,
    /// The template in force.
    pub template: &'s str,
}

/// The part of a snapshot a book's cascading activation adds, only while its depth is
/// above 0.
#[derive(Debug, Serialize)]
pub struct CascadeDoc {
    /// [`CASCADE_FORMAT`].
    pub format: u16,
    /// Rounds of scanning, 1 to 3.
    pub depth: u8,
    /// Active terms whose note brings nothing in, in id order.
    pub quiet: Vec<RecordId>,
    /// Active terms a cascade never brings, in id order.
    pub direct_only: Vec<RecordId>,
}

impl GovernanceDoc<'_> {
    /// Whether it can change no assembly, and so adds nothing to the snapshot.
    pub fn is_empty(&self) -> bool {
        self.conflict_policy.is_none() && self.rules.is_empty() && self.release.is_none()
    }
}

fn sorted(list: Option<&[String]>) -> Option<Vec<&str>> {
    list.map(|list| {
        let mut list: Vec<&str> = list.iter().map(String::as_str).collect();
        list.sort_unstable();
        list
    })
}

impl State {
    /// The header of the snapshot document: everything before the terms.
    fn snapshot_header(&self) -> (FormatVersions, Option<&ProfileRef>, AssemblyConfig) {
        let assembly = self.assembly();
        let formats = FormatVersions {
            snapshot: SNAPSHOT_FORMAT,
            matcher: crate::MATCHER_SEMANTICS,
            render: assembly.render_format,
            token_estimator: assembly.token_estimator,
        };
        (formats, self.config().map(|config| &config.profile), assembly)
    }

    /// The snapshot form of an active term.
    fn snapshot_term(term: &crate::state::Term) -> SnapshotTerm<'_> {
        SnapshotTerm {
            put: TermV1::of(&term.put),
            aliases: term
                .aliases
                .values()
                .map(|alias| AliasV1 { id: alias.id, surface: &alias.surface, kind: alias.kind, window: alias.window })
                .collect(),
            verdict: term.verdict.as_ref().map(|(verdict, _)| *verdict),
        }
    }

    fn snapshot_rule(rule: &crate::state::Rule) -> SnapshotRule<'_> {
        SnapshotRule {
            id: rule.put.id,
            text: &rule.put.text,
            applies_to: &rule.put.applies_to,
            does_not_apply_to: rule.put.does_not_apply_to.as_deref().unwrap_or(&[]),
            window: rule.put.window,
            status: rule.put.status,
            priority: rule.put.priority,
            verdict: rule.verdict.as_ref().map(|(verdict, _)| *verdict),
        }
    }

    /// Who reads active record `id` (of a restricted book).
    fn snapshot_release(&self, id: RecordId) -> SnapshotRelease<'_> {
        let governed = self.governed(id);
        let term = (id.kind() == RecordKind::Term).then(|| &self.terms[&id]);
        SnapshotRelease {
            id,
            owner: governed.owner,
            release_to: sorted(governed.release_to),
            note_release_to: term.and_then(|term| sorted(term.put.note_release_to.as_deref())),
            aliases: term
                .map(|term| {
                    term.aliases
                        .values()
                        .filter_map(|alias| Some((alias.surface.as_str(), sorted(alias.release_to.as_deref())?)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The ids of every active term, summary and rule, in id order.
    fn active_ids(&self) -> Vec<RecordId> {
        let terms = self.terms.iter().filter(|(_, term)| !term.retired).map(|(id, _)| *id);
        let summaries = self.summaries.iter().filter(|(_, s)| !s.retired).map(|(id, _)| *id);
        let rules = self.rules.iter().filter(|(_, r)| !r.retired).map(|(id, _)| *id);
        let mut ids: Vec<RecordId> = terms.chain(summaries).chain(rules).collect();
        ids.sort_unstable();
        ids
    }

    /// The snapshot document of this state.
    pub fn snapshot_doc(&self) -> SnapshotDoc<'_> {
        let (formats, profile, assembly) = self.snapshot_header();
        SnapshotDoc {
            formats,
            profile,
            assembly,
            terms: self.terms.values().filter(|term| !term.retired).map(State::snapshot_term).collect(),
            summaries: self.summaries.values().filter(|s| !s.retired).map(|s| SummaryV1::of(&s.put)).collect(),
        }
    }

    /// The governance part of the snapshot document.
    pub fn governance_doc(&self) -> GovernanceDoc<'_> {
        GovernanceDoc {
            format: GOVERNANCE_FORMAT,
            conflict_policy: Some(self.conflict_policy()).filter(|policy| *policy != ConflictPolicy::Flag),
            rules: self.rules.values().filter(|rule| !rule.retired).map(State::snapshot_rule).collect(),
            release: self
                .is_restricted()
                .then(|| self.active_ids().into_iter().map(|id| self.snapshot_release(id)).collect()),
        }
    }

    /// The proxy template part of the snapshot document, when the book has a
    /// template.
    pub fn proxy_doc(&self) -> Option<ProxyDoc<'_>> {
        self.proxy_template().map(|(template, _)| ProxyDoc { format: PROXY_FORMAT, template })
    }

    /// The cascading-activation part of the snapshot document, while the book
    /// cascades: its lists keep the active terms only, in id order (a retired term
    /// named in them changes no assembly).
    pub fn cascade_doc(&self) -> Option<CascadeDoc> {
        let (set, _) = self.cascade().filter(|(set, _)| set.depth > 0)?;
        let active = |list: &[RecordId]| -> Vec<RecordId> {
            let mut ids: Vec<RecordId> = list.iter().copied().filter(|id| self.is_active(*id)).collect();
            ids.sort_unstable();
            ids
        };
        Some(CascadeDoc {
            format: CASCADE_FORMAT,
            depth: set.depth,
            quiet: active(&set.quiet),
            direct_only: active(&set.direct_only),
        })
    }

    /// The canonical bytes of the snapshot: the document, then the governance part
    /// unless it is empty, then the proxy template part when the book has a template,
    /// then the cascading-activation part while the book cascades.
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        let mut bytes = codec::encode_large(&self.snapshot_doc()).expect("snapshot documents always encode");
        let governance = self.governance_doc();
        if !governance.is_empty() {
            bytes.extend(codec::encode_large(&governance).expect("snapshot documents always encode"));
        }
        if let Some(proxy) = self.proxy_doc() {
            bytes.extend(codec::encode_large(&proxy).expect("snapshot documents always encode"));
        }
        if let Some(cascade) = self.cascade_doc() {
            bytes.extend(codec::encode_large(&cascade).expect("snapshot documents always encode"));
        }
        bytes
    }

    /// The snapshot ID.
    pub fn snapshot_id(&self) -> SnapshotId {
        let mut hasher = blake3::Hasher::new_derive_key(SNAPSHOT_CONTEXT);
        hasher.update(&self.snapshot_bytes());
        SnapshotId(Hash32(*hasher.finalize().as_bytes()))
    }
}

/// The snapshot IDs of one fold's successive states, without re-encoding the whole
/// state each time: it keeps the encoded form of every active term, summary and
/// rule, and of every record's release entry, and [`SnapshotTracker::touch`]
/// re-encodes only what an event changed (all release entries after a
/// `governance_set`, whose defaults may change any of them). The ID it gives is
/// exactly [`State::snapshot_id`] (a property test holds it to that): the encoding of
/// a struct is its fields in order, and of a list its length then its elements, so
/// the document's bytes are the header, then the kept encodings in id order.
/// Rebuilding the snapshot index, which needs the ID at every batch end of the log,
/// costs a hash of the document per batch end instead of an encoding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotTracker {
    terms: Encodings,
    summaries: Encodings,
    rules: Encodings,
    /// Release entry of every active record.
    release: Encodings,
    /// The active records whose release entry restricts who reads them.
    restricting: BTreeSet<RecordId>,
}

impl SnapshotTracker {
    /// A tracker of the empty book.
    pub fn new() -> SnapshotTracker {
        SnapshotTracker::default()
    }

    /// The tracker of `state` as it stands: every active record encoded once. The
    /// records are laid out in id order (a bulk build), not by a search and an insert
    /// per record: what touching every active record gives (a test holds them
    /// equal), at a fraction of the cost on a large book (a one-shot command's write
    /// builds one).
    pub fn of(state: &State) -> SnapshotTracker {
        let terms = state.terms.iter().filter(|(_, term)| !term.retired);
        let terms = Encodings::from_sorted(terms.map(|(id, term)| (*id, encoded(&State::snapshot_term(term)))));
        let summaries = state.summaries.iter().filter(|(_, summary)| !summary.retired);
        let summaries =
            Encodings::from_sorted(summaries.map(|(id, summary)| (*id, encoded(&SummaryV1::of(&summary.put)))));
        let rules = state.rules.iter().filter(|(_, rule)| !rule.retired);
        let rules = Encodings::from_sorted(rules.map(|(id, rule)| (*id, encoded(&State::snapshot_rule(rule)))));
        let mut restricting = BTreeSet::new();
        let release = Encodings::from_sorted(state.active_ids().into_iter().map(|id| {
            let (entry, restricts) = release_entry(state, id);
            if restricts {
                restricting.insert(id);
            }
            (id, encoded(&entry))
        }));
        SnapshotTracker { terms, summaries, rules, release, restricting }
    }

    /// Takes in what the event just applied to `state` touched ([`Touched::of`] its
    /// body). The touches of several events may be taken in against the state after
    /// the last of them: each re-encodes what it names as that state holds it.
    pub fn touch(&mut self, state: &State, touched: Touched) {
        let id = match touched {
            Touched::Nothing => return,
            Touched::Governance => {
                for id in state.active_ids() {
                    self.touch_release(state, id);
                }
                return;
            }
            Touched::Record(id) => id,
        };
        match id.kind() {
            RecordKind::Term => match state.terms.get(&id).filter(|term| !term.retired) {
                Some(term) => self.terms.set(id, &encoded(&State::snapshot_term(term))),
                None => self.terms.remove(id),
            },
            RecordKind::Summary => match state.summaries.get(&id).filter(|summary| !summary.retired) {
                Some(summary) => self.summaries.set(id, &encoded(&SummaryV1::of(&summary.put))),
                None => self.summaries.remove(id),
            },
            RecordKind::Rule => match state.rules.get(&id).filter(|rule| !rule.retired) {
                Some(rule) => self.rules.set(id, &encoded(&State::snapshot_rule(rule))),
                None => self.rules.remove(id),
            },
            RecordKind::Candidate => return,
        }
        self.touch_release(state, id);
    }

    fn touch_release(&mut self, state: &State, id: RecordId) {
        if !state.is_active(id) || id.kind() == RecordKind::Candidate {
            self.release.remove(id);
            self.restricting.remove(&id);
            return;
        }
        let (entry, restricts) = release_entry(state, id);
        self.release.set(id, &encoded(&entry));
        if restricts {
            self.restricting.insert(id);
        } else {
            self.restricting.remove(&id);
        }
    }

    /// Takes in every touch gathered in `touches` (emptying it) against `state`, the
    /// state after the events that made them: each record once, however many events
    /// touched it. Touching per event re-encodes a record per event, so a batch of N
    /// aliases of one term encoded that term N times, each time with more aliases.
    pub fn touch_all(&mut self, state: &State, touches: &mut Touches) {
        if std::mem::take(&mut touches.governance) {
            self.touch(state, Touched::Governance);
        }
        for id in std::mem::take(&mut touches.records) {
            self.touch(state, Touched::Record(id));
        }
    }

    /// The memory the tracker holds, roughly: its pages of encodings and the set of
    /// restricting records.
    pub fn heap_bytes(&self) -> usize {
        let pages = [&self.terms, &self.summaries, &self.rules, &self.release];
        pages.iter().map(|encodings| encodings.heap_bytes()).sum::<usize>()
            + self.restricting.len() * (std::mem::size_of::<RecordId>() + 8)
    }

    /// The snapshot ID of `state`, which must be the state every touch was made on.
    /// Each kind's encodings are hashed a page at a time, straight from where they are
    /// kept ([`Encodings::hash_list`]).
    pub fn id(&self, state: &State) -> SnapshotId {
        let mut hasher = blake3::Hasher::new_derive_key(SNAPSHOT_CONTEXT);
        hasher.update(&codec::encode_large(&state.snapshot_header()).expect("headers always encode"));
        self.terms.hash_list(&mut hasher);
        self.summaries.hash_list(&mut hasher);
        let policy = Some(state.conflict_policy()).filter(|policy| *policy != ConflictPolicy::Flag);
        let restricted = !self.restricting.is_empty();
        if policy.is_some() || !self.rules.is_empty() || restricted {
            hasher.update(&encoded(&GOVERNANCE_FORMAT));
            hasher.update(&encoded(&policy));
            self.rules.hash_list(&mut hasher);
            if restricted {
                // `Some(list)`: the option tag, then the list.
                hasher.update(&encoded(&1u8));
                self.release.hash_list(&mut hasher);
            } else {
                hasher.update(&encoded(&0u8));
            }
        }
        if let Some(proxy) = state.proxy_doc() {
            hasher.update(&encoded(&proxy));
        }
        if let Some(cascade) = state.cascade_doc() {
            hasher.update(&encoded(&cascade));
        }
        SnapshotId(Hash32(*hasher.finalize().as_bytes()))
    }
}

/// The encodings of one kind of record, in id order, kept back to back in pages of
/// up to [`Encodings::PAGE_MAX`] bytes: a snapshot ID hashes each page as one piece,
/// where encodings kept one allocation each were copied into a buffer first, a cache
/// miss per record (a sixth of a write at 50,000 terms). Changing a record rewrites
/// its page only.
#[derive(Clone, Debug, Default)]
struct Encodings {
    /// The pages, keyed by the first id each holds; none is empty.
    pages: BTreeMap<RecordId, Page>,
    n_records: usize,
}

/// Records of consecutive ids, back to back.
#[derive(Clone, Debug, Default)]
struct Page {
    bytes: Vec<u8>,
    /// Each record's id and where its encoding ends in `bytes`, in id order.
    ends: Vec<(RecordId, usize)>,
}

impl Page {
    /// Where record `at` starts (or would be inserted) in `bytes`.
    fn start(&self, at: usize) -> usize {
        if at == 0 {
            0
        } else {
            self.ends[at - 1].1
        }
    }

    fn span(&self, at: usize) -> std::ops::Range<usize> {
        self.start(at)..self.ends[at].1
    }

    fn first(&self) -> RecordId {
        self.ends[0].0
    }
}

impl Encodings {
    /// A page is split in two once it grows past this many bytes (a few records
    /// in this module's tests, so that they split and merge pages).
    const PAGE_MAX: usize = if cfg!(test) { 256 } else { 128 * 1024 };
    /// What a bulk build fills a page to.
    const PAGE_FILL: usize = Encodings::PAGE_MAX / 2;

    /// The encodings of `records`, given in strictly ascending id order.
    fn from_sorted(records: impl Iterator<Item = (RecordId, Vec<u8>)>) -> Encodings {
        let mut encodings = Encodings::default();
        let mut page = Page::default();
        let mut previous = None;
        for (id, bytes) in records {
            debug_assert!(previous < Some(id), "records in strictly ascending id order");
            previous = Some(id);
            if page.bytes.len() >= Encodings::PAGE_FILL {
                let full = std::mem::take(&mut page);
                encodings.pages.insert(full.first(), full);
            }
            page.bytes.extend_from_slice(&bytes);
            page.ends.push((id, page.bytes.len()));
            encodings.n_records += 1;
        }
        if !page.ends.is_empty() {
            encodings.pages.insert(page.first(), page);
        }
        encodings
    }

    fn len(&self) -> usize {
        self.n_records
    }

    fn is_empty(&self) -> bool {
        self.n_records == 0
    }

    /// The bytes of every record in id order, a page at a time.
    fn pages(&self) -> impl Iterator<Item = &[u8]> {
        self.pages.values().map(|page| page.bytes.as_slice())
    }

    /// Feeds `hasher` the encoding of the list of records: its length, then each
    /// record's bytes, a page at a time (blake3 hashes the whole 1 KiB chunks of one
    /// update side by side).
    fn hash_list(&self, hasher: &mut blake3::Hasher) {
        hasher.update(&encoded(&(self.len() as u64)));
        for page in self.pages() {
            hasher.update(page);
        }
    }

    /// Every record's id and encoding, in id order.
    fn records(&self) -> impl Iterator<Item = (RecordId, &[u8])> {
        self.pages
            .values()
            .flat_map(|page| (0..page.ends.len()).map(|at| (page.ends[at].0, &page.bytes[page.span(at)])))
    }

    /// The key of the page `id` belongs in: the last page starting at or before it,
    /// else the first page.
    fn page_of(&self, id: RecordId) -> Option<RecordId> {
        self.pages.range(..=id).next_back().or_else(|| self.pages.iter().next()).map(|(first, _)| *first)
    }

    /// Sets record `id`'s encoding to `bytes`, adding the record if it is not kept.
    fn set(&mut self, id: RecordId, bytes: &[u8]) {
        let Some(key) = self.page_of(id) else {
            let page = Page { bytes: bytes.to_vec(), ends: vec![(id, bytes.len())] };
            self.pages.insert(id, page);
            self.n_records = 1;
            return;
        };
        let mut page = self.pages.remove(&key).expect("page_of names a kept page");
        match page.ends.binary_search_by_key(&id, |(id, _)| *id) {
            Ok(at) => {
                let span = page.span(at);
                let grown = bytes.len() as isize - span.len() as isize;
                page.bytes.splice(span, bytes.iter().copied());
                for (_, end) in &mut page.ends[at..] {
                    *end = end.wrapping_add_signed(grown);
                }
            }
            Err(at) => {
                let start = page.start(at);
                page.bytes.splice(start..start, bytes.iter().copied());
                page.ends.insert(at, (id, start + bytes.len()));
                for (_, end) in &mut page.ends[at + 1..] {
                    *end += bytes.len();
                }
                self.n_records += 1;
            }
        }
        if page.bytes.len() > Encodings::PAGE_MAX && page.ends.len() > 1 {
            // Cut after the record that reaches the middle byte, keeping both halves.
            let middle = page.bytes.len() / 2;
            let half = page.ends.partition_point(|(_, end)| *end < middle).clamp(0, page.ends.len() - 2) + 1;
            let cut = page.ends[half - 1].1;
            let upper = Page {
                bytes: page.bytes.split_off(cut),
                ends: page.ends.split_off(half).into_iter().map(|(id, end)| (id, end - cut)).collect(),
            };
            self.pages.insert(upper.first(), upper);
        }
        self.pages.insert(page.first(), page);
    }

    /// Drops record `id`, if it is kept.
    fn remove(&mut self, id: RecordId) {
        let Some(key) = self.page_of(id) else { return };
        let Ok(at) = self.pages[&key].ends.binary_search_by_key(&id, |(id, _)| *id) else { return };
        let mut page = self.pages.remove(&key).expect("page_of names a kept page");
        let span = page.span(at);
        let shrunk = span.len();
        page.bytes.drain(span);
        page.ends.remove(at);
        for (_, end) in &mut page.ends[at..] {
            *end -= shrunk;
        }
        self.n_records -= 1;
        if !page.ends.is_empty() {
            self.pages.insert(page.first(), page);
        }
    }

    fn heap_bytes(&self) -> usize {
        const ENTRY: usize = std::mem::size_of::<(RecordId, Page)>() + 16;
        self.pages.values().map(|page| page.bytes.capacity() + page.ends.capacity() * 16 + ENTRY).sum()
    }
}

/// Two sets of encodings are equal when they keep the same records with the same
/// bytes, however the pages fall.
impl PartialEq for Encodings {
    fn eq(&self, other: &Encodings) -> bool {
        self.n_records == other.n_records && self.records().eq(other.records())
    }
}

impl Eq for Encodings {}

/// The touches of several events, each named once, for [`SnapshotTracker::touch_all`]:
/// a set as large as the records the events touched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touches {
    records: BTreeSet<RecordId>,
    governance: bool,
}

impl Touches {
    /// Adds what one event touched.
    pub fn add(&mut self, touched: Touched) {
        match touched {
            Touched::Nothing => {}
            Touched::Record(id) => {
                self.records.insert(id);
            }
            Touched::Governance => self.governance = true,
        }
    }

    /// Whether nothing is gathered.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && !self.governance
    }
}

/// What an event touched, for [`SnapshotTracker::touch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touched {
    /// Nothing a snapshot covers record by record (config and the like are read
    /// from the state whole).
    Nothing,
    /// One record.
    Record(RecordId),
    /// The governance, whose defaults may change any record's release.
    Governance,
}

impl Touched {
    /// What `body` touches.
    pub fn of(body: &Body) -> Touched {
        match body {
            Body::GovernanceSet(_) => Touched::Governance,
            _ => body.record().map_or(Touched::Nothing, Touched::Record),
        }
    }
}

/// The release entry of active record `id` (not a candidate), and whether it
/// restricts who reads the record.
fn release_entry(state: &State, id: RecordId) -> (SnapshotRelease<'_>, bool) {
    let entry = state.snapshot_release(id);
    let restricts = |list: &Option<Vec<&str>>| list.as_ref().is_some_and(|list| !list.contains(&"*"));
    let restricting = restricts(&entry.release_to)
        || restricts(&entry.note_release_to)
        || entry.aliases.iter().any(|(_, list)| !list.contains(&"*"));
    (entry, restricting)
}

/// The canonical bytes of one record of a snapshot document.
fn encoded<T: Serialize>(value: &T) -> Vec<u8> {
    codec::encode_large(value).expect("snapshot records always encode")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ledger_model::{RecordId, RecordKind};
    use proptest::prelude::*;

    use super::Encodings;

    /// Sets (`Some`) and removals (`None`) of records 1 to 60, of 0 to 90 bytes.
    fn changes() -> impl Strategy<Value = Vec<(u32, Option<Vec<u8>>)>> {
        let bytes = proptest::option::weighted(0.8, proptest::collection::vec(any::<u8>(), 0..90));
        proptest::collection::vec((1u32..=60, bytes), 0..200)
    }

    proptest! {
        #[test]
        fn encodings_keep_what_a_map_of_records_keeps(changes in changes()) {
            let mut encodings = Encodings::default();
            let mut model: BTreeMap<RecordId, Vec<u8>> = BTreeMap::new();
            for (number, bytes) in changes {
                let id = RecordId::new(RecordKind::Term, number).unwrap();
                match bytes {
                    Some(bytes) => {
                        encodings.set(id, &bytes);
                        model.insert(id, bytes);
                    }
                    None => {
                        encodings.remove(id);
                        model.remove(&id);
                    }
                }
                prop_assert_eq!(encodings.len(), model.len());
                let kept: Vec<(RecordId, Vec<u8>)> =
                    encodings.records().map(|(id, bytes)| (id, bytes.to_vec())).collect();
                let expected: Vec<(RecordId, Vec<u8>)> = model.clone().into_iter().collect();
                prop_assert_eq!(kept, expected);
                // The pages, hashed one after the other, are the records back to back.
                prop_assert_eq!(encodings.pages().collect::<Vec<_>>().concat(), model.values().cloned().collect::<Vec<_>>().concat());
                for (first, page) in &encodings.pages {
                    prop_assert!(!page.ends.is_empty(), "an empty page is kept");
                    prop_assert_eq!(*first, page.first());
                    // Split at the middle byte: no page is more than one record over.
                    prop_assert!(page.bytes.len() < Encodings::PAGE_MAX + 90, "a page of {} bytes", page.bytes.len());
                }
                let built = Encodings::from_sorted(model.iter().map(|(id, bytes)| (*id, bytes.clone())));
                prop_assert_eq!(&built, &encodings);
            }
        }
    }
}
