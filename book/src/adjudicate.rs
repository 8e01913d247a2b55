//! Batch adjudication (`lorebank adjudicate`): the open conflicts of a chapter put to
//! a chat model once, each answer filed as a reviewer's item, never as a change.
//!
//! **Conflicts** of a chapter, read from its latest recorded receipts (and the latest
//! check of each) at the head:
//!
//! * `sense_collision`: two or more senses of one surface hit in one chunk and left
//!   ambiguous by the assembly (reason `sense_collision`);
//! * `shared_rendering`: two active terms with different sources and one rendering
//!   (compared case-insensitively), both hit in the chapter;
//! * `gender`: a post-check flagged a word after a term's rendering as the other
//!   gender.
//!
//! Each is listed once a chapter, with the terms concerned (source, rendering, sense,
//! gender, note) and a short excerpt of the chunk (or, for `gender`, of the
//! translation). At most [`CONFLICTS_PER_CHAPTER_MAX`] a chapter are sent; the rest
//! are reported as left.
//!
//! **The request** is one a chapter: the prompt [`ADJUDICATE_PROMPT`] (version
//! [`ADJUDICATE_PROMPT_VERSION`]) as the system message and the conflicts as a JSON
//! user message. **The answer** must be a 2xx chat completion whose content is one
//! object `{"verdicts": [{"conflict": "c1", "term": "T-3", "finding": "…"}]}`: each
//! conflict of the request at most once, `term` one of that conflict's terms (the
//! record a reviewer should look at), `finding` 1–500 characters. Anything else
//! refuses the run and nothing is written.
//!
//! **Each verdict** becomes a `verify` disposition on its term, reason
//! [`ADJUDICATION_REASON`], the note naming the model, the prompt, the chapter, the
//! conflict and the finding: the term then appears in the review queue and is
//! injected marked `[unverified]` until a reviewer decides. A term whose current
//! verdict is already this reason's `verify` gets no second one.
//!
//! **Unless the book lets the model decide**: when the asking actor is a party the
//! governance declares and its `model_policy_set` names the conflict's class, a
//! verdict that carries a change (`gender` for a gender conflict, `dst` for a shared
//! rendering) is applied as a `term_put` of its term (a new rendering drops the old
//! one's declared forms), written by that party; a verdict that changes nothing
//! applies nothing. A sense collision is never decided by a model. Exchanges are stored
//! and reused like an extraction's ([`crate::exchange`]).

use std::collections::{BTreeMap, BTreeSet};

use assembly::assemble::{Disposition, Reason};
use ledger_model::*;
use serde::{Deserialize, Serialize};

use crate::book::Book;
use crate::error::BookError;
use crate::exchange::{chat_request, model_name, Asking, Model, Prompt};
use crate::extract::chapter_range;
use crate::service::{Labelled, WriteOptions, Written};

/// The version of [`ADJUDICATE_PROMPT`].
pub const ADJUDICATE_PROMPT_VERSION: u32 = 1;
/// The job adjudication's exchanges are stored under.
pub const ADJUDICATE_JOB: &str = "adjudicate";
/// The reason code of an adjudication's `verify`.
pub const ADJUDICATION_REASON: &str = "llm_adjudication";
/// The most conflicts of one chapter sent.
pub const CONFLICTS_PER_CHAPTER_MAX: usize = 50;
/// The longest finding kept, in characters.
pub const FINDING_CHARS_MAX: usize = 500;
/// Characters of context on each side of a conflict's place in its excerpt.
const EXCERPT_CHARS: usize = 60;

/// The system message of an adjudication request.
pub const ADJUDICATE_PROMPT: &str = "You review the glossary of a novel's Russian translation. The user message is \
a JSON object listing conflicts found in one chapter: two senses of one source word in one passage \
(sense_collision), two different names given one Russian rendering (shared_rendering), or a Russian word after a \
name that marks another gender than the glossary gives it (gender). Each conflict lists the glossary terms \
involved and an excerpt. For each conflict, decide which term a human reviewer should look at and why: for \
sense_collision, the sense the excerpt uses; for shared_rendering, the term whose rendering should change; for \
gender, whether the glossary's gender or the translation is wrong.\n\
Answer with one JSON object and nothing else: {\"verdicts\": [{\"conflict\": ..., \"term\": ..., \"finding\": ...}]}, \
where conflict is the conflict's id, term is the id of one of its terms, and finding is one or two sentences of \
reason, in English or Russian. Give each conflict at most one verdict.";

/// What kind of conflict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// Several senses of one surface, ambiguous in one chunk.
    SenseCollision,
    /// Two terms, one rendering.
    SharedRendering,
    /// A post-check's gender flag.
    Gender,
}

impl ConflictKind {
    /// Its name (`sense_collision`, `shared_rendering`, `gender`).
    pub fn name(self) -> &'static str {
        match self {
            ConflictKind::SenseCollision => "sense_collision",
            ConflictKind::SharedRendering => "shared_rendering",
            ConflictKind::Gender => "gender",
        }
    }
}

/// A term as a conflict shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConflictTerm {
    /// `T-…`.
    pub id: String,
    /// Source.
    pub src: String,
    /// Rendering.
    pub dst: String,
    /// Sense, if any.
    pub sense: Option<String>,
    /// Gender, if any (`m`, `f`, `n`, `pl`).
    pub gender: Option<Gender>,
    /// Note, if any.
    pub note: Option<String>,
}

/// One conflict of a chapter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// `c1`, `c2`, … within its chapter.
    pub conflict: String,
    /// What kind.
    pub kind: ConflictKind,
    /// The surface (or, for a shared rendering, the rendering) it is about.
    pub surface: String,
    /// The terms concerned.
    pub terms: Vec<ConflictTerm>,
    /// Where it shows.
    pub excerpt: String,
}

/// The user message of a chapter's request.
#[derive(Serialize)]
struct Conflicts<'a> {
    chapter: u32,
    conflicts: &'a [Conflict],
}

/// One verdict of an answer, as the schema has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelVerdict {
    /// The conflict's id.
    pub conflict: String,
    /// The term to look at.
    pub term: String,
    /// Why.
    pub finding: String,
    /// For a `gender` conflict: the gender the term should have (`m`, `f`, `n`, `pl`),
    /// if the model says the glossary is wrong.
    #[serde(default)]
    pub gender: Option<Gender>,
    /// For a `shared_rendering` conflict: a new rendering of the term, if the model
    /// proposes one.
    #[serde(default)]
    pub dst: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Verdicts {
    verdicts: Vec<ModelVerdict>,
}

/// The verdicts of an answer to a request listing `conflicts`, or why it is refused.
pub fn parse_verdicts(body: &[u8], conflicts: &[Conflict]) -> Result<Vec<ModelVerdict>, String> {
    let content = crate::extract::content_of(body)?;
    let verdicts: Verdicts = serde_json::from_str(&content).map_err(|error| {
        format!("its content is not the object {{\"verdicts\": [...]}} the prompt asks for: {error}")
    })?;
    let mut seen = BTreeSet::new();
    for (n, verdict) in verdicts.verdicts.iter().enumerate() {
        let Some(conflict) = conflicts.iter().find(|conflict| conflict.conflict == verdict.conflict) else {
            return Err(format!("verdicts[{n}].conflict: {:?} is not a conflict of the request", verdict.conflict));
        };
        if !seen.insert(verdict.conflict.as_str()) {
            return Err(format!("verdicts[{n}].conflict: {} has a verdict already", verdict.conflict));
        }
        if !conflict.terms.iter().any(|term| term.id == verdict.term) {
            return Err(format!("verdicts[{n}].term: {:?} is not a term of {}", verdict.term, verdict.conflict));
        }
        let chars = verdict.finding.trim().chars().count();
        if chars == 0 || chars > FINDING_CHARS_MAX {
            return Err(format!("verdicts[{n}].finding: {chars} characters, expected 1 to {FINDING_CHARS_MAX}"));
        }
        if verdict.gender.is_some() && conflict.kind != ConflictKind::Gender {
            return Err(format!("verdicts[{n}].gender: only a gender conflict's verdict names a gender"));
        }
        if let Some(dst) = &verdict.dst {
            if conflict.kind != ConflictKind::SharedRendering {
                return Err(format!("verdicts[{n}].dst: only a shared rendering's verdict names a rendering"));
            }
            let chars = dst.trim().chars().count();
            if chars == 0 || chars > limits::LABEL_CHARS_MAX || dst.chars().any(char::is_control) {
                return Err(format!(
                    "verdicts[{n}].dst: {chars} characters, expected 1 to {} without control characters",
                    limits::LABEL_CHARS_MAX
                ));
            }
        }
    }
    Ok(verdicts.verdicts)
}

/// The chars of `text` around byte span `bytes` (on char boundaries), on one line.
fn excerpt(text: &str, bytes: (u32, u32)) -> String {
    let (start, end) = (bytes.0 as usize, bytes.1 as usize);
    if start > end || end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return String::new();
    }
    let before: String =
        text[..start].chars().rev().take(EXCERPT_CHARS).collect::<Vec<_>>().into_iter().rev().collect();
    let after: String = text[end..].chars().take(EXCERPT_CHARS).collect();
    format!("{before}{}{after}", &text[start..end]).chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A chapter's request and what came of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChapterAdjudication {
    /// The chapter.
    pub chapter: u32,
    /// The conflicts sent.
    pub conflicts: Vec<Conflict>,
    /// Conflicts found beyond [`CONFLICTS_PER_CHAPTER_MAX`], not sent.
    pub left: u32,
    /// The request's hash and stored exchange, and whether it came from the store
    /// (`None` when the chapter had no conflict and nothing was asked).
    pub asked: Option<(Hash32, Hash32, bool)>,
    /// The model's verdicts.
    pub verdicts: Vec<ModelVerdict>,
}

/// What an adjudication did.
#[derive(Debug)]
pub struct Adjudicated {
    /// The model.
    pub model: String,
    /// The prompt asked with (`v1`, or the book's own `book@SEQ`).
    pub prompt: String,
    /// Each chapter.
    pub chapters: Vec<ChapterAdjudication>,
    /// The `verify` dispositions written (or, in a dry run, that would be).
    pub proposed: Vec<DispositionSet>,
    /// Terms a verdict named that already carry an adjudication's `verify`.
    pub already: Vec<RecordId>,
    /// The changes the model party decided itself under the book's policy
    /// (`model_policy_set`): each term, the field (`gender`, `dst`), its value before
    /// and after.
    pub decided: Vec<(RecordId, &'static str, String, String)>,
    /// The `term_put`s that apply them (written, or in a dry run, that would be).
    pub applied: Vec<TermPut>,
    /// The write.
    pub written: Option<Written>,
}

/// How to adjudicate.
#[derive(Clone, Debug)]
pub struct AdjudicateOptions {
    /// The model's name when no model is at hand (stored answers only).
    pub model_name: Option<String>,
    /// Ask again even where the store holds an answer.
    pub fresh: bool,
    /// Write nothing.
    pub dry_run: bool,
}

/// A gender as the schema and the glossary write it.
fn gender_name(gender: Gender) -> &'static str {
    match gender {
        Gender::Masculine => "m",
        Gender::Feminine => "f",
        Gender::Neuter => "n",
        Gender::Plural => "pl",
    }
}

fn conflict_term(put: &TermPut) -> ConflictTerm {
    ConflictTerm {
        id: put.id.to_string(),
        src: put.src.clone(),
        dst: put.dst.clone(),
        sense: put.sense.clone(),
        gender: put.gender,
        note: put.note.clone(),
    }
}

impl Book {
    /// The open conflicts of `chapter` at the head, as the module documentation says,
    /// in a fixed order: sense collisions, then shared renderings, then gender flags,
    /// each by chunk and place.
    pub fn conflicts(&mut self, chapter: u32) -> Result<Vec<Conflict>, BookError> {
        let state = self.state(None)?;
        let receipts = self.latest_receipts(Some(chapter))?;
        let term = |number: u32| {
            RecordId::new(RecordKind::Term, number).and_then(|id| state.terms().get(&id)).filter(|t| !t.retired)
        };
        let mut found: Vec<(ConflictKind, String, Vec<RecordId>, String)> = Vec::new();
        let mut seen: BTreeSet<(ConflictKind, Vec<RecordId>)> = BTreeSet::new();
        let mut hit_terms: BTreeSet<u32> = BTreeSet::new();
        let mut gender: Vec<(u32, String)> = Vec::new();
        for (id, receipt) in &receipts {
            let (input, _) = self.receipt_texts(receipt)?;
            let mut by_span: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
            for hit in &receipt.hits {
                if hit.disposition != Disposition::Rejected {
                    hit_terms.insert(hit.term);
                }
                if hit.reason == Some(Reason::SenseCollision) {
                    by_span.entry(hit.bytes).or_default().push(hit.term);
                }
            }
            for (span, numbers) in by_span {
                let mut ids: Vec<RecordId> = numbers.iter().filter_map(|&n| term(n)).map(|t| t.put.id).collect();
                ids.sort();
                ids.dedup();
                if ids.len() >= 2 && seen.insert((ConflictKind::SenseCollision, ids.clone())) {
                    let surface = input.get(span.0 as usize..span.1 as usize).unwrap_or_default().to_owned();
                    found.push((ConflictKind::SenseCollision, surface, ids, excerpt(&input, span)));
                }
            }
            if let (_, Some((_, check))) = crate::check::latest_check_in(self.ledger(), *id)? {
                for item in &check.check.items {
                    for agreement in &item.agreement {
                        gender.push((item.term, excerpt(&check.translation, agreement.bytes)));
                    }
                }
            }
        }
        let mut by_rendering: BTreeMap<String, Vec<&TermPut>> = BTreeMap::new();
        for &number in &hit_terms {
            if let Some(term) = term(number) {
                by_rendering.entry(term.put.dst.to_lowercase()).or_default().push(&term.put);
            }
        }
        for puts in by_rendering.values() {
            let sources: BTreeSet<&str> = puts.iter().map(|put| put.src.as_str()).collect();
            if puts.len() >= 2 && sources.len() >= 2 {
                let ids: Vec<RecordId> = puts.iter().map(|put| put.id).collect();
                let excerpt =
                    puts.iter().map(|put| format!("{} -> {}", put.src, put.dst)).collect::<Vec<_>>().join("; ");
                found.push((ConflictKind::SharedRendering, puts[0].dst.clone(), ids, excerpt));
            }
        }
        for (number, excerpt) in gender {
            let Some(term) = term(number) else { continue };
            if seen.insert((ConflictKind::Gender, vec![term.put.id])) {
                found.push((ConflictKind::Gender, term.put.dst.clone(), vec![term.put.id], excerpt));
            }
        }
        found.sort_by_key(|(kind, ..)| *kind);
        Ok(found
            .into_iter()
            .enumerate()
            .map(|(n, (kind, surface, ids, excerpt))| Conflict {
                conflict: format!("c{}", n + 1),
                kind,
                surface,
                terms: ids.iter().filter_map(|id| state.terms().get(id)).map(|t| conflict_term(&t.put)).collect(),
                excerpt,
            })
            .collect())
    }

    /// Puts the open conflicts of chapters `from..=to` (every chapter with a recorded
    /// receipt with `None`) to `model` (or the store), one request a chapter, and files each verdict as a `verify` for a reviewer, as the
    /// module documentation says. Nothing is written unless every answer parses.
    pub fn adjudicate(
        &mut self,
        model: Option<&dyn Model>,
        chapters: Option<(u32, u32)>,
        options: &AdjudicateOptions,
        write: &WriteOptions,
    ) -> Result<Adjudicated, BookError> {
        let model_name = model_name(model, options.model_name.as_deref(), "to adjudicate")?;
        let numbers: Vec<u32> = match chapters {
            Some(range) => chapter_range(range)?.collect(),
            None => {
                let recorded: BTreeSet<u32> =
                    self.latest_receipts(None)?.iter().map(|(_, receipt)| receipt.chapter).collect();
                recorded.into_iter().collect()
            }
        };
        let prompt = {
            let state = self.state(None)?;
            Prompt::of(&state, ADJUDICATE_JOB, ADJUDICATE_PROMPT, ADJUDICATE_PROMPT_VERSION)
        };
        let asking = Asking {
            model,
            model_name: &model_name,
            job: ADJUDICATE_JOB,
            prompt: &prompt.name,
            fresh: options.fresh,
            recorded_at_ms: write.recorded_at_ms,
            actor: write.actor.as_str(),
        };
        let mut chapters = Vec::new();
        let mut blobs = Vec::new();
        for chapter in numbers {
            let mut conflicts = self.conflicts(chapter)?;
            let left = conflicts.len().saturating_sub(CONFLICTS_PER_CHAPTER_MAX) as u32;
            conflicts.truncate(CONFLICTS_PER_CHAPTER_MAX);
            if conflicts.is_empty() {
                chapters.push(ChapterAdjudication { chapter, conflicts, left, asked: None, verdicts: Vec::new() });
                continue;
            }
            let user = serde_json::to_string(&Conflicts { chapter, conflicts: &conflicts }).unwrap_or_default();
            let request = chat_request(&model_name, &prompt.text, &user, true);
            let where_ = format!("chapter {chapter}");
            let answered = match self.ask(&asking, &request, &where_, &blobs) {
                Ok(answered) => answered,
                Err(error) => return Err(self.failed_after(blobs, options.dry_run, error)),
            };
            let verdicts = match parse_verdicts(answered.answer.as_bytes(), &conflicts) {
                Ok(verdicts) => verdicts,
                Err(why) => {
                    let error = BookError::Model(format!(
                        "{where_}: the answer of {model_name} is refused: {why}; nothing was written to the log"
                    ));
                    return Err(self.failed_after(blobs, options.dry_run, error));
                }
            };
            blobs.extend(answered.blobs);
            chapters.push(ChapterAdjudication {
                chapter,
                conflicts,
                left,
                asked: Some((answered.request, answered.exchange, answered.stored)),
                verdicts,
            });
        }
        let state = self.state(None)?;
        // What the asking party may decide itself: a declared party's policy.
        let party = write.actor.as_str();
        let declared =
            state.governance_set().is_some_and(|(governance, _)| governance.parties.iter().any(|p| p == party));
        let decides = |class: &str| declared && state.model_decides(party).iter().any(|known| known == class);
        let mut proposed: Vec<DispositionSet> = Vec::new();
        let mut applied: Vec<TermPut> = Vec::new();
        let mut decided = Vec::new();
        let mut already = Vec::new();
        for adjudication in &chapters {
            for verdict in &adjudication.verdicts {
                let Ok(target) = verdict.term.parse::<RecordId>() else { continue };
                let Some(conflict) = adjudication.conflicts.iter().find(|c| c.conflict == verdict.conflict) else {
                    continue;
                };
                let Some(current) = state.terms().get(&target).filter(|term| !term.retired).map(|term| &term.put)
                else {
                    continue;
                };
                let current = applied.iter().rev().find(|put| put.id == target).unwrap_or(current);
                // A decision the policy allows, which changes the term: applied.
                let change = match (conflict.kind, verdict.gender, &verdict.dst) {
                    (ConflictKind::Gender, Some(gender), _) if decides("gender") => (current.gender != Some(gender))
                        .then(|| {
                            let from = current.gender.map(gender_name).unwrap_or("none").to_owned();
                            (
                                "gender",
                                from,
                                gender_name(gender).to_owned(),
                                TermPut { gender: Some(gender), ..current.clone() },
                            )
                        }),
                    (ConflictKind::SharedRendering, _, Some(dst)) if decides("shared_rendering") => {
                        let dst = dst.trim().to_owned();
                        (current.dst != dst).then(|| {
                            let put = TermPut { dst: dst.clone(), decl: Vec::new(), ..current.clone() };
                            ("dst", current.dst.clone(), dst, put)
                        })
                    }
                    _ => None,
                };
                if let Some((field, from, to, put)) = change {
                    decided.push((target, field, from, to));
                    applied.retain(|known| known.id != target);
                    applied.push(put);
                    continue;
                }
                let flagged = state
                    .terms()
                    .get(&target)
                    .and_then(|term| term.verdict.as_ref())
                    .is_some_and(|(v, reason)| *v == Verdict::Verify && reason == ADJUDICATION_REASON);
                if flagged || proposed.iter().any(|p| p.target == target) {
                    already.push(target);
                    continue;
                }
                let note: String = format!(
                    "{model_name} prompt {}, ch{} {} {}: {}",
                    prompt.name,
                    adjudication.chapter,
                    verdict.conflict,
                    conflict.kind.name(),
                    verdict.finding.trim()
                )
                .chars()
                .take(limits::NOTE_CHARS_MAX)
                .collect();
                proposed.push(DispositionSet {
                    target,
                    verdict: Verdict::Verify,
                    reason: ADJUDICATION_REASON.to_owned(),
                    note: Some(note),
                });
            }
        }
        drop(state);
        let written = if options.dry_run {
            None
        } else {
            if proposed.is_empty() && applied.is_empty() {
                if !blobs.is_empty() {
                    self.ledger().file_documents(Vec::<ledger::Document>::new(), std::mem::take(&mut blobs))?;
                }
                self.propose(write, &[], "adjudicate", false)?
            } else {
                let mut bodies: Vec<Body> = applied.iter().cloned().map(Body::TermPut).collect();
                bodies.extend(proposed.iter().cloned().map(Body::DispositionSet));
                Some(self.submit_labelled(write, Labelled::numbered(bodies, "adjudicate"), blobs)?)
            }
        };
        Ok(Adjudicated {
            model: model_name,
            prompt: prompt.name.clone(),
            chapters,
            proposed,
            already,
            decided,
            applied,
            written,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict() -> Conflict {
        let term = |id: &str| ConflictTerm {
            id: id.into(),
            src: "白衣".into(),
            dst: "x".into(),
            sense: None,
            gender: None,
            note: None,
        };
        Conflict {
            conflict: "c1".into(),
            kind: ConflictKind::SenseCollision,
            surface: "白衣".into(),
            terms: vec![term("T-1"), term("T-2")],
            excerpt: String::new(),
        }
    }

    fn answer(content: &str) -> Vec<u8> {
        serde_json::json!({"choices": [{"message": {"content": content}}]}).to_string().into_bytes()
    }

    #[test]
    fn verdicts_are_held_to_the_request() {
        let conflicts = [conflict()];
        let good = r#"{"verdicts": [{"conflict": "c1", "term": "T-2", "finding": "the teacher is meant"}]}"#;
        assert_eq!(parse_verdicts(&answer(good), &conflicts).unwrap()[0].term, "T-2");
        for (bad, says) in [
            (
                r#"{"verdicts": [{"conflict": "c9", "term": "T-2", "finding": "x"}]}"#,
                "is not a conflict of the request",
            ),
            (r#"{"verdicts": [{"conflict": "c1", "term": "T-7", "finding": "x"}]}"#, "is not a term of c1"),
            (r#"{"verdicts": [{"conflict": "c1", "term": "T-1", "finding": " "}]}"#, "finding: 0 characters"),
            (
                r#"{"verdicts": [{"conflict": "c1", "term": "T-1", "finding": "a"}, {"conflict": "c1", "term": "T-2", "finding": "b"}]}"#,
                "has a verdict already",
            ),
            (r#"{"verdicts": [{"conflict": "c1", "term": "T-1"}]}"#, "missing field `finding`"),
            (
                r#"{"verdicts": [{"conflict": "c1", "term": "T-1", "finding": "x", "gender": "f"}]}"#,
                "only a gender conflict's verdict names a gender",
            ),
            (
                r#"{"verdicts": [{"conflict": "c1", "term": "T-1", "finding": "x", "dst": "Белый"}]}"#,
                "only a shared rendering's verdict names a rendering",
            ),
            (r#"{"verdicts": [{"conflict": "c1", "term": "T-1", "finding": "x", "gender": "x"}]}"#, "unknown variant"),
            ("T-1, because", "is not the object"),
        ] {
            let why = parse_verdicts(&answer(bad), &conflicts).unwrap_err();
            assert!(why.contains(says), "{bad}: {why}");
        }
    }

    #[test]
    fn an_excerpt_is_the_place_and_its_surroundings_on_one_line() {
        assert_eq!(excerpt("甲乙\n丙丁", (3, 6)), "甲乙 丙丁");
        assert_eq!(excerpt("甲乙", (1, 3)), "", "not on a char boundary");
        assert_eq!(excerpt("甲乙", (3, 99)), "");
    }
}
