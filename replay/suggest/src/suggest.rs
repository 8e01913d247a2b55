//! `suggest`: spans of a chunk that no term matches lexically but whose vector is
//! near a term's source surfaces, proposed as possible new aliases of that term.

use std::collections::{BTreeMap, BTreeSet};

use embed::Matrix;
use ledger_model::*;
use names::{Lang, Scanner, Sighting};
use replay::{Book, Labelled, WriteOptions, Written};

use crate::error::SuggestError;
use crate::evidence::add_line;
use crate::model::Model;
use crate::vectors::{self, Role};

/// Neighbours looked at per span: the best row decides, the rest is room for rows of
/// the same term.
const NEIGHBOURS: usize = 8;
/// Characters of the sentence quoted in a suggestion's evidence, at most.
const SENTENCE_CHARS_MAX: usize = 60;

/// One name-like span of the chunk and the term it is nearest to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The span, as the `names` crate found it (a surface no term covers).
    pub sighting: Sighting,
    /// The nearest term in the chapter, the text of it that is nearest, and the score
    /// (millionths of a cosine); `None` when no term of the chapter has a surface.
    pub nearest: Option<(RecordId, Role, String, i32)>,
    /// The candidate it is evidence for, when its score reaches the minimum.
    pub candidate: Option<RecordId>,
}

/// What [`suggest`] found and proposed.
#[derive(Debug)]
pub struct Suggested {
    /// Every name-like span no term covers, in text order.
    pub spans: Vec<Span>,
    /// The lowest score proposed.
    pub min_score: i32,
    /// Candidates proposed or given new evidence (written unless a dry run).
    pub proposed: Vec<CandidateProposed>,
    /// The write, if anything was written.
    pub written: Option<Written>,
}

/// The sentence around chars `[start, end)` of `text`, at most
/// [`SENTENCE_CHARS_MAX`] characters around the span, without control characters.
fn sentence(text: &str, start: usize, end: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let ends = |c: char| matches!(c, '。' | '！' | '？' | '!' | '?' | '；' | ';' | '…' | '\n' | '\r');
    let mut from = start.min(chars.len());
    while from > 0 && !ends(chars[from - 1]) {
        from -= 1;
    }
    // A closing quote right after the previous sentence's end belongs to that one.
    while from < start && matches!(chars[from], '”' | '」' | '』' | '’') {
        from += 1;
    }
    let mut to = end.min(chars.len());
    while to < chars.len() && !ends(chars[to]) {
        to += 1;
    }
    if to < chars.len() && chars[to] != '\n' && chars[to] != '\r' {
        to += 1;
        // A closing quote after the end of the sentence belongs to it.
        while to < chars.len() && matches!(chars[to], '”' | '」' | '』' | '"' | '’') {
            to += 1;
        }
    }
    let room = SENTENCE_CHARS_MAX.saturating_sub(end - start) / 2;
    let (from, to) = (from.max(start.saturating_sub(room)), to.min(end + room));
    chars[from..to].iter().filter(|c| !c.is_control()).collect::<String>().trim().to_owned()
}

/// The language of the book's profile, which the name cues need.
pub(crate) fn lang_of(state: &projections::State) -> Result<Lang, SuggestError> {
    match state.config().map(|config| config.profile.name.as_str()) {
        Some("zh") => Ok(Lang::Zh),
        Some("ja") => Ok(Lang::Ja),
        other => Err(SuggestError::Invalid(format!(
            "suggestions read name-like spans of Chinese (zh) and Japanese (ja) books, not {}",
            other.unwrap_or("a book without a profile")
        ))),
    }
}

/// Finds the name-like spans of chunk `chunk_key` of `chapter` that no term, alias or
/// lexical hit covers (the spans `scan` finds), embeds each, and compares it with the
/// source surfaces (source and aliases) of every term active at the chapter. A span
/// whose nearest term scores at least `min_score` (the book's
/// [`EmbeddingModelSet::suggest_min_score`] when `None`) is proposed, unless
/// `dry_run`, as a candidate with `origin: embedding`, `trust: low`, the score, the
/// term as `related` and the span and its sentence as evidence. A span already
/// proposed for that term (folded alike) gets the new sighting added to its evidence
/// instead; a judged one is left alone; the same chunk again changes nothing.
///
/// Needs fresh vectors of every term of the chapter ([`crate::refresh`]). The same
/// model, book and chunk give the same spans, scores and candidates in the same order.
#[allow(clippy::too_many_arguments, reason = "one call per use case, as the book's are")]
pub fn suggest(
    book: &mut Book,
    model: &mut Model,
    chapter: u32,
    chunk_key: &str,
    text: &str,
    min_score: Option<i32>,
    dry_run: bool,
    write: &WriteOptions,
) -> Result<Suggested, SuggestError> {
    if chapter == 0 {
        return Err(SuggestError::Invalid("chapters are numbered from 1, got 0".into()));
    }
    let state = book.state(None)?;
    let (set, _) = vectors::book_terms(&state)?;
    model.check(&set)?;
    let min_score = min_score.unwrap_or(set.suggest_min_score);
    if !(-limits::SCORE_MAX..=limits::SCORE_MAX).contains(&min_score) {
        return Err(SuggestError::Invalid(format!(
            "min score {min_score} is outside -{0}..={0} (millionths)",
            limits::SCORE_MAX
        )));
    }
    let lang = lang_of(&state)?;
    let profile = book.profile(&state)?;
    let fold = |text: &str| match &profile {
        Some(profile) => profile.fold(text),
        None => text.to_owned(),
    };
    // Every surface of every active term, in any window, is known; what the
    // assembly matched is covered.
    let mut known: BTreeSet<String> = BTreeSet::new();
    for active in state.active_terms(None) {
        known.insert(fold(&active.term.put.src));
        known.extend(active.term.aliases.keys().map(|surface| fold(surface)));
    }
    let assembled = book.assembler()?.assemble_chunk(chapter, chunk_key, text, None, false)?;
    let covered: Vec<(u32, u32)> = assembled.receipt.hits.iter().map(|hit| hit.bytes).collect();
    let found = Scanner::new(lang).scan(text, &covered, &|surface: &str| known.contains(&fold(surface)));

    // The terms of the chapter and their surface rows, in id order.
    let in_chapter: BTreeSet<RecordId> = state.active_terms(Some(chapter)).iter().map(|active| active.id).collect();
    let terms: Vec<vectors::Versioned> = vectors::versioned(&state, model.vectors_key())
        .into_iter()
        .filter(|term| in_chapter.contains(&term.id))
        .collect();
    let mut spans: Vec<Span> =
        found.into_iter().map(|sighting| Span { sighting, nearest: None, candidate: None }).collect();
    if !spans.is_empty() && !terms.is_empty() {
        let stored = vectors::load_all(book, &set, &terms)?;
        let mut matrix = Matrix::new(set.dim as usize).map_err(|error| SuggestError::Invalid(error.to_string()))?;
        let mut rows: Vec<(RecordId, Role, String)> = Vec::new();
        for term in &terms {
            for (index, row) in &stored[&term.id].rows {
                let (role, text) = &term.texts[usize::from(*index)];
                if role.is_surface() {
                    // A stored row of the wrong shape is derived data gone wrong.
                    matrix
                        .push(row)
                        .map_err(|error| SuggestError::Invalid(format!("vectors of {}: {error}", term.id)))?;
                    rows.push((term.id, *role, text.clone()));
                }
            }
        }
        let surfaces: Vec<&str> = spans.iter().map(|span| span.sighting.surface.as_str()).collect();
        let queries = model.embed(&surfaces)?;
        let queries: Vec<&[f32]> = queries.iter().map(|vector| vector.as_slice()).collect();
        let neighbours =
            matrix.search(&queries, NEIGHBOURS).map_err(|error| SuggestError::Invalid(error.to_string()))?;
        for (span, neighbours) in spans.iter_mut().zip(neighbours) {
            if let Some(best) = neighbours.first() {
                let (id, role, text) = &rows[best.index as usize];
                span.nearest = Some((*id, *role, text.clone(), best.score.millionths()));
            }
        }
    }

    // Candidates of the embedding tier by (folded surface, term), open or judged.
    let mut by_key: BTreeMap<(String, RecordId), (CandidateProposed, bool)> = BTreeMap::new();
    for candidate in state.candidates().values() {
        let proposed = &candidate.proposed;
        if let (Origin::Embedding, Some(related), None) = (proposed.origin, proposed.related, proposed.duplicate) {
            by_key
                .entry((fold(&proposed.surface), related))
                .or_insert_with(|| (proposed.clone(), candidate.verdict.is_some()));
        }
    }
    let mut next = state.candidates().keys().map(|id| id.number()).max().unwrap_or(0) + 1;
    let mut changed: BTreeMap<RecordId, CandidateProposed> = BTreeMap::new();
    for span in &mut spans {
        let Some((id, role, nearest_text, score)) = span.nearest.clone() else { continue };
        if score < min_score {
            continue;
        }
        let sighting = &span.sighting;
        let (start, end) = (sighting.chars.0 as usize, sighting.chars.1 as usize);
        let line = format!(
            "ch{chapter}/{chunk_key}@{start}-{end} near {id} {} {nearest_text} {}: «{}»",
            role.as_str(),
            embed::Score::from_millionths(score),
            sentence(text, start, end)
        );
        let (candidate, judged) = by_key.entry((fold(&sighting.surface), id)).or_insert_with(|| {
            let candidate = RecordId::new(RecordKind::Candidate, next).expect("candidate ids are far from the limit");
            next += 1;
            let proposed = CandidateProposed {
                id: candidate,
                surface: sighting.surface.clone(),
                suggested_dst: None,
                evidence: None,
                origin: Origin::Embedding,
                trust: Trust::Low,
                score: Some(score),
                related: Some(id),
                duplicate: None,
            };
            (proposed, false)
        });
        span.candidate = Some(candidate.id);
        if *judged {
            continue;
        }
        let before = candidate.clone();
        candidate.evidence = Some(add_line(candidate.evidence.as_deref(), &line));
        candidate.score = Some(candidate.score.unwrap_or(score).max(score));
        if *candidate != before || !state.candidates().contains_key(&candidate.id) {
            changed.insert(candidate.id, candidate.clone());
        }
    }
    let proposed: Vec<CandidateProposed> = changed.into_values().collect();
    let written = if dry_run || proposed.is_empty() {
        None
    } else {
        let bodies = proposed.iter().cloned().map(Body::CandidateProposed).collect();
        let source = format!("ch{chapter}/{chunk_key}");
        Some(book.submit_labelled(write, Labelled::numbered(bodies, &source), Vec::new())?)
    };
    Ok(Suggested { spans, min_score, proposed, written })
}
