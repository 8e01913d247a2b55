//! Context assembly: the pure function from (frozen snapshot, chapter, chunk text,
//! previous receipt's recent hits) to the exact bytes injected into the prompt, with
//! every decision explained.
//!
//! Steps (DESIGN §6): fold the chunk and find keys leftmost-longest; per hit, gate by
//! chapter window (`spoiler_window` before a record starts, `out_of_window` after it
//! ends), by verdict (`blocked_by_disposition`), by secondary keys, then by sense: the
//! book's conflict policy settles several senses that pass (`flag`: all ambiguous,
//! `sense_collision`; `prefer_specific`, `prefer_priority`, `prefer_approved`: one
//! wins and the others are rejected, each decision naming the policy), then status
//! (`unreviewed`, `flagged_for_verification`); under a `prefer_*` policy, records
//! found in the chunk that render the same dst are settled the same way; add sticky
//! records (hit in the previous chunks of the chapter) and constant records; order
//! deterministically (constant, confirmed by first occurrence, sticky, ambiguous;
//! ties by priority, then id); in a book that cascades, match the notes of those
//! entries and the summaries shown, round by round to the declared depth, and append
//! what they name, gated as hits are; from render format 2, add the rules in scope (judged
//! on the records the chunk calls for, its chapter, and whether it has dialogue or
//! narration), gated by window and verdict like terms, ordered confirmed first by
//! priority, then id; fill the token budget first-fit, terms before rules, logging
//! what did not fit (`budget`); add the summaries shown at the chapter
//! (`projections::read::summary_rank`: the book, arc recaps, the previous chapter);
//! from render format 3, show the demonstrations offered for the terms injected for
//! a hit, in the budget left (`assemble_with`); render.
//!
//! No I/O, no clock, no randomness, no hash-map iteration: the same inputs give the
//! same bytes on any machine.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ledger_model::{ConflictPolicy, Gender, KeyLogic, RecordId, RecordKind, Scope, Selector, Status, Verdict, Window};
use projections::frozen::{Frozen, RuleRef, TermIdx, TermRef};
use projections::read::summary_rank;
use serde::{Deserialize, Serialize};

/// Render format versions this build can produce. Every released version stays.
/// Format 2 is format 1 plus a `[rules]` block; without rules it renders the same
/// bytes. Format 3 is format 2 plus an `[examples]` block (demonstrations: an earlier
/// source sentence and its checked translation for a term the model gets wrong);
/// without examples it renders the same bytes as format 2.
pub const RENDER_FORMATS: &[u16] = &[1, 2, 3];
/// The first render format with an `[examples]` block.
pub const EXAMPLES_FORMAT: u16 = 3;
/// Token estimator versions this build can compute.
pub const TOKEN_ESTIMATORS: &[u16] = &[1];

/// The three-way decision on a record found in a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Injected as authoritative.
    Confirmed,
    /// Injected, marked `[unverified]`; the output must be checked.
    Ambiguous,
    /// Not injected; the reason says why.
    Rejected,
}

/// Why a record was rejected, marked ambiguous, or evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The record's window starts after this chapter: injecting it would leak a spoiler.
    SpoilerWindow,
    /// The record's window ended before this chapter (superseded or expired).
    OutOfWindow,
    /// Several senses remain for one surface after secondary keys.
    SenseCollision,
    /// The record is not approved.
    Unreviewed,
    /// An editor flagged the record for verification.
    FlaggedForVerification,
    /// An editor rejected the record.
    BlockedByDisposition,
    /// The record's secondary keys do not hold in this chunk.
    SecondaryKeys,
    /// Did not fit the token budget.
    Budget,
    /// Settled by the `prefer_specific` policy: it won (confirmed) or lost (rejected)
    /// to a record whose secondary keys matched.
    PolicyPreferSpecific,
    /// Settled by the `prefer_priority` policy: it won or lost on priority.
    PolicyPreferPriority,
    /// Settled by the `prefer_approved` policy: it won or lost on review status.
    PolicyPreferApproved,
}

/// How an injected entry got into the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// Constant record inside its window.
    Constant,
    /// Found in this chunk.
    Hit,
    /// Found in a previous chunk of the chapter (scene inertia).
    Sticky,
    /// Named by the note of a record injected, or by a summary shown (cascading
    /// activation); the assembly's `cascade` list says which and at what depth.
    Cascade,
}

/// One occurrence of a key in the chunk and the decision on one record it names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitRecord {
    /// Term number (`T-<term>`).
    pub term: u32,
    /// The surface as written in the chunk.
    pub text: String,
    /// Byte span in the chunk.
    pub bytes: (u32, u32),
    /// Char span in the chunk.
    pub chars: (u32, u32),
    /// The decision.
    pub disposition: Disposition,
    /// Why, unless plainly confirmed.
    pub reason: Option<Reason>,
}

/// One entry of the rendered glossary block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injected {
    /// Term number.
    pub term: u32,
    /// How it got in.
    pub via: Via,
    /// Marked `[unverified]`.
    pub unverified: bool,
    /// Estimated tokens of its line.
    pub tokens: u32,
    /// The rendered line.
    pub line: String,
}

/// A demonstration offered for a term (render format 3): a source sentence of an
/// earlier chapter and its translated sentence, in which the term was rendered as
/// the book renders it now. The caller chooses at most one per term (the book's
/// pool, or a receipt's record on replay); assembly decides whether it is shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// Term number.
    pub term: u32,
    /// The source sentence, as written.
    pub source: String,
    /// Its translation, as written.
    pub target: String,
    /// Where the pair comes from: the chapter, the receipt of its chunk and the
    /// stored check of the translation (provenance, not rendered).
    pub chapter: u32,
    /// The receipt of the chunk the source sentence is from.
    pub receipt: ledger_model::Hash32,
    /// The stored check whose translation the target sentence is from.
    pub check: ledger_model::Hash32,
}

/// A demonstration shown in the `[examples]` block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectedExample {
    /// What was shown.
    pub example: Example,
    /// Estimated tokens of its line.
    pub tokens: u32,
    /// The rendered line.
    pub line: String,
}

/// Render format 3 of one example line: the source sentence, ` -> `, its
/// translation, each on one line (runs of whitespace become one space).
pub fn render_example_v3(source: &str, target: &str) -> String {
    let mut line = String::with_capacity(source.len() + target.len() + 4);
    for (idx, word) in source.split_whitespace().enumerate() {
        if idx > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
    line.push_str(" -> ");
    for (idx, word) in target.split_whitespace().enumerate() {
        if idx > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
    line
}

/// The decision on a rule in scope in the chunk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleDecision {
    /// Rule number (`R-<rule>`).
    pub rule: u32,
    /// The decision: injected (confirmed, ambiguous) or not (rejected).
    pub disposition: Disposition,
    /// Why, unless plainly confirmed.
    pub reason: Option<Reason>,
}

/// The decision on a record a cascade found: named by the note of `by` (a term
/// injected) or by the text of `by` (a summary shown), in round `depth`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CascadeDecision {
    /// Term number (`T-<term>`) of the record found.
    pub term: u32,
    /// The record whose text named it.
    pub by: RecordId,
    /// The round: 1 for what the direct entries and the summaries name, 2 for what
    /// the records of round 1 name, and so on.
    pub depth: u8,
    /// The decision: brought in (confirmed, ambiguous) or not (rejected); an entry
    /// brought in may still be evicted by the budget.
    pub disposition: Disposition,
    /// Why, unless plainly confirmed.
    pub reason: Option<Reason>,
}

/// One rule of the rendered `[rules]` block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectedRule {
    /// Rule number.
    pub rule: u32,
    /// Marked `[unverified]`.
    pub unverified: bool,
    /// Estimated tokens of its line.
    pub tokens: u32,
    /// The rendered line.
    pub line: String,
}

/// Counts describing the retrieval, as stored in receipts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrievalState {
    /// Hits confirmed by exact match in this chunk.
    pub n_exact_hits: u32,
    /// Entries added by scene inertia.
    pub n_sticky: u32,
    /// Constant entries added.
    pub n_constant: u32,
    /// Entries injected as ambiguous.
    pub n_ambiguous: u32,
    /// Hits rejected by the spoiler gate.
    pub n_spoiler_blocked: u32,
    /// Entries evicted by the budget.
    pub n_budget_evicted: u32,
    /// Whether the embedding tier contributed (never, on the hot path).
    pub embedding_tier_used: bool,
}

/// The result of one assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assembly {
    /// The exact injected context.
    pub context: String,
    /// Every hit with its decision, in text order.
    pub hits: Vec<HitRecord>,
    /// Injected entries, in render order.
    pub injected: Vec<Injected>,
    /// Entries evicted by the budget, in the order they were tried.
    pub evicted: Vec<u32>,
    /// Sticky records carried in from previous chunks.
    pub sticky_in: Vec<u32>,
    /// Summary numbers included (`S-<n>`), in render order.
    pub summaries: Vec<u32>,
    /// Every rule in scope with its decision, in the order they were tried.
    pub rules: Vec<RuleDecision>,
    /// Injected rules, in render order.
    pub injected_rules: Vec<InjectedRule>,
    /// Every record a cascade found, with its decision, in the order they were found
    /// (empty unless the book cascades).
    pub cascade: Vec<CascadeDecision>,
    /// Demonstrations shown (render format 3), in render order.
    pub examples: Vec<InjectedExample>,
    /// Term numbers hit in this chunk and the previous ones, newest first, for the
    /// next chunk's sticky set (at most `sticky_chunks` chunks).
    pub recent: Vec<Vec<u32>>,
    /// Counts.
    pub retrieval: RetrievalState,
}

/// What the previous receipt of the same chapter passes on.
#[derive(Clone, Copy, Debug)]
pub struct Previous<'a> {
    /// Its chapter: sticky records carry over only within a chapter.
    pub chapter: u32,
    /// Its `recent` list.
    pub recent: &'a [Vec<u32>],
}

/// Why a chunk cannot be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssembleError {
    /// Chapter 0.
    #[error("chapters are numbered from 1, got 0")]
    ChapterZero,
    /// The snapshot asks for a render format this build does not have.
    #[error("render format {0} is unknown to this build (known: {RENDER_FORMATS:?})")]
    UnknownRenderFormat(u16),
    /// The snapshot asks for a token estimator this build does not have.
    #[error("token estimator {0} is unknown to this build (known: {TOKEN_ESTIMATORS:?})")]
    UnknownEstimator(u16),
    /// The chunk cannot be folded.
    #[error("chunk text: {0}")]
    Text(String),
}

/// Estimated tokens of a line, estimator v1: an ideograph, kana or hangul syllable
/// counts 1, any other char 0.3; rounded up, plus 1 for the line break.
pub fn estimate_tokens_v1(line: &str) -> u32 {
    tokens_from_tenths(tenths_v1(line))
}

/// Estimator v1's cost of `text` in tenths of a token: 3 for every char, 7 more for
/// a wide one. Counts chars by their lead bytes (branch-free, so the loop is
/// vectorized), and decodes only three- and four-byte sequences (the only ones that
/// may be wide), skipping whole blocks of bytes without their lead bytes (most of a
/// line renders in Cyrillic or Latin); the same sum as [`tenths_v1_by_char`] (a
/// property test holds them equal).
fn tenths_v1(text: &str) -> u64 {
    const BLOCK: usize = 16;
    let bytes = text.as_bytes();
    let n_chars: u64 = bytes.iter().map(|&byte| u64::from(byte & 0xC0 != 0x80)).sum();
    let mut n_wide = 0u64;
    for (block_idx, block) in bytes.chunks(BLOCK).enumerate() {
        if block.iter().fold(0u8, |max, &byte| max.max(byte)) < 0xE0 {
            continue;
        }
        for (offset, &byte) in block.iter().enumerate() {
            if byte >= 0xE0 {
                n_wide += u64::from(wide_v1(decode_at(bytes, block_idx * BLOCK + offset)));
            }
        }
    }
    3 * n_chars + 7 * n_wide
}

/// The char whose three- or four-byte sequence starts at `at` of valid UTF-8.
fn decode_at(bytes: &[u8], at: usize) -> u32 {
    let tail = |offset: usize| u32::from(bytes.get(at + offset).copied().unwrap_or(0x80) & 0x3F);
    let lead = bytes[at];
    if lead < 0xF0 {
        (u32::from(lead & 0x0F) << 12) | (tail(1) << 6) | tail(2)
    } else {
        (u32::from(lead & 0x07) << 18) | (tail(1) << 12) | (tail(2) << 6) | tail(3)
    }
}

/// Whether estimator v1 counts a char as a whole token: an ideograph, kana or hangul
/// syllable.
fn wide_v1(c: u32) -> bool {
    matches!(c, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F | 0x20000..=0x3FFFF)
}

/// Estimator v1 as it is defined, char by char: the reference [`tenths_v1`] is held to.
#[cfg(test)]
fn tenths_v1_by_char(text: &str) -> u64 {
    text.chars().map(|c| if wide_v1(u32::from(c)) { 10 } else { 3 }).sum()
}

fn tokens_from_tenths(tenths: u64) -> u32 {
    u32::try_from(tenths.div_ceil(10)).unwrap_or(u32::MAX).saturating_add(1)
}

/// What a render-format-1 glossary line is made of.
#[derive(Clone, Debug)]
pub struct LineParts<'a> {
    /// Source surface.
    pub src: &'a str,
    /// Rendering.
    pub dst: &'a str,
    /// Tags: kind, then gender, whichever are set.
    pub tags: Vec<&'a str>,
    /// Declension forms.
    pub decl: Vec<&'a str>,
    /// Marked `[unverified]`.
    pub unverified: bool,
}

impl LineParts<'_> {
    /// The rendered line (format 1).
    pub fn render(&self) -> String {
        let mut line = String::new();
        write_line_v1(
            &mut line,
            self.src,
            self.dst,
            self.tags.iter().copied(),
            self.decl.iter().copied(),
            self.unverified,
        );
        line
    }
}

/// Appends a format-1 line made of these parts to `line`.
fn write_line_v1<'a>(
    line: &mut String,
    src: &str,
    dst: &str,
    tags: impl Iterator<Item = &'a str>,
    decl: impl Iterator<Item = &'a str>,
    unverified: bool,
) {
    line.reserve(64 + src.len() + dst.len());
    line.push_str(src);
    line.push_str(" -> ");
    line.push_str(dst);
    for (tag_idx, tag) in tags.enumerate() {
        line.push_str(if tag_idx == 0 { " #" } else { ", " });
        line.push_str(tag);
    }
    for (form_idx, form) in decl.enumerate() {
        line.push_str(if form_idx == 0 { "; " } else { ", " });
        line.push_str(form);
    }
    if unverified {
        line.push_str(" [unverified]");
    }
}

/// Appends a term's format-1 line to `line`, without collecting its parts.
fn write_term_line_v1(line: &mut String, term: TermRef<'_>, unverified: bool) {
    let tags = term.kind().into_iter().chain(gender_tag(term.gender()));
    write_line_v1(line, term.src(), term.dst(), tags, term.decl(), unverified);
}

fn gender_tag(gender: Option<Gender>) -> Option<&'static str> {
    match gender? {
        Gender::Masculine => Some("m"),
        Gender::Feminine => Some("f"),
        Gender::Neuter => Some("n"),
        Gender::Plural => Some("pl"),
    }
}

/// Render format v1 of one glossary line:
/// `萧炎 -> Сяо Янь #character, m; Сяо Яня, Сяо Яню [unverified]`.
pub fn render_line_v1(term: TermRef<'_>, unverified: bool) -> String {
    let mut line = String::new();
    write_term_line_v1(&mut line, term, unverified);
    line
}

/// Render format 2 of one rule line: the rule's text on one line (runs of
/// whitespace, line breaks included, become one space), then ` [unverified]`.
pub fn render_rule_v2(text: &str, unverified: bool) -> String {
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if unverified {
        line.push_str(" [unverified]");
    }
    line
}

/// Whether a chunk has dialogue (text inside quotation marks: `“…”`, `「…」`, `『…』`,
/// `"…"`) and narration (a letter or digit outside them). A mark left open runs to
/// the end of the chunk.
pub fn voices(text: &str) -> (bool, bool) {
    let (mut dialogue, mut narration) = (false, false);
    // The closing marks still awaited, innermost last.
    let mut open: Vec<char> = Vec::new();
    for c in text.chars() {
        match c {
            '“' => open.push('”'),
            '「' => open.push('」'),
            '『' => open.push('』'),
            '"' if open.last() == Some(&'"') => {
                open.pop();
            }
            '"' => open.push('"'),
            _ if open.last() == Some(&c) => {
                open.pop();
            }
            _ if c.is_alphanumeric() => {
                if open.is_empty() {
                    narration = true;
                } else {
                    dialogue = true;
                }
            }
            _ => {}
        }
    }
    (dialogue, narration)
}

/// Whether a term counts as approved for the `prefer_approved` policy: accepted, or
/// approved and not flagged for verification.
fn approved(term: TermRef<'_>) -> bool {
    term.verdict() == Some(Verdict::Accept)
        || (term.status() == Status::Approved && term.verdict() != Some(Verdict::Verify))
}

/// The decision a lone live term gets from its verdict and status.
fn status_decision(term: TermRef<'_>) -> (Disposition, Option<Reason>) {
    match (term.verdict(), term.status()) {
        (Some(Verdict::Accept), _) => (Disposition::Confirmed, None),
        (Some(Verdict::Verify), _) => (Disposition::Ambiguous, Some(Reason::FlaggedForVerification)),
        (_, Status::Approved) => (Disposition::Confirmed, None),
        _ => (Disposition::Ambiguous, Some(Reason::Unreviewed)),
    }
}

/// The one term of `terms` that `policy` prefers, with the reason naming the policy;
/// `None` under `flag`, or when no single term is preferred (a tie).
fn settle(frozen: &Frozen, policy: ConflictPolicy, terms: &[TermIdx]) -> Option<(TermIdx, Option<Reason>)> {
    let (reason, preferred): (Reason, Vec<TermIdx>) = match policy {
        ConflictPolicy::Flag => return None,
        ConflictPolicy::PreferSpecific => (
            Reason::PolicyPreferSpecific,
            terms.iter().copied().filter(|&idx| frozen.term(idx).secondary().is_some()).collect(),
        ),
        ConflictPolicy::PreferPriority => {
            let top = terms.iter().map(|&idx| frozen.term(idx).priority()).max()?;
            (
                Reason::PolicyPreferPriority,
                terms.iter().copied().filter(|&idx| frozen.term(idx).priority() == top).collect(),
            )
        }
        ConflictPolicy::PreferApproved => {
            (Reason::PolicyPreferApproved, terms.iter().copied().filter(|&idx| approved(frozen.term(idx))).collect())
        }
    };
    match preferred.as_slice() {
        [winner] => Some((*winner, Some(reason))),
        _ => None,
    }
}

struct Candidate {
    term_idx: TermIdx,
    first_at: usize,
    unverified: bool,
    reason: Option<Reason>,
}

/// What folding, matching and gating found in a chunk: every hit with its decision,
/// in text order; the records the hits call for (confirmed or ambiguous), by first
/// occurrence; and the counts so far.
struct Found {
    hits: Vec<HitRecord>,
    from_hits: Vec<Candidate>,
    retrieval: RetrievalState,
}

/// The records a chunk calls for, in render order, each with how it got in and
/// whether it is marked unverified; and the sticky ones among them, by priority.
struct Ordered {
    records: Vec<(TermIdx, Via, bool)>,
    sticky: Vec<TermIdx>,
}

/// A rule in scope that its gates let through, waiting for the budget: unverified,
/// priority, number, reason, the rule.
type RuleCandidate<'f> = (bool, i32, u32, Option<Reason>, RuleRef<'f>);

/// What the budget let in, and what it turned away.
struct Budgeted {
    injected: Vec<Injected>,
    evicted: Vec<u32>,
    injected_rules: Vec<InjectedRule>,
    n_rules_evicted: u32,
    /// Tokens the terms and rules let in take.
    used: u32,
}

/// A summary shown at the chapter: its rank, number, chapters and text.
type Shown<'f> = (u8, u32, u32, u32, &'f str);

/// Assembles the context of one chunk, with no demonstrations offered. Pure and
/// deterministic ([`assemble_with`]).
pub fn assemble(
    frozen: &Frozen,
    chapter: u32,
    text: &str,
    previous: Option<Previous<'_>>,
) -> Result<Assembly, AssembleError> {
    assemble_with(frozen, chapter, text, previous, &[])
}

/// Assembles the context of one chunk. Pure and deterministic. Each step is a
/// function of its own, in the order of the module doc. `examples` are the
/// demonstrations offered (at most one per term is used, the first); under render
/// format 3 an example is shown for a term injected for a hit in this chunk, in
/// injection order, as long as the budget left after terms and rules holds it.
pub fn assemble_with(
    frozen: &Frozen,
    chapter: u32,
    text: &str,
    previous: Option<Previous<'_>>,
    examples: &[Example],
) -> Result<Assembly, AssembleError> {
    if chapter == 0 {
        return Err(AssembleError::ChapterZero);
    }
    let config = frozen.assembly();
    if !RENDER_FORMATS.contains(&config.render_format) {
        return Err(AssembleError::UnknownRenderFormat(config.render_format));
    }
    if !TOKEN_ESTIMATORS.contains(&config.token_estimator) {
        return Err(AssembleError::UnknownEstimator(config.token_estimator));
    }
    let policy = frozen.conflict_policy();
    let mut found = fold_match_and_gate(frozen, policy, chapter, text)?;
    let settled_out = settle_shared_renderings(frozen, policy, &mut found);
    let mut ordered = order(frozen, chapter, previous, config.sticky_chunks, &found.from_hits, &settled_out);
    let summaries = summaries_shown(frozen, chapter);
    let cascade = cascade(frozen, policy, chapter, text, &mut ordered.records, &summaries, &settled_out)?;
    let (mut rule_decisions, rule_candidates) = if config.render_format >= 2 {
        rules_in_scope(frozen, chapter, text, &ordered.records)
    } else {
        (Vec::new(), Vec::new())
    };
    let budgeted = fill_budget(
        frozen,
        config.token_budget,
        &ordered.records,
        rule_candidates,
        &mut rule_decisions,
        &mut found.retrieval,
    );
    rule_decisions.sort_by_key(|decision| decision.rule);
    found.retrieval.n_budget_evicted = budgeted.evicted.len() as u32 + budgeted.n_rules_evicted;
    let examples = if config.render_format >= EXAMPLES_FORMAT {
        fill_examples(config.token_budget.saturating_sub(budgeted.used), &budgeted.injected, examples)
    } else {
        Vec::new()
    };
    let context = render(&budgeted.injected, &budgeted.injected_rules, &examples, &summaries);
    let recent = recent(frozen, chapter, previous, config.sticky_chunks, &found.from_hits);
    debug_assert!(found.hits.windows(2).all(|pair| pair[0].bytes.0 <= pair[1].bytes.0), "hits in text order");
    debug_assert!(recent.len() <= config.sticky_chunks as usize);
    Ok(Assembly {
        context,
        hits: found.hits,
        injected: budgeted.injected,
        evicted: budgeted.evicted,
        sticky_in: ordered.sticky.iter().map(|&idx| frozen.term(idx).number()).collect(),
        summaries: summaries.iter().map(|(_, number, _, _, _)| *number).collect(),
        rules: rule_decisions,
        injected_rules: budgeted.injected_rules,
        cascade,
        examples,
        recent,
        retrieval: found.retrieval,
    })
}

/// Demonstrations (render format 3): for each term injected for a hit in this chunk,
/// in injection order, the first example offered for it, first-fit into what the
/// budget has `left` after terms and rules. What does not fit is left out (the
/// glossary line is the term's entry; an example only adds to it).
fn fill_examples(mut left: u32, injected: &[Injected], offered: &[Example]) -> Vec<InjectedExample> {
    let mut first_of: BTreeMap<u32, &Example> = BTreeMap::new();
    for example in offered {
        first_of.entry(example.term).or_insert(example);
    }
    let mut shown = Vec::new();
    for entry in injected.iter().filter(|entry| entry.via == Via::Hit) {
        let Some(example) = first_of.get(&entry.term) else { continue };
        let line = render_example_v3(&example.source, &example.target);
        let tokens = estimate_tokens_v1(&line);
        if tokens > left {
            continue;
        }
        left -= tokens;
        shown.push(InjectedExample { example: (*example).clone(), tokens, line });
    }
    shown
}

/// Whether `term`'s secondary keys hold in the folded chunk (a term without any holds).
fn secondary_holds(frozen: &Frozen, folded: &str, term: TermRef<'_>) -> bool {
    let Some((logic, keys)) = term.secondary() else { return true };
    let profile = frozen.matcher().profile();
    let mut present = keys.map(|key| folded.contains(profile.fold(key).as_str()));
    match logic {
        KeyLogic::AndAny => present.any(|p| p),
        KeyLogic::AndAll => present.all(|p| p),
        KeyLogic::NotAny => !present.any(|p| p),
        KeyLogic::NotAll => !present.all(|p| p),
    }
}

/// The gate of one found surface, with its scratch lists reused from hit to hit
/// (postings are short and hits are many): the decision on every record the surface
/// names, by window (`spoiler_window`, `out_of_window`), verdict, secondary keys,
/// then the conflict policy among the senses that pass, then status.
#[derive(Default)]
struct Gate {
    terms: Vec<TermIdx>,
    usable: Vec<TermIdx>,
    starts_later: Vec<TermIdx>,
    live: Vec<TermIdx>,
    decisions: Vec<(TermIdx, Disposition, Option<Reason>)>,
}

impl Gate {
    /// Decides every record the matcher `values` name at `chapter`, in id order.
    fn decide(
        &mut self,
        frozen: &Frozen,
        policy: ConflictPolicy,
        chapter: u32,
        values: &[u32],
        secondary_holds: &dyn Fn(TermRef<'_>) -> bool,
    ) -> &[(TermIdx, Disposition, Option<Reason>)] {
        let Gate { terms, usable, starts_later, live, decisions } = self;
        terms.clear();
        usable.clear();
        starts_later.clear();
        decisions.clear();
        live.clear();
        for value in values {
            let Some(surface) = frozen.surface(*value) else { continue };
            let term_idx = surface.term();
            terms.push(term_idx);
            let term = frozen.term(term_idx);
            if surface.in_window(chapter) && term.in_window(chapter) {
                usable.push(term_idx);
            } else {
                let since = surface.window().map(|w| w.since).unwrap_or(u32::MAX);
                if chapter < since {
                    starts_later.push(term_idx);
                }
            }
        }
        for set in [&mut *terms, &mut *usable, &mut *starts_later] {
            set.sort_unstable();
            set.dedup();
        }
        for &term_idx in terms.iter().filter(|term_idx| usable.binary_search(term_idx).is_err()) {
            let reason =
                if starts_later.binary_search(&term_idx).is_ok() { Reason::SpoilerWindow } else { Reason::OutOfWindow };
            decisions.push((term_idx, Disposition::Rejected, Some(reason)));
        }
        for &term_idx in usable.iter() {
            let term = frozen.term(term_idx);
            if term.verdict() == Some(Verdict::Reject) {
                decisions.push((term_idx, Disposition::Rejected, Some(Reason::BlockedByDisposition)));
            } else if !secondary_holds(term) {
                decisions.push((term_idx, Disposition::Rejected, Some(Reason::SecondaryKeys)));
            } else {
                live.push(term_idx);
            }
        }
        let settled = match live.as_slice() {
            [] => None,
            [only] => Some((*only, None)),
            _ => settle(frozen, policy, live),
        };
        match settled {
            None => {
                for &term_idx in live.iter() {
                    decisions.push((term_idx, Disposition::Ambiguous, Some(Reason::SenseCollision)));
                }
            }
            Some((winner, policy_reason)) => {
                for &loser in live.iter().filter(|&&term_idx| term_idx != winner) {
                    decisions.push((loser, Disposition::Rejected, policy_reason));
                }
                let (disposition, reason) = status_decision(frozen.term(winner));
                let reason = if disposition == Disposition::Confirmed { policy_reason } else { reason };
                decisions.push((winner, disposition, reason));
            }
        }
        decisions.sort_by_key(|(term_idx, _, _)| frozen.term(*term_idx).number());
        decisions
    }
}

/// Fold, match, gate and settle senses: folds the chunk, finds keys leftmost-longest,
/// and decides each hit ([`Gate::decide`]).
fn fold_match_and_gate(
    frozen: &Frozen,
    policy: ConflictPolicy,
    chapter: u32,
    text: &str,
) -> Result<Found, AssembleError> {
    let matcher = frozen.matcher();
    let profile = matcher.profile();
    let normalized = profile.normalize(text).map_err(|error| AssembleError::Text(error.to_string()))?;
    let folded = normalized.as_str();
    let holds = |term: TermRef<'_>| secondary_holds(frozen, folded, term);

    let found = matcher.find(&normalized);
    let mut hits = Vec::with_capacity(found.len());
    let mut retrieval = RetrievalState::default();
    // Confirmed and ambiguous candidates from hits, and where each is in that list,
    // sorted by term index (a chunk calls for a hundred or so records: a sorted list
    // costs less than a map's nodes).
    let mut from_hits: Vec<Candidate> = Vec::new();
    let mut candidate_of: Vec<(TermIdx, usize)> = Vec::new();
    let mut gate = Gate::default();
    for (hit_idx, hit) in found.iter().enumerate() {
        let span = hit.src;
        let surface_text = &text[span.bytes()];
        for &(term_idx, disposition, reason) in
            gate.decide(frozen, policy, chapter, matcher.values(hit.pattern), &holds)
        {
            match disposition {
                Disposition::Rejected if reason == Some(Reason::SpoilerWindow) => retrieval.n_spoiler_blocked += 1,
                Disposition::Confirmed => retrieval.n_exact_hits += 1,
                _ => {}
            }
            if disposition != Disposition::Rejected {
                let unverified = disposition == Disposition::Ambiguous;
                match candidate_of.binary_search_by_key(&term_idx, |&(idx, _)| idx) {
                    Ok(at) => {
                        let known = &mut from_hits[candidate_of[at].1];
                        // Confirmed anywhere in the chunk wins over ambiguous elsewhere.
                        if known.unverified && !unverified {
                            known.unverified = false;
                            known.reason = None;
                        }
                    }
                    Err(at) => {
                        candidate_of.insert(at, (term_idx, from_hits.len()));
                        from_hits.push(Candidate { term_idx, first_at: hit_idx, unverified, reason });
                    }
                }
            }
            hits.push(HitRecord {
                term: frozen.term(term_idx).number(),
                text: surface_text.to_owned(),
                bytes: (span.start.as_usize() as u32, span.end.as_usize() as u32),
                chars: (span.start_char.as_usize() as u32, span.end_char.as_usize() as u32),
                disposition,
                reason,
            });
        }
    }
    Ok(Found { hits, from_hits, retrieval })
}

/// Cascading activation (a book that declares a depth): the notes of the records the
/// chunk calls for and the summaries shown at the chapter are folded and matched with
/// the same automaton, and each record they name is gated as a hit is
/// ([`Gate::decide`]; secondary keys are judged on the chunk). Round 1 scans the direct
/// entries' notes, then the summaries; each later round scans the notes of the
/// records the round before brought in, to the declared depth. A record already
/// called for, settled out of the chunk, or found earlier, is not decided again; a quiet record's note is not
/// scanned; a direct-only record is never brought (nor logged). What a round brings is
/// appended to `records` after everything found directly, in the order it was found,
/// with `Via::Cascade`; every decision is returned.
fn cascade(
    frozen: &Frozen,
    policy: ConflictPolicy,
    chapter: u32,
    text: &str,
    records: &mut Vec<(TermIdx, Via, bool)>,
    summaries: &[Shown<'_>],
    settled_out: &BTreeSet<u32>,
) -> Result<Vec<CascadeDecision>, AssembleError> {
    let depth_max = frozen.cascade_depth();
    let mut decisions: Vec<CascadeDecision> = Vec::new();
    if depth_max == 0 {
        return Ok(decisions);
    }
    let matcher = frozen.matcher();
    let profile = matcher.profile();
    let folded_chunk = profile.normalize(text).map_err(|error| AssembleError::Text(error.to_string()))?;
    let folded_chunk = folded_chunk.as_str();
    let holds = |term: TermRef<'_>| secondary_holds(frozen, folded_chunk, term);
    let term_id = |idx: TermIdx| RecordId::new(RecordKind::Term, frozen.term(idx).number());
    // Every record called for or decided (a loser of a shared rendering was decided in
    // the chunk): none is decided twice.
    let mut seen: BTreeSet<TermIdx> = records.iter().map(|(idx, _, _)| *idx).collect();
    seen.extend(settled_out.iter().filter_map(|number| frozen.term_index(*number)));
    // The texts scanned in this round: the record (or summary) and its text.
    let mut sources: Vec<(RecordId, &str)> = records
        .iter()
        .filter(|(idx, _, _)| !frozen.is_quiet(*idx))
        .filter_map(|(idx, _, _)| Some((term_id(*idx)?, frozen.note(*idx)?)))
        .collect();
    sources.extend(
        summaries
            .iter()
            .filter_map(|(_, number, _, _, text)| Some((RecordId::new(RecordKind::Summary, *number)?, *text))),
    );
    let mut gate = Gate::default();
    for depth in 1..=depth_max {
        let mut brought: Vec<TermIdx> = Vec::new();
        for (by, source) in std::mem::take(&mut sources) {
            // A note that cannot be folded names nothing (notes are checked text).
            let Ok(normalized) = profile.normalize(source) else { continue };
            for hit in matcher.find(&normalized) {
                for &(term_idx, disposition, reason) in
                    gate.decide(frozen, policy, chapter, matcher.values(hit.pattern), &holds)
                {
                    if frozen.is_direct_only(term_idx) || !seen.insert(term_idx) {
                        continue;
                    }
                    let number = frozen.term(term_idx).number();
                    decisions.push(CascadeDecision { term: number, by, depth, disposition, reason });
                    if disposition != Disposition::Rejected {
                        brought.push(term_idx);
                        records.push((term_idx, Via::Cascade, disposition == Disposition::Ambiguous));
                    }
                }
            }
        }
        sources = brought
            .iter()
            .filter(|idx| !frozen.is_quiet(**idx))
            .filter_map(|idx| Some((term_id(*idx)?, frozen.note(*idx)?)))
            .collect();
        if sources.is_empty() {
            break;
        }
    }
    Ok(decisions)
}

/// Settle shared renderings: records found in the chunk that render the same dst,
/// settled by a `prefer_*` policy (under `flag` they are injected as they are). A
/// loser is out of the chunk whole: not injected as sticky or constant either.
/// Returns the losers' numbers.
fn settle_shared_renderings(frozen: &Frozen, policy: ConflictPolicy, found: &mut Found) -> BTreeSet<u32> {
    let mut settled_out: BTreeSet<u32> = BTreeSet::new();
    if policy == ConflictPolicy::Flag {
        return settled_out;
    }
    let profile = frozen.matcher().profile();
    let mut by_dst: BTreeMap<String, Vec<TermIdx>> = BTreeMap::new();
    for candidate in &found.from_hits {
        let dst = frozen.term(candidate.term_idx).dst().to_lowercase().replace('ё', "е");
        by_dst.entry(dst).or_default().push(candidate.term_idx);
    }
    let mut losers: BTreeMap<u32, Option<Reason>> = BTreeMap::new();
    for group in by_dst.values().filter(|group| group.len() > 1) {
        let sources: BTreeSet<String> = group.iter().map(|&idx| profile.fold(frozen.term(idx).src())).collect();
        if sources.len() < 2 {
            continue;
        }
        if let Some((winner, reason)) = settle(frozen, policy, group) {
            for &loser in group.iter().filter(|&&idx| idx != winner) {
                losers.insert(frozen.term(loser).number(), reason);
            }
        }
    }
    settled_out.extend(losers.keys().copied());
    if !losers.is_empty() {
        found.from_hits.retain(|candidate| !losers.contains_key(&frozen.term(candidate.term_idx).number()));
        for hit in found.hits.iter_mut().filter(|hit| hit.disposition != Disposition::Rejected) {
            if let Some(reason) = losers.get(&hit.term) {
                if hit.disposition == Disposition::Confirmed {
                    found.retrieval.n_exact_hits -= 1;
                }
                hit.disposition = Disposition::Rejected;
                hit.reason = *reason;
            }
        }
    }
    settled_out
}

/// Whether a term would be marked `[unverified]` when it comes in without a hit
/// (constant or sticky): a `verify` verdict, or not approved and not accepted.
fn unverified_of(term: TermRef<'_>) -> bool {
    term.verdict() == Some(Verdict::Verify)
        || (term.verdict() != Some(Verdict::Accept) && term.status() != Status::Approved)
}

/// Order: constant records (not found in the chunk), confirmed hits by first
/// occurrence, sticky records (hit in the previous chunks of the chapter), ambiguous
/// hits; constant, sticky and ambiguous by priority, then id.
fn order(
    frozen: &Frozen,
    chapter: u32,
    previous: Option<Previous<'_>>,
    sticky_chunks: u32,
    from_hits: &[Candidate],
    settled_out: &BTreeSet<u32>,
) -> Ordered {
    let in_chunk: BTreeSet<TermIdx> = from_hits.iter().map(|c| c.term_idx).collect();
    let injectable = |term_idx: TermIdx| {
        let term = frozen.term(term_idx);
        term.in_window(chapter) && term.verdict() != Some(Verdict::Reject) && !settled_out.contains(&term.number())
    };
    let by_priority = |a: &TermIdx, b: &TermIdx| {
        let (x, y) = (frozen.term(*a), frozen.term(*b));
        y.priority().cmp(&x.priority()).then(x.number().cmp(&y.number()))
    };
    let unverified = |term_idx: TermIdx| unverified_of(frozen.term(term_idx));

    let mut constant: Vec<TermIdx> =
        frozen.constant().filter(|&term_idx| injectable(term_idx) && !in_chunk.contains(&term_idx)).collect();
    constant.sort_by(by_priority);
    let mut sticky: Vec<TermIdx> = Vec::new();
    if let Some(previous) = previous.filter(|previous| previous.chapter == chapter && sticky_chunks > 0) {
        let numbers: BTreeSet<u32> = previous.recent.iter().flatten().copied().collect();
        for number in numbers {
            if let Some(term_idx) = frozen.term_index(number) {
                if injectable(term_idx) && !in_chunk.contains(&term_idx) && !constant.contains(&term_idx) {
                    sticky.push(term_idx);
                }
            }
        }
    }
    sticky.sort_by(by_priority);
    let mut confirmed: Vec<&Candidate> =
        from_hits.iter().filter(|c| !c.unverified && !constant.contains(&c.term_idx)).collect();
    confirmed.sort_by_key(|c| c.first_at);
    let mut ambiguous: Vec<&Candidate> = from_hits.iter().filter(|c| c.unverified).collect();
    ambiguous.sort_by(|a, b| by_priority(&a.term_idx, &b.term_idx));

    let mut records: Vec<(TermIdx, Via, bool)> = Vec::new();
    records.extend(constant.iter().map(|&idx| (idx, Via::Constant, unverified(idx))));
    records.extend(confirmed.iter().map(|c| (c.term_idx, Via::Hit, false)));
    records.extend(sticky.iter().map(|&idx| (idx, Via::Sticky, unverified(idx))));
    records.extend(ambiguous.iter().map(|c| (c.term_idx, Via::Hit, true)));
    Ordered { records, sticky }
}

/// Rules in scope (render format 2 on), judged on the records the chunk calls for,
/// its chapter, and whether it has dialogue or narration; gated by window and verdict
/// like terms. Returns the rejected ones' decisions and the others, confirmed first,
/// by priority, then id.
fn rules_in_scope<'f>(
    frozen: &'f Frozen,
    chapter: u32,
    text: &str,
    records: &[(TermIdx, Via, bool)],
) -> (Vec<RuleDecision>, Vec<RuleCandidate<'f>>) {
    let mut rule_decisions: Vec<RuleDecision> = Vec::new();
    let mut rule_candidates: Vec<RuleCandidate<'f>> = Vec::new();
    let (has_dialogue, has_narration) = voices(text);
    let called_for: Vec<TermRef<'_>> = records.iter().map(|(idx, _, _)| frozen.term(*idx)).collect();
    let holds = |selector: &Selector| match selector {
        Selector::Kind(kind) => called_for.iter().any(|term| term.kind() == Some(kind.as_str())),
        Selector::Record(id) => called_for.iter().any(|term| term.number() == id.number()),
        Selector::Chapters(window) => window.contains(chapter),
        Selector::Dialogue => has_dialogue,
        Selector::Narration => has_narration,
    };
    for rule in frozen.rules() {
        let in_scope = rule.applies_to().any(|selector| holds(&selector))
            && !rule.does_not_apply_to().any(|selector| holds(&selector));
        if !in_scope {
            continue;
        }
        let window: Window = rule.window();
        let (disposition, reason) = if !window.contains(chapter) {
            let reason = if chapter < window.since { Reason::SpoilerWindow } else { Reason::OutOfWindow };
            (Disposition::Rejected, Some(reason))
        } else {
            match (rule.verdict(), rule.status()) {
                (Some(Verdict::Reject), _) => (Disposition::Rejected, Some(Reason::BlockedByDisposition)),
                (Some(Verdict::Accept), _) => (Disposition::Confirmed, None),
                (Some(Verdict::Verify), _) => (Disposition::Ambiguous, Some(Reason::FlaggedForVerification)),
                (_, Status::Approved) => (Disposition::Confirmed, None),
                _ => (Disposition::Ambiguous, Some(Reason::Unreviewed)),
            }
        };
        if disposition == Disposition::Rejected {
            rule_decisions.push(RuleDecision { rule: rule.number(), disposition, reason });
        } else {
            let unverified = disposition == Disposition::Ambiguous;
            rule_candidates.push((unverified, rule.priority(), rule.number(), reason, rule));
        }
    }
    rule_candidates.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    (rule_decisions, rule_candidates)
}

/// Budget: fills the token budget first-fit in order, terms before rules; what does
/// not fit is evicted (a rule's decision says `budget`). Counts constant, sticky and
/// unverified entries into `retrieval`.
fn fill_budget(
    frozen: &Frozen,
    budget: u32,
    records: &[(TermIdx, Via, bool)],
    rule_candidates: Vec<RuleCandidate<'_>>,
    rule_decisions: &mut Vec<RuleDecision>,
    retrieval: &mut RetrievalState,
) -> Budgeted {
    let mut injected = Vec::new();
    let mut evicted = Vec::new();
    let mut used = 0u32;
    // A line that did not fit leaves its buffer to the next one.
    let mut spare = String::new();
    for &(term_idx, via, unverified) in records {
        let term = frozen.term(term_idx);
        let mut line = std::mem::take(&mut spare);
        line.clear();
        write_term_line_v1(&mut line, term, unverified);
        let tokens = estimate_tokens_v1(&line);
        if used.saturating_add(tokens) > budget {
            evicted.push(term.number());
            spare = line;
            continue;
        }
        used += tokens;
        match via {
            Via::Constant => retrieval.n_constant += 1,
            Via::Sticky => retrieval.n_sticky += 1,
            Via::Hit | Via::Cascade => {}
        }
        if unverified {
            retrieval.n_ambiguous += 1;
        }
        injected.push(Injected { term: term.number(), via, unverified, tokens, line });
    }
    let mut injected_rules = Vec::new();
    let mut n_rules_evicted = 0u32;
    for (unverified, _, number, reason, rule) in rule_candidates {
        let line = render_rule_v2(rule.text(), unverified);
        let tokens = estimate_tokens_v1(&line);
        if used.saturating_add(tokens) > budget {
            n_rules_evicted += 1;
            rule_decisions.push(RuleDecision {
                rule: number,
                disposition: Disposition::Rejected,
                reason: Some(Reason::Budget),
            });
            continue;
        }
        used += tokens;
        if unverified {
            retrieval.n_ambiguous += 1;
        }
        let disposition = if unverified { Disposition::Ambiguous } else { Disposition::Confirmed };
        rule_decisions.push(RuleDecision { rule: number, disposition, reason });
        injected_rules.push(InjectedRule { rule: number, unverified, tokens, line });
    }
    debug_assert!(used <= budget, "the budget holds");
    Budgeted { injected, evicted, injected_rules, n_rules_evicted, used }
}

/// The summaries shown at the chapter (`summary_rank`: the book, arc recaps, the
/// previous chapter), in rank order, then by number.
fn summaries_shown(frozen: &Frozen, chapter: u32) -> Vec<Shown<'_>> {
    let mut summaries: Vec<Shown<'_>> = Vec::new();
    for summary in frozen.summaries() {
        let scope = summary.scope();
        let (from, to) = match scope {
            Scope::Chapter(at) => (at, at),
            Scope::Arc { from, to } => (from, to),
            Scope::Book => (0, 0),
        };
        let Some(rank) = summary_rank(scope, summary.visible_from(), chapter) else { continue };
        summaries.push((rank, summary.number(), from, to, summary.text()));
    }
    summaries.sort();
    summaries
}

/// Render: the `[glossary]`, `[rules]` and `[summaries]` blocks, each left out when
/// empty.
fn render(
    injected: &[Injected],
    injected_rules: &[InjectedRule],
    examples: &[InjectedExample],
    summaries: &[Shown<'_>],
) -> String {
    let mut context = String::new();
    if !injected.is_empty() {
        context.push_str("[glossary]\n");
        for entry in injected {
            context.push_str(&entry.line);
            context.push('\n');
        }
    }
    if !injected_rules.is_empty() {
        context.push_str("[rules]\n");
        for rule in injected_rules {
            context.push_str(&rule.line);
            context.push('\n');
        }
    }
    if !examples.is_empty() {
        context.push_str("[examples]\n");
        for example in examples {
            context.push_str(&example.line);
            context.push('\n');
        }
    }
    if !summaries.is_empty() {
        context.push_str("[summaries]\n");
        for (rank, _, from, to, text) in summaries {
            let label = match rank {
                0 => "book".to_owned(),
                1 => format!("arc, chapters {from}-{to}"),
                _ => format!("chapter {from}"),
            };
            let flat: Vec<&str> = text.split_whitespace().collect();
            let _ = writeln!(context, "({label}) {}", flat.join(" "));
        }
    }
    context
}

/// The recent hits passed on to the next chunk: this chunk's, then the previous
/// chunks' of the same chapter, at most `sticky_chunks` in all.
fn recent(
    frozen: &Frozen,
    chapter: u32,
    previous: Option<Previous<'_>>,
    sticky_chunks: u32,
    from_hits: &[Candidate],
) -> Vec<Vec<u32>> {
    let mut recent = Vec::new();
    if sticky_chunks > 0 {
        let mut this_chunk: Vec<u32> = from_hits.iter().map(|c| frozen.term(c.term_idx).number()).collect();
        this_chunk.sort_unstable();
        recent.push(this_chunk);
        if let Some(previous) = previous.filter(|previous| previous.chapter == chapter) {
            recent.extend(previous.recent.iter().take(sticky_chunks as usize - 1).cloned());
        }
    }
    recent
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn part() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                prop::char::range('a', 'z'),
                prop::char::range('а', 'я'),
                prop::char::range('\u{4e00}', '\u{4fff}'),
                Just(' ')
            ],
            1..12,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn tenths_by_bytes_equal_tenths_by_char(text in "\\PC{0,40}", wide in part()) {
            let text = format!("{text}{wide}");
            prop_assert_eq!(tenths_v1(&text), tenths_v1_by_char(&text));
        }

        /// Lines long enough that sequences of every length straddle the blocks the
        /// bytes are scanned in.
        #[test]
        fn tenths_by_bytes_equal_tenths_by_char_across_blocks(parts in prop::collection::vec(part(), 0..12), astral in "[\u{20000}-\u{20010}\u{1F600}]{0,3}") {
            let text = format!("{}{astral}{}", parts.concat(), parts.join(" "));
            prop_assert_eq!(tenths_v1(&text), tenths_v1_by_char(&text));
        }
    }

    #[test]
    fn tenths_by_bytes_at_the_edges_of_every_wide_range() {
        for c in [
            0x2E7F, 0x2E80, 0x9FFF, 0xA000, 0xABFF, 0xAC00, 0xD7AF, 0xD7B0, 0xF8FF, 0xF900, 0xFAFF, 0xFB00, 0xFF65,
            0xFF66, 0xFF9F, 0xFFA0, 0x1FFFF, 0x20000, 0x3FFFF, 0x40000, 0x10FFFF, 0x7F, 0x80, 0x7FF, 0x800,
        ] {
            let text = char::from_u32(c).expect("a scalar value").to_string();
            assert_eq!(tenths_v1(&text), tenths_v1_by_char(&text), "U+{c:04X}");
        }
    }

    #[test]
    fn render_format_1_lines() {
        let parts = LineParts {
            src: "萧炎",
            dst: "Сяо Янь",
            tags: vec!["character", "m"],
            decl: vec!["Сяо Яня", "Сяо Яню"],
            unverified: false,
        };
        assert_eq!(parts.render(), "萧炎 -> Сяо Янь #character, m; Сяо Яня, Сяо Яню");
        let bare = LineParts { src: "药老", dst: "Яо Лао", tags: vec![], decl: vec![], unverified: true };
        assert_eq!(bare.render(), "药老 -> Яо Лао [unverified]");
        // 2 ideographs, 16 other chars: 2 + ceil(4.8) = 7 tokens, plus 1 for the newline.
        assert_eq!(estimate_tokens_v1("药老 -> Яо Лао [unv]"), 2 + 5 + 1);
    }
}
