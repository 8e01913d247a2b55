//! The head's index of its terms' keys: every term's folded surfaces (source and
//! aliases) with its sense, its rendering's key for the same-rendering warning, and
//! the terms that supersede it. With it, [`crate::decide_indexed`] checks UNIQUE and
//! the same-rendering warning over the groups a batch touches instead of folding
//! every surface of the book again, so a write costs what it changes.
//!
//! The index holds every term, retired or not (its keys do not depend on that);
//! what is active is read from the state when a group is checked. It is valid for
//! one state under one fold: whoever keeps it beside a head keeps it with that
//! head's revision and fold table, and [`SurfaceIndex::of`] builds it again from a
//! state. Property tests hold it, after every batch, to the index built from the
//! state after the batch.

use std::collections::{BTreeMap, BTreeSet};

use ledger_model::*;

use crate::decide::Fold;
use crate::read::cut;
use crate::state::{State, Term};

/// The keys of every term of one state under one fold (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SurfaceIndex {
    terms: BTreeMap<RecordId, TermKeys>,
    /// Terms with a surface (source or alias) folding to the key, in that sense.
    by_surface: BTreeMap<(String, Option<String>), BTreeSet<RecordId>>,
    /// Terms by the key of their rendering ([`dst_key`]).
    by_dst: BTreeMap<String, BTreeSet<RecordId>>,
    /// Terms by the term they supersede (itself included, though it cuts nothing).
    successors: BTreeMap<RecordId, BTreeSet<RecordId>>,
    /// Whether the state it was built from held UNIQUE: only then is a check over
    /// the groups a batch touches a check of the whole book.
    pub(crate) clean: bool,
}

/// Two indexes are equal when they hold the same keys, whatever they know of
/// UNIQUE.
impl PartialEq for SurfaceIndex {
    fn eq(&self, other: &SurfaceIndex) -> bool {
        (&self.terms, &self.by_surface, &self.by_dst, &self.successors)
            == (&other.terms, &other.by_surface, &other.by_dst, &other.successors)
    }
}

impl Eq for SurfaceIndex {}

/// The keys of one term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TermKeys {
    /// The folded source.
    pub(crate) src: String,
    pub(crate) sense: Option<String>,
    /// Each alias's folded surface, in the order of [`Term::aliases`].
    pub(crate) aliases: Vec<String>,
    /// The key of its rendering ([`dst_key`]).
    pub(crate) dst: String,
    pub(crate) supersedes: Option<RecordId>,
}

impl TermKeys {
    fn of(term: &Term, fold: Fold<'_>) -> TermKeys {
        TermKeys {
            src: fold(&term.put.src),
            sense: term.put.sense.clone(),
            aliases: term.aliases.values().map(|alias| fold(&alias.surface)).collect(),
            dst: dst_key(&term.put.dst),
            supersedes: term.put.supersedes,
        }
    }

    /// Its (folded surface, sense) keys: the source's, then each alias's.
    pub(crate) fn surface_keys(&self) -> impl Iterator<Item = (String, Option<String>)> + '_ {
        std::iter::once(&self.src).chain(&self.aliases).map(|folded| (folded.clone(), self.sense.clone()))
    }
}

/// What the same-rendering warning compares renderings by: lowercased, ё as е.
pub(crate) fn dst_key(dst: &str) -> String {
    let mut key = String::with_capacity(dst.len());
    dst_key_into(dst, &mut key);
    key
}

/// [`dst_key`], written into `key` (cleared first), so a pass over every rendering
/// reuses one buffer. Lowercased as `str::to_lowercase` does: char by char, except
/// that a Σ may be final (a text with one takes `str::to_lowercase` itself).
pub(crate) fn dst_key_into(dst: &str, key: &mut String) {
    key.clear();
    if dst.contains('Σ') {
        key.push_str(&dst.to_lowercase().replace('ё', "е"));
        return;
    }
    for lower in dst.chars().flat_map(char::to_lowercase) {
        key.push(if lower == 'ё' { 'е' } else { lower });
    }
}

/// What [`SurfaceIndex::refresh`] replaced, to put back when the batch is refused or
/// was only a dry run.
#[derive(Debug, Default)]
pub(crate) struct Replaced(Vec<(RecordId, Option<TermKeys>)>);

impl Replaced {
    /// The keys replaced terms had before.
    pub(crate) fn old_keys(&self) -> impl Iterator<Item = &TermKeys> {
        self.0.iter().filter_map(|(_, keys)| keys.as_ref())
    }
}

impl SurfaceIndex {
    /// The index of every term of `state` under `fold`. Whether `state` holds
    /// UNIQUE is for the caller to say ([`SurfaceIndex::clean`] starts false).
    pub fn of(state: &State, fold: Fold<'_>) -> SurfaceIndex {
        let mut index = SurfaceIndex::default();
        for (id, term) in &state.terms {
            index.set(*id, Some(TermKeys::of(term, fold)));
        }
        index
    }

    /// About how many bytes it holds on the heap (for a book's memory estimate).
    pub fn heap_bytes(&self) -> usize {
        const NODE: usize = 64;
        let keys: usize = self
            .terms
            .values()
            .map(|keys| {
                NODE + keys.src.len() * 2
                    + keys.dst.len() * 2
                    + keys.aliases.iter().map(|alias| NODE + alias.len() * 2).sum::<usize>()
            })
            .sum();
        keys + (self.by_surface.len() + self.by_dst.len() + self.successors.len()) * 2 * NODE
    }

    /// The keys of term `id`, if it exists.
    pub(crate) fn keys(&self, id: RecordId) -> Option<&TermKeys> {
        self.terms.get(&id)
    }

    /// Every (folded surface, sense) key, in order.
    pub(crate) fn surface_keys(&self) -> impl Iterator<Item = &(String, Option<String>)> {
        self.by_surface.keys()
    }

    /// The terms with a surface under `key`, in id order.
    pub(crate) fn with_surface(&self, key: &(String, Option<String>)) -> impl Iterator<Item = RecordId> + '_ {
        self.by_surface.get(key).into_iter().flatten().copied()
    }

    /// The terms whose rendering has the key `dst`, in id order.
    pub(crate) fn with_dst(&self, dst: &str) -> impl Iterator<Item = RecordId> + '_ {
        self.by_dst.get(dst).into_iter().flatten().copied()
    }

    /// The story-time window of active term `id` after supersession, as
    /// [`State::effective_window`] finds it, from the index's successors instead of
    /// every term; `None` for a retired or unknown term, or when nothing is left.
    pub(crate) fn window(&self, state: &State, id: RecordId) -> Option<Window> {
        let term = state.terms.get(&id).filter(|term| !term.retired)?;
        // The earliest-starting active successor, the first in id order of those.
        let successor = self
            .successors
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|successor| **successor != id)
            .filter_map(|successor| {
                let term = state.terms.get(successor).filter(|term| !term.retired)?;
                Some((term.put.window.since, *successor))
            })
            .min_by_key(|(since, _)| *since);
        cut(term.put.window, successor.as_ref()).0
    }

    /// Takes in terms `ids` as they are in `state` now (each one changed, or appeared,
    /// since the index was last told), returning what they replaced.
    pub(crate) fn refresh(&mut self, state: &State, fold: Fold<'_>, ids: impl Iterator<Item = RecordId>) -> Replaced {
        let mut replaced = Replaced::default();
        for id in ids {
            let keys = state.terms.get(&id).map(|term| TermKeys::of(term, fold));
            if self.terms.get(&id) != keys.as_ref() {
                replaced.0.push((id, self.set(id, keys)));
            }
        }
        replaced
    }

    /// Puts back what [`SurfaceIndex::refresh`] replaced.
    pub(crate) fn put_back(&mut self, replaced: Replaced) {
        for (id, keys) in replaced.0.into_iter().rev() {
            self.set(id, keys);
        }
    }

    /// Sets (or, with `None`, removes) the keys of term `id`, returning its old ones.
    fn set(&mut self, id: RecordId, keys: Option<TermKeys>) -> Option<TermKeys> {
        let SurfaceIndex { terms, by_surface, by_dst, successors, .. } = self;
        let old = match keys {
            Some(keys) => terms.insert(id, keys),
            None => terms.remove(&id),
        };
        if let Some(old) = &old {
            for key in old.surface_keys() {
                remove(by_surface, &key, id);
            }
            remove(by_dst, &old.dst, id);
            if let Some(superseded) = old.supersedes {
                remove(successors, &superseded, id);
            }
        }
        if let Some(new) = terms.get(&id) {
            for key in new.surface_keys() {
                by_surface.entry(key).or_default().insert(id);
            }
            by_dst.entry(new.dst.clone()).or_default().insert(id);
            if let Some(superseded) = new.supersedes {
                successors.entry(superseded).or_default().insert(id);
            }
        }
        old
    }
}

/// Takes `id` out of the set under `key`, and the set out of `map` once empty.
fn remove<K: Ord + Clone>(map: &mut BTreeMap<K, BTreeSet<RecordId>>, key: &K, id: RecordId) {
    if let Some(ids) = map.get_mut(key) {
        ids.remove(&id);
        if ids.is_empty() {
            map.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The key as it is defined: the whole text lowercased, then ё as е.
    fn defined(dst: &str) -> String {
        dst.to_lowercase().replace('ё', "е")
    }

    proptest! {
        #[test]
        fn the_key_is_the_lowercased_text_with_yo_as_ye(
            dst in prop::collection::vec(
                prop::sample::select(vec!['Ё', 'ё', 'Е', 'Σ', 'σ', 'İ', 'K', 'A', 'z', ' ', '-', 'Ж', '王']),
                0..12,
            ).prop_map(|chars| chars.into_iter().collect::<String>()),
            any_text in "\\PC{0,12}",
        ) {
            prop_assert_eq!(super::dst_key(&dst), defined(&dst));
            prop_assert_eq!(super::dst_key(&any_text), defined(&any_text));
        }
    }
}
