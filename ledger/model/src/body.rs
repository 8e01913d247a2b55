//! Event bodies, schema 2: one variant per kind of change to a book.
//!
//! **The order of variants and of fields is part of the canonical encoding.** New
//! kinds go at the end; a changed kind is a new schema version with an upcast in
//! [`crate::record`], never an edit here (the golden fixtures in `tests/golden/`
//! fail if the bytes move). Schema 2 added the governance fields of the additive
//! memory profile (owners and `release_to` on terms, aliases and summaries; a score
//! on candidates) and five kinds (rules, the book's governance, expected concepts);
//! then the embedding tier: the record a candidate is close to (`related`, and a
//! `duplicate` for a dedupe pair) and the book's embedding model
//! ([`EmbeddingModelSet`]); then the book's languages ([`LanguagesSet`]); then the
//! book's source text, a chapter at a time ([`SourceSet`]); then the book's proxy
//! template ([`ProxyTemplateSet`]). Schema-1 payloads are read through
//! [`crate::schema1`].
//!
//! The same types are the JSON form that `lorebank apply` reads: externally tagged,
//! snake_case (`{"term_put": {"id": "T-1", ...}}`), unknown fields refused.

use serde::{Deserialize, Serialize};

use crate::ids::{Hash32, RecordId, Seq, Window};

/// One change to a book.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// The full content of a term record, new or revised.
    TermPut(TermPut),
    /// A term stops existing from this revision on.
    TermRetired(TermRetired),
    /// A further surface that finds a term.
    AliasAdded(AliasAdded),
    /// An alias stops finding its term.
    AliasRemoved(AliasRemoved),
    /// The full content of a summary, new or revised.
    SummaryPut(SummaryPut),
    /// A summary stops existing from this revision on.
    SummaryRetired(SummaryRetired),
    /// A suggested entry waiting for review.
    CandidateProposed(CandidateProposed),
    /// An editorial verdict on a term or candidate.
    DispositionSet(DispositionSet),
    /// The assembly configuration and normalization profile.
    ConfigSet(ConfigSet),
    /// Marks the end of a batch of compensating events that rolled the book back.
    RollbackMarker(RollbackMarker),
    /// The full content of a rule record (a translation instruction), new or revised.
    RulePut(RulePut),
    /// A rule stops existing from this revision on.
    RuleRetired(RuleRetired),
    /// The book's governance: its conflict policy, parties and record defaults.
    GovernanceSet(GovernanceSet),
    /// A concept the book must cover (the register of expected concepts).
    ConceptExpected(ConceptExpected),
    /// A concept is no longer expected.
    ConceptDropped(ConceptDropped),
    /// The book's embedding model: whose vectors it keeps, and how suggestions are made.
    EmbeddingModelSet(EmbeddingModelSet),
    /// The languages of the book's source text and of its renderings.
    LanguagesSet(LanguagesSet),
    /// A chapter's source text (a blob named by its blake3), or its removal.
    SourceSet(SourceSet),
    /// The template the translation proxy puts the context into a system message
    /// with, or back to the built-in one.
    ProxyTemplateSet(ProxyTemplateSet),
    /// The prompt one of the book's model jobs (`extract`, `adjudicate`, `eval`) asks
    /// with, or back to the built-in one.
    ModelPromptSet(ModelPromptSet),
    /// The classes of conflict a named model party may decide itself when it
    /// adjudicates, or none.
    ModelPolicySet(ModelPolicySet),
    /// Cascading activation: how deep the notes and summaries injected bring further
    /// records, and which records opt out.
    CascadeSet(CascadeSet),
    /// Demonstrations per term (render format 3): terms that are always offered an
    /// example when there is one, and terms that never are.
    ExamplesSet(ExamplesSet),
}

impl Body {
    /// The name of every kind, in the order of the variants ([`Body::kind_name`]).
    pub const KIND_NAMES: [&'static str; 23] = [
        "term_put",
        "term_retired",
        "alias_added",
        "alias_removed",
        "summary_put",
        "summary_retired",
        "candidate_proposed",
        "disposition_set",
        "config_set",
        "rollback_marker",
        "rule_put",
        "rule_retired",
        "governance_set",
        "concept_expected",
        "concept_dropped",
        "embedding_model_set",
        "languages_set",
        "source_set",
        "proxy_template_set",
        "model_prompt_set",
        "model_policy_set",
        "cascade_set",
        "examples_set",
    ];

    /// The snake_case name of the kind, as in the JSON form.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Body::TermPut(_) => "term_put",
            Body::TermRetired(_) => "term_retired",
            Body::AliasAdded(_) => "alias_added",
            Body::AliasRemoved(_) => "alias_removed",
            Body::SummaryPut(_) => "summary_put",
            Body::SummaryRetired(_) => "summary_retired",
            Body::CandidateProposed(_) => "candidate_proposed",
            Body::DispositionSet(_) => "disposition_set",
            Body::ConfigSet(_) => "config_set",
            Body::RollbackMarker(_) => "rollback_marker",
            Body::RulePut(_) => "rule_put",
            Body::RuleRetired(_) => "rule_retired",
            Body::GovernanceSet(_) => "governance_set",
            Body::ConceptExpected(_) => "concept_expected",
            Body::ConceptDropped(_) => "concept_dropped",
            Body::EmbeddingModelSet(_) => "embedding_model_set",
            Body::LanguagesSet(_) => "languages_set",
            Body::SourceSet(_) => "source_set",
            Body::ProxyTemplateSet(_) => "proxy_template_set",
            Body::ModelPromptSet(_) => "model_prompt_set",
            Body::ModelPolicySet(_) => "model_policy_set",
            Body::CascadeSet(_) => "cascade_set",
            Body::ExamplesSet(_) => "examples_set",
        }
    }

    /// The record this event is about, if any.
    pub fn record(&self) -> Option<RecordId> {
        match self {
            Body::TermPut(put) => Some(put.id),
            Body::TermRetired(retired) => Some(retired.id),
            Body::AliasAdded(alias) => Some(alias.id),
            Body::AliasRemoved(alias) => Some(alias.id),
            Body::SummaryPut(put) => Some(put.id),
            Body::SummaryRetired(retired) => Some(retired.id),
            Body::CandidateProposed(candidate) => Some(candidate.id),
            Body::DispositionSet(disposition) => Some(disposition.target),
            Body::RulePut(put) => Some(put.id),
            Body::RuleRetired(retired) => Some(retired.id),
            Body::ConfigSet(_)
            | Body::RollbackMarker(_)
            | Body::GovernanceSet(_)
            | Body::ConceptExpected(_)
            | Body::ConceptDropped(_)
            | Body::EmbeddingModelSet(_)
            | Body::LanguagesSet(_)
            | Body::SourceSet(_)
            | Body::ProxyTemplateSet(_)
            | Body::ModelPromptSet(_)
            | Body::ModelPolicySet(_)
            | Body::CascadeSet(_)
            | Body::ExamplesSet(_) => None,
        }
    }
}

/// The full content of a term record. A put replaces the previous version whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermPut {
    /// `T-…` id, stable across versions.
    pub id: RecordId,
    /// Source surface as written in the original (`萧炎`).
    pub src: String,
    /// Disambiguator when one surface has several meanings; part of the uniqueness key.
    #[serde(default)]
    pub sense: Option<String>,
    /// Target rendering (`Сяо Янь`).
    pub dst: String,
    /// Category tag (`character`, `place`, `technique`, …): lowercase ASCII.
    #[serde(default)]
    pub kind: Option<String>,
    /// Grammatical gender of the rendering.
    #[serde(default)]
    pub gender: Option<Gender>,
    /// Declension forms of `dst` (`Сяо Яня`, `Сяо Яню`).
    #[serde(default)]
    pub decl: Vec<String>,
    /// How the character speaks.
    #[serde(default)]
    pub speech: Option<String>,
    /// Free note for translators.
    #[serde(default)]
    pub note: Option<String>,
    /// Chapters the record applies to (the spoiler gate).
    #[serde(default)]
    pub window: Window,
    /// Review status; only `approved` entries are injected as authoritative.
    #[serde(default)]
    pub status: Status,
    /// Higher wins ties when the budget is tight.
    #[serde(default)]
    pub priority: i32,
    /// Injected into every chunk inside its window, hit or not.
    #[serde(default)]
    pub constant: bool,
    /// Secondary keys that must (or must not) occur in the chunk.
    #[serde(default)]
    pub secondary: Option<SecondaryKeys>,
    /// The record this one replaces from `window.since` on (story-time supersession).
    #[serde(default)]
    pub supersedes: Option<RecordId>,
    /// The party that answers for what the term means (`human:names-editor`); `None`
    /// takes the book's default for its kind ([`GovernanceSet::defaults`]).
    #[serde(default)]
    pub owner: Option<String>,
    /// The role within the owner that a question goes to (`names editor`).
    #[serde(default)]
    pub owner_role: Option<String>,
    /// The parties that may read the term (`*`: every party); `None` takes the book's
    /// default. Absence is not permission: see [`GovernanceSet`].
    #[serde(default)]
    pub release_to: Option<Vec<String>>,
    /// The parties that may read the note, when narrower than the term's; `None`:
    /// those that may read the term.
    #[serde(default)]
    pub note_release_to: Option<Vec<String>>,
}

impl TermPut {
    /// An approved term rendering `src` as `dst` in every chapter, with every other
    /// field empty: the usual start of a put built in code (`TermPut { gender, ..new }`).
    pub fn new(id: RecordId, src: impl Into<String>, dst: impl Into<String>) -> TermPut {
        TermPut {
            id,
            src: src.into(),
            sense: None,
            dst: dst.into(),
            kind: None,
            gender: None,
            decl: Vec::new(),
            speech: None,
            note: None,
            window: Window::default(),
            status: Status::Approved,
            priority: 0,
            constant: false,
            secondary: None,
            supersedes: None,
            owner: None,
            owner_role: None,
            release_to: None,
            note_release_to: None,
        }
    }
}

/// Grammatical gender of a rendering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Gender {
    /// Masculine.
    #[serde(rename = "m")]
    Masculine,
    /// Feminine.
    #[serde(rename = "f")]
    Feminine,
    /// Neuter.
    #[serde(rename = "n")]
    Neuter,
    /// Plural only.
    #[serde(rename = "pl")]
    Plural,
}

/// Review status of a term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Reviewed by a person: injected as authoritative.
    #[default]
    Approved,
    /// Put by a tool and not yet reviewed.
    Auto,
    /// Work in progress.
    Draft,
}

/// Secondary keys: other surfaces whose presence in the chunk decides whether a hit
/// on the primary key counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecondaryKeys {
    /// How the keys combine.
    pub logic: KeyLogic,
    /// The keys, at least one.
    pub keys: Vec<String>,
}

/// How secondary keys combine (SillyTavern World Info semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyLogic {
    /// At least one key occurs.
    AndAny,
    /// Every key occurs.
    AndAll,
    /// No key occurs.
    NotAny,
    /// Not every key occurs.
    NotAll,
}

/// A term is retired: no longer found, injected or counted for uniqueness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermRetired {
    /// The term.
    pub id: RecordId,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A further surface that finds a term.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasAdded {
    /// The term the alias finds.
    pub id: RecordId,
    /// The alias surface.
    pub surface: String,
    /// What kind of alias it is.
    #[serde(default)]
    pub kind: AliasKind,
    /// Chapters the alias applies to; `None` means the term's window.
    #[serde(default)]
    pub window: Option<Window>,
    /// The parties that may find the term by this alias, when narrower than the
    /// term's; `None`: those that may read the term.
    #[serde(default)]
    pub release_to: Option<Vec<String>>,
}

/// What kind of alias a surface is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AliasKind {
    /// A spelling variant.
    #[default]
    Variant,
    /// A nickname.
    Nickname,
    /// A title or form of address.
    Title,
    /// A reading (ruby, kana).
    Reading,
}

/// An alias stops finding its term.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasRemoved {
    /// The term.
    pub id: RecordId,
    /// The alias surface to remove.
    pub surface: String,
}

/// The full content of a summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryPut {
    /// `S-…` id.
    pub id: RecordId,
    /// What the summary covers.
    pub scope: Scope,
    /// The summary text.
    pub text: String,
    /// First chapter at which the summary may be shown (the spoiler gate); `None`
    /// means the chapter after the scope ends (a book summary: always).
    #[serde(default)]
    pub visible_from: Option<u32>,
    /// The party that answers for the summary; `None` takes the book's default.
    #[serde(default)]
    pub owner: Option<String>,
    /// The role within the owner that a question goes to.
    #[serde(default)]
    pub owner_role: Option<String>,
    /// The parties that may read the summary; `None` takes the book's default.
    #[serde(default)]
    pub release_to: Option<Vec<String>>,
}

/// What a summary covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One chapter.
    Chapter(u32),
    /// An arc of chapters `from ..= to`.
    Arc {
        /// First chapter of the arc.
        from: u32,
        /// Last chapter of the arc.
        to: u32,
    },
    /// The whole book.
    Book,
}

/// A summary is retired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryRetired {
    /// The summary.
    pub id: RecordId,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A suggested entry waiting for review. Candidates are never injected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateProposed {
    /// `C-…` id.
    pub id: RecordId,
    /// The source surface found.
    pub surface: String,
    /// A suggested rendering.
    #[serde(default)]
    pub suggested_dst: Option<String>,
    /// Where and why it was found.
    #[serde(default)]
    pub evidence: Option<String>,
    /// What produced it.
    pub origin: Origin,
    /// How far the suggestion may be trusted; embedding suggestions are always low.
    #[serde(default)]
    pub trust: Trust,
    /// How strongly its origin suggests it, in millionths (a cosine similarity of
    /// 0.8731 is 873100): an integer, because hashed data holds no floats.
    #[serde(default)]
    pub score: Option<i32>,
    /// The term the candidate is close to: for an embedding suggestion, the term whose
    /// surfaces the span's vector is near. Accepting such a candidate adds its surface
    /// as an alias of that term instead of making a new one. `None`: a new term.
    #[serde(default)]
    pub related: Option<RecordId>,
    /// With `related`: a second term that is probably the same entity (a `dedupe`
    /// pair, `surface` being this term's source). Accepting the pair records the
    /// reviewer's verdict only; nothing is merged.
    #[serde(default)]
    pub duplicate: Option<RecordId>,
}

impl CandidateProposed {
    /// A candidate of `origin` for `surface`, with nothing suggested, no evidence, no
    /// score and no related term, at the trust its origin allows: low for the
    /// embedding tier, normal for every other origin. The usual start of a candidate
    /// built in code (`CandidateProposed { score, related, ..new }`).
    pub fn new(id: RecordId, surface: impl Into<String>, origin: Origin) -> CandidateProposed {
        CandidateProposed {
            id,
            surface: surface.into(),
            suggested_dst: None,
            evidence: None,
            origin,
            trust: if origin == Origin::Embedding { Trust::Low } else { Trust::Normal },
            score: None,
            related: None,
            duplicate: None,
        }
    }
}

/// What produced a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A name/term extractor (rule-based or LLM).
    Extractor,
    /// The embedding tier.
    Embedding,
    /// The post-check of a translation.
    Postcheck,
    /// An import from another tool.
    Import,
    /// A chat model asked to extract a chapter's names (`lorebank extract`); the
    /// evidence names the model and the prompt version.
    Llm,
}

/// Trust level of a candidate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// A suggestion only (embeddings).
    Low,
    /// An ordinary candidate.
    #[default]
    Normal,
}

/// An editorial verdict on a term, rule or candidate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispositionSet {
    /// The term, rule or candidate judged.
    pub target: RecordId,
    /// The verdict.
    pub verdict: Verdict,
    /// A reason code, lowercase snake_case (`wrong_gender`, `spoiler`).
    pub reason: String,
    /// Free note.
    #[serde(default)]
    pub note: Option<String>,
}

/// An editorial verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Use it.
    Accept,
    /// Use it, marked unverified, and check the output.
    Verify,
    /// Do not use it.
    Reject,
    /// Withdraw the previous verdict: the target is judged by its status alone again.
    Withdraw,
}

/// The assembly configuration and normalization profile of the book.
///
/// In the JSON form every field may be left out: a left-out field keeps its value
/// in the config in force (the defaults before the first config). It is read as
/// [`UNSET_U32`], [`UNSET_U16`] or an empty profile name, and [`ConfigSet::filled_from`]
/// replaces it before the event is judged and encoded, so a stored config is always
/// whole. The bincode form is unchanged: every field is always encoded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigSet {
    /// How contexts are assembled.
    #[serde(default = "AssemblyConfig::unset")]
    pub assembly: AssemblyConfig,
    /// How text is folded before matching.
    #[serde(default = "ProfileRef::unset")]
    pub profile: ProfileRef,
}

/// A left-out `u32` field of a JSON `config_set` (outside every field's limits).
pub const UNSET_U32: u32 = u32::MAX;
/// A left-out `u16` field of a JSON `config_set` (outside every field's limits).
pub const UNSET_U16: u16 = u16::MAX;

fn unset_u32() -> u32 {
    UNSET_U32
}

fn unset_u16() -> u16 {
    UNSET_U16
}

impl ConfigSet {
    /// This config with every left-out field taken from `current` (the config in
    /// force; `None` before the first config, when the defaults apply). A left-out
    /// profile keeps the current profile, name and table; with no current config it
    /// stays unset, and validation refuses it.
    pub fn filled_from(&self, current: Option<&ConfigSet>) -> ConfigSet {
        let base = current.map(|config| config.assembly).unwrap_or_default();
        let a = self.assembly;
        let pick32 = |value: u32, current: u32| if value == UNSET_U32 { current } else { value };
        let pick16 = |value: u16, current: u16| if value == UNSET_U16 { current } else { value };
        let assembly = AssemblyConfig {
            token_budget: pick32(a.token_budget, base.token_budget),
            sticky_chunks: pick32(a.sticky_chunks, base.sticky_chunks),
            min_key_chars: pick32(a.min_key_chars, base.min_key_chars),
            render_format: pick16(a.render_format, base.render_format),
            token_estimator: pick16(a.token_estimator, base.token_estimator),
        };
        let profile = match current {
            Some(current) if self.profile.name.is_empty() => current.profile.clone(),
            _ => self.profile.clone(),
        };
        ConfigSet { assembly, profile }
    }
}

/// How contexts are assembled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssemblyConfig {
    /// Token budget of the glossary block.
    #[serde(default = "unset_u32")]
    pub token_budget: u32,
    /// How many previous chunks of the chapter keep their hits (scene inertia).
    #[serde(default = "unset_u32")]
    pub sticky_chunks: u32,
    /// Shortest key, in characters, allowed without secondary keys.
    #[serde(default = "unset_u32")]
    pub min_key_chars: u32,
    /// Render format version.
    #[serde(default = "unset_u16")]
    pub render_format: u16,
    /// Token estimator version.
    #[serde(default = "unset_u16")]
    pub token_estimator: u16,
}

impl AssemblyConfig {
    /// Every field left out (see [`ConfigSet`]).
    pub fn unset() -> AssemblyConfig {
        AssemblyConfig {
            token_budget: UNSET_U32,
            sticky_chunks: UNSET_U32,
            min_key_chars: UNSET_U32,
            render_format: UNSET_U16,
            token_estimator: UNSET_U16,
        }
    }
}

impl Default for AssemblyConfig {
    fn default() -> AssemblyConfig {
        AssemblyConfig {
            token_budget: 800,
            sticky_chunks: 2,
            min_key_chars: crate::limits::MIN_KEY_CHARS_DEFAULT,
            render_format: 1,
            token_estimator: 1,
        }
    }
}

/// A normalization profile by name and, once built, by the content id of its fold
/// table (stored in the book).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileRef {
    /// `zh`, `ja`, …: lowercase ASCII.
    pub name: String,
    /// Content id of the fold table.
    #[serde(default)]
    pub table: Option<Hash32>,
}

impl ProfileRef {
    /// A left-out profile (see [`ConfigSet`]): no name, no table.
    pub fn unset() -> ProfileRef {
        ProfileRef { name: String::new(), table: None }
    }
}

/// Closes a rollback: the events before it in its batch compensate back to `to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackMarker {
    /// The revision rolled back to.
    pub to: Seq,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The full content of a rule record: a translation instruction or style rule
/// ("师父 is addressed with вы"), injected in its own block of the context in the
/// chunks it is in scope for. A put replaces the previous version whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulePut {
    /// `R-…` id, stable across versions.
    pub id: RecordId,
    /// The instruction, as the translator is to read it.
    pub text: String,
    /// What the rule governs: it is in scope in a chunk when any of these holds. At
    /// least one: a rule without a declared scope silently governs more than its
    /// author meant.
    pub applies_to: Vec<Selector>,
    /// What the rule explicitly does not govern: out of scope when any holds. `None`
    /// means not declared (the profile check asks for it, `[]` included).
    #[serde(default)]
    pub does_not_apply_to: Option<Vec<Selector>>,
    /// Chapters the rule applies to (the spoiler gate).
    #[serde(default)]
    pub window: Window,
    /// Review status; only `approved` rules are injected as authoritative.
    #[serde(default)]
    pub status: Status,
    /// Higher first, when the budget is tight.
    #[serde(default)]
    pub priority: i32,
    /// The party that answers for the rule; `None` takes the book's default.
    #[serde(default)]
    pub owner: Option<String>,
    /// The role within the owner that a question goes to.
    #[serde(default)]
    pub owner_role: Option<String>,
    /// The parties that may read the rule; `None` takes the book's default.
    #[serde(default)]
    pub release_to: Option<Vec<String>>,
}

/// A class of chunks a rule governs or does not.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selector {
    /// The chunk's context calls for a term of this kind (`character`).
    Kind(String),
    /// The chunk's context calls for this term (`T-12`).
    Record(RecordId),
    /// The chunk is in one of these chapters.
    Chapters(Window),
    /// The chunk has dialogue: text inside quotation marks (`“…”`, `「…」`, `『…』`, `"…"`).
    Dialogue,
    /// The chunk has narration: letters outside quotation marks.
    Narration,
}

/// A rule is retired: no longer injected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleRetired {
    /// The rule.
    pub id: RecordId,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The book's governance, declared once, whole: a later `governance_set` replaces it.
///
/// Parties are the readers and owners a book knows (`human:editors`,
/// `tool:pipeline`, `vendor:acme`); a record may name only declared parties. A record
/// is released to the parties its `release_to` names (`*`: every party), else to
/// those of the most specific [`RecordDefaults`] that matches it and sets
/// `release_to`.
/// **Absence is not permission:** once any record, alias or note of the book is
/// restricted (released to some parties and not `*`), a record released to nobody
/// is read only by its owner (and by a reader with the book's full view).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GovernanceSet {
    /// What assembly does when records that cover the same chapter disagree.
    pub conflict_policy: ConflictPolicy,
    /// The parties of the book, `kind:name`, each once.
    #[serde(default)]
    pub parties: Vec<String>,
    /// Defaults of owner, owner role and release by record class, each class once; a
    /// record takes each field it leaves out from the most specific default that
    /// matches it and sets the field: `term:<kind>`, then `term` (`summary`, `rule`),
    /// then `*`.
    #[serde(default)]
    pub defaults: Vec<RecordDefaults>,
}

/// How assembly settles records that cover the same chapter and disagree: two senses
/// of one surface that both pass their gates (an alias of one record equal to
/// another's surface is the same case), or two records in one chunk that render to
/// the same dst. Each decision names the policy in its reason code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictPolicy {
    /// Inject every sense that passes, marked unverified (`sense_collision`); records
    /// rendering the same dst are injected as they are (write-time warns of them).
    /// What a book that declares no policy does.
    Flag,
    /// The record whose secondary keys matched wins over one without secondary keys.
    PreferSpecific,
    /// The record of the highest priority wins.
    PreferPriority,
    /// An approved (or accepted) record wins over an unreviewed one.
    PreferApproved,
}

/// Defaults for a class of records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordDefaults {
    /// Which records: `term:<kind>` (terms of that kind), `term`, `summary`, `rule`,
    /// or `*` (every record).
    pub records: String,
    /// Default owner.
    #[serde(default)]
    pub owner: Option<String>,
    /// Default owner role.
    #[serde(default)]
    pub owner_role: Option<String>,
    /// Default release.
    #[serde(default)]
    pub release_to: Option<Vec<String>>,
}

/// A concept the book must cover: a name from the publisher's cast list, say. An
/// expected concept no record covers is reported by the coverage check; it is never
/// injected and changes no snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConceptExpected {
    /// The source surface the concept is written with.
    pub surface: String,
    /// Its kind, when known (`character`).
    #[serde(default)]
    pub kind: Option<String>,
    /// Free note (where the expectation comes from).
    #[serde(default)]
    pub note: Option<String>,
}

/// A concept leaves the register.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConceptDropped {
    /// The surface, as registered.
    pub surface: String,
}

/// The book's embedding model, declared whole (a later one replaces it): the
/// identity of the model whose vectors the book keeps beside the log, how to load it,
/// and the lowest scores of what it suggests.
///
/// Configuration outside the snapshot: vectors and suggestions change no assembly,
/// so neither does this. The identity fields are those of the `embed` crate's
/// `ModelIdentity`, whose id names the vectors; a model file or tokenizer whose
/// identity differs is refused, never used for this book's vectors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingModelSet {
    /// The name the model was given (`multilingual-e5-small`).
    pub name: String,
    /// blake3 of the ONNX model file's bytes.
    pub model_blake3: Hash32,
    /// blake3 of the `tokenizer.json` bytes; `None` when the graph tokenizes its input.
    #[serde(default)]
    pub tokenizer_blake3: Option<Hash32>,
    /// The number of components of every vector.
    pub dim: u32,
    /// The element type the vectors are read as.
    pub dtype: VectorDtype,
    /// How token vectors become one vector per text.
    pub pooling: EmbeddingPooling,
    /// Whether vectors are scaled to unit length.
    pub normalized: bool,
    /// The ONNX Runtime version that made the identity (`1.31.1`).
    pub runtime_version: String,
    /// The graph output the vectors are read from; `None`: the graph's first output.
    #[serde(default)]
    pub output: Option<String>,
    /// The lowest score, in millionths of a cosine, of a span `suggest` proposes as an
    /// alias of the term it is near.
    pub suggest_min_score: i32,
    /// The lowest score, in millionths, of a pair of terms `dedupe` proposes as
    /// probably the same entity.
    pub dedupe_min_score: i32,
    /// blake3 of each custom-operator library ONNX Runtime registered to run the graph
    /// (onnxruntime-extensions' for a graph that tokenizes with SentencePiece), in
    /// registration order; empty for a graph of standard operators.
    #[serde(default)]
    pub operator_libraries_blake3: Vec<Hash32>,
}

/// The element type of stored vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorDtype {
    /// 32-bit floats.
    F32,
}

/// How an embedding model's token vectors become one vector per text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbeddingPooling {
    /// The mean of the token vectors.
    Mean,
    /// The first token's vector.
    Cls,
    /// The graph pools itself.
    InGraph,
}

/// The languages of the book, declared whole (a later one replaces it): of its source
/// text and of its renderings, each a BCP 47 language tag (RFC 5646) in canonical
/// case (`en`, `zh-Hant`, `pt-BR`; [`crate::language::language_tag`]). A language
/// left out (`None`) is the book's default: the source language of the profile
/// ([`crate::language::profile_language`]: `zh`, `ja`, else `und`) and the target
/// language [`crate::language::TARGET_LANG_DEFAULT`] (`ru`), which is what a book
/// that never declares its languages has.
///
/// Configuration outside the snapshot: no render format injects a language, so the
/// languages change no assembly and no snapshot ID. They name the language sections
/// of the interchange formats that have them (TBX's `xml:lang`), on import and on
/// export.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguagesSet {
    /// The language of the source text (`en`); `None`: the profile's.
    #[serde(default)]
    pub source: Option<String>,
    /// The language of the renderings (`es`); `None`: `ru`.
    #[serde(default)]
    pub target: Option<String>,
}

impl LanguagesSet {
    /// The source language these declare, in a book of profile `profile`.
    pub fn source_in<'l>(&'l self, profile: &str) -> &'l str {
        self.source.as_deref().unwrap_or_else(|| crate::language::profile_language(profile))
    }

    /// The target language these declare.
    pub fn target(&self) -> &str {
        self.target.as_deref().unwrap_or(crate::language::TARGET_LANG_DEFAULT)
    }
}

/// A chapter's source text: the book's own text, stored as a blob named by its blake3
/// ([`source_text_id`]) and written with the batch that first names it. A later
/// `source_set` of the same chapter replaces it; one without `text` removes the
/// chapter's text (then `title` is `None` and `bytes` 0).
///
/// Outside the snapshot: no assembly reads the stored text (a chunk is always given),
/// so a chapter's text changes no snapshot ID. `scan --chapter N` reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSet {
    /// The chapter, from 1.
    pub chapter: u32,
    /// The chapter's title, one line; `None`: untitled.
    #[serde(default)]
    pub title: Option<String>,
    /// The blake3 of the text's UTF-8 bytes, the id of its blob; `None` removes the
    /// chapter's text.
    #[serde(default)]
    pub text: Option<Hash32>,
    /// The length of the text in bytes (0 when removed).
    #[serde(default)]
    pub bytes: u64,
}

/// The id of a chapter's source text: the blake3 of its UTF-8 bytes, as stored.
pub fn source_text_id(text: &[u8]) -> Hash32 {
    Hash32(*blake3::hash(text).as_bytes())
}

/// The book's proxy template: the text the translation proxy puts the assembled
/// context into a tool's system message with, `{context}` (exactly once) standing for
/// the context. `None` goes back to the built-in template (`lorebank-proxy-1`). A later
/// `proxy_template_set` replaces it.
///
/// In the snapshot (its own part, written only while a template is set): a receipt
/// names the snapshot it was assembled at, and so the template its system message was
/// made with, which replays.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyTemplateSet {
    /// The template, `{context}` once in it; `None`: the built-in one.
    #[serde(default)]
    pub template: Option<String>,
}

/// The prompt a model job of the book asks with (configuration outside the snapshot:
/// no assembly reads it). A later `model_prompt_set` of the same job replaces it; the
/// job's answers record which prompt they were asked with (`book@SEQ`, or the
/// built-in version), so a change never loses what an answer was asked with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPromptSet {
    /// The job: `extract`, `adjudicate` or `eval`.
    pub job: String,
    /// The prompt (the system message; for `extract` and `eval`, `{language}` is
    /// replaced by the book's source language); `None`: the built-in one.
    #[serde(default)]
    pub text: Option<String>,
}

/// What a model party of the book may decide itself when it adjudicates
/// (`lorebank adjudicate --actor PARTY`): for each class named, its verdict is applied
/// (a `term_put` of the term it names) instead of filed as a `verify` for a reviewer.
/// Configuration outside the snapshot. A later `model_policy_set` of the same party
/// replaces it; an empty `decides` takes every class back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPolicySet {
    /// The party, `llm:<name>`; it must be one of the governance's parties to decide.
    pub party: String,
    /// The classes it decides: `gender` (it may set a term's gender) and
    /// `shared_rendering` (it may set a new rendering of a term), each once.
    #[serde(default)]
    pub decides: Vec<String>,
}

/// Demonstrations per term (docs/assembly.md, "Demonstrations"): in a book on render
/// format 3, a term in `always` is offered an example whenever the book holds one,
/// whether or not the post-check found it wrong, and a term in `never` is offered
/// none. Not in the snapshot (the examples a chunk was given are recorded by its
/// receipt). A later `examples_set` replaces it whole; two empty lists turn it off.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExamplesSet {
    /// Terms always offered an example when there is one.
    #[serde(default)]
    pub always: Vec<RecordId>,
    /// Terms never offered one.
    #[serde(default)]
    pub never: Vec<RecordId>,
}

/// Cascading activation (docs/assembly.md): after a chunk's direct entries are
/// decided, the notes of the records injected and the summaries shown are scanned with
/// the same automaton, and what they name comes in too, under the same window and
/// verdict rules, to `depth` rounds. In the snapshot while `depth` is above 0. A later
/// `cascade_set` replaces it whole; depth 0 turns it off.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CascadeSet {
    /// Rounds of scanning: 0 off, at most [`crate::limits::CASCADE_DEPTH_MAX`].
    pub depth: u8,
    /// Terms whose note brings nothing in (they never trigger a cascade).
    #[serde(default)]
    pub quiet: Vec<RecordId>,
    /// Terms that come in only by a hit of their own (a cascade never brings them).
    #[serde(default)]
    pub direct_only: Vec<RecordId>,
}
