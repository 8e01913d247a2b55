//! Owners and release: who answers for a record, and who may read it.
//!
//! A record's owner, owner role and release list are its own fields or, where it
//! leaves them out, the book's defaults for its class ([`GovernanceSet::defaults`]),
//! taken field by field from the most specific default that sets the field:
//! `term:<kind>`, then `term` (or `summary`, `rule`), then `*`.
//!
//! A reader is the book's full view ([`Reader::Full`]: the command line without
//! `--party`, a server token bound to no party) or one party. A party reads a record
//! when the record's release list names it or `*`, or when it owns the record. A
//! record with no release list is read by every party as long as the book restricts
//! nothing; **once any record, alias or note is restricted** (released to a list
//! without `*`), a record with no release list is read only by its owner: absence is
//! not permission. An alias or a note with no release list of its own is read by
//! whoever reads its term; with one, only by those it names (and the term's owner).
//!
//! [`State::view_for`] is the state a reader sees: every record it may not read
//! removed, as if it had never been written (a hidden successor does not cut its
//! predecessor's window), every alias it may not read removed, every note it may not
//! read blanked, and the review queue, concept register and embedding model left out. What a party
//! reads of a record includes its owner and release lists. Every read path filters through it, so none can show a party more.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use ledger_model::validate::EVERY_PARTY;
use ledger_model::*;

use crate::snapshot::SnapshotId;
use crate::state::State;

/// blake3 `derive_key` context of the id of a party's view of a snapshot.
pub const VIEW_CONTEXT: &str = "lorebank 2026-12-01 party view v1";

/// The id a reader's view of snapshot `snapshot` is frozen and cached under: the
/// snapshot ID itself for the full view, else the keyed blake3 of the snapshot ID
/// and the party (so two parties' views never share a cache entry).
pub fn view_id(snapshot: SnapshotId, reader: &Reader) -> SnapshotId {
    match reader {
        Reader::Full => snapshot,
        Reader::Party(party) => {
            let mut hasher = blake3::Hasher::new_derive_key(VIEW_CONTEXT);
            hasher.update(&snapshot.0 .0);
            hasher.update(party.as_bytes());
            SnapshotId(Hash32(*hasher.finalize().as_bytes()))
        }
    }
}

/// Who reads a book.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reader {
    /// The book's full view: every record, unfiltered.
    Full,
    /// One declared party (`tool:pipeline`).
    Party(String),
}

impl Reader {
    /// The party, if the reader is one.
    pub fn party(&self) -> Option<&str> {
        match self {
            Reader::Full => None,
            Reader::Party(party) => Some(party),
        }
    }

    /// The reader of an optional party: `None` is the full view.
    pub fn from_party(party: Option<String>) -> Reader {
        party.map_or(Reader::Full, Reader::Party)
    }
}

impl fmt::Display for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reader::Full => f.write_str("the full view"),
            Reader::Party(party) => write!(f, "party {party}"),
        }
    }
}

/// A record's effective owner, owner role and release list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Governed<'s> {
    /// Its owner, own or by default.
    pub owner: Option<&'s str>,
    /// Its owner role, own or by default.
    pub owner_role: Option<&'s str>,
    /// Its release list, own or by default.
    pub release_to: Option<&'s [String]>,
}

/// Whether a release list restricts: it does not name every party.
fn restrictive(list: &[String]) -> bool {
    !list.iter().any(|party| party == EVERY_PARTY)
}

/// Whether `list` lets `party` read, the record being owned by `owner`.
fn lets(list: &[String], party: &str, owner: Option<&str>) -> bool {
    list.iter().any(|named| named == EVERY_PARTY || named == party) || owner == Some(party)
}

impl State {
    /// The record classes a record falls in, most specific first.
    fn classes(&self, id: RecordId) -> Vec<String> {
        match id.kind() {
            RecordKind::Term => {
                let kind = self.terms.get(&id).and_then(|term| term.put.kind.as_deref());
                let mut classes: Vec<String> = kind.map(|kind| format!("term:{kind}")).into_iter().collect();
                classes.extend(["term".to_owned(), "*".to_owned()]);
                classes
            }
            RecordKind::Summary => vec!["summary".into(), "*".into()],
            RecordKind::Rule => vec!["rule".into(), "*".into()],
            RecordKind::Candidate => Vec::new(),
        }
    }

    /// The defaults that apply to `id`, most specific first.
    fn defaults_of(&self, id: RecordId) -> Vec<&RecordDefaults> {
        let Some((governance, _)) = &self.governance else { return Vec::new() };
        self.classes(id)
            .iter()
            .filter_map(|class| governance.defaults.iter().find(|default| &default.records == class))
            .collect()
    }

    /// The effective owner, owner role and release list of record `id` (terms,
    /// summaries, rules; retired ones too).
    pub fn governed(&self, id: RecordId) -> Governed<'_> {
        let (owner, owner_role, release_to) = match id.kind() {
            RecordKind::Term => match self.terms.get(&id) {
                Some(term) => (&term.put.owner, &term.put.owner_role, &term.put.release_to),
                None => return Governed::default(),
            },
            RecordKind::Summary => match self.summaries.get(&id) {
                Some(summary) => (&summary.put.owner, &summary.put.owner_role, &summary.put.release_to),
                None => return Governed::default(),
            },
            RecordKind::Rule => match self.rules.get(&id) {
                Some(rule) => (&rule.put.owner, &rule.put.owner_role, &rule.put.release_to),
                None => return Governed::default(),
            },
            RecordKind::Candidate => return Governed::default(),
        };
        let defaults = self.defaults_of(id);
        Governed {
            owner: owner.as_deref().or_else(|| defaults.iter().find_map(|d| d.owner.as_deref())),
            owner_role: owner_role.as_deref().or_else(|| defaults.iter().find_map(|d| d.owner_role.as_deref())),
            release_to: release_to.as_deref().or_else(|| defaults.iter().find_map(|d| d.release_to.as_deref())),
        }
    }

    /// Whether the book restricts anything: an active record, alias or note released
    /// to a list without `*`. Then records released to nobody are read by their owners
    /// only.
    pub fn is_restricted(&self) -> bool {
        let restricts = |list: Option<&[String]>| list.is_some_and(restrictive);
        self.terms.iter().filter(|(_, term)| !term.retired).any(|(id, term)| {
            restricts(self.governed(*id).release_to)
                || restricts(term.put.note_release_to.as_deref())
                || term.aliases.values().any(|alias| restricts(alias.release_to.as_deref()))
        }) || self.summaries.iter().any(|(id, s)| !s.retired && restricts(self.governed(*id).release_to))
            || self.rules.iter().any(|(id, r)| !r.retired && restricts(self.governed(*id).release_to))
    }

    /// Whether `reader` may read record `id`, given whether the book is restricted.
    fn reads(&self, reader: &Reader, id: RecordId, restricted: bool) -> bool {
        let Reader::Party(party) = reader else { return true };
        let governed = self.governed(id);
        match governed.release_to {
            Some(list) => lets(list, party, governed.owner),
            None => !restricted || governed.owner == Some(party.as_str()),
        }
    }

    /// Whether `reader` may read record `id` (a term, summary or rule).
    pub fn released_to(&self, reader: &Reader, id: RecordId) -> bool {
        self.reads(reader, id, self.is_restricted())
    }

    /// The state `reader` sees (see the module doc). The full view is the state itself.
    pub fn view_for(&self, reader: &Reader) -> Cow<'_, State> {
        let Reader::Party(party) = reader else { return Cow::Borrowed(self) };
        let restricted = self.is_restricted();
        let mut view = State {
            revision: self.revision,
            terms: BTreeMap::new(),
            summaries: BTreeMap::new(),
            candidates: BTreeMap::new(),
            config: self.config.clone(),
            rollbacks: self.rollbacks.clone(),
            rules: BTreeMap::new(),
            governance: self.governance.clone(),
            expected: BTreeMap::new(),
            embedding_model: None,
            languages: self.languages.clone(),
            source: self.source.clone(),
            proxy_template: self.proxy_template.clone(),
            model_prompts: BTreeMap::new(),
            model_policies: BTreeMap::new(),
            cascade: self.cascade.clone(),
            examples: self.examples.clone(),
        };
        for (id, term) in &self.terms {
            if !self.reads(reader, *id, restricted) {
                continue;
            }
            let owner = self.governed(*id).owner;
            let mut term = term.clone();
            term.aliases.retain(|_, alias| alias.release_to.as_deref().is_none_or(|list| lets(list, party, owner)));
            if !term.put.note_release_to.as_deref().is_none_or(|list| lets(list, party, owner)) {
                term.put.note = None;
            }
            view.terms.insert(*id, term);
        }
        for (id, summary) in &self.summaries {
            if self.reads(reader, *id, restricted) {
                view.summaries.insert(*id, summary.clone());
            }
        }
        for (id, rule) in &self.rules {
            if self.reads(reader, *id, restricted) {
                view.rules.insert(*id, rule.clone());
            }
        }
        Cow::Owned(view)
    }

    /// The state `reader` sees at this state, a revision of the book whose head is
    /// `head`: its view here ([`State::view_for`]) less everything the head does not
    /// release to the reader. **Going back never lifts a restriction:** a party reads
    /// at a past revision only what was released to it then *and* is released to it
    /// at the head. A record the head does not let the party read is removed; an alias
    /// is removed when the head has it and does not release it (an alias removed
    /// since is judged by its term at the head, which the party must read); a note is
    /// blanked when the head's note release does not let the party read it. Returns
    /// the view and whether the head took anything away from the view here. The full
    /// view is the state itself.
    pub fn view_at(&self, head: &State, reader: &Reader) -> (Cow<'_, State>, bool) {
        let Reader::Party(party) = reader else { return (Cow::Borrowed(self), false) };
        let mut view = self.view_for(reader).into_owned();
        let restricted = head.is_restricted();
        let mut cut = false;
        view.terms.retain(|id, term| {
            let Some(now) = head.terms.get(id).filter(|_| head.reads(reader, *id, restricted)) else {
                cut = true;
                return false;
            };
            let owner = head.governed(*id).owner;
            let before = term.aliases.len();
            term.aliases.retain(|surface, _| {
                now.aliases
                    .get(surface)
                    .is_none_or(|alias| alias.release_to.as_deref().is_none_or(|list| lets(list, party, owner)))
            });
            cut |= term.aliases.len() != before;
            if term.put.note.is_some()
                && !now.put.note_release_to.as_deref().is_none_or(|list| lets(list, party, owner))
            {
                term.put.note = None;
                cut = true;
            }
            true
        });
        view.summaries.retain(|id, _| {
            let keep = head.summaries.contains_key(id) && head.reads(reader, *id, restricted);
            cut |= !keep;
            keep
        });
        view.rules.retain(|id, _| {
            let keep = head.rules.contains_key(id) && head.reads(reader, *id, restricted);
            cut |= !keep;
            keep
        });
        (Cow::Owned(view), cut)
    }
}
