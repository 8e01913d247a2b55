//! The state folded from events: every record with its current content, its aliases,
//! its verdict and the provenance of its current content.
//!
//! [`State::apply`] is total: it never rejects an event, because replaying committed
//! history must always succeed. An event about a record the state does not know
//! (which `decide` would have refused) only moves the revision.
//!
//! The state holds what the book is, not how it got there: a record keeps the
//! provenance of its current content, and its whole history stays in the log
//! (`Book::term_history` reads it there), so the state's size follows the glossary,
//! not the length of the log. It serializes (serde) for checkpoints
//! ([`crate::checkpoint`]).

use std::collections::BTreeMap;

use ledger_model::*;
use serde::{Deserialize, Serialize};

/// Who changed a record, when and why: the envelope of one event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// The event.
    pub seq: Seq,
    /// The event's kind (`term_put`, `alias_added`, …).
    pub kind: &'static str,
    /// Who.
    pub actor: String,
    /// From what.
    pub source: String,
    /// When, unix ms.
    pub recorded_at_ms: u64,
}

/// A term record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    /// The current content.
    pub put: TermPut,
    /// Provenance of the put that made the current content.
    pub put_by: Provenance,
    /// Aliases by surface.
    pub aliases: BTreeMap<String, AliasAdded>,
    /// Retired terms are kept for history but are not active.
    pub retired: bool,
    /// The current editorial verdict and its reason code.
    pub verdict: Option<(Verdict, String)>,
}

/// A summary record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The current content.
    pub put: SummaryPut,
    /// Provenance of the put that made the current content.
    pub put_by: Provenance,
    /// Retired summaries are not active.
    pub retired: bool,
}

/// A rule record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// The current content.
    pub put: RulePut,
    /// Provenance of the put that made the current content.
    pub put_by: Provenance,
    /// Retired rules are kept for history but are not active.
    pub retired: bool,
    /// The current editorial verdict and its reason code.
    pub verdict: Option<(Verdict, String)>,
}

/// An expected concept of the register.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    /// What was registered.
    pub concept: ConceptExpected,
    /// Provenance of the registration.
    pub put_by: Provenance,
}

/// A review candidate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// What was proposed.
    pub proposed: CandidateProposed,
    /// The current verdict.
    pub verdict: Option<(Verdict, String)>,
}

/// The book as it stood after event [`State::revision`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub(crate) revision: Seq,
    pub(crate) terms: BTreeMap<RecordId, Term>,
    pub(crate) summaries: BTreeMap<RecordId, Summary>,
    pub(crate) candidates: BTreeMap<RecordId, Candidate>,
    pub(crate) config: Option<(ConfigSet, Provenance)>,
    pub(crate) rollbacks: Vec<(RollbackMarker, Provenance)>,
    pub(crate) rules: BTreeMap<RecordId, Rule>,
    pub(crate) governance: Option<(GovernanceSet, Provenance)>,
    /// Expected concepts by surface as registered.
    pub(crate) expected: BTreeMap<String, Expected>,
    /// The embedding model the book keeps vectors of (outside the snapshot).
    pub(crate) embedding_model: Option<(EmbeddingModelSet, Provenance)>,
    /// The languages the book declared last (outside the snapshot).
    pub(crate) languages: Option<(LanguagesSet, Provenance)>,
    /// The source text of each chapter that has one, by chapter (outside the
    /// snapshot): its last `source_set`, whose `text` is always present.
    pub(crate) source: BTreeMap<u32, (SourceSet, Provenance)>,
    /// The book's proxy template in force and the `proxy_template_set` that set it
    /// (in the snapshot, its own part); `None`: the built-in template.
    pub(crate) proxy_template: Option<(String, Provenance)>,
    /// The prompt of each model job that has one of the book's, by job, with the
    /// `model_prompt_set` that set it (outside the snapshot).
    pub(crate) model_prompts: BTreeMap<String, (String, Provenance)>,
    /// The classes of conflict each model party may decide, by party, with the
    /// `model_policy_set` that set them (outside the snapshot); a party without one
    /// decides nothing.
    pub(crate) model_policies: BTreeMap<String, (Vec<String>, Provenance)>,
    /// The book's cascading activation and the `cascade_set` that declared it (in the
    /// snapshot, its own part, while its depth is above 0); `None`: off.
    pub(crate) cascade: Option<(CascadeSet, Provenance)>,
    /// The terms always and never offered a demonstration, and the `examples_set`
    /// that declared them (outside the snapshot); `None`: none declared.
    pub(crate) examples: Option<(ExamplesSet, Provenance)>,
}

impl State {
    /// The empty book.
    pub fn new() -> State {
        State::default()
    }

    /// Folds `events` from the empty book.
    pub fn fold<'e>(events: impl IntoIterator<Item = &'e Event>) -> State {
        let mut state = State::new();
        for event in events {
            state.apply(event);
        }
        state
    }

    /// The seq of the last event applied.
    pub fn revision(&self) -> Seq {
        self.revision
    }

    /// Every term ever put, retired or not, by id.
    pub fn terms(&self) -> &BTreeMap<RecordId, Term> {
        &self.terms
    }

    /// Every summary ever put, by id.
    pub fn summaries(&self) -> &BTreeMap<RecordId, Summary> {
        &self.summaries
    }

    /// Every candidate ever proposed, by id.
    pub fn candidates(&self) -> &BTreeMap<RecordId, Candidate> {
        &self.candidates
    }

    /// Every rule record ever put, retired or not, by id.
    pub fn rules(&self) -> &BTreeMap<RecordId, Rule> {
        &self.rules
    }

    /// The book's governance and its provenance, if one was declared.
    pub fn governance_set(&self) -> Option<(&GovernanceSet, &Provenance)> {
        self.governance.as_ref().map(|(governance, provenance)| (governance, provenance))
    }

    /// The conflict policy in force: the declared one, or `flag` (what assembly did
    /// before policies could be declared) when the book declares none.
    pub fn conflict_policy(&self) -> ConflictPolicy {
        self.governance.as_ref().map_or(ConflictPolicy::Flag, |(governance, _)| governance.conflict_policy)
    }

    /// The register of expected concepts, by surface as registered.
    pub fn expected(&self) -> &BTreeMap<String, Expected> {
        &self.expected
    }

    /// The book's embedding model and its provenance, if one was set. Outside the
    /// snapshot: it changes no assembly.
    pub fn embedding_model(&self) -> Option<(&EmbeddingModelSet, &Provenance)> {
        self.embedding_model.as_ref().map(|(model, provenance)| (model, provenance))
    }

    /// The book's last `languages_set` and its provenance, if it declared its
    /// languages. Outside the snapshot: no assembly reads them.
    pub fn languages_set(&self) -> Option<(&LanguagesSet, &Provenance)> {
        self.languages.as_ref().map(|(languages, provenance)| (languages, provenance))
    }

    /// The languages declared, or none declared (the defaults) when the book never
    /// declared any: what a rollback restores and `diff` compares through
    /// [`State::source_lang`] and [`State::target_lang`].
    pub fn languages_declared(&self) -> LanguagesSet {
        self.languages.as_ref().map(|(languages, _)| languages.clone()).unwrap_or_default()
    }

    /// The language of the book's source text (a BCP 47 tag): the declared one, else
    /// the profile's (`zh`, `ja`; `und` for any other profile or before the first
    /// config), as [`LanguagesSet::source_in`] says.
    pub fn source_lang(&self) -> &str {
        let profile = self.config().map_or("", |config| config.profile.name.as_str());
        match &self.languages {
            Some((languages, _)) => languages.source_in(profile),
            None => ledger_model::language::profile_language(profile),
        }
    }

    /// The language of the book's renderings (a BCP 47 tag): the declared one, else
    /// `ru` ([`ledger_model::language::TARGET_LANG_DEFAULT`]).
    pub fn target_lang(&self) -> &str {
        match &self.languages {
            Some((languages, _)) => languages.target(),
            None => ledger_model::language::TARGET_LANG_DEFAULT,
        }
    }

    /// The book's proxy template in force, with the provenance of the
    /// `proxy_template_set` that set it; `None` when the proxy uses its built-in
    /// template. In the snapshot: it changes the ID, though no assembly.
    pub fn proxy_template(&self) -> Option<(&str, &Provenance)> {
        self.proxy_template.as_ref().map(|(template, provenance)| (template.as_str(), provenance))
    }

    /// The book's prompt for model job `job` (`extract`, `adjudicate`, `eval`), with
    /// the provenance of the `model_prompt_set` that set it; `None` when the job asks
    /// with its built-in prompt. Outside the snapshot: no assembly reads it.
    pub fn model_prompt(&self, job: &str) -> Option<(&str, &Provenance)> {
        self.model_prompts.get(job).map(|(text, provenance)| (text.as_str(), provenance))
    }

    /// The book's cascading activation as its last `cascade_set` declared it, with
    /// that event's provenance; `None` before any (cascading is off).
    pub fn cascade(&self) -> Option<(&CascadeSet, &Provenance)> {
        self.cascade.as_ref().map(|(set, provenance)| (set, provenance))
    }

    /// The terms always and never offered a demonstration as the last `examples_set`
    /// declared them, with that event's provenance; `None` before any.
    pub fn examples(&self) -> Option<(&ExamplesSet, &Provenance)> {
        self.examples.as_ref().map(|(set, provenance)| (set, provenance))
    }

    /// How many rounds of cascading activation the book declares (0: off).
    pub fn cascade_depth(&self) -> u8 {
        self.cascade.as_ref().map_or(0, |(set, _)| set.depth)
    }

    /// The classes of conflict model party `party` may decide itself (`gender`,
    /// `shared_rendering`), as its last `model_policy_set` says; none without one.
    /// Outside the snapshot.
    pub fn model_decides(&self, party: &str) -> &[String] {
        self.model_policies.get(party).map_or(&[], |(decides, _)| decides.as_slice())
    }

    /// The chapters that have source text, in chapter order, each with its last
    /// `source_set` (which names the text) and its provenance. Outside the snapshot:
    /// no assembly reads them.
    pub fn source_chapters(&self) -> impl Iterator<Item = (&SourceSet, &Provenance)> {
        self.source.values().map(|(source, provenance)| (source, provenance))
    }

    /// Chapter `chapter`'s source text as last set, if it has one.
    pub fn source_chapter(&self, chapter: u32) -> Option<(&SourceSet, &Provenance)> {
        self.source.get(&chapter).map(|(source, provenance)| (source, provenance))
    }

    /// The current configuration, if one was set.
    pub fn config(&self) -> Option<&ConfigSet> {
        self.config.as_ref().map(|(config, _)| config)
    }

    /// The assembly configuration in force (defaults before any `config_set`).
    pub fn assembly(&self) -> AssemblyConfig {
        self.config().map(|config| config.assembly).unwrap_or_default()
    }

    /// Validation settings in force (not rule records: those are [`State::rules`]).
    pub fn validation_rules(&self) -> Rules {
        Rules { min_key_chars: self.assembly().min_key_chars }
    }

    /// Rollback markers so far.
    pub fn rollbacks(&self) -> &[(RollbackMarker, Provenance)] {
        &self.rollbacks
    }

    /// Whether `id` names a record that exists and is not retired.
    pub fn is_active(&self, id: RecordId) -> bool {
        match id.kind() {
            RecordKind::Term => self.terms.get(&id).is_some_and(|term| !term.retired),
            RecordKind::Summary => self.summaries.get(&id).is_some_and(|summary| !summary.retired),
            RecordKind::Candidate => self.candidates.contains_key(&id),
            RecordKind::Rule => self.rules.get(&id).is_some_and(|rule| !rule.retired),
        }
    }

    /// Applies one event. Total: never fails, never panics on content.
    ///
    /// # Panics
    /// If `event.seq` is not the next revision: folding out of order is a programmer
    /// error, not bad input.
    pub fn apply(&mut self, event: &Event) {
        self.apply_owned(event.clone());
    }

    /// [`State::apply`], taking the event by value so its strings move into the state
    /// instead of being copied (the rebuild path).
    ///
    /// # Panics
    /// As [`State::apply`].
    pub fn apply_owned(&mut self, event: Event) {
        assert_eq!(event.seq, self.revision.next(), "events must be applied in order");
        self.revision = event.seq;
        let kind = event.content.body.kind_name();
        let provenance = Provenance {
            seq: event.seq,
            kind,
            actor: event.content.actor,
            source: event.content.source,
            recorded_at_ms: event.content.recorded_at_ms,
        };
        match event.content.body {
            Body::TermPut(put) => match self.terms.get_mut(&put.id) {
                Some(term) => {
                    term.put = put;
                    term.put_by = provenance;
                    term.retired = false;
                }
                None => {
                    let id = put.id;
                    let term =
                        Term { put, put_by: provenance, aliases: BTreeMap::new(), retired: false, verdict: None };
                    self.terms.insert(id, term);
                }
            },
            Body::TermRetired(retired) => {
                if let Some(term) = self.terms.get_mut(&retired.id) {
                    term.retired = true;
                }
            }
            Body::AliasAdded(alias) => {
                if let Some(term) = self.terms.get_mut(&alias.id) {
                    term.aliases.insert(alias.surface.clone(), alias);
                }
            }
            Body::AliasRemoved(alias) => {
                if let Some(term) = self.terms.get_mut(&alias.id) {
                    term.aliases.remove(&alias.surface);
                }
            }
            Body::SummaryPut(put) => match self.summaries.get_mut(&put.id) {
                Some(summary) => {
                    summary.put = put;
                    summary.put_by = provenance;
                    summary.retired = false;
                }
                None => {
                    let summary = Summary { put, put_by: provenance, retired: false };
                    self.summaries.insert(summary.put.id, summary);
                }
            },
            Body::SummaryRetired(retired) => {
                if let Some(summary) = self.summaries.get_mut(&retired.id) {
                    summary.retired = true;
                }
            }
            Body::CandidateProposed(proposed) => match self.candidates.get_mut(&proposed.id) {
                Some(candidate) => {
                    candidate.proposed = proposed;
                }
                None => {
                    let candidate = Candidate { proposed, verdict: None };
                    self.candidates.insert(candidate.proposed.id, candidate);
                }
            },
            Body::DispositionSet(disposition) => {
                let verdict = match disposition.verdict {
                    Verdict::Withdraw => None,
                    verdict => Some((verdict, disposition.reason)),
                };
                if let Some(term) = self.terms.get_mut(&disposition.target) {
                    term.verdict = verdict;
                } else if let Some(rule) = self.rules.get_mut(&disposition.target) {
                    rule.verdict = verdict;
                } else if let Some(candidate) = self.candidates.get_mut(&disposition.target) {
                    candidate.verdict = verdict;
                }
            }
            Body::ConfigSet(config) => self.config = Some((config, provenance)),
            Body::RollbackMarker(marker) => self.rollbacks.push((marker, provenance)),
            Body::RulePut(put) => match self.rules.get_mut(&put.id) {
                Some(rule) => {
                    rule.put = put;
                    rule.put_by = provenance;
                    rule.retired = false;
                }
                None => {
                    let rule = Rule { put, put_by: provenance, retired: false, verdict: None };
                    self.rules.insert(rule.put.id, rule);
                }
            },
            Body::RuleRetired(retired) => {
                if let Some(rule) = self.rules.get_mut(&retired.id) {
                    rule.retired = true;
                }
            }
            Body::GovernanceSet(governance) => self.governance = Some((governance, provenance)),
            Body::ConceptExpected(concept) => {
                let surface = concept.surface.clone();
                self.expected.insert(surface, Expected { concept, put_by: provenance });
            }
            Body::ConceptDropped(dropped) => {
                self.expected.remove(&dropped.surface);
            }
            Body::EmbeddingModelSet(model) => self.embedding_model = Some((model, provenance)),
            Body::LanguagesSet(languages) => self.languages = Some((languages, provenance)),
            Body::SourceSet(source) => match source.text {
                Some(_) => {
                    self.source.insert(source.chapter, (source, provenance));
                }
                None => {
                    self.source.remove(&source.chapter);
                }
            },
            Body::ProxyTemplateSet(set) => self.proxy_template = set.template.map(|template| (template, provenance)),
            Body::CascadeSet(set) => self.cascade = Some((set, provenance)),
            Body::ExamplesSet(set) => self.examples = Some((set, provenance)),
            Body::ModelPolicySet(policy) => {
                if policy.decides.is_empty() {
                    self.model_policies.remove(&policy.party);
                } else {
                    self.model_policies.insert(policy.party, (policy.decides, provenance));
                }
            }
            Body::ModelPromptSet(set) => match set.text {
                Some(text) => {
                    self.model_prompts.insert(set.job, (text, provenance));
                }
                None => {
                    self.model_prompts.remove(&set.job);
                }
            },
        }
    }
}

/// The serde form of a [`Provenance`], whose kind deserializes only as one of
/// [`Body::KIND_NAMES`], so a decoded state holds the same names as a folded one.
#[derive(Deserialize)]
struct ProvenanceWire {
    seq: Seq,
    kind: String,
    actor: String,
    source: String,
    recorded_at_ms: u64,
}

impl<'de> Deserialize<'de> for Provenance {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Provenance, D::Error> {
        let wire = ProvenanceWire::deserialize(deserializer)?;
        let Some(kind) = Body::KIND_NAMES.iter().find(|known| **known == wire.kind) else {
            return Err(serde::de::Error::custom(format!("unknown event kind {:?}", wire.kind)));
        };
        Ok(Provenance {
            seq: wire.seq,
            kind,
            actor: wire.actor,
            source: wire.source,
            recorded_at_ms: wire.recorded_at_ms,
        })
    }
}
