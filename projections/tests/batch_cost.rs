//! The work of deciding a batch grows with the batch, not with its square: each case
//! decides a hostile batch of n and of 2n events and compares the bytes `decide`
//! allocated (counted by a global allocator, one measurement at a time, so counts,
//! not times) and the size of what it answers. A quadratic step makes the doubled batch
//! cost about four times as much; O(n log n) stays near two.

mod support;

use ledger_model::*;
use projections::{decide_in_place, Decided, State, Warning};
use support::env;
use test_support::counting::{allocated, alone, names};
use test_support::records::{self, alias, id, put};

test_support::count_allocations!();

fn event(body: Body) -> NewEvent {
    NewEvent { recorded_at_ms: 1_000, ..records::event(body) }
}

/// `state` after `bodies` as one batch, applied in place, and what deciding it said.
fn decided(state: &mut State, bodies: Vec<Body>) -> Decided {
    let batch: Vec<NewEvent> = bodies.into_iter().map(event).collect();
    let snapshot_at = |_: Seq| None;
    decide_in_place(state, &env(&snapshot_at), &batch).unwrap_or_else(|rejection| panic!("refused: {rejection}"))
}

/// A book holding `bodies`, decided as one batch.
fn book(bodies: Vec<Body>) -> State {
    let mut state = State::new();
    let Decided { events, .. } = decided(&mut state, bodies);
    assert!(!events.is_empty());
    state
}

/// Asserts that the doubled batch cost at most `2.5` times the single one.
fn assert_linear(what: &str, n: usize, single: u64, doubled: u64) {
    let ratio = doubled as f64 / single as f64;
    assert!(
        ratio <= 2.5,
        "{what}: {n} events allocated {single} bytes, {} allocated {doubled} ({ratio:.2}x): more than linear",
        2 * n
    );
}

fn aliases(term_id: &str, surfaces: &[String]) -> Vec<Body> {
    surfaces.iter().map(|surface| Body::AliasAdded(alias(term_id, surface))).collect()
}

#[test]
fn aliases_of_one_term_in_one_batch_cost_what_the_batch_does() {
    let _alone = alone();
    let cost = |n: usize| {
        let mut state = book(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
        let batch = aliases("T-1", &names(n));
        let (decided, bytes) = allocated(|| decided(&mut state, batch));
        assert_eq!(decided.events.len(), n);
        assert_eq!(state.terms()[&id("T-1")].aliases.len(), n);
        bytes
    };
    let n = 1_000;
    assert_linear("aliases of one term", n, cost(n), cost(2 * n));
}

#[test]
fn a_refused_batch_of_aliases_costs_what_the_batch_does() {
    let _alone = alone();
    // Every alias is applied, then the last event is refused and all are undone.
    let cost = |n: usize| {
        let mut state = book(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
        let before = state.clone();
        let mut batch: Vec<NewEvent> = aliases("T-1", &names(n)).into_iter().map(event).collect();
        batch.push(event(Body::TermRetired(TermRetired { id: id("T-9"), reason: None })));
        let snapshot_at = |_: Seq| None;
        let (refused, bytes) = allocated(|| decide_in_place(&mut state, &env(&snapshot_at), &batch));
        assert!(refused.is_err());
        assert_eq!(state, before);
        bytes
    };
    let n = 1_000;
    assert_linear("refused aliases of one term", n, cost(n), cost(2 * n));
}

/// `n` terms with different sources and one rendering, T-1 to T-n.
fn one_rendering(n: usize) -> Vec<Body> {
    names(n)
        .iter()
        .enumerate()
        .map(|(index, src)| {
            let id = RecordId::new(RecordKind::Term, index as u32 + 1).unwrap();
            Body::TermPut(TermPut::new(id, src, "Сяо Янь"))
        })
        .collect()
}

#[test]
fn terms_sharing_a_rendering_are_one_warning_whatever_their_number() {
    let _alone = alone();
    let answer = |n: usize| {
        let mut state = State::new();
        let (decided, bytes) = allocated(|| decided(&mut state, one_rendering(n)));
        let text: Vec<String> = decided.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(decided.warnings.len(), 1, "{n} terms, one rendering: {} warnings", decided.warnings.len());
        let Warning::SameDst { dst, terms, n_terms } = &decided.warnings[0];
        assert_eq!((dst.as_str(), *n_terms, terms.len()), ("Сяо Янь", n, limits::SAME_DST_TERMS_LISTED_MAX));
        // The first terms by id, with their sources as written.
        assert_eq!(terms[0].0, id("T-1"));
        assert_eq!(terms[1].1, names(2)[1]);
        assert!(text[0].ends_with(&format!(" and {} more", n - limits::SAME_DST_TERMS_LISTED_MAX)), "{}", text[0]);
        (text[0].len(), bytes)
    };
    let n = 1_500;
    let (single_text, single) = answer(n);
    let (doubled_text, doubled) = answer(2 * n);
    // The answer names as many terms at 2n as at n; only the count's digits differ.
    assert!(doubled_text <= single_text + 1, "{single_text} bytes of warning at {n}, {doubled_text} at {}", 2 * n);
    assert_linear("terms with one rendering", n, single, doubled);
}

#[test]
fn one_new_term_over_a_shared_rendering_is_one_warning_naming_the_group() {
    let _alone = alone();
    // The book already has n terms rendering as "Сяо Янь" (one warning when they
    // came); a batch adding one more names the whole group once.
    let cost = |n: usize| {
        let mut state = book(one_rendering(n));
        let new = RecordId::new(RecordKind::Term, n as u32 + 1).unwrap();
        let batch = vec![Body::TermPut(TermPut::new(new, "萧炎", "сяо янь"))];
        let (decided, bytes) = allocated(|| decided(&mut state, batch));
        assert_eq!(decided.warnings.len(), 1);
        let Warning::SameDst { n_terms, .. } = &decided.warnings[0];
        assert_eq!(*n_terms, n + 1);
        bytes
    };
    let n = 1_500;
    assert_linear("one term over a shared rendering", n, cost(n), cost(2 * n));
}

#[test]
fn concepts_registered_in_one_batch_cost_what_the_batch_does() {
    // Each registration is checked against the register by fold: folding the whole
    // register per registration made n registrations fold n²/2 surfaces.
    let _alone = alone();
    let cost = |n: usize| {
        let batch: Vec<Body> = names(n)
            .into_iter()
            .map(|surface| Body::ConceptExpected(ConceptExpected { surface, kind: None, note: None }))
            .collect();
        let mut state = State::new();
        let (decided, bytes) = allocated(|| decided(&mut state, batch));
        assert_eq!(decided.events.len(), n);
        bytes
    };
    let n = 1_000;
    assert_linear("concepts of one batch", n, cost(n), cost(2 * n));
}
