//! Validation of what an event can tell about itself, alone: id kinds, windows, key
//! lengths, empty or malformed fields, limits. Checks that need the current state
//! (unknown records, uniqueness) belong to `projections`.
//!
//! Every error names the field (`term_put.decl[2]`) and the offending value or limit.
//! Only new events are validated: stored events are never re-judged by newer rules.

use std::fmt;

use crate::body::*;
use crate::ids::{RecordId, RecordKind, Window};
use crate::limits::*;
use crate::record::NewEvent;

/// Why `key` cannot be the key of a document's shelf (a chunk key, `--chunk`), if it
/// cannot: it must be 1 to [`DOCUMENT_KEY_CHARS_MAX`] characters with no control
/// character (newlines, tabs and ESC included). The one rule for every path that
/// takes a key: the ledger's writer, a replica's check, and assembly before it
/// assembles, recorded or not.
pub fn document_key(key: &str) -> Result<(), String> {
    let n_chars = key.chars().count();
    if n_chars == 0 {
        return Err("is empty".into());
    }
    if n_chars > DOCUMENT_KEY_CHARS_MAX {
        return Err(format!("{n_chars} characters, over the limit of {DOCUMENT_KEY_CHARS_MAX}"));
    }
    if let Some(c) = key.chars().find(|c| c.is_control()) {
        return Err(format!("holds the control character {c:?}"));
    }
    Ok(())
}

/// A field of an event that is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted path of the field, e.g. `term_put.window.until`.
    pub field: String,
    /// What is wrong, with the offending value or limit.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

/// Settings that validation depends on and that a book may configure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Shortest key without secondary keys, in characters.
    pub min_key_chars: u32,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules { min_key_chars: MIN_KEY_CHARS_DEFAULT }
    }
}

/// Line and paragraph separators (U+2028, U+2029) and the bidirectional embedding,
/// override and isolate controls (U+202A–U+202E, U+2066–U+2069): not control
/// characters to Unicode, but they break a line or reorder what follows it, so
/// one-line fields refuse them.
pub fn is_line_break_or_bidi(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Actor kinds accepted before the colon of an actor.
pub const ACTOR_KINDS: &[&str] = &["human", "llm", "import", "tool", "system"];

/// The release-list entry that names every party.
pub const EVERY_PARTY: &str = "*";

/// Whether `value` is a party: `kind:name`, the kind a lowercase code
/// (`[a-z][a-z0-9_-]*`), the name non-empty without whitespace or control characters.
pub fn is_party(value: &str) -> bool {
    let Some((kind, name)) = value.split_once(':') else { return false };
    let mut kind_chars = kind.chars();
    kind_chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && kind_chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !name.is_empty()
        && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Whether `value` names a class of records in [`RecordDefaults::records`]: `*`,
/// `term`, `term:<kind>`, `summary` or `rule`.
pub fn is_record_class(value: &str) -> bool {
    match value {
        "*" | "term" | "summary" | "rule" => true,
        _ => value.strip_prefix("term:").is_some_and(|kind| {
            let mut chars = kind.chars();
            chars.next().is_some_and(|c| c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        }),
    }
}

type Check = Result<(), FieldError>;

struct Path<'a> {
    root: &'a str,
}

impl Path<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> FieldError {
        let field = if field.is_empty() { self.root.to_owned() } else { format!("{}.{}", self.root, field) };
        FieldError { field, message: message.into() }
    }

    /// One line of text, no surrounding whitespace, at most `max` characters.
    fn line(&self, field: &str, value: &str, max: usize) -> Check {
        if value.trim().is_empty() {
            return Err(self.err(field, "must not be empty"));
        }
        if value.trim() != value {
            return Err(self.err(field, format!("{value:?} has leading or trailing whitespace")));
        }
        if let Some(bad) = value.chars().find(|c| c.is_control()) {
            return Err(self.err(field, format!("{value:?} contains control character U+{:04X}", bad as u32)));
        }
        if let Some(bad) = value.chars().find(|c| is_line_break_or_bidi(*c)) {
            return Err(self.err(
                field,
                format!(
                    "{value:?} contains U+{:04X}, a line separator or bidirectional control, which one-line fields refuse",
                    bad as u32
                ),
            ));
        }
        let n_chars = value.chars().count();
        if n_chars > max {
            return Err(self.err(field, format!("is {n_chars} characters, more than the limit of {max}")));
        }
        Ok(())
    }

    /// Free text: newlines and tabs allowed, not blank, at most `max` characters.
    fn text(&self, field: &str, value: &str, max: usize) -> Check {
        if value.trim().is_empty() {
            return Err(self.err(field, "must not be empty"));
        }
        if let Some(bad) = value.chars().find(|c| c.is_control() && *c != '\n' && *c != '\t') {
            return Err(self.err(field, format!("contains control character U+{:04X}", bad as u32)));
        }
        let n_chars = value.chars().count();
        if n_chars > max {
            return Err(self.err(field, format!("is {n_chars} characters, more than the limit of {max}")));
        }
        Ok(())
    }

    fn opt_text(&self, field: &str, value: &Option<String>, max: usize) -> Check {
        value.as_deref().map_or(Ok(()), |text| self.text(field, text, max))
    }

    /// A lowercase ASCII code: `[a-z][a-z0-9_-]*`.
    fn code(&self, field: &str, value: &str) -> Check {
        self.line(field, value, LABEL_CHARS_MAX)?;
        let mut chars = value.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
        if !first_ok || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-') {
            return Err(
                self.err(field, format!("{value:?} is not a lowercase code like `character` or `wrong_gender`"))
            );
        }
        Ok(())
    }

    /// A key that the matcher looks for.
    fn key(&self, field: &str, value: &str, min_chars: u32, has_secondary: bool) -> Check {
        self.line(field, value, KEY_CHARS_MAX)?;
        let n_chars = value.chars().count();
        if !has_secondary && (n_chars as u64) < u64::from(min_chars) {
            return Err(self.err(
                field,
                format!(
                    "key {value:?} is {n_chars} character(s), shorter than min_key_chars {min_chars}; a shorter key needs secondary keys"
                ),
            ));
        }
        Ok(())
    }

    fn id(&self, field: &str, id: RecordId, kinds: &[RecordKind]) -> Check {
        if kinds.contains(&id.kind()) {
            return Ok(());
        }
        let expected: Vec<String> = kinds.iter().map(|kind| format!("{}-…", kind.letter())).collect();
        Err(self.err(field, format!("{id} is a {} id, expected {}", id.kind().noun(), expected.join(" or "))))
    }

    /// A party: `kind:name`, kind a lowercase code, name without whitespace.
    fn party(&self, field: &str, value: &str) -> Check {
        self.line(field, value, LABEL_CHARS_MAX)?;
        if !is_party(value) {
            return Err(self.err(
                field,
                format!(
                    "{value:?} is not a party `kind:name` (a lowercase kind like `human` or `vendor`, a colon, a name)"
                ),
            ));
        }
        Ok(())
    }

    fn opt_party(&self, field: &str, value: &Option<String>) -> Check {
        value.as_deref().map_or(Ok(()), |party| self.party(field, party))
    }

    fn opt_label(&self, field: &str, value: &Option<String>) -> Check {
        value.as_deref().map_or(Ok(()), |label| self.line(field, label, LABEL_CHARS_MAX))
    }

    /// A release list: parties or `*`, each once, at most [`RELEASE_PARTIES_MAX`].
    fn release(&self, field: &str, value: &Option<Vec<String>>) -> Check {
        let Some(parties) = value else { return Ok(()) };
        if parties.len() > RELEASE_PARTIES_MAX {
            return Err(self
                .err(field, format!("names {} parties, more than the limit of {RELEASE_PARTIES_MAX}", parties.len())));
        }
        for (party_idx, party) in parties.iter().enumerate() {
            let item = format!("{field}[{party_idx}]");
            if party != EVERY_PARTY {
                self.party(&item, party)?;
            }
            if parties[..party_idx].contains(party) {
                return Err(self.err(&item, format!("{party:?} is named twice")));
            }
        }
        Ok(())
    }

    fn selectors(&self, field: &str, selectors: &[Selector]) -> Check {
        if selectors.len() > SELECTORS_MAX {
            return Err(
                self.err(field, format!("has {} selectors, more than the limit of {SELECTORS_MAX}", selectors.len()))
            );
        }
        for (selector_idx, selector) in selectors.iter().enumerate() {
            let item = format!("{field}[{selector_idx}]");
            match selector {
                Selector::Kind(kind) => self.code(&format!("{item}.kind"), kind)?,
                Selector::Record(id) => self.id(&format!("{item}.record"), *id, &[RecordKind::Term])?,
                Selector::Chapters(window) => self.window(&format!("{item}.chapters"), window)?,
                Selector::Dialogue | Selector::Narration => {}
            }
            if selectors[..selector_idx].contains(selector) {
                return Err(self.err(&item, "is named twice"));
            }
        }
        Ok(())
    }

    /// A score in millionths of a cosine.
    fn score(&self, field: &str, score: i32) -> Check {
        if !(-SCORE_MAX..=SCORE_MAX).contains(&score) {
            return Err(self.err(field, format!("{score} is outside -{SCORE_MAX}..={SCORE_MAX} (millionths)")));
        }
        Ok(())
    }

    /// A text of an embedding model's identity: one line, at most
    /// [`EMBEDDING_TEXT_BYTES_MAX`] bytes.
    fn identity_text(&self, field: &str, value: &str) -> Check {
        self.line(field, value, EMBEDDING_TEXT_BYTES_MAX)?;
        if value.len() > EMBEDDING_TEXT_BYTES_MAX {
            return Err(self.err(
                field,
                format!("is {} bytes of UTF-8, more than the limit of {EMBEDDING_TEXT_BYTES_MAX}", value.len()),
            ));
        }
        Ok(())
    }

    /// A BCP 47 language tag in canonical case ([`crate::language::language_tag`]).
    fn opt_language(&self, field: &str, value: &Option<String>) -> Check {
        value.as_deref().map_or(Ok(()), |tag| crate::language::language_tag(tag).map_err(|why| self.err(field, why)))
    }

    fn chapter(&self, field: &str, chapter: u32) -> Check {
        if chapter == 0 {
            return Err(self.err(field, "chapters are numbered from 1, got 0"));
        }
        Ok(())
    }

    fn window(&self, field: &str, window: &Window) -> Check {
        self.chapter(&format!("{field}.since"), window.since)?;
        if let Some(until) = window.until {
            if until < window.since {
                return Err(self.err(
                    &format!("{field}.until"),
                    format!("window ends at chapter {until}, before it starts at chapter {}", window.since),
                ));
            }
        }
        Ok(())
    }
}

/// Validates the envelope fields of a new event.
pub fn validate_envelope(actor: &str, source: &str) -> Check {
    let path = Path { root: "" };
    let err = |field: &str, message: String| FieldError { field: field.to_owned(), message };
    path.line("actor", actor, LABEL_CHARS_MAX).map_err(|e| err("actor", e.message))?;
    let valid_actor = actor.split_once(':').is_some_and(|(kind, name)| {
        ACTOR_KINDS.contains(&kind) && !name.is_empty() && !name.contains(char::is_whitespace)
    });
    if !valid_actor {
        return Err(err("actor", format!("{actor:?} is not `kind:name` with kind one of {}", ACTOR_KINDS.join(", "))));
    }
    path.line("source", source, LABEL_CHARS_MAX).map_err(|e| err("source", e.message))
}

/// Validates a new event: envelope and body.
pub fn validate_event(event: &NewEvent, rules: &Rules) -> Check {
    validate_envelope(&event.actor, &event.source)?;
    validate_body(&event.body, rules)
}

/// Validates a body on its own.
pub fn validate_body(body: &Body, rules: &Rules) -> Check {
    let path = Path { root: body.kind_name() };
    let p = &path;
    match body {
        Body::TermPut(put) => term_put(p, put, rules),
        Body::TermRetired(retired) => retirement(p, retired.id, RecordKind::Term, &retired.reason),
        Body::AliasAdded(alias) => {
            p.id("id", alias.id, &[RecordKind::Term])?;
            p.key("surface", &alias.surface, rules.min_key_chars, false)?;
            alias.window.as_ref().map_or(Ok(()), |window| p.window("window", window))?;
            p.release("release_to", &alias.release_to)
        }
        Body::AliasRemoved(alias) => {
            p.id("id", alias.id, &[RecordKind::Term])?;
            p.line("surface", &alias.surface, KEY_CHARS_MAX)
        }
        Body::SummaryPut(put) => summary_put(p, put),
        Body::SummaryRetired(retired) => retirement(p, retired.id, RecordKind::Summary, &retired.reason),
        Body::CandidateProposed(candidate) => candidate_proposed(p, candidate),
        Body::DispositionSet(disposition) => {
            p.id("target", disposition.target, &[RecordKind::Term, RecordKind::Rule, RecordKind::Candidate])?;
            p.code("reason", &disposition.reason)?;
            p.opt_text("note", &disposition.note, NOTE_CHARS_MAX)
        }
        Body::ConfigSet(config) => config_set(p, config),
        Body::RollbackMarker(marker) => p.opt_text("reason", &marker.reason, NOTE_CHARS_MAX),
        Body::RulePut(put) => rule_put(p, put),
        Body::RuleRetired(retired) => retirement(p, retired.id, RecordKind::Rule, &retired.reason),
        Body::GovernanceSet(governance) => governance_set(p, governance),
        Body::ConceptExpected(concept) => {
            p.line("surface", &concept.surface, KEY_CHARS_MAX)?;
            if let Some(kind) = &concept.kind {
                p.code("kind", kind)?;
            }
            p.opt_text("note", &concept.note, NOTE_CHARS_MAX)
        }
        Body::ConceptDropped(concept) => p.line("surface", &concept.surface, KEY_CHARS_MAX),
        Body::EmbeddingModelSet(model) => embedding_model_set(p, model),
        Body::LanguagesSet(languages) => {
            p.opt_language("source", &languages.source)?;
            p.opt_language("target", &languages.target)
        }
        Body::SourceSet(source) => source_set(p, source),
        Body::ProxyTemplateSet(set) => match &set.template {
            Some(template) => proxy_template(p, template),
            None => Ok(()),
        },
        Body::CascadeSet(set) => cascade_set(p, set),
        Body::ExamplesSet(set) => examples_set(p, set),
        Body::ModelPolicySet(policy) => {
            p.party("party", &policy.party)?;
            if !policy.party.starts_with("llm:") {
                return Err(p.err("party", "a model party is `llm:<name>`"));
            }
            for (n, class) in policy.decides.iter().enumerate() {
                if !MODEL_DECIDES.contains(&class.as_str()) {
                    return Err(p.err(
                        "decides",
                        format!("{class:?} is not a class a model may decide ({})", MODEL_DECIDES.join(", ")),
                    ));
                }
                if policy.decides[..n].contains(class) {
                    return Err(p.err("decides", format!("{class:?} is named twice")));
                }
            }
            Ok(())
        }
        Body::ModelPromptSet(set) => {
            if !MODEL_JOBS.contains(&set.job.as_str()) {
                return Err(p.err("job", format!("{:?} is not a model job ({})", set.job, MODEL_JOBS.join(", "))));
            }
            match &set.text {
                Some(text) => p.text("text", text, MODEL_PROMPT_CHARS_MAX),
                None => Ok(()),
            }
        }
    }
}

/// A proxy template: free text of at most [`PROXY_TEMPLATE_CHARS_MAX`] characters
/// (newlines and tabs, no other control character) holding `{context}` exactly once.
fn proxy_template(p: &Path<'_>, template: &str) -> Check {
    p.text("template", template, PROXY_TEMPLATE_CHARS_MAX)?;
    match template.matches("{context}").count() {
        1 => Ok(()),
        0 => Err(p.err("template", "must contain `{context}`, where the context goes")),
        n => Err(p.err("template", format!("contains `{{context}}` {n} times, not once"))),
    }
}

/// A chapter's text: a chapter from 1, a one-line title, and a text of 1 to
/// [`SOURCE_TEXT_BYTES_MAX`] bytes; a removal (no `text`) names no title and 0 bytes.
fn source_set(p: &Path<'_>, source: &SourceSet) -> Check {
    p.chapter("chapter", source.chapter)?;
    match source.text {
        Some(_) => {
            if let Some(title) = &source.title {
                p.line("title", title, SOURCE_TITLE_CHARS_MAX)?;
            }
            if source.bytes == 0 {
                return Err(p.err("bytes", "a chapter's text must not be empty (leave out `text` to remove it)"));
            }
            if source.bytes > SOURCE_TEXT_BYTES_MAX {
                return Err(
                    p.err("bytes", format!("{} bytes, more than the limit of {SOURCE_TEXT_BYTES_MAX}", source.bytes))
                );
            }
            Ok(())
        }
        None => {
            if source.title.is_some() {
                return Err(p.err("title", "a removal (no `text`) names no title"));
            }
            if source.bytes != 0 {
                return Err(p.err("bytes", format!("a removal (no `text`) has 0 bytes, got {}", source.bytes)));
            }
            Ok(())
        }
    }
}

/// Checks a retirement: the id of a record of `kind`, and its reason if one is given.
fn retirement(p: &Path<'_>, id: RecordId, kind: RecordKind, reason: &Option<String>) -> Check {
    p.id("id", id, &[kind])?;
    p.opt_text("reason", reason, NOTE_CHARS_MAX)
}

/// Checks a term: its keys, forms, window, secondary keys, supersession and owners.
fn term_put(p: &Path<'_>, put: &TermPut, rules: &Rules) -> Check {
    p.id("id", put.id, &[RecordKind::Term])?;
    let has_secondary = put.secondary.is_some();
    p.key("src", &put.src, rules.min_key_chars, has_secondary)?;
    if let Some(sense) = &put.sense {
        p.line("sense", sense, KEY_CHARS_MAX)?;
    }
    p.line("dst", &put.dst, LABEL_CHARS_MAX)?;
    if let Some(kind) = &put.kind {
        p.code("kind", kind)?;
    }
    if put.decl.len() > DECL_FORMS_MAX {
        return Err(p.err("decl", format!("has {} forms, more than the limit of {DECL_FORMS_MAX}", put.decl.len())));
    }
    for (form_idx, form) in put.decl.iter().enumerate() {
        let field = format!("decl[{form_idx}]");
        p.line(&field, form, LABEL_CHARS_MAX)?;
        if form.contains([',', ';']) {
            return Err(p.err(&field, format!("{form:?} contains `,` or `;`, which separate forms when rendered")));
        }
    }
    p.opt_text("speech", &put.speech, NOTE_CHARS_MAX)?;
    p.opt_text("note", &put.note, NOTE_CHARS_MAX)?;
    p.window("window", &put.window)?;
    if let Some(secondary) = &put.secondary {
        if secondary.keys.is_empty() {
            return Err(p.err("secondary.keys", "must list at least one key"));
        }
        if secondary.keys.len() > SECONDARY_KEYS_MAX {
            return Err(p.err(
                "secondary.keys",
                format!("has {} keys, more than the limit of {SECONDARY_KEYS_MAX}", secondary.keys.len()),
            ));
        }
        for (key_idx, key) in secondary.keys.iter().enumerate() {
            p.line(&format!("secondary.keys[{key_idx}]"), key, KEY_CHARS_MAX)?;
        }
    }
    if let Some(old) = put.supersedes {
        p.id("supersedes", old, &[RecordKind::Term])?;
        if old == put.id {
            return Err(p.err("supersedes", format!("{old} cannot supersede itself")));
        }
    }
    p.opt_party("owner", &put.owner)?;
    p.opt_label("owner_role", &put.owner_role)?;
    p.release("release_to", &put.release_to)?;
    p.release("note_release_to", &put.note_release_to)
}

/// Checks a summary: its scope (an arc ends after it starts), text and owners.
fn summary_put(p: &Path<'_>, put: &SummaryPut) -> Check {
    p.id("id", put.id, &[RecordKind::Summary])?;
    match put.scope {
        Scope::Chapter(chapter) => p.chapter("scope.chapter", chapter)?,
        Scope::Arc { from, to } => {
            p.chapter("scope.arc.from", from)?;
            if to < from {
                return Err(p.err("scope.arc.to", format!("arc ends at chapter {to}, before it starts at {from}")));
            }
        }
        Scope::Book => {}
    }
    p.text("text", &put.text, SUMMARY_CHARS_MAX)?;
    put.visible_from.map_or(Ok(()), |chapter| p.chapter("visible_from", chapter))?;
    p.opt_party("owner", &put.owner)?;
    p.opt_label("owner_role", &put.owner_role)?;
    p.release("release_to", &put.release_to)
}

/// Checks a candidate: an embedding's trust is low, a duplicate names the pair's first term in `related`.
fn candidate_proposed(p: &Path<'_>, candidate: &CandidateProposed) -> Check {
    p.id("id", candidate.id, &[RecordKind::Candidate])?;
    p.line("surface", &candidate.surface, KEY_CHARS_MAX)?;
    if let Some(dst) = &candidate.suggested_dst {
        p.line("suggested_dst", dst, LABEL_CHARS_MAX)?;
    }
    p.opt_text("evidence", &candidate.evidence, NOTE_CHARS_MAX)?;
    if candidate.origin == Origin::Embedding && candidate.trust != Trust::Low {
        return Err(p.err("trust", "embedding suggestions must have trust `low`"));
    }
    if let Some(score) = candidate.score {
        p.score("score", score)?;
    }
    if let Some(related) = candidate.related {
        p.id("related", related, &[RecordKind::Term])?;
    }
    if let Some(duplicate) = candidate.duplicate {
        p.id("duplicate", duplicate, &[RecordKind::Term])?;
        match candidate.related {
            None => return Err(p.err("duplicate", "names the second term of a pair: `related` must name the first")),
            Some(related) if related == duplicate => {
                return Err(p.err("duplicate", format!("{duplicate} cannot be a duplicate of itself")))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Checks the configuration: every assembly setting within its limits.
fn config_set(p: &Path<'_>, config: &ConfigSet) -> Check {
    let assembly = &config.assembly;
    if !(1..=TOKEN_BUDGET_MAX).contains(&assembly.token_budget) {
        return Err(
            p.err("assembly.token_budget", format!("{} is outside 1..={TOKEN_BUDGET_MAX}", assembly.token_budget))
        );
    }
    if assembly.sticky_chunks > STICKY_CHUNKS_MAX {
        return Err(p.err(
            "assembly.sticky_chunks",
            format!("{} is more than the limit of {STICKY_CHUNKS_MAX}", assembly.sticky_chunks),
        ));
    }
    if !(1..=MIN_KEY_CHARS_MAX).contains(&assembly.min_key_chars) {
        return Err(
            p.err("assembly.min_key_chars", format!("{} is outside 1..={MIN_KEY_CHARS_MAX}", assembly.min_key_chars))
        );
    }
    if assembly.render_format == 0 {
        return Err(p.err("assembly.render_format", "versions start at 1"));
    }
    if assembly.token_estimator == 0 {
        return Err(p.err("assembly.token_estimator", "versions start at 1"));
    }
    p.code("profile.name", &config.profile.name)
}

/// Checks a rule: its text, a declared scope, its window and owners.
fn rule_put(p: &Path<'_>, put: &RulePut) -> Check {
    p.id("id", put.id, &[RecordKind::Rule])?;
    p.text("text", &put.text, RULE_CHARS_MAX)?;
    if put.applies_to.is_empty() {
        return Err(p.err(
            "applies_to",
            "must name at least one selector: a rule without a declared scope governs more than its author meant",
        ));
    }
    p.selectors("applies_to", &put.applies_to)?;
    if let Some(excluded) = &put.does_not_apply_to {
        p.selectors("does_not_apply_to", excluded)?;
    }
    p.window("window", &put.window)?;
    p.opt_party("owner", &put.owner)?;
    p.opt_label("owner_role", &put.owner_role)?;
    p.release("release_to", &put.release_to)
}

/// Checks the governance: parties declared once, defaults for classes of records naming only declared parties.
fn governance_set(p: &Path<'_>, governance: &GovernanceSet) -> Check {
    if governance.parties.len() > PARTIES_MAX {
        return Err(p.err(
            "parties",
            format!("declares {} parties, more than the limit of {PARTIES_MAX}", governance.parties.len()),
        ));
    }
    for (party_idx, party) in governance.parties.iter().enumerate() {
        let field = format!("parties[{party_idx}]");
        p.party(&field, party)?;
        if governance.parties[..party_idx].contains(party) {
            return Err(p.err(&field, format!("{party:?} is declared twice")));
        }
    }
    if governance.defaults.len() > RECORD_DEFAULTS_MAX {
        return Err(p.err(
            "defaults",
            format!("has {} entries, more than the limit of {RECORD_DEFAULTS_MAX}", governance.defaults.len()),
        ));
    }
    let declared = |party: &str| governance.parties.iter().any(|known| known == party);
    for (default_idx, default) in governance.defaults.iter().enumerate() {
        let field = |name: &str| format!("defaults[{default_idx}].{name}");
        if !is_record_class(&default.records) {
            return Err(p.err(
                &field("records"),
                format!(
                    "{:?} is not a class of records: `*`, `term`, `term:<kind>`, `summary` or `rule`",
                    default.records
                ),
            ));
        }
        if governance.defaults[..default_idx].iter().any(|earlier| earlier.records == default.records) {
            return Err(p.err(&field("records"), format!("{:?} has defaults twice", default.records)));
        }
        p.opt_party(&field("owner"), &default.owner)?;
        p.opt_label(&field("owner_role"), &default.owner_role)?;
        p.release(&field("release_to"), &default.release_to)?;
        if let Some(owner) = default.owner.as_deref().filter(|owner| !declared(owner)) {
            return Err(p.err(&field("owner"), format!("{owner:?} is not one of the declared parties")));
        }
        for (party_idx, party) in default.release_to.iter().flatten().enumerate() {
            if party != EVERY_PARTY && !declared(party) {
                return Err(p.err(
                    &field(&format!("release_to[{party_idx}]")),
                    format!("{party:?} is not one of the declared parties"),
                ));
            }
        }
    }
    Ok(())
}

/// Checks an embedding model: its identity texts, dim, scores and operator libraries within their limits.
fn embedding_model_set(p: &Path<'_>, model: &EmbeddingModelSet) -> Check {
    p.identity_text("name", &model.name)?;
    if !(1..=EMBEDDING_DIM_MAX).contains(&model.dim) {
        return Err(p.err("dim", format!("{} is outside 1..={EMBEDDING_DIM_MAX}", model.dim)));
    }
    p.identity_text("runtime_version", &model.runtime_version)?;
    p.opt_label("output", &model.output)?;
    p.score("suggest_min_score", model.suggest_min_score)?;
    p.score("dedupe_min_score", model.dedupe_min_score)?;
    if model.operator_libraries_blake3.len() > EMBEDDING_OPERATOR_LIBRARIES_MAX {
        return Err(p.err(
            "operator_libraries_blake3",
            format!(
                "{} libraries, more than the limit of {EMBEDDING_OPERATOR_LIBRARIES_MAX}",
                model.operator_libraries_blake3.len()
            ),
        ));
    }
    Ok(())
}

/// A `cascade_set`: a depth of 0 to [`CASCADE_DEPTH_MAX`], and lists of distinct term
/// ids, each at most [`CASCADE_LIST_MAX`] long.
fn cascade_set(p: &Path<'_>, set: &CascadeSet) -> Check {
    if set.depth > CASCADE_DEPTH_MAX {
        return Err(p.err("depth", format!("{} is deeper than {CASCADE_DEPTH_MAX} (0 turns cascading off)", set.depth)));
    }
    for (field, list) in [("quiet", &set.quiet), ("direct_only", &set.direct_only)] {
        if list.len() > CASCADE_LIST_MAX {
            return Err(p.err(field, format!("{} terms, at most {CASCADE_LIST_MAX}", list.len())));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (n, id) in list.iter().enumerate() {
            p.id(&format!("{field}[{n}]"), *id, &[RecordKind::Term])?;
            if !seen.insert(*id) {
                return Err(p.err(&format!("{field}[{n}]"), format!("{id} is named twice")));
            }
        }
    }
    Ok(())
}

/// An `examples_set`: lists of distinct term ids, each at most
/// [`EXAMPLES_LIST_MAX`] long, no term in both.
fn examples_set(p: &Path<'_>, set: &ExamplesSet) -> Check {
    let mut seen = std::collections::BTreeMap::new();
    for (field, list) in [("always", &set.always), ("never", &set.never)] {
        if list.len() > EXAMPLES_LIST_MAX {
            return Err(p.err(field, format!("{} terms, at most {EXAMPLES_LIST_MAX}", list.len())));
        }
        for (n, id) in list.iter().enumerate() {
            p.id(&format!("{field}[{n}]"), *id, &[RecordKind::Term])?;
            if let Some(before) = seen.insert(*id, field) {
                let also = if before == field { String::new() } else { format!(" (also in {before})") };
                return Err(p.err(&format!("{field}[{n}]"), format!("{id} is named twice{also}")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(src: &str) -> TermPut {
        TermPut {
            kind: Some("character".to_owned()),
            gender: Some(Gender::Masculine),
            decl: vec!["Сяо Яня".to_owned()],
            ..TermPut::new("T-1".parse().unwrap(), src, "Сяо Янь")
        }
    }

    fn field_of(body: Body) -> String {
        validate_body(&body, &Rules::default()).unwrap_err().field
    }

    #[test]
    fn a_good_term_passes() {
        assert_eq!(validate_body(&Body::TermPut(term("萧炎")), &Rules::default()), Ok(()));
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(field_of(Body::TermPut(term("炎"))), "term_put.src");
        assert_eq!(field_of(Body::TermPut(TermPut { dst: " ".into(), ..term("萧炎") })), "term_put.dst");
        assert_eq!(
            field_of(Body::TermPut(TermPut { window: Window { since: 5, until: Some(4) }, ..term("萧炎") })),
            "term_put.window.until"
        );
        assert_eq!(
            field_of(Body::TermPut(TermPut { window: Window { since: 0, until: None }, ..term("萧炎") })),
            "term_put.window.since"
        );
        assert_eq!(field_of(Body::TermPut(TermPut { decl: vec!["a, b".into()], ..term("萧炎") })), "term_put.decl[0]");
        assert_eq!(field_of(Body::TermPut(TermPut { id: "S-1".parse().unwrap(), ..term("萧炎") })), "term_put.id");
        assert_eq!(
            field_of(Body::TermPut(TermPut { supersedes: Some("T-1".parse().unwrap()), ..term("萧炎") })),
            "term_put.supersedes"
        );
        assert_eq!(
            field_of(Body::TermPut(TermPut { src: "x".repeat(KEY_CHARS_MAX + 1), ..term("萧炎") })),
            "term_put.src"
        );
    }

    #[test]
    fn a_one_character_key_needs_secondary_keys() {
        let with_secondary = TermPut {
            secondary: Some(SecondaryKeys { logic: KeyLogic::AndAny, keys: vec!["灶王".into()] }),
            ..term("灶")
        };
        assert_eq!(validate_body(&Body::TermPut(with_secondary), &Rules::default()), Ok(()));
        assert!(validate_body(&Body::TermPut(term("灶")), &Rules::default()).is_err());
        assert_eq!(validate_body(&Body::TermPut(term("灶")), &Rules { min_key_chars: 1 }), Ok(()));
    }

    #[test]
    fn one_line_fields_refuse_line_separators_and_bidi_controls() {
        for bad in ['\u{2028}', '\u{2029}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
            let src = format!("萧{bad}炎");
            let error = validate_body(&Body::TermPut(term(&src)), &Rules::default()).unwrap_err();
            assert_eq!(error.field, "term_put.src", "{bad:?}");
            assert!(error.message.contains(&format!("U+{:04X}", bad as u32)), "{error}");
            let dst = TermPut { dst: format!("Сяо{bad}Янь"), ..term("萧炎") };
            assert_eq!(field_of(Body::TermPut(dst)), "term_put.dst");
        }
        // Free text keeps its line breaks.
        let note = TermPut { note: Some("герой\u{2028}клана".into()), ..term("萧炎") };
        assert_eq!(validate_body(&Body::TermPut(note), &Rules::default()), Ok(()));
    }

    fn candidate() -> CandidateProposed {
        CandidateProposed {
            id: "C-1".parse().unwrap(),
            surface: "炎儿".into(),
            suggested_dst: None,
            evidence: None,
            origin: Origin::Embedding,
            trust: Trust::Low,
            score: Some(912_000),
            related: Some("T-1".parse().unwrap()),
            duplicate: None,
        }
    }

    #[test]
    fn a_candidate_names_terms_as_related_and_a_duplicate_only_with_related() {
        assert_eq!(validate_body(&Body::CandidateProposed(candidate()), &Rules::default()), Ok(()));
        let pair = CandidateProposed { duplicate: Some("T-2".parse().unwrap()), ..candidate() };
        assert_eq!(validate_body(&Body::CandidateProposed(pair), &Rules::default()), Ok(()));
        let bad = |candidate: CandidateProposed| field_of(Body::CandidateProposed(candidate));
        assert_eq!(
            bad(CandidateProposed { related: Some("S-1".parse().unwrap()), ..candidate() }),
            "candidate_proposed.related"
        );
        assert_eq!(
            bad(CandidateProposed { related: None, duplicate: Some("T-2".parse().unwrap()), ..candidate() }),
            "candidate_proposed.duplicate"
        );
        assert_eq!(
            bad(CandidateProposed { duplicate: Some("T-1".parse().unwrap()), ..candidate() }),
            "candidate_proposed.duplicate"
        );
        assert_eq!(bad(CandidateProposed { trust: Trust::Normal, ..candidate() }), "candidate_proposed.trust");
        assert_eq!(bad(CandidateProposed { score: Some(SCORE_MAX + 1), ..candidate() }), "candidate_proposed.score");
    }

    #[test]
    fn a_new_candidate_has_the_trust_its_origin_allows() {
        for origin in [Origin::Extractor, Origin::Embedding, Origin::Postcheck, Origin::Import] {
            let candidate = CandidateProposed::new("C-1".parse().unwrap(), "炎儿", origin);
            assert_eq!(candidate.trust == Trust::Low, origin == Origin::Embedding, "{origin:?}");
            assert_eq!(validate_body(&Body::CandidateProposed(candidate), &Rules::default()), Ok(()), "{origin:?}");
        }
    }

    #[test]
    fn languages_name_their_bad_field() {
        let languages = |source: Option<&str>, target: Option<&str>| {
            Body::LanguagesSet(LanguagesSet { source: source.map(Into::into), target: target.map(Into::into) })
        };
        assert_eq!(validate_body(&languages(Some("en"), Some("es")), &Rules::default()), Ok(()));
        assert_eq!(validate_body(&languages(None, None), &Rules::default()), Ok(()));
        assert_eq!(field_of(languages(Some("en_US"), Some("es"))), "languages_set.source");
        assert_eq!(field_of(languages(Some("en"), Some("ES"))), "languages_set.target");
        let error = validate_body(&languages(None, Some("")), &Rules::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "field `languages_set.target`: must not be empty: a BCP 47 language tag like `en`, `zh-Hant` or `pt-BR`"
        );
    }

    #[test]
    fn a_cascade_set_names_its_bad_field() {
        let set = |depth: u8, quiet: &[&str], direct_only: &[&str]| {
            let ids = |list: &[&str]| list.iter().map(|id| id.parse::<RecordId>().unwrap()).collect();
            Body::CascadeSet(CascadeSet { depth, quiet: ids(quiet), direct_only: ids(direct_only) })
        };
        assert_eq!(field_of(set(4, &[], &[])), "cascade_set.depth");
        assert_eq!(field_of(set(1, &["R-1"], &[])), "cascade_set.quiet[0]");
        assert_eq!(field_of(set(1, &["T-1"], &["T-2", "T-2"])), "cascade_set.direct_only[1]");
        assert!(validate_body(&set(3, &["T-1"], &["T-1"]), &Rules::default()).is_ok());
        assert!(validate_body(&set(0, &[], &[]), &Rules::default()).is_ok());
    }

    #[test]
    fn a_model_policy_set_names_its_bad_field() {
        let set = |party: &str, decides: &[&str]| {
            Body::ModelPolicySet(ModelPolicySet {
                party: party.into(),
                decides: decides.iter().map(|class| (*class).to_owned()).collect(),
            })
        };
        assert_eq!(field_of(set("human:anna", &["gender"])), "model_policy_set.party");
        assert_eq!(field_of(set("llm", &["gender"])), "model_policy_set.party");
        assert_eq!(field_of(set("llm:judge", &["sense_collision"])), "model_policy_set.decides");
        assert_eq!(field_of(set("llm:judge", &["gender", "gender"])), "model_policy_set.decides");
        assert!(validate_body(&set("llm:judge", &["gender", "shared_rendering"]), &Rules::default()).is_ok());
        assert!(validate_body(&set("llm:judge", &[]), &Rules::default()).is_ok());
    }

    #[test]
    fn a_model_prompt_set_names_its_bad_field() {
        let set = |job: &str, text: Option<&str>| {
            Body::ModelPromptSet(ModelPromptSet { job: job.into(), text: text.map(Into::into) })
        };
        assert_eq!(field_of(set("translate", None)), "model_prompt_set.job");
        assert_eq!(field_of(set("extract", Some("bell\u{7}"))), "model_prompt_set.text");
        assert_eq!(field_of(set("extract", Some("   "))), "model_prompt_set.text");
        let long = "字".repeat(MODEL_PROMPT_CHARS_MAX + 1);
        assert_eq!(field_of(set("eval", Some(&long))), "model_prompt_set.text");
        for job in MODEL_JOBS {
            assert!(validate_body(&set(job, Some("List the names.\n\tAs JSON.")), &Rules::default()).is_ok());
            assert!(validate_body(&set(job, None), &Rules::default()).is_ok());
        }
    }

    #[test]
    fn a_proxy_template_set_names_its_bad_field() {
        let set =
            |template: Option<&str>| Body::ProxyTemplateSet(ProxyTemplateSet { template: template.map(Into::into) });
        assert_eq!(validate_body(&set(None), &Rules::default()), Ok(()));
        assert_eq!(validate_body(&set(Some("Глоссарий:\n\t{context}\n")), &Rules::default()), Ok(()));
        assert_eq!(field_of(set(Some("no context here"))), "proxy_template_set.template");
        assert_eq!(field_of(set(Some("{context} and {context}"))), "proxy_template_set.template");
        assert_eq!(field_of(set(Some("bell\u{7}{context}"))), "proxy_template_set.template");
        assert_eq!(field_of(set(Some("\r\n{context}"))), "proxy_template_set.template");
        assert_eq!(field_of(set(Some("   "))), "proxy_template_set.template");
        let long = format!("{}{{context}}", "я".repeat(PROXY_TEMPLATE_CHARS_MAX - 8));
        assert_eq!(field_of(set(Some(&long))), "proxy_template_set.template");
        let longest = format!("{}{{context}}", "я".repeat(PROXY_TEMPLATE_CHARS_MAX - 9));
        assert_eq!(validate_body(&set(Some(&longest)), &Rules::default()), Ok(()));
    }

    #[test]
    fn a_source_set_names_its_bad_field() {
        let source = |chapter: u32, title: Option<&str>, text: Option<crate::Hash32>, bytes: u64| {
            Body::SourceSet(SourceSet { chapter, title: title.map(Into::into), text, bytes })
        };
        let text = Some(crate::Hash32([7; 32]));
        assert_eq!(validate_body(&source(1, Some("第一章 风起"), text, 12), &Rules::default()), Ok(()));
        assert_eq!(validate_body(&source(3, None, None, 0), &Rules::default()), Ok(()));
        assert_eq!(field_of(source(0, None, text, 12)), "source_set.chapter");
        assert_eq!(field_of(source(1, Some("a\nb"), text, 12)), "source_set.title");
        assert_eq!(field_of(source(1, Some(&"章".repeat(SOURCE_TITLE_CHARS_MAX + 1)), text, 12)), "source_set.title");
        assert_eq!(field_of(source(1, None, text, 0)), "source_set.bytes");
        assert_eq!(field_of(source(1, None, None, 5)), "source_set.bytes");
        assert_eq!(field_of(source(1, Some("t"), None, 0)), "source_set.title");
        let error = validate_body(&source(2, None, text, SOURCE_TEXT_BYTES_MAX + 1), &Rules::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "field `source_set.bytes`: {} bytes, more than the limit of {SOURCE_TEXT_BYTES_MAX}",
                SOURCE_TEXT_BYTES_MAX + 1
            )
        );
        assert_eq!(validate_body(&source(2, None, text, SOURCE_TEXT_BYTES_MAX), &Rules::default()), Ok(()));
    }

    #[test]
    fn an_embedding_model_names_its_bad_field() {
        let model = EmbeddingModelSet {
            name: "lorebank-tiny".into(),
            model_blake3: crate::Hash32([1; 32]),
            tokenizer_blake3: None,
            dim: 32,
            dtype: VectorDtype::F32,
            pooling: EmbeddingPooling::Mean,
            normalized: true,
            runtime_version: "1.31.1".into(),
            output: Some("last_hidden_state".into()),
            suggest_min_score: 800_000,
            dedupe_min_score: 900_000,
            operator_libraries_blake3: vec![crate::Hash32([2; 32])],
        };
        assert_eq!(validate_body(&Body::EmbeddingModelSet(model.clone()), &Rules::default()), Ok(()));
        let bad = |model: EmbeddingModelSet| field_of(Body::EmbeddingModelSet(model));
        assert_eq!(bad(EmbeddingModelSet { dim: 0, ..model.clone() }), "embedding_model_set.dim");
        assert_eq!(bad(EmbeddingModelSet { dim: EMBEDDING_DIM_MAX + 1, ..model.clone() }), "embedding_model_set.dim");
        assert_eq!(bad(EmbeddingModelSet { name: " ".into(), ..model.clone() }), "embedding_model_set.name");
        // 100 characters of 3 bytes: within the character limit, over the byte limit.
        let error = validate_body(
            &Body::EmbeddingModelSet(EmbeddingModelSet { name: "模".repeat(100), ..model.clone() }),
            &Rules::default(),
        )
        .unwrap_err();
        assert_eq!(error.field, "embedding_model_set.name");
        assert!(error.message.contains("300 bytes"), "{error}");
        assert_eq!(
            bad(EmbeddingModelSet { runtime_version: String::new(), ..model.clone() }),
            "embedding_model_set.runtime_version"
        );
        assert_eq!(
            bad(EmbeddingModelSet { output: Some("a\nb".into()), ..model.clone() }),
            "embedding_model_set.output"
        );
        assert_eq!(
            bad(EmbeddingModelSet { suggest_min_score: -SCORE_MAX - 1, ..model.clone() }),
            "embedding_model_set.suggest_min_score"
        );
        assert_eq!(
            bad(EmbeddingModelSet { dedupe_min_score: SCORE_MAX + 1, ..model.clone() }),
            "embedding_model_set.dedupe_min_score"
        );
        let libraries = vec![crate::Hash32([2; 32]); EMBEDDING_OPERATOR_LIBRARIES_MAX + 1];
        assert_eq!(
            bad(EmbeddingModelSet { operator_libraries_blake3: libraries, ..model }),
            "embedding_model_set.operator_libraries_blake3"
        );
    }

    #[test]
    fn actors_are_kind_colon_name() {
        assert_eq!(validate_envelope("human:anna", "cli"), Ok(()));
        assert_eq!(validate_envelope("import:galtransl", "glossary.tsv"), Ok(()));
        for bad in ["anna", "robot:x", "human:", "human:a b", ""] {
            assert_eq!(validate_envelope(bad, "cli").unwrap_err().field, "actor", "{bad:?}");
        }
        assert_eq!(validate_envelope("human:anna", "").unwrap_err().field, "source");
    }
}
