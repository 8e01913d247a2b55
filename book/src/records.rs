//! The glossary as an editor works through it (`/ui/books/{book}/glossary` and its
//! JSON twin `GET /v1/books/{book}/records`): every active term at the head,
//! searched, filtered, sorted and paged, each with its effective window, status,
//! verdict and owner, how many recorded chunks injected it (their latest receipts),
//! and whether the latest check of one of them flagged it.
//!
//! A search folds the text with the book's profile, so a traditional spelling finds a
//! simplified source and kana of either width find each other, and matches it against
//! each term's folded source and aliases; against the rendering it compares in lower
//! case. Every filter must hold. Sorting is stable and ends on the id, so a page is
//! the same page for the same query at the same head.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ledger_model::limits::input::RECORDS_PER_PAGE_MAX;
use ledger_model::*;

use crate::book::Book;
use crate::error::BookError;

/// How a listing is sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecordsSort {
    /// By id (the default).
    #[default]
    Id,
    /// By source.
    Src,
    /// By rendering.
    Dst,
    /// By kind (terms without one last).
    Kind,
    /// By status, then verdict.
    Status,
    /// By owner (terms without one last).
    Owner,
    /// By how many recorded chunks injected it.
    Injected,
}

impl RecordsSort {
    /// Every sort key by its name in a query.
    pub const NAMES: [(&'static str, RecordsSort); 7] = [
        ("id", RecordsSort::Id),
        ("src", RecordsSort::Src),
        ("dst", RecordsSort::Dst),
        ("kind", RecordsSort::Kind),
        ("status", RecordsSort::Status),
        ("owner", RecordsSort::Owner),
        ("injected", RecordsSort::Injected),
    ];

    /// The sort key named `name`.
    pub fn named(name: &str) -> Option<RecordsSort> {
        RecordsSort::NAMES.iter().find(|(known, _)| *known == name).map(|(_, sort)| *sort)
    }

    /// Its name in a query.
    pub fn name(self) -> &'static str {
        RecordsSort::NAMES.iter().find(|(_, sort)| *sort == self).map_or("id", |(name, _)| name)
    }
}

/// What to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordsQuery {
    /// Text found in the source, an alias or the rendering.
    pub text: Option<String>,
    /// Only terms of this kind.
    pub kind: Option<String>,
    /// Only terms this party owns (own or by default).
    pub owner: Option<String>,
    /// Only terms of this status.
    pub status: Option<Status>,
    /// Only terms a check flagged (`true`) or did not (`false`).
    pub flagged: Option<bool>,
    /// The order.
    pub sort: RecordsSort,
    /// Descending instead of ascending.
    pub descending: bool,
    /// The page, from 1.
    pub page: usize,
    /// Rows a page, 1 to [`RECORDS_PER_PAGE_MAX`].
    pub per_page: usize,
}

impl Default for RecordsQuery {
    fn default() -> RecordsQuery {
        RecordsQuery {
            text: None,
            kind: None,
            owner: None,
            status: None,
            flagged: None,
            sort: RecordsSort::Id,
            descending: false,
            page: 1,
            per_page: 100,
        }
    }
}

/// One term as the listing shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordRow {
    /// The term.
    pub id: RecordId,
    /// Its source.
    pub src: String,
    /// Its sense.
    pub sense: Option<String>,
    /// Its rendering.
    pub dst: String,
    /// Its kind.
    pub kind: Option<String>,
    /// Its active aliases' surfaces.
    pub aliases: Vec<String>,
    /// The chapters it applies in after supersession (`None`: none).
    pub window: Option<Window>,
    /// Its status.
    pub status: Status,
    /// Its verdict.
    pub verdict: Option<Verdict>,
    /// Its owner, own or by default.
    pub owner: Option<String>,
    /// Recorded chunks whose latest receipt injected it.
    pub n_injected: usize,
    /// Whether the latest check of a recorded chunk flagged it (missing, another
    /// rendering, or a verb of the other gender).
    pub flagged: bool,
}

/// One page of the listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordsPage {
    /// The head it was read at.
    pub revision: Seq,
    /// Active terms in the book.
    pub n_terms: usize,
    /// Those the query matches.
    pub n_matching: usize,
    /// The query, as answered.
    pub query: RecordsQuery,
    /// The rows of the page, in order.
    pub rows: Vec<RecordRow>,
}

impl RecordsPage {
    /// How many pages the matching terms fill (at least 1).
    pub fn n_pages(&self) -> usize {
        self.n_matching.div_ceil(self.query.per_page).max(1)
    }
}

impl Book {
    /// One page of the book's active terms at the head, as `query` asks (see the
    /// module doc). A page past the last is empty; page 0 and a page size outside 1 to
    /// [`RECORDS_PER_PAGE_MAX`] are invalid.
    pub fn records(&mut self, query: RecordsQuery) -> Result<RecordsPage, BookError> {
        if query.page == 0 {
            return Err(BookError::Invalid("page: pages start at 1".into()));
        }
        if !(1..=RECORDS_PER_PAGE_MAX).contains(&query.per_page) {
            return Err(BookError::Invalid(format!("per_page: {} is not 1 to {RECORDS_PER_PAGE_MAX}", query.per_page)));
        }
        let state = self.state(None)?;
        let profile = self.profile(&state)?;
        let fold = |text: &str| match &profile {
            Some(profile) => profile.fold(text),
            None => text.to_lowercase(),
        };
        let needle = query.text.as_deref().map(str::trim).filter(|text| !text.is_empty());
        let (folded_needle, lower_needle) = (needle.map(fold), needle.map(str::to_lowercase));
        let (injected, flagged) = self.injected_and_flagged()?;
        let mut rows: Vec<RecordRow> = Vec::new();
        let mut n_terms = 0;
        for active in state.active_terms(None) {
            n_terms += 1;
            let put = &active.term.put;
            let aliases: Vec<String> = active.term.aliases.values().map(|alias| alias.surface.clone()).collect();
            if let (Some(folded), Some(lower)) = (&folded_needle, &lower_needle) {
                let found = fold(&put.src).contains(folded.as_str())
                    || aliases.iter().any(|alias| fold(alias).contains(folded.as_str()))
                    || put.dst.to_lowercase().contains(lower.as_str());
                if !found {
                    continue;
                }
            }
            let owner = state.governed(active.id).owner.map(str::to_owned);
            let number = active.id.number();
            let row = RecordRow {
                id: active.id,
                src: put.src.clone(),
                sense: put.sense.clone(),
                dst: put.dst.clone(),
                kind: put.kind.clone(),
                aliases,
                window: active.window,
                status: put.status,
                verdict: active.term.verdict.as_ref().map(|(verdict, _)| *verdict),
                owner,
                n_injected: injected.get(&number).copied().unwrap_or(0),
                flagged: flagged.contains(&number),
            };
            let keep = query.kind.as_ref().is_none_or(|kind| row.kind.as_ref() == Some(kind))
                && query.owner.as_ref().is_none_or(|owner| row.owner.as_ref() == Some(owner))
                && query.status.is_none_or(|status| row.status == status)
                && query.flagged.is_none_or(|flagged| row.flagged == flagged);
            if keep {
                rows.push(row);
            }
        }
        sort(&mut rows, query.sort, query.descending);
        let n_matching = rows.len();
        let rows =
            rows.into_iter().skip((query.page - 1).saturating_mul(query.per_page)).take(query.per_page).collect();
        Ok(RecordsPage { revision: state.revision(), n_terms, n_matching, query, rows })
    }

    /// For every term, how many recorded chunks' latest receipts injected it, and the
    /// terms the latest check of a recorded chunk flagged. The terms a receipt
    /// injected and a check flagged are kept between calls ([`Tallies`]), so a call
    /// reads the index of recorded chunks and of their checks, and decodes only the
    /// receipts and checks filed since the last.
    fn injected_and_flagged(&mut self) -> Result<(BTreeMap<u32, usize>, BTreeSet<u32>), BookError> {
        let mut kept = std::mem::take(&mut self.tallies);
        let mut next = Tallies::default();
        let mut injected: BTreeMap<u32, usize> = BTreeMap::new();
        let mut flagged: BTreeSet<u32> = BTreeSet::new();
        for id in self.latest_receipt_ids(None)? {
            let terms = match kept.injected.remove(&id).or_else(|| next.injected.get(&id).cloned()) {
                Some(terms) => terms,
                None => {
                    let (_, receipt) = self.receipt(&id.to_hex())?;
                    receipt.injected.iter().map(|entry| entry.term).collect()
                }
            };
            for term in terms.iter() {
                *injected.entry(*term).or_default() += 1;
            }
            next.injected.insert(id, terms);
            if let Some(filing) = self.check_filings(id)?.pop() {
                let check = filing.check;
                let terms = match kept.flagged.remove(&check).or_else(|| next.flagged.get(&check).cloned()) {
                    Some(terms) => terms,
                    None => {
                        let latest = self.stored_check(id, check)?;
                        latest
                            .check
                            .items
                            .iter()
                            .filter(|item| {
                                matches!(item.verdict, postcheck::Verdict::Missing | postcheck::Verdict::WrongRendering)
                                    || !item.agreement.is_empty()
                            })
                            .map(|item| item.term)
                            .collect()
                    }
                };
                flagged.extend(terms.iter().copied());
                next.flagged.insert(check, terms);
            }
        }
        self.tallies = next;
        Ok((injected, flagged))
    }
}

/// What the glossary listing keeps of the recorded chunks between calls: the terms
/// each receipt injected (one number per injected entry) and the terms each check
/// flagged, by the receipt's and the check's id. Both are content-addressed (an id
/// names one receipt or one check for good), so an entry never goes stale; a call
/// keeps only the ids it found, so there is at most one entry per recorded chunk and
/// one per its latest check.
#[derive(Debug, Default)]
pub(crate) struct Tallies {
    injected: BTreeMap<Hash32, Arc<[u32]>>,
    flagged: BTreeMap<Hash32, Arc<[u32]>>,
}

impl Tallies {
    /// An estimate of the memory it holds ([`Book::resident_bytes`]): each entry's
    /// numbers, its id and a map node's share.
    pub(crate) fn heap_bytes(&self) -> usize {
        let entry = |terms: &Arc<[u32]>| 4 * terms.len() + 32 + 64;
        self.injected.values().chain(self.flagged.values()).map(entry).sum()
    }
}

/// Sorts rows by `sort` (stable; ties by id), descending if asked.
fn sort(rows: &mut [RecordRow], sort: RecordsSort, descending: bool) {
    // A missing kind or owner sorts after every present one, in either direction.
    fn present_first(a: &Option<String>, b: &Option<String>, descending: bool) -> std::cmp::Ordering {
        match (a, b) {
            (Some(a), Some(b)) if descending => b.cmp(a),
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    }
    let status_rank = |row: &RecordRow| (row.status as u8, row.verdict.map(|verdict| verdict as u8));
    rows.sort_by(|a, b| {
        let order = match sort {
            RecordsSort::Id => a.id.cmp(&b.id),
            RecordsSort::Src => a.src.cmp(&b.src),
            RecordsSort::Dst => a.dst.to_lowercase().cmp(&b.dst.to_lowercase()),
            RecordsSort::Status => status_rank(a).cmp(&status_rank(b)),
            RecordsSort::Injected => a.n_injected.cmp(&b.n_injected),
            RecordsSort::Kind => return present_first(&a.kind, &b.kind, descending).then(a.id.cmp(&b.id)),
            RecordsSort::Owner => return present_first(&a.owner, &b.owner, descending).then(a.id.cmp(&b.id)),
        };
        let order = if descending { order.reverse() } else { order };
        order.then(a.id.cmp(&b.id))
    });
}
