//! Undoing applied events: what [`crate::decide_in_place`] keeps so a refused batch
//! leaves the state it was judged against exactly as it was, without a copy of the
//! whole state per write.
//!
//! Each event saves only the slot it changes, so the journal of a batch is as large as
//! the batch, never as the records it touches: an alias event saves that one alias, a
//! put, retirement or disposition of a term saves the term's head (content,
//! provenance, retirement, verdict) but never its aliases. Saving the whole term per
//! event cost a copy of every alias the term had so far for each alias the batch added
//! to it: N aliases of one term in one batch held N²/2 aliases.

use std::collections::BTreeMap;

use ledger_model::*;

use crate::state::{Candidate, Expected, Provenance, Rule, State, Summary, Term};

/// What one event may change, as it was before the event.
enum Saved {
    /// A term's head, or `None` when the term did not exist.
    Term(RecordId, Option<Box<TermHead>>),
    /// One alias slot of a term, when the term existed (an alias event about a term
    /// the state does not know changes nothing).
    Alias(RecordId, String, Option<AliasAdded>),
    Summary(RecordId, Option<Summary>),
    Candidate(RecordId, Option<Candidate>),
    Rule(RecordId, Option<Rule>),
    /// A disposition's target may be a term, a rule or a candidate: the verdict of
    /// the first of them that exists (the one `State::apply` sets), if any does.
    Verdict(RecordId, Option<Option<(Verdict, String)>>),
    Config(Option<(ConfigSet, Provenance)>),
    Rollbacks(usize),
    Governance(Option<(GovernanceSet, Provenance)>),
    Expected(String, Option<Expected>),
    EmbeddingModel(Option<(EmbeddingModelSet, Provenance)>),
    Languages(Option<(LanguagesSet, Provenance)>),
    Source(u32, Option<(SourceSet, Provenance)>),
    ProxyTemplate(Option<(String, Provenance)>),
    ModelPrompt(String, Option<(String, Provenance)>),
    ModelPolicy(String, Option<(Vec<String>, Provenance)>),
    Cascade(Option<(CascadeSet, Provenance)>),
    Examples(Option<(ExamplesSet, Provenance)>),
    /// The event changes nothing but the revision.
    Nothing,
}

/// Everything of a term but its aliases.
struct TermHead {
    put: TermPut,
    put_by: Provenance,
    retired: bool,
    verdict: Option<(Verdict, String)>,
}

impl TermHead {
    fn of(term: &Term) -> Box<TermHead> {
        Box::new(TermHead {
            put: term.put.clone(),
            put_by: term.put_by.clone(),
            retired: term.retired,
            verdict: term.verdict.clone(),
        })
    }
}

/// The verdict slot `State::apply` sets for a disposition of `id`: a term's, else a
/// rule's, else a candidate's.
fn verdict_slot(state: &mut State, id: RecordId) -> Option<&mut Option<(Verdict, String)>> {
    if let Some(term) = state.terms.get_mut(&id) {
        Some(&mut term.verdict)
    } else if let Some(rule) = state.rules.get_mut(&id) {
        Some(&mut rule.verdict)
    } else {
        state.candidates.get_mut(&id).map(|candidate| &mut candidate.verdict)
    }
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
            Body::TermPut(TermPut { id, .. }) | Body::TermRetired(TermRetired { id, .. }) => {
                Saved::Term(*id, state.terms.get(id).map(TermHead::of))
            }
            Body::AliasAdded(AliasAdded { id, surface, .. }) | Body::AliasRemoved(AliasRemoved { id, surface }) => {
                match state.terms.get(id) {
                    Some(term) => Saved::Alias(*id, surface.clone(), term.aliases.get(surface).cloned()),
                    None => Saved::Nothing,
                }
            }
            Body::SummaryPut(SummaryPut { id, .. }) | Body::SummaryRetired(SummaryRetired { id, .. }) => {
                Saved::Summary(*id, entry(&state.summaries, *id))
            }
            Body::CandidateProposed(CandidateProposed { id, .. }) => {
                Saved::Candidate(*id, entry(&state.candidates, *id))
            }
            Body::RulePut(RulePut { id, .. }) | Body::RuleRetired(RuleRetired { id, .. }) => {
                Saved::Rule(*id, entry(&state.rules, *id))
            }
            Body::DispositionSet(DispositionSet { target, .. }) => {
                let verdict = match (state.terms.get(target), state.rules.get(target), state.candidates.get(target)) {
                    (Some(term), _, _) => Some(term.verdict.clone()),
                    (None, Some(rule), _) => Some(rule.verdict.clone()),
                    (None, None, candidate) => candidate.map(|candidate| candidate.verdict.clone()),
                };
                Saved::Verdict(*target, verdict)
            }
            Body::ConfigSet(_) => Saved::Config(state.config.clone()),
            Body::RollbackMarker(_) => Saved::Rollbacks(state.rollbacks.len()),
            Body::GovernanceSet(_) => Saved::Governance(state.governance.clone()),
            Body::ConceptExpected(ConceptExpected { surface, .. })
            | Body::ConceptDropped(ConceptDropped { surface, .. }) => {
                Saved::Expected(surface.clone(), state.expected.get(surface).cloned())
            }
            Body::EmbeddingModelSet(_) => Saved::EmbeddingModel(state.embedding_model.clone()),
            Body::LanguagesSet(_) => Saved::Languages(state.languages.clone()),
            Body::SourceSet(source) => Saved::Source(source.chapter, state.source.get(&source.chapter).cloned()),
            Body::ProxyTemplateSet(_) => Saved::ProxyTemplate(state.proxy_template.clone()),
            Body::CascadeSet(_) => Saved::Cascade(state.cascade.clone()),
            Body::ExamplesSet(_) => Saved::Examples(state.examples.clone()),
            Body::ModelPolicySet(policy) => {
                Saved::ModelPolicy(policy.party.clone(), state.model_policies.get(&policy.party).cloned())
            }
            Body::ModelPromptSet(set) => {
                Saved::ModelPrompt(set.job.clone(), state.model_prompts.get(&set.job).cloned())
            }
        };
        self.saved.push(saved);
    }

    /// Puts `state` back as it was when the journal began.
    pub(crate) fn undo(self, state: &mut State) {
        for saved in self.saved.into_iter().rev() {
            match saved {
                Saved::Term(id, None) => {
                    state.terms.remove(&id);
                }
                Saved::Term(id, Some(old)) => {
                    // The event applied to an existing term, which is still there.
                    if let Some(term) = state.terms.get_mut(&id) {
                        let TermHead { put, put_by, retired, verdict } = *old;
                        (term.put, term.put_by, term.retired, term.verdict) = (put, put_by, retired, verdict);
                    }
                }
                Saved::Alias(id, surface, old) => {
                    if let Some(term) = state.terms.get_mut(&id) {
                        put_back(&mut term.aliases, surface, old);
                    }
                }
                Saved::Summary(id, old) => put_back(&mut state.summaries, id, old),
                Saved::Candidate(id, old) => put_back(&mut state.candidates, id, old),
                Saved::Rule(id, old) => put_back(&mut state.rules, id, old),
                Saved::Verdict(id, old) => {
                    if let (Some(old), Some(slot)) = (old, verdict_slot(state, id)) {
                        *slot = old;
                    }
                }
                Saved::Nothing => {}
                Saved::Config(old) => state.config = old,
                Saved::Rollbacks(len) => state.rollbacks.truncate(len),
                Saved::Governance(old) => state.governance = old,
                Saved::Expected(surface, old) => put_back(&mut state.expected, surface, old),
                Saved::EmbeddingModel(old) => state.embedding_model = old,
                Saved::Languages(old) => state.languages = old,
                Saved::Source(chapter, old) => put_back(&mut state.source, chapter, old),
                Saved::ProxyTemplate(old) => state.proxy_template = old,
                Saved::ModelPrompt(job, old) => put_back(&mut state.model_prompts, job, old),
                Saved::ModelPolicy(party, old) => put_back(&mut state.model_policies, party, old),
                Saved::Cascade(old) => state.cascade = old,
                Saved::Examples(old) => state.examples = old,
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
