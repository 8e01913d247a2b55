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
///
/// The ID itself is hashed again only where the document's bytes changed since the
/// last one ([`Tree`]): blake3 is a tree over 1 KiB chunks, so the tracker keeps the
/// chaining value of every block of the last document and hashes again only the
/// blocks whose bytes moved or changed, then the parents above them. A write that
/// adds a term of a new highest id (at the end of the terms) or changes a record
/// without changing its length hashes a few blocks; one that changes a record's
/// length hashes everything from that record's page on, as the whole document was
/// hashed before.
#[derive(Clone, Debug, Default)]
pub struct SnapshotTracker {
    terms: Encodings,
    summaries: Encodings,
    rules: Encodings,
    /// Release entry of every active record.
    release: Encodings,
    /// The active records whose release entry restricts who reads them.
    restricting: BTreeSet<RecordId>,
    /// The last ID's blocks: derived from the fields above, so not compared.
    tree: Tree,
}

/// Two trackers are equal when they keep the same encodings, whatever their last ID
/// left in [`Tree`].
impl PartialEq for SnapshotTracker {
    fn eq(&self, other: &SnapshotTracker) -> bool {
        self.terms == other.terms
            && self.summaries == other.summaries
            && self.rules == other.rules
            && self.release == other.release
            && self.restricting == other.restricting
    }
}

impl Eq for SnapshotTracker {}

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
        SnapshotTracker { terms, summaries, rules, release, restricting, tree: Tree::default() }
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

    /// The memory the tracker holds, roughly: its pages of encodings, the set of
    /// restricting records and the last ID's blocks.
    pub fn heap_bytes(&self) -> usize {
        let pages = [&self.terms, &self.summaries, &self.rules, &self.release];
        pages.iter().map(|encodings| encodings.heap_bytes()).sum::<usize>()
            + self.restricting.len() * (std::mem::size_of::<RecordId>() + 8)
            + self.tree.heap_bytes()
    }

    /// The snapshot ID of `state`, which must be the state every touch was made on.
    /// The document is laid out as pieces: each kind's pages of encodings, straight
    /// from where they are kept, and the bytes between them; [`Tree::hash`] hashes
    /// again only the blocks whose bytes changed since the last ID.
    pub fn id(&mut self, state: &State) -> SnapshotId {
        let mut document = Pieces::default();
        document.push_bytes(&codec::encode_large(&state.snapshot_header()).expect("headers always encode"));
        document.push_list(&self.terms);
        document.push_list(&self.summaries);
        let policy = Some(state.conflict_policy()).filter(|policy| *policy != ConflictPolicy::Flag);
        let restricted = !self.restricting.is_empty();
        if policy.is_some() || !self.rules.is_empty() || restricted {
            document.push_bytes(&encoded(&GOVERNANCE_FORMAT));
            document.push_bytes(&encoded(&policy));
            document.push_list(&self.rules);
            if restricted {
                // `Some(list)`: the option tag, then the list.
                document.push_bytes(&encoded(&1u8));
                document.push_list(&self.release);
            } else {
                document.push_bytes(&encoded(&0u8));
            }
        }
        if let Some(proxy) = state.proxy_doc() {
            document.push_bytes(&encoded(&proxy));
        }
        if let Some(cascade) = state.cascade_doc() {
            document.push_bytes(&encoded(&cascade));
        }
        SnapshotId(Hash32(self.tree.hash(&document.0)))
    }
}

/// The derive-key context key of snapshot IDs, hashed once per process.
static SNAPSHOT_KEY: std::sync::LazyLock<blake3::hazmat::ContextKey> =
    std::sync::LazyLock::new(|| blake3::hazmat::hash_derive_key_context(SNAPSHOT_CONTEXT));

/// A snapshot document as the tracker lays it out: its bytes, in order, a piece at a
/// time.
#[derive(Default)]
struct Pieces<'a>(Vec<Piece<'a>>);

/// A kept page (named by its generation, which changes whenever its bytes do), or
/// bytes encoded for this document.
enum Piece<'a> {
    Page(u64, &'a [u8]),
    Bytes(Vec<u8>),
}

impl Piece<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Piece::Page(_, bytes) => bytes,
            Piece::Bytes(bytes) => bytes,
        }
    }

    /// Whether it holds the bytes `kept` stood for.
    fn is(&self, kept: &Kept) -> bool {
        match (self, kept) {
            (Piece::Page(generation, _), Kept::Page(kept)) => generation == kept,
            (Piece::Bytes(bytes), Kept::Bytes(kept)) => bytes == kept,
            _ => false,
        }
    }

    fn kept(&self) -> Kept {
        match self {
            Piece::Page(generation, _) => Kept::Page(*generation),
            Piece::Bytes(bytes) => Kept::Bytes(bytes.clone()),
        }
    }
}

impl<'a> Pieces<'a> {
    /// Adds `bytes`, to the piece before when that is bytes too.
    fn push_bytes(&mut self, bytes: &[u8]) {
        match self.0.last_mut() {
            Some(Piece::Bytes(last)) => last.extend_from_slice(bytes),
            _ => self.0.push(Piece::Bytes(bytes.to_vec())),
        }
    }

    /// Adds the encoding of a list of records: its length, then its pages.
    fn push_list(&mut self, encodings: &'a Encodings) {
        self.push_bytes(&encoded(&(encodings.len() as u64)));
        for page in encodings.pages.values() {
            self.0.push(Piece::Page(page.generation, &page.bytes));
        }
    }
}

/// What a piece of the last hashed document was.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kept {
    Page(u64),
    Bytes(Vec<u8>),
}

/// The blake3 tree of the last document a tracker hashed: where each of its pieces
/// started and what it was, and the chaining value of each of its blocks of
/// [`Tree::BLOCK`] bytes (the last one may be shorter). A block of the next document
/// whose bytes all come from pieces kept at the same offsets, and which ends where it
/// ended, has the same chaining value (blake3 hashes a chunk from its bytes and its
/// index alone).
#[derive(Clone, Debug, Default)]
struct Tree {
    pieces: Vec<(u64, Kept)>,
    len: u64,
    blocks: Vec<blake3::hazmat::ChainingValue>,
}

impl Tree {
    /// Bytes a block covers: a power of two of blake3's 1 KiB chunks, so that every
    /// block is a subtree of blake3's own tree (one chunk in this module's tests, so
    /// that their small documents span many blocks).
    const BLOCK: u64 = if cfg!(test) { 1024 } else { 32 * 1024 };

    /// The snapshot hash of the document `pieces` lays out: blake3 in derive-key
    /// mode ([`SNAPSHOT_CONTEXT`]) of their bytes back to back, as one `update` of
    /// those bytes gives it. Keeps what it needs to hash the next document.
    fn hash(&mut self, pieces: &[Piece]) -> [u8; 32] {
        use blake3::hazmat::{merge_subtrees_root, HasherExt, Mode};
        let len: u64 = pieces.iter().map(|piece| piece.bytes().len() as u64).sum();
        if len <= Tree::BLOCK {
            // One block is the root itself: hashed whole.
            let mut hasher = blake3::Hasher::new_from_context_key(&SNAPSHOT_KEY);
            pieces.iter().for_each(|piece| {
                hasher.update(piece.bytes());
            });
            *self = Tree::default();
            return *hasher.finalize().as_bytes();
        }
        // The byte ranges that are not what they were: pieces not kept at their offset.
        let mut changed: Vec<std::ops::Range<u64>> = Vec::new();
        let mut starts = Vec::with_capacity(pieces.len());
        let mut old = self.pieces.iter().peekable();
        let mut offset = 0;
        for piece in pieces {
            let end = offset + piece.bytes().len() as u64;
            while old.next_if(|(start, _)| *start < offset).is_some() {}
            let same = old.peek().is_some_and(|(start, kept)| *start == offset && piece.is(kept));
            if !same {
                match changed.last_mut() {
                    Some(last) if last.end == offset => last.end = end,
                    _ => changed.push(offset..end),
                }
            }
            starts.push(offset);
            offset = end;
        }
        let n_blocks = len.div_ceil(Tree::BLOCK) as usize;
        let mut blocks = Vec::with_capacity(n_blocks);
        let mut changed = changed.iter().peekable();
        for block in 0..n_blocks {
            let start = block as u64 * Tree::BLOCK;
            let end = (start + Tree::BLOCK).min(len);
            while changed.next_if(|range| range.end <= start).is_some() {}
            let touched = changed.peek().is_some_and(|range| range.start < end);
            let kept = block < self.blocks.len() && (start + Tree::BLOCK).min(self.len) == end && !touched;
            if kept {
                blocks.push(self.blocks[block]);
                continue;
            }
            let mut hasher = blake3::Hasher::new_from_context_key(&SNAPSHOT_KEY);
            hasher.set_input_offset(start);
            let first = starts.partition_point(|piece_start| *piece_start <= start) - 1;
            for (piece, piece_start) in pieces[first..].iter().zip(&starts[first..]) {
                if *piece_start >= end {
                    break;
                }
                let bytes = piece.bytes();
                let from = start.saturating_sub(*piece_start) as usize;
                let to = ((end - piece_start) as usize).min(bytes.len());
                hasher.update(&bytes[from..to]);
            }
            blocks.push(hasher.finalize_non_root());
        }
        let mode = Mode::DeriveKeyMaterial(&SNAPSHOT_KEY);
        let left = blake3::hazmat::left_subtree_len(len);
        let root = merge_subtrees_root(&subtree(&blocks, 0, left), &subtree(&blocks, left, len - left), mode);
        self.pieces = pieces.iter().zip(starts).map(|(piece, start)| (start, piece.kept())).collect();
        self.len = len;
        self.blocks = blocks;
        *root.as_bytes()
    }

    fn heap_bytes(&self) -> usize {
        let pieces = self.pieces.iter().map(|(_, kept)| match kept {
            Kept::Page(_) => 0,
            Kept::Bytes(bytes) => bytes.capacity(),
        });
        pieces.sum::<usize>()
            + self.pieces.capacity() * std::mem::size_of::<(u64, Kept)>()
            + self.blocks.capacity() * 32
    }
}

/// The chaining value of the subtree of `len` bytes at `offset` (a multiple of
/// [`Tree::BLOCK`]) over blocks' chaining values: split as blake3 splits it, so at
/// block boundaries (a left subtree longer than a block is a power of two of blocks).
fn subtree(blocks: &[blake3::hazmat::ChainingValue], offset: u64, len: u64) -> blake3::hazmat::ChainingValue {
    if len <= Tree::BLOCK {
        return blocks[(offset / Tree::BLOCK) as usize];
    }
    let left = blake3::hazmat::left_subtree_len(len);
    blake3::hazmat::merge_subtrees_non_root(
        &subtree(blocks, offset, left),
        &subtree(blocks, offset + left, len - left),
        blake3::hazmat::Mode::DeriveKeyMaterial(&SNAPSHOT_KEY),
    )
}

/// The encodings of one kind of record, in id order, kept back to back in pages of
/// up to [`Encodings::PAGE_MAX`] bytes: a snapshot ID hashes each page as one piece,
/// where encodings kept one allocation each were copied into a buffer first, a cache
/// miss per record (a sixth of a write at 50,000 terms). Changing a record rewrites
/// its page only, and gives it a new generation, so that [`Tree`] knows which bytes
/// are as they were.
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
    /// Names these bytes for [`Tree`]: given anew, unique in the process, whenever
    /// the page is kept after a change ([`Encodings::keep`]).
    generation: u64,
}

/// The next page generation: a counter shared by every tracker (a copy of a tracker
/// shares its pages' generations with the original, and their bytes).
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
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
                encodings.keep(std::mem::take(&mut page));
            }
            page.bytes.extend_from_slice(&bytes);
            page.ends.push((id, page.bytes.len()));
            encodings.n_records += 1;
        }
        if !page.ends.is_empty() {
            encodings.keep(page);
        }
        encodings
    }

    /// Keeps `page` (not empty), under a new generation: its bytes are new.
    fn keep(&mut self, mut page: Page) {
        page.generation = next_generation();
        self.pages.insert(page.first(), page);
    }

    fn len(&self) -> usize {
        self.n_records
    }

    fn is_empty(&self) -> bool {
        self.n_records == 0
    }

    /// The bytes of every record in id order, a page at a time.
    #[cfg(test)]
    fn pages(&self) -> impl Iterator<Item = &[u8]> {
        self.pages.values().map(|page| page.bytes.as_slice())
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
            self.keep(Page { bytes: bytes.to_vec(), ends: vec![(id, bytes.len())], generation: 0 });
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
                generation: 0,
            };
            self.keep(upper);
        }
        self.keep(page);
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
            self.keep(page);
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

    use super::{next_generation, Encodings, Piece, Tree, SNAPSHOT_CONTEXT};

    /// Sets (`Some`) and removals (`None`) of records 1 to 60, of 0 to 90 bytes.
    fn changes() -> impl Strategy<Value = Vec<(u32, Option<Vec<u8>>)>> {
        let bytes = proptest::option::weighted(0.8, proptest::collection::vec(any::<u8>(), 0..90));
        proptest::collection::vec((1u32..=60, bytes), 0..200)
    }

    /// A change to a document of pieces: the piece at an index (wrapped) gets new
    /// bytes of the same length, new bytes of another length, the same bytes under a
    /// new generation, or is removed; or a piece is inserted; or nothing changes.
    #[derive(Clone, Debug)]
    enum Change {
        Same(usize, u8),
        Resized(usize, Vec<u8>),
        Renamed(usize),
        Removed(usize),
        Inserted(usize, bool, Vec<u8>),
        Nothing,
    }

    fn tree_changes() -> impl Strategy<Value = Vec<Change>> {
        let bytes = || proptest::collection::vec(any::<u8>(), 0..2_500);
        let change = prop_oneof![
            3 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Change::Same(at, byte)),
            2 => (any::<usize>(), bytes()).prop_map(|(at, bytes)| Change::Resized(at, bytes)),
            1 => any::<usize>().prop_map(Change::Renamed),
            1 => any::<usize>().prop_map(Change::Removed),
            2 => (any::<usize>(), any::<bool>(), bytes()).prop_map(|(at, page, bytes)| Change::Inserted(at, page, bytes)),
            1 => Just(Change::Nothing),
        ];
        proptest::collection::vec(change, 1..40)
    }

    #[test]
    fn the_tree_hashes_documents_ending_at_and_around_block_edges() {
        // Blocks are one chunk (1,024 bytes) in these tests: every length around one,
        // two, three, four and five blocks, as one page, and split in pages at a
        // block's edge and beside it; each hashed twice (the second time from the
        // kept blocks), then with its last byte changed and with one byte cut.
        for len in [1_023, 1_024, 1_025, 2_047, 2_048, 2_049, 3_071, 3_072, 3_073, 4_096, 4_097, 5_120] {
            let bytes: Vec<u8> = (0..len).map(|n| (n * 7 % 251) as u8).collect();
            let whole =
                |bytes: &[u8]| *blake3::Hasher::new_derive_key(SNAPSHOT_CONTEXT).update(bytes).finalize().as_bytes();
            for cut in [0, 1_024, 1_023, len / 2] {
                let (head, tail) = bytes.split_at(cut.min(len));
                let mut tree = Tree::default();
                let (first, second) = (next_generation(), next_generation());
                let pieces = [Piece::Page(first, head), Piece::Page(second, tail)];
                assert_eq!(tree.hash(&pieces), whole(&bytes), "{len} bytes cut at {cut}");
                assert_eq!(tree.hash(&pieces), whole(&bytes), "{len} bytes cut at {cut}, again");
                let mut changed = tail.to_vec();
                if let Some(last) = changed.last_mut() {
                    *last ^= 1;
                }
                let pieces = [Piece::Page(first, head), Piece::Page(next_generation(), &changed)];
                assert_eq!(tree.hash(&pieces), whole(&[head, &changed].concat()), "{len} bytes, the last changed");
                changed.pop();
                let pieces = [Piece::Page(first, head), Piece::Page(next_generation(), &changed)];
                assert_eq!(tree.hash(&pieces), whole(&[head, &changed].concat()), "{len} bytes, one cut");
            }
        }
    }

    proptest! {
        #[test]
        fn the_tree_hashes_what_blake3_hashes_whole(changes in tree_changes()) {
            // Pieces as (page generation, or none for bytes; bytes), changed one
            // change at a time, hashed by one tree and by blake3 whole each time.
            let mut document: Vec<(Option<u64>, Vec<u8>)> = Vec::new();
            let mut tree = Tree::default();
            for change in changes {
                let n = document.len();
                match change {
                    Change::Same(at, byte) if n > 0 => {
                        let piece = &mut document[at % n];
                        piece.1.iter_mut().for_each(|b| *b ^= byte | 1);
                        piece.0 = piece.0.map(|_| next_generation());
                    }
                    Change::Resized(at, bytes) if n > 0 => {
                        let piece = &mut document[at % n];
                        piece.1 = bytes;
                        piece.0 = piece.0.map(|_| next_generation());
                    }
                    Change::Renamed(at) if n > 0 => {
                        let piece = &mut document[at % n];
                        piece.0 = piece.0.map(|_| next_generation());
                    }
                    Change::Removed(at) if n > 0 => {
                        document.remove(at % n);
                    }
                    Change::Inserted(at, page, bytes) => {
                        document.insert(at % (n + 1), (page.then(next_generation), bytes));
                    }
                    _ => {}
                }
                let pieces: Vec<Piece> = document
                    .iter()
                    .map(|(generation, bytes)| match generation {
                        Some(generation) => Piece::Page(*generation, bytes),
                        None => Piece::Bytes(bytes.clone()),
                    })
                    .collect();
                let whole: Vec<u8> = document.iter().flat_map(|(_, bytes)| bytes.iter().copied()).collect();
                let expected = blake3::Hasher::new_derive_key(SNAPSHOT_CONTEXT).update(&whole).finalize();
                prop_assert_eq!(tree.hash(&pieces), *expected.as_bytes(), "{} bytes in {} pieces", whole.len(), n);
            }
        }

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
