//! Bi-temporal reads. Editorial time is chosen by folding to a revision (`as_of`);
//! story time by asking at a chapter. Story-time supersession is derived here, at
//! read time: a term that `supersedes: T-412` from chapter 121 ends T-412 at 120.
//! Nothing stored is edited.

use ledger_model::*;

use crate::state::{Rule, State, Summary, Term};

/// A term as it applies in story time: its window after supersession.
#[derive(Clone, Copy, Debug)]
pub struct ActiveTerm<'s> {
    /// The record id.
    pub id: RecordId,
    /// The record.
    pub term: &'s Term,
    /// The window after supersession; `None` if supersession leaves nothing.
    pub window: Option<Window>,
    /// The term that ends this one early, if any.
    pub superseded_by: Option<RecordId>,
}

/// Intersects two windows; `None` when they share no chapter.
pub fn intersect(a: Window, b: Window) -> Option<Window> {
    let since = a.since.max(b.since);
    let until = match (a.until, b.until) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    };
    (until.is_none_or(|until| since <= until)).then_some(Window { since, until })
}

impl State {
    /// The story-time window of term `id` after supersession by active terms, and
    /// the term that cuts it short. `None` for a window if nothing is left.
    pub fn effective_window(&self, id: RecordId) -> (Option<Window>, Option<RecordId>) {
        let Some(term) = self.terms.get(&id) else { return (None, None) };
        cut(term.put.window, self.supersession_cuts().get(&id))
    }

    /// Active (not retired) terms, with their story-time windows. With a chapter, only
    /// those whose window contains it.
    pub fn active_terms(&self, chapter: Option<u32>) -> Vec<ActiveTerm<'_>> {
        let superseded = self.supersession_cuts();
        self.terms
            .iter()
            .filter(|(_, term)| !term.retired)
            .map(|(id, term)| {
                let (window, superseded_by) = cut(term.put.window, superseded.get(id));
                ActiveTerm { id: *id, term, window, superseded_by }
            })
            .filter(|active| chapter.is_none_or(|chapter| active.window.is_some_and(|w| w.contains(chapter))))
            .collect()
    }

    /// For each superseded term: the earliest chapter an active successor starts at,
    /// and that successor.
    fn supersession_cuts(&self) -> std::collections::BTreeMap<RecordId, (u32, RecordId)> {
        let mut cuts = std::collections::BTreeMap::new();
        for (id, term) in &self.terms {
            let Some(old) = term.put.supersedes else { continue };
            if term.retired || old == *id {
                continue;
            }
            let since = term.put.window.since;
            cuts.entry(old)
                .and_modify(|entry: &mut (u32, RecordId)| {
                    if since < entry.0 {
                        *entry = (since, *id);
                    }
                })
                .or_insert((since, *id));
        }
        cuts
    }

    /// The window an alias applies in: its own (or the term's), within the term's
    /// story-time window.
    pub fn alias_window(alias: &AliasAdded, term_window: Option<Window>) -> Option<Window> {
        let term_window = term_window?;
        match alias.window {
            Some(own) => intersect(own, term_window),
            None => Some(term_window),
        }
    }

    /// Active rules, in id order; with a chapter, only those whose window contains
    /// it (whether a rule is injected also depends on its scope and the chunk).
    pub fn active_rules(&self, chapter: Option<u32>) -> Vec<&Rule> {
        self.rules
            .values()
            .filter(|rule| !rule.retired)
            .filter(|rule| chapter.is_none_or(|chapter| rule.put.window.contains(chapter)))
            .collect()
    }

    /// Active summaries shown at `chapter` by [`summary_rank`], the rule assembly
    /// injects them by (all active ones without a chapter).
    pub fn visible_summaries(&self, chapter: Option<u32>) -> Vec<&Summary> {
        self.summaries
            .values()
            .filter(|summary| !summary.retired)
            .filter(|summary| {
                chapter.is_none_or(|chapter| {
                    summary_rank(summary.put.scope, visible_from(&summary.put), chapter).is_some()
                })
            })
            .collect()
    }
}

impl ActiveTerm<'_> {
    /// The term's aliases with the windows they apply in; with a chapter, only those
    /// whose window contains it (the window rule assembly finds surfaces by).
    pub fn aliases(&self, chapter: Option<u32>) -> Vec<(&AliasAdded, Option<Window>)> {
        self.term
            .aliases
            .values()
            .map(|alias| (alias, State::alias_window(alias, self.window)))
            .filter(|(_, window)| chapter.is_none_or(|chapter| window.is_some_and(|w| w.contains(chapter))))
            .collect()
    }
}

/// Where a summary is shown at `chapter`, if at all: rank 0 the book summary, 1 an
/// arc summary, 2 the summary of the previous chapter (assembly orders them so).
///
/// Nothing is shown before its `visible_from`. A book summary is shown from there on.
/// An arc summary is a recap: written knowing how the arc ends, it would be a
/// spoiler inside the arc (`decide` requires `visible_from` after the arc's end), so
/// it is shown at every chapter from `visible_from` on. A chapter summary is shown
/// at the next chapter only.
pub fn summary_rank(scope: Scope, visible_from: u32, chapter: u32) -> Option<u8> {
    if visible_from > chapter {
        return None;
    }
    match scope {
        Scope::Book => Some(0),
        Scope::Arc { .. } => Some(1),
        Scope::Chapter(summarized) => (summarized.checked_add(1) == Some(chapter)).then_some(2),
    }
}

/// Cuts `window` at the chapter a successor starts at.
pub(crate) fn cut(window: Window, successor: Option<&(u32, RecordId)>) -> (Option<Window>, Option<RecordId>) {
    match successor {
        None => (Some(window), None),
        Some(&(since, by)) => {
            let before = (since > 1).then(|| Window { since: 1, until: Some(since - 1) });
            (before.and_then(|before| intersect(window, before)), Some(by))
        }
    }
}

/// The first chapter at which a summary may be shown: its `visible_from`, or the
/// chapter after its scope ends (a book summary: chapter 1).
pub fn visible_from(put: &SummaryPut) -> u32 {
    put.visible_from.unwrap_or(match put.scope {
        Scope::Chapter(chapter) => chapter.saturating_add(1),
        Scope::Arc { to, .. } => to.saturating_add(1),
        Scope::Book => 1,
    })
}
