//! Entries of one file that share keys: which record each entry is, and what the
//! import does with a key two entries have (docs/formats.md, "Entries that share
//! keys").
//!
//! A book holds one surface per sense and chapter (UNIQUE(src, sense, window) over
//! sources and aliases alike), while the lore tools activate every entry a key
//! hits, so their files share keys freely. [`settle`] walks the entries in file
//! order and keeps, for every folded surface and sense, the windows the entries so
//! far hold it in (a *claim*): an entry whose `src` is already held becomes a sense
//! of its own (named by its rendering), an alias already held is left out of the
//! later entry, and two entries that the book's windowed versions of one name tell
//! apart keep their records. Each such decision is a [`Collision`] naming both
//! places. No entry is refused for a collision: its `src` always reaches the book.
//!
//! The claims of one surface and sense never overlap (a claim is only added where
//! none overlaps it), so one ordered map by first chapter answers "who holds this
//! surface in these chapters" in O(log n); every entry costs O(k log n) for its k
//! keys, and a sense suffix counter per rendering makes naming senses linear over the
//! file. No pair of entries is ever compared (`tests/batch_cost.rs`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use formats::{At, Entry, Term};
use ledger_model::{RecordId, Window};
use projections::read::intersect;
use projections::State;

use super::{Collision, KeyRole, Outcome};

/// The longest rendering a derived sense keeps, in characters: room is left for a
/// suffix ` #N` within the [`ledger_model::limits::KEY_CHARS_MAX`] of a sense.
pub const SENSE_BASE_CHARS_MAX: usize = 56;

// A suffix counts the entries of one surface and rendering, fewer than the events of
// a batch (a larger file is refused before it is written).
const _: () = assert!(ledger_model::limits::BATCH_EVENTS_MAX < 999_999);
const _: () = assert!(SENSE_BASE_CHARS_MAX + " #999999".len() <= ledger_model::limits::KEY_CHARS_MAX);

/// A folded surface and a sense: what UNIQUE(src, sense, window) keys on.
type Key = (String, Option<String>);

/// The book's side of the identity rule: its active terms by folded `src` and sense
/// (id order), by folded alias, and each one's window after supersession and its
/// rendering.
pub(super) struct Index<'s> {
    by_src: BTreeMap<Key, Vec<RecordId>>,
    by_alias: BTreeMap<String, RecordId>,
    records: BTreeMap<RecordId, (Option<Window>, &'s str)>,
}

impl<'s> Index<'s> {
    /// The index of `state`'s active terms, folded by `fold`.
    pub(super) fn of(state: &'s State, fold: &dyn Fn(&str) -> String) -> Index<'s> {
        let mut index = Index { by_src: BTreeMap::new(), by_alias: BTreeMap::new(), records: BTreeMap::new() };
        for active in state.active_terms(None) {
            let put = &active.term.put;
            index.by_src.entry((fold(&put.src), put.sense.clone())).or_default().push(active.id);
            for surface in active.term.aliases.keys() {
                index.by_alias.insert(fold(surface), active.id);
            }
            index.records.insert(active.id, (active.window, put.dst.as_str()));
        }
        index
    }

    fn window(&self, id: RecordId) -> Option<Window> {
        self.records.get(&id).and_then(|(window, _)| *window)
    }

    fn dst(&self, id: RecordId) -> &str {
        self.records.get(&id).map_or("", |(_, dst)| dst)
    }

    /// The record an entry with `key` is on its own, with the window its surfaces
    /// will hold (`None`: supersession leaves the record no chapter).
    fn identify(&self, key: &Key, term: &Term) -> (Identity, Option<Window>) {
        match self.by_src.get(key).map(Vec::as_slice) {
            Some([id]) => (Identity::Record(*id), self.window(*id)),
            Some(ids) if !ids.is_empty() => {
                // Windowed versions of a derived sense (an editor split one): the one
                // with the entry's rendering. The versions of a plain surface are
                // matched beforehand, over all the entries that have it.
                match ids.iter().find(|id| self.dst(**id) == term.dst) {
                    Some(id) => (Identity::Record(*id), self.window(*id)),
                    None => (Identity::Skip(several(&term.src, ids)), None),
                }
            }
            _ => match self.by_alias.get(&key.0) {
                Some(id) if key.1.is_none() => (Identity::AliasOf(*id), self.window(*id)),
                _ => (Identity::New, Some(term.window)),
            },
        }
    }
}

/// How many records a skipped entry's reason names.
const IDS_NAMED: usize = 5;

fn several(src: &str, ids: &[RecordId]) -> String {
    let mut named: Vec<String> = ids.iter().take(IDS_NAMED).map(ToString::to_string).collect();
    if ids.len() > IDS_NAMED {
        named.push(format!("{} more", ids.len() - IDS_NAMED));
    }
    format!(
        "{src} matches several records ({}) with different windows, and none of them by its rendering; edit them in \
         lorebank",
        named.join(", ")
    )
}

/// Which record an entry is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Identity {
    /// The book's record with the entry's `src` and sense: updated, or unchanged.
    Record(RecordId),
    /// The record that has the entry's `src` as an alias: unchanged when it renders the
    /// same, else skipped; never written.
    AliasOf(RecordId),
    /// A new record.
    New,
    /// Left out, with the reason.
    Skip(String),
}

/// An entry with its identity settled.
pub(super) struct Settled {
    /// Where it is.
    pub(super) at: At,
    /// Its content: with the sense it gets, and without the aliases an earlier entry
    /// holds.
    pub(super) term: Term,
    /// Which record it is.
    pub(super) identity: Identity,
}

/// What [`settle`] decided: every entry in file order, and every collision in the
/// order of the later entry.
pub(super) struct Settlement {
    pub(super) entries: Vec<Settled>,
    pub(super) collisions: Vec<Collision>,
}

/// One entry's hold on a surface in a sense, from a first chapter.
#[derive(Clone, Copy)]
struct Claim {
    until: Option<u32>,
    owner: usize,
    role: KeyRole,
}

/// The claims on one surface and sense, by first chapter; no two overlap.
#[derive(Default)]
struct Claims(BTreeMap<u32, Claim>);

impl Claims {
    /// The claim that overlaps `window`, if any. Claims are disjoint and ordered by
    /// first chapter, so the last one starting by `window`'s end is the only candidate.
    fn overlapping(&self, window: Window) -> Option<Claim> {
        let (_, last) = match window.until {
            Some(until) => self.0.range(..=until).next_back(),
            None => self.0.iter().next_back(),
        }?;
        last.until.is_none_or(|until| until >= window.since).then_some(*last)
    }

    /// A claim of another entry than `owner` (an entry holds a surface once).
    fn other_than(&self, owner: usize) -> Option<Claim> {
        self.0.values().find(|claim| claim.owner != owner).copied()
    }
}

/// Where an entry starts: the identity it has on its own (and its window), or the
/// claim of an earlier entry on its surface.
enum Start {
    Own(Identity, Option<Window>),
    Held(Claim),
}

/// How the versions of a plain surface went to the entries that have it.
enum Versioned {
    /// This version.
    Record(RecordId),
    /// Every version went to an entry before it (`first`): a sense of its own.
    Extra { first: usize },
    /// More or fewer versions (of this surface and sense) are left than entries, and
    /// no rendering tells which.
    Ambiguous(Key),
}

/// Settles every entry of a file (in file order) against the book: which record
/// it is, under which sense, with which aliases, and every collision with an
/// earlier entry. The rule of docs/formats.md, "Entries that share keys":
///
/// * an entry whose folded `src` (in its sense) an earlier entry holds in an
///   overlapping window becomes a sense of its own: its rendering (cut to
///   [`SENSE_BASE_CHARS_MAX`] characters), ` #2`, ` #3`… after it when that sense
///   of the surface is held too; all its surfaces are in that sense;
/// * an alias an earlier entry holds (as `src` or alias, in the same sense, in an
///   overlapping window) is left out of the later entry;
/// * entries with the `src` of several windowed versions in the book are those
///   versions, told apart by rendering, else in order when as many are left of
///   each; they keep their windows, so they share their keys without a sense;
///   when neither tells them apart they are skipped.
///
/// A re-import of the same file reaches the same decisions: they depend on the
/// file, and on the book only through the windows of the records found, which an
/// import does not change.
pub(super) fn settle(entries: Vec<Entry>, book: &Index<'_>, fold: &dyn Fn(&str) -> String) -> Settlement {
    let folded: Vec<String> = entries.iter().map(|entry| fold(&entry.term.src)).collect();
    let mut versioned = versions(&entries, &folded, book);
    let places: Vec<At> = entries.iter().map(|entry| entry.at.clone()).collect();
    let mut claims: BTreeMap<Key, Claims> = BTreeMap::new();
    // The next suffix to try for a rendering as a sense of a surface: 1 is none.
    let mut suffixes: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut settlement = Settlement { entries: Vec::with_capacity(entries.len()), collisions: Vec::new() };
    for ((owner, entry), folded) in entries.into_iter().enumerate().zip(folded) {
        let Entry { at, mut term } = entry;
        let plain: Key = (folded.clone(), term.sense.clone());
        // The identity the entry has on its own, unless an earlier entry holds its
        // surface already.
        let held_or = |identity: Identity, window: Option<Window>| {
            let held = window.and_then(|window| claims.get(&plain).and_then(|held| held.overlapping(window)));
            match held {
                Some(holder) => Start::Held(holder),
                None => Start::Own(identity, window),
            }
        };
        let start = match versioned.remove(&owner) {
            Some(Versioned::Ambiguous(key)) => {
                let reason = several(&term.src, &book.by_src[&key]);
                settlement.entries.push(Settled { at, term, identity: Identity::Skip(reason) });
                continue;
            }
            Some(Versioned::Record(id)) => held_or(Identity::Record(id), book.window(id)),
            Some(Versioned::Extra { first }) => Start::Held(Claim { until: None, owner: first, role: KeyRole::Src }),
            None => {
                let (identity, window) = book.identify(&plain, &term);
                held_or(identity, window)
            }
        };
        let (identity, window) = match start {
            Start::Own(identity, window) => {
                let base = sense_base(&term.dst);
                let next = suffixes.entry((folded.clone(), base)).or_insert(1);
                *next = (*next).max(2);
                if let Some(window) = window {
                    if let Some(other) = claims.get(&plain).and_then(|held| held.other_than(owner)) {
                        // Held by another entry in chapters of its own: the book's
                        // versions keep both.
                        settlement.collisions.push(Collision {
                            key: term.src.clone(),
                            at: at.clone(),
                            role: KeyRole::Src,
                            first: places[other.owner].clone(),
                            first_role: other.role,
                            outcome: Outcome::Window(window),
                        });
                    }
                }
                (identity, window)
            }
            Start::Held(holder) => {
                let base = sense_base(&term.dst);
                let next = suffixes.entry((folded.clone(), base.clone())).or_insert(1);
                let (sense, identity, window) = loop {
                    let sense = if *next == 1 { base.clone() } else { format!("{base} #{next}") };
                    *next += 1;
                    let key = (folded.clone(), Some(sense.clone()));
                    let (identity, window) = book.identify(&key, &term);
                    let held = window.and_then(|window| claims.get(&key).and_then(|held| held.overlapping(window)));
                    if held.is_none() {
                        break (sense, identity, window);
                    }
                };
                settlement.collisions.push(Collision {
                    key: term.src.clone(),
                    at: at.clone(),
                    role: KeyRole::Src,
                    first: places[holder.owner].clone(),
                    first_role: holder.role,
                    outcome: Outcome::Sense(sense.clone()),
                });
                term.sense = Some(sense);
                (identity, window)
            }
        };
        if let Identity::Skip(_) = identity {
            settlement.entries.push(Settled { at, term, identity });
            continue;
        }
        let Some(window) = window else {
            // Supersession leaves the record no chapter: its surfaces hold nothing.
            settlement.entries.push(Settled { at, term, identity });
            continue;
        };
        let sense = term.sense.clone();
        claims
            .entry((folded, sense.clone()))
            .or_default()
            .0
            .insert(window.since, Claim { until: window.until, owner, role: KeyRole::Src });
        if matches!(identity, Identity::AliasOf(_)) {
            // Never written: its aliases do not reach the book.
            settlement.entries.push(Settled { at, term, identity });
            continue;
        }
        let aliases = std::mem::take(&mut term.aliases);
        for alias in aliases {
            let alias_window = match alias.window {
                Some(own) => intersect(own, window),
                None => Some(window),
            };
            let Some(alias_window) = alias_window else {
                term.aliases.push(alias);
                continue;
            };
            let key = (fold(&alias.surface), sense.clone());
            let held = claims.entry(key).or_default();
            match held.overlapping(alias_window) {
                Some(claim) if claim.owner != owner => {
                    settlement.collisions.push(Collision {
                        key: alias.surface.clone(),
                        at: at.clone(),
                        role: KeyRole::Alias,
                        first: places[claim.owner].clone(),
                        first_role: claim.role,
                        outcome: Outcome::Dropped,
                    });
                    continue;
                }
                // A surface of this entry already (its src, or an alias that folds
                // alike).
                Some(_) => {}
                None => {
                    if let Some(other) = held.other_than(owner) {
                        settlement.collisions.push(Collision {
                            key: alias.surface.clone(),
                            at: at.clone(),
                            role: KeyRole::Alias,
                            first: places[other.owner].clone(),
                            first_role: other.role,
                            outcome: Outcome::Window(alias_window),
                        });
                    }
                    held.0.insert(alias_window.since, Claim { until: alias_window.until, owner, role: KeyRole::Alias });
                }
            }
            term.aliases.push(alias);
        }
        settlement.entries.push(Settled { at, term, identity });
    }
    settlement
}

/// The versions of a plain surface that each entry having it is, for the surfaces
/// the book holds several records of (windowed versions of one name, which an
/// export writes as one entry each, in id order): by rendering first (each version
/// to the first entry with its `dst`), then the entries and versions left over in
/// order when as many are left of each. Entries left over when every version went
/// are extra (a sense of their own); otherwise they are ambiguous.
fn versions(entries: &[Entry], folded: &[String], book: &Index<'_>) -> BTreeMap<usize, Versioned> {
    let mut groups: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for (index, (entry, folded)) in entries.iter().zip(folded).enumerate() {
        let key = (folded.clone(), entry.term.sense.clone());
        if book.by_src.get(&key).is_some_and(|ids| ids.len() > 1) {
            groups.entry(key).or_default().push(index);
        }
    }
    let mut versioned = BTreeMap::new();
    for (key, group) in groups {
        let ids = &book.by_src[&key];
        let mut by_dst: BTreeMap<&str, VecDeque<RecordId>> = BTreeMap::new();
        for id in ids {
            by_dst.entry(book.dst(*id)).or_default().push_back(*id);
        }
        let mut taken = BTreeSet::new();
        let mut left = Vec::new();
        // The group is in file order, so the first entry to take a version holds it
        // first.
        let mut first = None;
        for index in group {
            match by_dst.get_mut(entries[index].term.dst.as_str()).and_then(VecDeque::pop_front) {
                Some(id) => {
                    taken.insert(id);
                    first.get_or_insert(index);
                    versioned.insert(index, Versioned::Record(id));
                }
                None => left.push(index),
            }
        }
        let versions_left: Vec<RecordId> = ids.iter().copied().filter(|id| !taken.contains(id)).collect();
        if let (true, Some(first)) = (versions_left.is_empty(), first) {
            // Every version went to an entry of the group.
            for index in left {
                versioned.insert(index, Versioned::Extra { first });
            }
        } else if versions_left.len() == left.len() {
            for (index, id) in left.into_iter().zip(versions_left) {
                versioned.insert(index, Versioned::Record(id));
            }
        } else {
            for index in left {
                versioned.insert(index, Versioned::Ambiguous(key.clone()));
            }
        }
    }
    versioned
}

/// The rendering as the start of a sense: one line, trimmed, at most
/// [`SENSE_BASE_CHARS_MAX`] characters (`sense` when nothing is left).
fn sense_base(dst: &str) -> String {
    let line: String = dst
        .chars()
        .map(|c| {
            if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
            {
                ' '
            } else {
                c
            }
        })
        .collect();
    let cut: String = line.trim().chars().take(SENSE_BASE_CHARS_MAX).collect();
    let cut = cut.trim_end();
    if cut.is_empty() {
        "sense".to_owned()
    } else {
        cut.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(since: u32, until: Option<u32>) -> Window {
        Window { since, until }
    }

    #[test]
    fn a_claim_is_found_by_any_window_it_shares_a_chapter_with() {
        let mut claims = Claims::default();
        claims.0.insert(1, Claim { until: Some(10), owner: 0, role: KeyRole::Src });
        claims.0.insert(21, Claim { until: None, owner: 1, role: KeyRole::Alias });
        let owner = |window| claims.overlapping(window).map(|claim| claim.owner);
        assert_eq!(owner(window(5, Some(5))), Some(0));
        assert_eq!(owner(window(11, Some(20))), None);
        assert_eq!(owner(window(10, Some(20))), Some(0));
        assert_eq!(owner(window(11, Some(21))), Some(1));
        assert_eq!(owner(window(11, None)), Some(1));
        assert_eq!(owner(window(1, None)), Some(1));
        assert_eq!(claims.other_than(0).map(|claim| claim.owner), Some(1));
    }

    #[test]
    fn a_sense_base_is_one_line_cut_to_fit_a_suffix() {
        assert_eq!(sense_base("Вера"), "Вера");
        assert_eq!(sense_base(" a\u{2028}b "), "a b");
        assert_eq!(sense_base("\u{7}"), "sense");
        let long = "я".repeat(80);
        assert_eq!(sense_base(&long).chars().count(), SENSE_BASE_CHARS_MAX);
    }
}
