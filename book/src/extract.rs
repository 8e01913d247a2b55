//! The model in the loop, outside the hot path: a chat model asked once per chapter
//! for its proper names (`lorebank extract`), the answers parsed strictly, checked
//! against the text and proposed as review candidates with `origin: llm`.
//!
//! **The request.** A chapter is sent in parts of at most [`PART_CHARS_MAX`]
//! characters (whole lines; a longer line is a part of its own, cut at the limit),
//! each one chat request: the versioned prompt [`EXTRACT_PROMPT`] as the system
//! message, the part as the user message, temperature 0 and a JSON-object answer
//! asked for. The request's bytes are a function of the model's name, the prompt, the
//! chapter number and the part: the same chapter asks the same question.
//!
//! **The answer** must be a 2xx chat completion whose message content is one JSON
//! object `{"names": [...]}` (inside one Markdown code fence at most), each name with
//! exactly the fields `surface`, `kind` (`person`, `place`, `organization`, `item`,
//! `other`), `gender` (`m`, `f` or null), `reading` (string or null) and `evidence`
//! (a sentence of the text). Anything else is an error and nothing is written. A
//! name with no letter in it is dropped (`not_a_name`); a name whose folded surface
//! is not in the folded part is dropped and reported (the model invented it); a name
//! the book knows (a term's source or alias, folded)
//! is reported and not proposed.
//!
//! **Candidates.** One per folded surface: a surface already proposed (by the name
//! alarm, an earlier extraction, any origin) gets the model's sighting added to its
//! evidence; a new one is a `candidate_proposed` with `origin: llm`. An evidence line
//! names the chapter, the model, the prompt version, kind, gender and reading, and
//! the model's evidence sentence, so the review queue shows who proposed what.
//!
//! **Exchanges.** Every request and its answer are stored beside the book
//! ([`crate::exchange`]), in the same commit as the candidates. A request asked
//! before is answered from the store (the job replays from what the model said,
//! whatever it says next time) unless the caller asks `fresh`; without a model only
//! stored answers are used. An answer that fails to parse is not stored; when a run
//! fails (a refused answer, a model that cannot be reached), the answers accepted
//! before are filed alone, so the next run does not pay for them again.

use ledger_model::*;
use serde::{Deserialize, Serialize};

use crate::book::Book;
use crate::error::BookError;
use crate::exchange::{chat_request, message_of, model_name, Asking, Model, Prompt};
use crate::review::{add_sighting, fold_by, known_surfaces, names_lang, Slate};
use crate::service::{Labelled, WriteOptions, Written};

/// The version of [`EXTRACT_PROMPT`], recorded in every stored exchange and evidence
/// line. A change of the prompt's text is a new version.
pub const EXTRACT_PROMPT_VERSION: u32 = 1;

/// The system message of an extraction request; `{language}` is the book's.
pub const EXTRACT_PROMPT: &str = "You extract proper names from a part of a {language} novel, for the glossary \
of its Russian translation. List every proper name in the text: persons (with nicknames and titles used as names), \
places, organizations (sects, clans, schools, ranks of an order), named items and techniques. Do not list common \
nouns, pronouns or names of real countries used generically. Do not translate.\n\
Answer with one JSON object and nothing else: {\"names\": [{\"surface\": ..., \"kind\": ..., \"gender\": ..., \
\"reading\": ..., \"evidence\": ...}]}, where\n\
- surface: the name exactly as written in the text;\n\
- kind: one of \"person\", \"place\", \"organization\", \"item\", \"other\";\n\
- gender: \"m\" or \"f\" when the text shows it (pronouns, kinship, address), else null;\n\
- reading: the pinyin (Chinese) or the kana reading (Japanese), or null;\n\
- evidence: one sentence of the text that contains the name, copied exactly.\n\
List each name once. With no names, answer {\"names\": []}.";

/// The most characters of a chapter sent in one request.
pub const PART_CHARS_MAX: usize = 4_000;
/// The most names one answer may hold.
pub const NAMES_PER_ANSWER_MAX: usize = 500;
/// The longest surface a model may propose, in characters.
pub const SURFACE_CHARS_MAX: usize = 32;
/// The longest reading and evidence sentence kept, in characters (longer ones are
/// cut, with `…`).
pub const EVIDENCE_CHARS_MAX: usize = 200;

/// The job an extraction's exchanges are stored under.
pub const EXTRACT_JOB: &str = "extract";

/// What a name is, as the model says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameKind {
    /// A person (or a being named like one).
    Person,
    /// A place.
    Place,
    /// A sect, clan, school, order.
    Organization,
    /// A named item or technique.
    Item,
    /// Anything else.
    Other,
}

/// A gender the text shows, as the model says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ShownGender {
    /// Masculine (`m`).
    #[serde(rename = "m")]
    M,
    /// Feminine (`f`).
    #[serde(rename = "f")]
    F,
}

/// One name of an answer, as the schema has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProposedName {
    /// The name as written in the text.
    pub surface: String,
    /// What it names.
    pub kind: NameKind,
    /// The gender the text shows, if it does.
    pub gender: Option<ShownGender>,
    /// Pinyin or kana, if given.
    pub reading: Option<String>,
    /// A sentence of the text holding the name.
    pub evidence: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Names {
    names: Vec<ProposedName>,
}

/// The names of a model's answer (a chat completion's body), or why it is not one.
pub fn parse_answer(body: &[u8]) -> Result<Vec<ProposedName>, String> {
    let json = content_of(body)?;
    let names: Names = serde_json::from_str(&json)
        .map_err(|error| format!("its content is not the object {{\"names\": [...]}} the prompt asks for: {error}"))?;
    if names.names.len() > NAMES_PER_ANSWER_MAX {
        return Err(format!("{} names, more than {NAMES_PER_ANSWER_MAX}", names.names.len()));
    }
    for (n, name) in names.names.iter().enumerate() {
        let chars = name.surface.trim().chars().count();
        if chars == 0 || chars > SURFACE_CHARS_MAX {
            return Err(format!("names[{n}].surface: {chars} characters, expected 1 to {SURFACE_CHARS_MAX}"));
        }
        if name.surface.chars().any(char::is_control) {
            return Err(format!("names[{n}].surface: a control character"));
        }
    }
    Ok(names.names)
}

/// The message text of a chat completion's body, without one Markdown code fence
/// around it (```` ```json … ``` ````), or why the body is not one.
pub fn content_of(body: &[u8]) -> Result<String, String> {
    let (content, _) = message_of(body)?;
    Ok(unfenced(content.trim()).to_owned())
}

/// `text` without one Markdown code fence around it (```` ```json … ``` ````).
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else { return text };
    let Some(body) = rest.strip_suffix("```") else { return text };
    // The fence's info string (`json`) runs to the first newline.
    match body.find('\n') {
        Some(at) => body[at + 1..].trim(),
        None => body.trim(),
    }
}

/// The parts of a chapter's text sent one request each: whole lines up to
/// [`PART_CHARS_MAX`] characters, a longer line cut at the limit.
pub fn parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut chars) = (0, 0);
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let n = line.chars().count();
        if chars > 0 && chars + n > PART_CHARS_MAX {
            parts.push(&text[start..at]);
            (start, chars) = (at, 0);
        }
        if n > PART_CHARS_MAX {
            // A line over the limit: parts of it, cut on char boundaries.
            let mut cut = at;
            for (count, (offset, _)) in line.char_indices().enumerate() {
                if count > 0 && count % PART_CHARS_MAX == 0 {
                    parts.push(&text[cut..at + offset]);
                    cut = at + offset;
                }
            }
            (start, chars) = (cut, text[cut..at + line.len()].chars().count());
        } else {
            chars += n;
        }
        at += line.len();
    }
    if start < text.len() && !text[start..].trim().is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

/// The bytes of the request for one part, `system` the prompt with its language.
pub fn extract_request(model: &str, system: &str, chapter: u32, part: &str) -> Vec<u8> {
    chat_request(model, system, &format!("Chapter {chapter}.\n\n{part}"), true)
}

/// The chapters `from..=to`, refused (naming the field `chapter`) unless they start at
/// 1 or later and are in order.
pub(crate) fn chapter_range((from, to): (u32, u32)) -> Result<std::ops::RangeInclusive<u32>, BookError> {
    if from == 0 || from > to {
        return Err(BookError::InvalidField {
            field: "chapter",
            message: format!("{from}-{to}: expected chapters from 1, in order"),
        });
    }
    Ok(from..=to)
}

/// How to extract.
#[derive(Clone, Debug)]
pub struct ExtractOptions {
    /// The model's name when no model is at hand (answers are then read from the
    /// store only); ignored when one is.
    pub model_name: Option<String>,
    /// Ask the model again even when the store holds an answer.
    pub fresh: bool,
    /// Write nothing (neither candidates nor exchanges).
    pub dry_run: bool,
}

/// One request of an extraction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AskedPart {
    /// The chapter.
    pub chapter: u32,
    /// From 1.
    pub part: u32,
    /// The request's hash ([`request_hash`]).
    pub request: Hash32,
    /// The stored exchange answering it.
    pub exchange: Hash32,
    /// Answered from the store, not by the model.
    pub stored: bool,
    /// Names in the answer.
    pub names: u32,
}

/// What happened to a name the model proposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameOutcome {
    /// A new candidate.
    Proposed,
    /// Added as evidence to the candidate its surface already has.
    Evidence,
    /// The evidence already listed this sighting: nothing changed.
    Unchanged,
    /// The book knows the surface (a term's source or alias).
    Known,
    /// Not in the chapter's text: the model invented it; dropped.
    NotInText,
    /// No letter in it (punctuation, digits), or nothing left once folded; dropped.
    NotAName,
}

/// A name of the extraction and its fate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExtractedName {
    /// The chapter whose answer held it.
    pub chapter: u32,
    /// As the model proposed it.
    pub name: ProposedName,
    /// What became of it.
    pub outcome: NameOutcome,
    /// The candidate it became or was added to.
    pub candidate: Option<RecordId>,
}

/// What an extraction did.
#[derive(Debug)]
pub struct Extracted {
    /// The model asked (or whose stored answers were read).
    pub model: String,
    /// The prompt asked with (`v1`, or the book's own `book@SEQ`).
    pub prompt: String,
    /// Every request, in order.
    pub parts: Vec<AskedPart>,
    /// Every name of every answer, in order.
    pub names: Vec<ExtractedName>,
    /// Candidates proposed or given new evidence.
    pub proposed: Vec<CandidateProposed>,
    /// The write, if the log changed.
    pub written: Option<Written>,
}

impl Extracted {
    /// How many names had `outcome`.
    pub fn count(&self, outcome: NameOutcome) -> usize {
        self.names.iter().filter(|name| name.outcome == outcome).count()
    }
}

/// The language named in the prompt.
fn language_of(lang: names::Lang) -> &'static str {
    match lang {
        names::Lang::Zh => "Chinese",
        names::Lang::Ja => "Japanese",
    }
}

/// A text cut to `max` characters, with `…` when cut, on one line.
fn cut(text: &str, max: usize) -> String {
    let one_line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let one_line = one_line.trim();
    match one_line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line.to_owned(),
    }
}

/// The evidence line of a name the model proposed in `chapter`.
fn evidence_line(chapter: u32, model: &str, prompt: &str, name: &ProposedName) -> String {
    let kind = serde_json::to_value(name.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let gender = match name.gender {
        Some(ShownGender::M) => " m",
        Some(ShownGender::F) => " f",
        None => "",
    };
    let reading = match &name.reading {
        Some(reading) if !reading.trim().is_empty() => format!(" ({})", cut(reading, EVIDENCE_CHARS_MAX)),
        _ => String::new(),
    };
    format!(
        "ch{chapter} llm {} prompt {prompt}: {kind}{gender}{reading}: {}",
        cut(model, 64),
        cut(&name.evidence, EVIDENCE_CHARS_MAX)
    )
}

impl Book {
    /// The texts of chapters `from..=to`: `text` for the one chapter it is given for,
    /// else each chapter's registered source text.
    pub(crate) fn chapter_texts(
        &mut self,
        (from, to): (u32, u32),
        text: Option<&str>,
    ) -> Result<Vec<(u32, String)>, BookError> {
        chapter_range((from, to))?;
        if let Some(text) = text {
            if from != to {
                return Err(BookError::InvalidField {
                    field: "chapter",
                    message: format!("a text is one chapter's, not chapters {from}-{to}'s"),
                });
            }
            return Ok(vec![(from, text.to_owned())]);
        }
        let mut texts = Vec::new();
        for chapter in from..=to {
            match self.source_text(chapter) {
                Ok((_, text)) => texts.push((chapter, text)),
                Err(BookError::NotFound { .. }) => {
                    return Err(BookError::InvalidField {
                        field: "chapter",
                        message: format!("chapter {chapter} has no source text: add it (source add) or give its text"),
                    })
                }
                Err(error) => return Err(error),
            }
        }
        Ok(texts)
    }

    /// Asks `model` (or, without one, the store) for the proper names of chapters
    /// `from..=to` (their registered source texts, or `text` for one chapter) and
    /// proposes them as candidates, as the module documentation says. Nothing is
    /// written unless every answer parses.
    pub fn extract(
        &mut self,
        model: Option<&dyn Model>,
        chapters: (u32, u32),
        text: Option<&str>,
        options: &ExtractOptions,
        write: &WriteOptions,
    ) -> Result<Extracted, BookError> {
        let chapters = self.chapter_texts(chapters, text)?;
        let model_name = model_name(model, options.model_name.as_deref(), "to extract with")?;
        let state = self.state(None)?;
        let lang = names_lang(&state, "extraction")?;
        let profile = self.profile(&state)?;
        let fold = |text: &str| fold_by(profile.as_deref(), text);
        let known = known_surfaces(&state, &fold);

        let prompt = Prompt::of(&state, EXTRACT_JOB, EXTRACT_PROMPT, EXTRACT_PROMPT_VERSION);
        let system = prompt.text.replace("{language}", language_of(lang));
        // Ask (or read) every part first: nothing is written unless all parse.
        let asking = Asking {
            model,
            model_name: &model_name,
            job: EXTRACT_JOB,
            prompt: &prompt.name,
            fresh: options.fresh,
            recorded_at_ms: write.recorded_at_ms,
            actor: write.actor.as_str(),
        };
        let mut asked = Vec::new();
        let mut blobs: Vec<(Hash32, Vec<u8>)> = Vec::new();
        let mut answers: Vec<(u32, String, Vec<ProposedName>)> = Vec::new();
        for (chapter, text) in &chapters {
            for (n, part) in parts(text).into_iter().enumerate() {
                let where_ = format!("chapter {chapter} part {}", n + 1);
                let request = extract_request(&model_name, &system, *chapter, part);
                let answered = match self.ask(&asking, &request, &where_, &blobs) {
                    Ok(answered) => answered,
                    Err(error) => return Err(self.failed_after(blobs, options.dry_run, error)),
                };
                let names = match parse_answer(answered.answer.as_bytes()) {
                    Ok(names) => names,
                    Err(why) => {
                        let error = BookError::Model(format!(
                            "{where_}: the answer of {model_name} is refused: {why}; nothing was written to the log"
                        ));
                        return Err(self.failed_after(blobs, options.dry_run, error));
                    }
                };
                let (hash, exchange, from_store) = (answered.request, answered.exchange, answered.stored);
                blobs.extend(answered.blobs);
                asked.push(AskedPart {
                    chapter: *chapter,
                    part: n as u32 + 1,
                    request: hash,
                    exchange,
                    stored: from_store,
                    names: names.len() as u32,
                });
                answers.push((*chapter, fold(part), names));
            }
        }

        let mut slate = Slate::of(&state, &fold);
        let mut names_out = Vec::new();
        for (chapter, folded_part, names) in answers {
            for name in names {
                let surface = name.surface.trim().to_owned();
                let folded = fold(&surface);
                let (outcome, candidate) = if folded.is_empty() || !surface.chars().any(char::is_alphabetic) {
                    (NameOutcome::NotAName, None)
                } else if !folded_part.contains(&folded) {
                    (NameOutcome::NotInText, None)
                } else if known.contains(&folded) {
                    (NameOutcome::Known, None)
                } else {
                    let line = evidence_line(chapter, &model_name, &prompt.name, &name);
                    let (id, new, changed) =
                        slate.update(folded, &surface, Origin::Llm, |candidate| add_sighting(candidate, &line))?;
                    let outcome = match (new, changed) {
                        (true, _) => NameOutcome::Proposed,
                        (false, true) => NameOutcome::Evidence,
                        (false, false) => NameOutcome::Unchanged,
                    };
                    (outcome, Some(id))
                };
                names_out.push(ExtractedName { chapter, name, outcome, candidate });
            }
        }
        let proposed = slate.proposed();
        drop(state);

        let written = if options.dry_run {
            None
        } else if proposed.is_empty() {
            if !blobs.is_empty() {
                self.ledger().file_documents(Vec::<ledger::Document>::new(), blobs)?;
            }
            // A stale head refuses even with nothing to propose, like the alarm.
            self.propose(write, &[], "extract", false)?
        } else {
            let source = match chapters.as_slice() {
                [(only, _)] => format!("extract ch{only}"),
                _ => "extract".to_owned(),
            };
            let bodies = proposed.iter().cloned().map(Body::CandidateProposed).collect();
            Some(self.submit_labelled(write, Labelled::numbered(bodies, &source), blobs)?)
        };
        Ok(Extracted {
            model: model_name,
            prompt: prompt.name.clone(),
            parts: asked,
            names: names_out,
            proposed,
            written,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::request_hash;

    fn answer(content: &str) -> Vec<u8> {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn an_answer_is_parsed_strictly() {
        let good = r#"{"names": [{"surface": "沈照", "kind": "person", "gender": "f", "reading": "Shěn Zhào", "evidence": "沈照笑道。"}]}"#;
        let names = parse_answer(&answer(good)).unwrap();
        assert_eq!(
            (names[0].surface.as_str(), names[0].kind, names[0].gender),
            ("沈照", NameKind::Person, Some(ShownGender::F))
        );
        assert_eq!(parse_answer(&answer(&format!("```json\n{good}\n```"))).unwrap(), names);
        for (bad, says) in [
            ("not json", "is not the object"),
            (
                r#"{"names": [{"surface": "沈照", "kind": "hero", "gender": null, "reading": null, "evidence": ""}]}"#,
                "unknown variant",
            ),
            (
                r#"{"names": [{"surface": "沈照", "kind": "person", "gender": null, "reading": null, "evidence": "", "x": 1}]}"#,
                "unknown field",
            ),
            (
                r#"{"names": [{"surface": "沈照", "kind": "person", "gender": null, "reading": null}]}"#,
                "missing field `evidence`",
            ),
            (
                r#"{"names": [{"surface": " ", "kind": "person", "gender": null, "reading": null, "evidence": ""}]}"#,
                "names[0].surface: 0 characters",
            ),
            (r#"{"people": []}"#, "unknown field"),
        ] {
            let why = parse_answer(&answer(bad)).unwrap_err();
            assert!(why.contains(says), "{bad}: {why}");
        }
        assert!(parse_answer(b"<html>").unwrap_err().starts_with("not a JSON chat completion"));
        assert!(parse_answer(br#"{"choices": []}"#).unwrap_err().contains("no choices[0].message.content"));
    }

    #[test]
    fn parts_are_whole_lines_within_the_limit_and_cover_the_text() {
        let line = format!("{}\n", "字".repeat(1_500));
        let text = line.repeat(5);
        let parts = parts(&text);
        assert_eq!(parts.iter().map(|part| part.chars().count()).collect::<Vec<_>>(), [3_002, 3_002, 1_501]);
        assert_eq!(parts.concat(), text);
        let long = "字".repeat(PART_CHARS_MAX * 2 + 5);
        let cut = super::parts(&long);
        assert_eq!(
            cut.iter().map(|part| part.chars().count()).collect::<Vec<_>>(),
            [PART_CHARS_MAX, PART_CHARS_MAX, 5]
        );
        assert_eq!(cut.concat(), long);
        assert!(super::parts("").is_empty() && super::parts("\n\n").is_empty());
    }

    #[test]
    fn the_same_part_asks_the_same_bytes() {
        let a = extract_request("m", "List names.", 3, "沈照笑道。");
        assert_eq!(a, extract_request("m", "List names.", 3, "沈照笑道。"));
        assert_ne!(request_hash(&a), request_hash(&extract_request("m", "List names.", 4, "沈照笑道。")));
        let value: serde_json::Value = serde_json::from_slice(&a).unwrap();
        assert_eq!(value["messages"][1]["content"], "Chapter 3.\n\n沈照笑道。");
        assert_eq!(value["temperature"], 0);
    }
}
