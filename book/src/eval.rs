//! The evaluation harness (`lorebank eval`): does the book's context make a model's
//! translations follow the glossary? The three-mode protocol of WMT25's terminology
//! task: every chunk of the chapters translated once without terminology (`none`),
//! once with the book's real context (`glossary`), and once with a random glossary
//! of the same size and shape (`random`), each translation post-checked against the
//! terms the book's assembly finds in the chunk.
//!
//! **Chunks** are the chapter's registered source text in pieces of whole lines of at
//! most [`EvalOptions::chunk_chars`] characters, keyed by their byte span as the
//! proxy keys a located chunk (`src-00000000-00001234`). The `glossary` arm's context
//! is the real assembly at the head, recorded as a receipt (the chunks of a chapter
//! chained, so sticky records carry over); every arm is checked against that receipt.
//!
//! **The random arm** keeps the context's every line but gives each injected term
//! another term's rendering (and its declared forms): the next term, in a seeded
//! cyclic permutation (Sattolo's) of all active terms by id, that the chunk does not
//! hit (so a co-occurring term does not get its own rendering back from another
//! line; the next one at all when the chunk hits every term). No term keeps its own,
//! and the same seed gives the same glossary. A model that follows whatever it is
//! given scores near zero here; one that scores as high as with the real glossary
//! is not reading it (it knew the names already), and the `glossary` arm's score
//! then says little about lorebank.
//!
//! **The request** of every arm is the same but for the context: the system message
//! is the book's proxy template ([`crate::proxy::Template`]) filled with the context
//! after [`EVAL_INSTRUCTION`] (the instruction alone for `none` or an empty context),
//! the chunk as the user message, temperature 0. Requests and answers are stored
//! like an extraction's ([`crate::exchange`]), filed after each chunk, so a report
//! re-renders from the store and an interrupted run resumes where it stopped.
//!
//! **Metrics**, per arm and chapter, all counted against the source: a check item is
//! a term the chunk's assembly injected for a hit; `adherence` is rendered items over
//! rendered, missing and wrong ones (unverifiable items are left out); gender flags
//! are words after a rendering whose ending marks the other gender; `consistency` is,
//! over the terms checked in at least two chunks, the share rendered in every one
//! (the harness sees only the book's rendering, so a name rendered the same wrong way
//! everywhere does not count as consistent); an omission is a chunk whose
//! translation-to-source length ratio is under half the arm's median; flags are
//! what a reviewer would face (missing, wrong and gender-flagged items); tokens are
//! what the answers' `usage` says. Integers and per-mille ratios only: a report is
//! the same bytes for the same answers.

use std::collections::{BTreeMap, BTreeSet};

use ledger_model::*;
use projections::Reader;
use serde::Serialize;

use crate::book::Book;
use crate::check::CheckOptions;
use crate::error::BookError;
use crate::exchange::{chat_request, message_of, model_name, Asking, Model, Prompt};
use crate::proxy::{source_chunk_key, Template};
use crate::review::names_lang;
use crate::service::WriteOptions;

/// The version of the evaluation's request, recorded in every stored exchange.
pub const EVAL_PROMPT_VERSION: u32 = 1;
/// The instruction every arm's system message starts with; `{language}` is the
/// book's source language.
pub const EVAL_INSTRUCTION: &str = "You are a literary translator. Translate the user's {language} text into \
Russian. Answer with the translation only, without notes or comments.";
/// The job an evaluation's exchanges are stored under.
pub const EVAL_JOB: &str = "eval";
/// The default size of a chunk, in characters.
pub const CHUNK_CHARS_DEFAULT: usize = 1_500;
/// The most chunks one evaluation translates, times its arms
/// (`limits::input::BOOK_JOB_CHUNKS_MAX`).
pub const EVAL_CHUNKS_MAX: usize = ledger_model::limits::input::BOOK_JOB_CHUNKS_MAX;

/// One arm of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// No terminology.
    None,
    /// The book's context.
    Glossary,
    /// A random glossary of the same shape.
    Random,
}

impl Arm {
    /// Every arm, in report order.
    pub const ALL: [Arm; 3] = [Arm::None, Arm::Glossary, Arm::Random];

    /// Its name (`none`, `glossary`, `random`).
    pub fn name(self) -> &'static str {
        match self {
            Arm::None => "none",
            Arm::Glossary => "glossary",
            Arm::Random => "random",
        }
    }

    /// The arm named `name`.
    pub fn of(name: &str) -> Option<Arm> {
        Arm::ALL.into_iter().find(|arm| arm.name() == name)
    }
}

/// How to evaluate.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The arms, each once (report order whatever the order given).
    pub arms: Vec<Arm>,
    /// The random arm's seed.
    pub seed: u64,
    /// Ask the model again even where the store holds an answer.
    pub fresh: bool,
    /// The model's name when no model is at hand (stored answers only).
    pub model_name: Option<String>,
    /// The largest chunk, in characters.
    pub chunk_chars: usize,
}

/// What one arm's translation of one chunk came to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChunkRun {
    /// The chapter.
    pub chapter: u32,
    /// The chunk's key (its byte span in the chapter's text).
    pub chunk: String,
    /// The arm.
    pub arm: Arm,
    /// The receipt of the chunk's real assembly, which every arm is checked against.
    pub receipt: Hash32,
    /// The stored exchange of the translation.
    pub exchange: Hash32,
    /// Answered from the store.
    pub stored: bool,
    /// Characters of the source chunk and of the translation.
    pub source_chars: u32,
    /// Characters of the translation.
    pub translation_chars: u32,
    /// The check's verdict on each term, by term number.
    pub verdicts: Vec<(u32, postcheck::Verdict)>,
    /// Gender flags.
    pub gender_flags: u32,
    /// Lines of the context whose rendering the random arm swapped.
    pub swapped: u32,
    /// Tokens, as the answer's `usage` says (0 when it says nothing).
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Shorter than half the arm's median ratio (set once the run is done).
    pub omission: bool,
}

/// Counts of one arm, over a chapter or the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Chunks translated.
    pub chunks: u32,
    /// Check items (terms injected for a hit, per chunk).
    pub items: u32,
    /// Items rendered.
    pub rendered: u32,
    /// Items missing.
    pub missing: u32,
    /// Items with another rendering.
    pub wrong: u32,
    /// Items the check cannot tell.
    pub unverifiable: u32,
    /// Gender flags.
    pub gender_flags: u32,
    /// Chunks flagged as omissions.
    pub omissions: u32,
    /// Tokens.
    pub prompt_tokens: u64,
    /// Tokens.
    pub completion_tokens: u64,
}

impl Tally {
    fn add(&mut self, run: &ChunkRun) {
        use postcheck::Verdict as V;
        self.chunks += 1;
        for (_, verdict) in &run.verdicts {
            self.items += 1;
            match verdict {
                V::Rendered => self.rendered += 1,
                V::Missing => self.missing += 1,
                V::WrongRendering => self.wrong += 1,
                V::Unverifiable => self.unverifiable += 1,
            }
        }
        self.gender_flags += run.gender_flags;
        self.omissions += u32::from(run.omission);
        self.prompt_tokens += run.prompt_tokens;
        self.completion_tokens += run.completion_tokens;
    }

    /// Rendered over rendered, missing and wrong items, per mille (`None` without
    /// any).
    pub fn adherence_permille(&self) -> Option<u32> {
        permille(self.rendered, self.rendered + self.missing + self.wrong)
    }

    /// Missing, wrong and gender-flagged items: what a reviewer would face.
    pub fn flags(&self) -> u32 {
        self.missing + self.wrong + self.gender_flags
    }
}

fn permille(part: u32, whole: u32) -> Option<u32> {
    (whole > 0).then(|| ((u64::from(part) * 1000 + u64::from(whole) / 2) / u64::from(whole)) as u32)
}

/// An evaluation's result.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    /// The model asked.
    pub model: String,
    /// The instruction asked with (`v1`, or the book's own `book@SEQ`).
    pub prompt: String,
    /// The random arm's seed.
    pub seed: u64,
    /// The arms run, in report order.
    pub arms: Vec<Arm>,
    /// The chapters.
    pub chapters: Vec<u32>,
    /// Every chunk of every arm, by chapter, chunk, arm.
    pub runs: Vec<ChunkRun>,
}

/// A metric a requirement can name.
pub const METRICS: &[&str] =
    &["adherence", "missing", "wrong", "gender_flags", "consistency", "omissions", "flags", "tokens"];

impl Evaluation {
    /// The counts of `arm` in `chapter` (every chapter with `None`).
    pub fn tally(&self, arm: Arm, chapter: Option<u32>) -> Tally {
        let mut tally = Tally::default();
        for run in self.runs.iter().filter(|run| run.arm == arm && chapter.is_none_or(|c| run.chapter == c)) {
            tally.add(run);
        }
        tally
    }

    /// Of the terms checked in at least two chunks of `arm`, how many were rendered in
    /// every one: (consistent, checked twice or more).
    pub fn consistency(&self, arm: Arm) -> (u32, u32) {
        let mut by_term: BTreeMap<u32, (u32, bool)> = BTreeMap::new();
        for run in self.runs.iter().filter(|run| run.arm == arm) {
            for (term, verdict) in &run.verdicts {
                let entry = by_term.entry(*term).or_insert((0, true));
                entry.0 += 1;
                entry.1 &= *verdict == postcheck::Verdict::Rendered;
            }
        }
        let twice: Vec<bool> = by_term.values().filter(|(n, _)| *n >= 2).map(|(_, all)| *all).collect();
        (twice.iter().filter(|all| **all).count() as u32, twice.len() as u32)
    }

    /// The value of `metric` (one of [`METRICS`]) for `arm` over the whole run:
    /// rates (adherence, missing, wrong, consistency) from 0 to 1, counts as counts.
    /// `None` when a rate has nothing to count.
    pub fn metric(&self, arm: Arm, metric: &str) -> Option<f64> {
        let tally = self.tally(arm, None);
        let judged = tally.rendered + tally.missing + tally.wrong;
        let rate = |part: u32, whole: u32| permille(part, whole).map(|p| f64::from(p) / 1000.0);
        match metric {
            "adherence" => rate(tally.rendered, judged),
            "missing" => rate(tally.missing, judged),
            "wrong" => rate(tally.wrong, judged),
            "consistency" => {
                let (consistent, twice) = self.consistency(arm);
                rate(consistent, twice)
            }
            "gender_flags" => Some(f64::from(tally.gender_flags)),
            "omissions" => Some(f64::from(tally.omissions)),
            "flags" => Some(f64::from(tally.flags())),
            "tokens" => Some((tally.prompt_tokens + tally.completion_tokens) as f64),
            _ => None,
        }
    }
}

/// A comparison of a requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Comparison {
    /// `>=`
    #[serde(rename = ">=")]
    AtLeast,
    /// `<=`
    #[serde(rename = "<=")]
    AtMost,
}

/// An acceptance criterion stated before the run: `glossary.adherence>=0.9`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Requirement {
    /// As written.
    pub text: String,
    /// The arm.
    pub arm: Arm,
    /// One of [`METRICS`].
    pub metric: String,
    /// How.
    pub comparison: Comparison,
    /// The bound.
    pub bound: f64,
}

impl Requirement {
    /// Reads `ARM.METRIC>=NUMBER` or `ARM.METRIC<=NUMBER`.
    pub fn parse(text: &str) -> Result<Requirement, String> {
        let bad = |why: &str| format!("--require {text:?}: {why}");
        let (left, comparison, right) = if let Some((left, right)) = text.split_once(">=") {
            (left, Comparison::AtLeast, right)
        } else if let Some((left, right)) = text.split_once("<=") {
            (left, Comparison::AtMost, right)
        } else {
            return Err(bad("expected ARM.METRIC>=NUMBER or ARM.METRIC<=NUMBER"));
        };
        let (arm, metric) =
            left.trim().split_once('.').ok_or_else(|| bad("expected ARM.METRIC before the comparison"))?;
        let arm = Arm::of(arm).ok_or_else(|| bad("the arm is none, glossary or random"))?;
        if !METRICS.contains(&metric) {
            return Err(bad(&format!("the metric is one of {}", METRICS.join(", "))));
        }
        let bound: f64 = right.trim().parse().map_err(|_| bad("the bound is not a number"))?;
        if !bound.is_finite() {
            return Err(bad("the bound is not a finite number"));
        }
        Ok(Requirement { text: text.to_owned(), arm, metric: metric.to_owned(), comparison, bound })
    }

    /// Whether `evaluation` meets it, and the value it was judged on (`None`: the arm
    /// was not run, or a rate had nothing to count, which fails).
    pub fn judge(&self, evaluation: &Evaluation) -> (bool, Option<f64>) {
        if !evaluation.arms.contains(&self.arm) {
            return (false, None);
        }
        let value = evaluation.metric(self.arm, &self.metric);
        let met = value.is_some_and(|value| match self.comparison {
            Comparison::AtLeast => value >= self.bound,
            Comparison::AtMost => value <= self.bound,
        });
        (met, value)
    }
}

/// The chunks of a chapter's text: byte spans of whole lines of at most `max`
/// characters (a longer line is a chunk of its own), blank chunks left out.
pub fn chunk_spans(text: &str, max: usize) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let (mut start, mut chars, mut at) = (0, 0, 0);
    for line in text.split_inclusive('\n') {
        let n = line.chars().count();
        if chars > 0 && chars + n > max {
            spans.push(start..at);
            (start, chars) = (at, 0);
        }
        chars += n;
        at += line.len();
    }
    spans.push(start..at);
    spans.retain(|span| !text[span.clone()].trim().is_empty());
    spans
}

/// splitmix64: the random arm's generator (no randomness but the seed's).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A cyclic permutation of `0..n` (Sattolo's algorithm: no element stays), seeded.
pub fn sattolo(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = seed;
    for i in (1..n).rev() {
        let j = (splitmix(&mut state) % i as u64) as usize;
        order.swap(i, j);
    }
    order
}

/// `line` (a format-1 glossary line of a term whose source is `src`, rendering `dst`
/// and declared forms `decl`) with the rendering and forms of another term instead;
/// `None` when the line is not of that form.
pub fn swapped_line(line: &str, src: &str, dst: &str, decl: &[String], other: (&str, &[String])) -> Option<String> {
    let rest = line.strip_prefix(src)?.strip_prefix(" -> ")?.strip_prefix(dst)?;
    let (rest, unverified) = match rest.strip_suffix(" [unverified]") {
        Some(rest) => (rest, " [unverified]"),
        None => (rest, ""),
    };
    let tags = if decl.is_empty() { rest } else { rest.strip_suffix(&format!("; {}", decl.join(", ")))? };
    let forms = if other.1.is_empty() { String::new() } else { format!("; {}", other.1.join(", ")) };
    Some(format!("{src} -> {}{tags}{forms}{unverified}", other.0))
}

/// The translation and usage of a chat completion's body, or why it is not one.
pub fn translation_of(body: &[u8]) -> Result<(String, u64, u64), String> {
    let (text, value) = message_of(body)?;
    let count = |name: &str| value.pointer(&format!("/usage/{name}")).and_then(serde_json::Value::as_u64).unwrap_or(0);
    Ok((text, count("prompt_tokens"), count("completion_tokens")))
}

impl Book {
    /// Runs the three-mode evaluation over chapters `from..=to` (their registered
    /// source texts) with `model` (or the stored answers), as the module documentation
    /// says. Records the `glossary` arm's receipts and files every new exchange after
    /// its chunk; writes no event.
    pub fn evaluate(
        &mut self,
        model: Option<&dyn Model>,
        (from, to): (u32, u32),
        options: &EvalOptions,
        write: &WriteOptions,
    ) -> Result<Evaluation, BookError> {
        let model_name = model_name(model, options.model_name.as_deref(), "to evaluate")?;
        if options.arms.is_empty() {
            return Err(BookError::InvalidField { field: "modes", message: "no arm to run".into() });
        }
        if options.chunk_chars == 0 {
            return Err(BookError::InvalidField {
                field: "chunk_chars",
                message: "a chunk holds at least 1 character".into(),
            });
        }
        let mut arms = options.arms.clone();
        arms.sort();
        arms.dedup();
        let texts = self.chapter_texts((from, to), None)?;
        let state = self.state(None)?;
        let language = match names_lang(&state, "the evaluation")? {
            names::Lang::Zh => "Chinese",
            names::Lang::Ja => "Japanese",
        };
        let prompt = Prompt::of(&state, EVAL_JOB, EVAL_INSTRUCTION, EVAL_PROMPT_VERSION);
        let instruction = prompt.text.replace("{language}", language);
        let template = Template::of(&state);
        // The random arm's renderings: every active term's, cycled.
        let active: Vec<&TermPut> = state.terms().values().filter(|term| !term.retired).map(|term| &term.put).collect();
        let cycle = sattolo(active.len(), options.seed);
        let position: BTreeMap<u32, usize> = active.iter().enumerate().map(|(at, put)| (put.id.number(), at)).collect();
        let chunks: Vec<(u32, std::ops::Range<usize>)> = texts
            .iter()
            .flat_map(|(chapter, text)| {
                chunk_spans(text, options.chunk_chars).into_iter().map(move |span| (*chapter, span))
            })
            .collect();
        if chunks.len() > EVAL_CHUNKS_MAX {
            return Err(BookError::TooLarge(format!(
                "chapters {from}-{to} make {} chunks, more than BOOK_JOB_CHUNKS_MAX ({EVAL_CHUNKS_MAX})",
                chunks.len()
            )));
        }
        let asking = Asking {
            model,
            model_name: &model_name,
            job: EVAL_JOB,
            prompt: &prompt.name,
            fresh: options.fresh,
            recorded_at_ms: write.recorded_at_ms,
            actor: write.actor.as_str(),
        };
        let check_options = CheckOptions {
            record: false,
            propose: false,
            actor: write.actor.as_str().to_owned(),
            recorded_at_ms: write.recorded_at_ms,
        };
        let mut runs = Vec::new();
        let mut previous: Option<(u32, Hash32)> = None;
        for (chapter, span) in chunks {
            let text = &texts.iter().find(|(c, _)| *c == chapter).expect("a chunk's chapter").1[span.clone()];
            let key = source_chunk_key(&span);
            let prev = previous.filter(|(c, _)| *c == chapter).map(|(_, id)| id);
            let assembled = self.assemble_chunk(&Reader::Full, chapter, &key, text, prev, true)?;
            previous = Some((chapter, assembled.id));
            let receipt = assembled.id.to_hex();
            let mut blobs = Vec::new();
            for &arm in &arms {
                let (context, swapped) = match arm {
                    Arm::None => (String::new(), 0),
                    Arm::Glossary => (assembled.assembly.context.clone(), 0),
                    Arm::Random => {
                        let hit: BTreeSet<u32> = assembled.assembly.hits.iter().map(|hit| hit.term).collect();
                        swapped_context(&assembled.assembly, &active, &cycle, &position, &hit)
                    }
                };
                let system = template.system(&context, Some(&instruction)).unwrap_or_else(|| instruction.clone());
                let request = chat_request(&model_name, &system, text, false);
                let where_ = format!("chapter {chapter} chunk {key} ({})", arm.name());
                let answered = self.ask(&asking, &request, &where_, &blobs)?;
                let (translation, prompt_tokens, completion_tokens) = translation_of(answered.answer.as_bytes())
                    .map_err(|why| {
                        BookError::Model(format!("{where_}: the answer of {model_name} is refused: {why}"))
                    })?;
                blobs.extend(answered.blobs);
                let checked = self.check(&receipt, &translation, &check_options)?;
                let items = &checked.stored.check.items;
                runs.push(ChunkRun {
                    chapter,
                    chunk: key.clone(),
                    arm,
                    receipt: assembled.id,
                    exchange: answered.exchange,
                    stored: answered.stored,
                    source_chars: text.chars().count() as u32,
                    translation_chars: translation.chars().count() as u32,
                    verdicts: items.iter().map(|item| (item.term, item.verdict)).collect(),
                    gender_flags: items.iter().map(|item| item.agreement.len() as u32).sum(),
                    swapped,
                    prompt_tokens,
                    completion_tokens,
                    omission: false,
                });
            }
            if !blobs.is_empty() {
                self.ledger().file_documents(Vec::<ledger::Document>::new(), blobs)?;
            }
        }
        mark_omissions(&mut runs);
        Ok(Evaluation {
            model: model_name,
            prompt: prompt.name.clone(),
            seed: options.seed,
            arms,
            chapters: (from..=to).collect(),
            runs,
        })
    }
}

/// The random arm's context: `assembly`'s with each injected term's line given the
/// rendering and forms of the term after it in `cycle` (positions in `active`) that
/// the chunk does not hit (so the chunk's other terms do not get their own rendering
/// back from another line), or of the next one when the chunk hits them all; and how
/// many lines were swapped.
fn swapped_context(
    assembly: &assembly::assemble::Assembly,
    active: &[&TermPut],
    cycle: &[usize],
    position: &BTreeMap<u32, usize>,
    hit: &BTreeSet<u32>,
) -> (String, u32) {
    let mut lines: Vec<String> = assembly.context.split('\n').map(str::to_owned).collect();
    let mut swapped = 0;
    for injected in &assembly.injected {
        let Some(&at) = position.get(&injected.term) else { continue };
        let mut other = cycle[at];
        while other != at && hit.contains(&active[other].id.number()) {
            other = cycle[other];
        }
        if other == at {
            other = cycle[at];
        }
        if other == at {
            continue;
        }
        let (put, replacement) = (active[at], active[other]);
        let Some(line) =
            swapped_line(&injected.line, &put.src, &put.dst, &put.decl, (&replacement.dst, &replacement.decl))
        else {
            continue;
        };
        if let Some(slot) = lines.iter_mut().find(|slot| **slot == injected.line) {
            *slot = line;
            swapped += 1;
        }
    }
    (lines.join("\n"), swapped)
}

/// Marks each run whose translation-to-source length ratio is under half its arm's
/// median (ratios in per mille, the median the lower middle).
fn mark_omissions(runs: &mut [ChunkRun]) {
    let ratio = |run: &ChunkRun| u64::from(run.translation_chars) * 1000 / u64::from(run.source_chars.max(1));
    for arm in Arm::ALL {
        let mut ratios: Vec<u64> = runs.iter().filter(|run| run.arm == arm).map(ratio).collect();
        if ratios.is_empty() {
            continue;
        }
        ratios.sort_unstable();
        let median = ratios[(ratios.len() - 1) / 2];
        for run in runs.iter_mut().filter(|run| run.arm == arm) {
            run.omission = ratio(run) * 2 < median;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sattolo_moves_every_element_and_follows_the_seed() {
        for n in [2, 3, 10, 101] {
            for seed in 0..20 {
                let cycle = sattolo(n, seed);
                assert!(cycle.iter().enumerate().all(|(i, &j)| i != j), "n {n} seed {seed}: {cycle:?}");
                let mut sorted = cycle.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>());
                assert_eq!(cycle, sattolo(n, seed));
            }
        }
        assert_ne!(sattolo(50, 1), sattolo(50, 2));
        assert_eq!(sattolo(1, 5), [0]);
    }

    #[test]
    fn a_line_gets_the_other_rendering_and_its_forms() {
        let decl = vec!["Шэнь Чжао".to_owned()];
        let other = vec!["Гу Ханьчуаня".to_owned(), "Гу Ханьчуаню".to_owned()];
        let line = "沈照 -> Шэнь Чжао #character, m; Шэнь Чжао [unverified]";
        assert_eq!(
            swapped_line(line, "沈照", "Шэнь Чжао", &decl, ("Гу Ханьчуань", &other)).unwrap(),
            "沈照 -> Гу Ханьчуань #character, m; Гу Ханьчуаня, Гу Ханьчуаню [unverified]"
        );
        assert_eq!(
            swapped_line("雾川 -> Мглистая река", "雾川", "Мглистая река", &[], ("Лампа", &[])).unwrap(),
            "雾川 -> Лампа"
        );
        assert_eq!(swapped_line("other line", "雾川", "Мглистая река", &[], ("Лампа", &[])), None);
    }

    #[test]
    fn requirements_are_read_and_judged() {
        let requirement = Requirement::parse("glossary.adherence>=0.9").unwrap();
        assert_eq!(
            (requirement.arm, requirement.comparison, requirement.bound),
            (Arm::Glossary, Comparison::AtLeast, 0.9)
        );
        for (bad, says) in [
            ("glossary.adherence>0.9", "expected ARM.METRIC>="),
            ("all.adherence>=0.9", "the arm is"),
            ("glossary.speed>=1", "the metric is one of"),
            ("glossary.adherence>=high", "not a number"),
            ("adherence>=0.9", "expected ARM.METRIC before"),
        ] {
            assert!(Requirement::parse(bad).unwrap_err().contains(says), "{bad}");
        }
        let run = |arm, verdict| ChunkRun {
            chapter: 1,
            chunk: "k".into(),
            arm,
            receipt: Hash32([0; 32]),
            exchange: Hash32([0; 32]),
            stored: true,
            source_chars: 10,
            translation_chars: 12,
            verdicts: vec![(1, verdict), (2, postcheck::Verdict::Rendered)],
            gender_flags: 0,
            swapped: 0,
            prompt_tokens: 5,
            completion_tokens: 6,
            omission: false,
        };
        let evaluation = Evaluation {
            model: "m".into(),
            prompt: "v1".into(),
            seed: 0,
            arms: vec![Arm::Glossary],
            chapters: vec![1],
            runs: vec![
                run(Arm::Glossary, postcheck::Verdict::Rendered),
                run(Arm::Glossary, postcheck::Verdict::Missing),
            ],
        };
        assert_eq!(evaluation.metric(Arm::Glossary, "adherence"), Some(0.75));
        assert_eq!(evaluation.consistency(Arm::Glossary), (1, 2));
        assert_eq!(evaluation.metric(Arm::Glossary, "tokens"), Some(22.0));
        assert_eq!(requirement.judge(&evaluation), (false, Some(0.75)));
        assert_eq!(Requirement::parse("glossary.adherence>=0.75").unwrap().judge(&evaluation), (true, Some(0.75)));
        assert_eq!(Requirement::parse("random.adherence<=0.3").unwrap().judge(&evaluation), (false, None));
    }

    #[test]
    fn a_chunk_under_half_the_median_ratio_is_an_omission() {
        let mut runs: Vec<ChunkRun> = [120, 110, 100, 40]
            .into_iter()
            .map(|chars| ChunkRun {
                chapter: 1,
                chunk: "k".into(),
                arm: Arm::None,
                receipt: Hash32([0; 32]),
                exchange: Hash32([0; 32]),
                stored: true,
                source_chars: 100,
                translation_chars: chars,
                verdicts: Vec::new(),
                gender_flags: 0,
                swapped: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                omission: false,
            })
            .collect();
        mark_omissions(&mut runs);
        assert_eq!(runs.iter().map(|run| run.omission).collect::<Vec<_>>(), [false, false, false, true]);
    }

    #[test]
    fn chunks_are_whole_lines_and_cover_the_text_but_blank_ones() {
        let text = "甲乙丙\n丁戊\n\n己庚辛壬\n";
        let spans = chunk_spans(text, 5);
        let pieces: Vec<&str> = spans.iter().map(|span| &text[span.clone()]).collect();
        assert_eq!(pieces, ["甲乙丙\n", "丁戊\n\n", "己庚辛壬\n"]);
        assert!(chunk_spans("\n\n", 5).is_empty());
    }
}
