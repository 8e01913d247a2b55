//! Undoing applied events: what [`crate::decide_in_place`] keeps so a refused batch
//! leaves the state it was judged against exactly as it was, without a copy of the
//! whole state per write.

use std::collections::BTreeMap;

use ledger_model::*;

use crate::state::{Candidate, Expected, Provenance, Rule, State, Summary, Term};

/// What one event may change, as it was before the event.
enum Saved {
    Term(RecordId, Option<Term>),
    Summary(RecordId, Option<Summary>),
    Candidate(RecordId, Option<Candidate>),
    Rule(RecordId, Option<Rule>),
    /// A disposition's target may be a term, a rule or a candidate.
    Target(RecordId, Box<(Option<Term>, Option<Rule>, Option<Candidate>)>),
    Config(Option<(ConfigSet, Provenance)>),
    Rollbacks(usize),
    Governance(Option<(GovernanceSet, Provenance)>),
    Expected(String, Option<Expected>),
    EmbeddingModel(Option<(EmbeddingModelSet, Provenance)>),
}

/// The slots of a state that events applied since [`Journal::new`] changed, as they
/// were, newest last.
pub(crate) struct Journal {
    revision: Seq,
    saved: Vec<Saved>,
}

fn entry<V: Clone>(map: &BTreeMap<RecordId, V>, id: RecordId) -> Option<V> {
    map.get(&id).cloned()
}

fn put_back<K: Ord, V>(map: &mut BTreeMap<K, V>, key: K, old: Option<V>) {
    match old {
        Some(old) => {
            map.insert(key, old);
        }
        None => {
            map.remove(&key);
        }
    }
}

impl Journal {
    pub(crate) fn new(state: &State) -> Journal {
        Journal { revision: state.revision(), saved: Vec::new() }
    }

    /// Keeps what applying `body` to `state` will change. Every kind is named, so a
    /// new kind cannot be forgotten here.
    pub(crate) fn save(&mut self, state: &State, body: &Body) {
        let saved = match body {
            Body::TermPut(TermPut { id, .. })
            | Body::TermRetired(TermRetired { id, .. })
            | Body::AliasAdded(AliasAdded { id, .. })
            | Body::AliasRemoved(AliasRemoved { id, .. }) => Saved::Term(*id, entry(&state.terms, *id)),
            Body::SummaryPut(SummaryPut { id, .. }) | Body::SummaryRetired(SummaryRetired { id, .. }) => {
                Saved::Summary(*id, entry(&state.summaries, *id))
            }
            Body::CandidateProposed(CandidateProposed { id, .. }) => {
                Saved::Candidate(*id, entry(&state.candidates, *id))
            }
            Body::RulePut(RulePut { id, .. }) | Body::RuleRetired(RuleRetired { id, .. }) => {
                Saved::Rule(*id, entry(&state.rules, *id))
            }
            Body::DispositionSet(DispositionSet { target, .. }) => Saved::Target(
                *target,
                Box::new((
                    entry(&state.terms, *target),
                    entry(&state.rules, *target),
                    entry(&state.candidates, *target),
                )),
            ),
            Body::ConfigSet(_) => Saved::Config(state.config.clone()),
            Body::RollbackMarker(_) => Saved::Rollbacks(state.rollbacks.len()),
            Body::GovernanceSet(_) => Saved::Governance(state.governance.clone()),
            Body::ConceptExpected(ConceptExpected { surface, .. })
            | Body::ConceptDropped(ConceptDropped { surface, .. }) => {
                Saved::Expected(surface.clone(), state.expected.get(surface).cloned())
            }
            Body::EmbeddingModelSet(_) => Saved::EmbeddingModel(state.embedding_model.clone()),
        };
        self.saved.push(saved);
    }

    /// Puts `state` back as it was when the journal began.
    pub(crate) fn undo(self, state: &mut State) {
        for saved in self.saved.into_iter().rev() {
            match saved {
                Saved::Term(id, old) => put_back(&mut state.terms, id, old),
                Saved::Summary(id, old) => put_back(&mut state.summaries, id, old),
                Saved::Candidate(id, old) => put_back(&mut state.candidates, id, old),
                Saved::Rule(id, old) => put_back(&mut state.rules, id, old),
                Saved::Target(id, slots) => {
                    let (term, rule, candidate) = *slots;
                    put_back(&mut state.terms, id, term);
                    put_back(&mut state.rules, id, rule);
                    put_back(&mut state.candidates, id, candidate);
                }
                Saved::Config(old) => state.config = old,
                Saved::Rollbacks(len) => state.rollbacks.truncate(len),
                Saved::Governance(old) => state.governance = old,
                Saved::Expected(surface, old) => put_back(&mut state.expected, surface, old),
                Saved::EmbeddingModel(old) => state.embedding_model = old,
            }
        }
        state.revision = self.revision;
    }
}

/// One example event of every kind (ledger-model's test fixtures).
#[cfg(test)]
#[path = "../../ledger/model/tests/support/mod.rs"]
mod model;

#[cfg(test)]
mod tests {
    use ledger_model::*;
    use proptest::prelude::*;

    use super::{model, Journal};
    use crate::state::State;

    fn sealed(state: &State, content: NewEvent) -> Event {
        Event {
            seq: state.revision().next(),
            prev: Hash32::GENESIS,
            hash: Hash32::GENESIS,
            schema: record::SCHEMA_CURRENT,
            content,
        }
    }

    proptest! {
        /// From the empty book or one holding an example of every kind, any sequence
        /// of examples applied through the journal and undone leaves the state equal
        /// to what it was: every kind's slot is saved and put back.
        #[test]
        fn undo_puts_back_every_kind(
            base in prop::collection::vec(0usize..256, 0..30),
            applied in prop::collection::vec(0usize..256, 1..30),
        ) {
            let mut examples = model::examples();
            // A disposition of each record the examples name, not only the one its
            // example targets (terms, rules and candidates keep verdicts apart).
            let disposition = examples.iter().find(|(_, event)| matches!(event.body, Body::DispositionSet(_))).cloned();
            let (_, disposition) = disposition.expect("an example disposition");
            let ids: Vec<RecordId> = examples.iter().filter_map(|(_, event)| event.body.record()).collect();
            for id in ids {
                let mut event = disposition.clone();
                if let Body::DispositionSet(set) = &mut event.body {
                    set.target = id;
                }
                examples.push(("disposition", event));
            }
            let pick = |index: usize| examples[index % examples.len()].1.clone();
            let mut state = State::new();
            for index in base {
                let event = sealed(&state, pick(index));
                state.apply(&event);
            }
            let before = state.clone();
            let mut journal = Journal::new(&state);
            for index in applied {
                let event = sealed(&state, pick(index));
                journal.save(&state, &event.content.body);
                state.apply(&event);
            }
            journal.undo(&mut state);
            prop_assert_eq!(state, before);
        }
    }

    #[test]
    fn the_examples_name_every_kind() {
        let mut kinds: Vec<&str> = model::examples().iter().map(|(_, event)| event.body.kind_name()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let mut all = Body::KIND_NAMES.to_vec();
        all.sort_unstable();
        assert_eq!(kinds, all);
    }
}
