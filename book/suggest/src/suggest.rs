//! `suggest`: spans of a chunk that no term matches lexically but whose vector is
//! near a term's source surfaces, proposed as possible new aliases of that term:
//! the name-like spans of the name alarm, and, when asked, the short phrases of the
//! chunk near a term the chunk does not name (a descriptive mention: 白衣的先生 for
//! 白衣先生).

use std::collections::{BTreeMap, BTreeSet};

use book::review::ChunkNames;
use book::{Book, WriteOptions, Written};
use embed::Matrix;
use ledger_model::*;
use names::{Lang, Sighting};

use crate::error::SuggestError;
use crate::evidence::add_line;
use crate::model::Model;
use crate::vectors::{self, Role, TermVectors};

/// Neighbours looked at per span: the best row decides, the rest is room for rows of
/// the same term.
const NEIGHBOURS: usize = 8;
/// Characters of the sentence quoted in a suggestion's evidence, at most.
const SENTENCE_CHARS_MAX: usize = 60;
/// The shortest phrase compared, in characters: two characters are the name alarm's.
pub const PHRASE_CHARS_MIN: usize = 3;
/// The longest phrase compared, in characters.
pub const PHRASE_CHARS_MAX: usize = 6;
/// The most distinct phrases one chunk may give (a 3,000-character chunk of prose gives
/// about 7,000); more is an error, never a silent cut: split the chunk.
pub const PHRASES_MAX: usize = 100_000;
/// Texts embedded per call of the model.
const EMBED_BATCH: usize = 4_096;

/// How [`suggest`] reads the chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SuggestOptions {
    /// The lowest score proposed; `None`: the book's
    /// [`EmbeddingModelSet::suggest_min_score`].
    pub min_score: Option<i32>,
    /// Also compare the chunk's phrases ([`Phrase`]) with the terms it does not name.
    /// Costs one embedding per distinct phrase (about 2.3 per character of prose).
    pub phrases: bool,
    /// Report what would be proposed; write nothing.
    pub dry_run: bool,
}

/// A phrase of the chunk near a term the chunk does not name, kept because no
/// overlapping phrase scores higher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phrase {
    /// The phrase.
    pub surface: String,
    /// Byte offsets `[start, end)` into the chunk.
    pub bytes: (u32, u32),
    /// Char offsets `[start, end)` into the chunk.
    pub chars: (u32, u32),
    /// The nearest term, the text of it that is nearest, and the score (millionths).
    pub nearest: (RecordId, Role, String, i32),
    /// The candidate it is evidence for.
    pub candidate: Option<RecordId>,
}

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
    /// The phrases kept ([`SuggestOptions::phrases`]), in text order: each scores at
    /// least the minimum and more than every phrase overlapping it.
    pub phrases: Vec<Phrase>,
    /// The distinct phrases compared (0 without [`SuggestOptions::phrases`]).
    pub n_phrases: usize,
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

/// What a row of a search matrix holds: the term, which of its texts, and the text.
type Row = (RecordId, Role, String);

/// The stored rows of the surfaces (source and aliases) of `terms`, as a matrix to
/// search, and the term, role and text of each row.
fn surface_rows<'a>(
    dim: u32,
    stored: &BTreeMap<RecordId, TermVectors>,
    terms: impl IntoIterator<Item = &'a vectors::Versioned>,
) -> Result<(Matrix, Vec<Row>), SuggestError> {
    let mut matrix = Matrix::new(dim as usize).map_err(|error| SuggestError::Invalid(error.to_string()))?;
    let mut rows = Vec::new();
    for term in terms {
        for (index, row) in &stored[&term.id].rows {
            let (role, text) = &term.texts[usize::from(*index)];
            if role.is_surface() {
                // A stored row of the wrong shape is derived data gone wrong.
                matrix.push(row).map_err(|error| SuggestError::Invalid(format!("vectors of {}: {error}", term.id)))?;
                rows.push((term.id, *role, text.clone()));
            }
        }
    }
    Ok((matrix, rows))
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
/// source surfaces (source and aliases) of every term active at the chapter. With
/// [`SuggestOptions::phrases`], also every phrase of the chunk ([`phrases_of`]),
/// compared with the source surfaces of the terms active at the chapter that no hit
/// of the chunk names; of overlapping phrases at the minimum or more, the best is kept.
/// A span or phrase whose nearest term scores at least the minimum
/// ([`SuggestOptions::min_score`], else the book's
/// [`EmbeddingModelSet::suggest_min_score`]) is proposed, unless a dry run, as a
/// candidate with `origin: embedding`, `trust: low`, the score, the term as `related`
/// and the span and its sentence as evidence. A surface already proposed for that
/// term (folded alike) gets the new sighting added to its evidence instead; a judged
/// one is left alone; the same chunk again changes nothing.
///
/// Needs fresh vectors of every term of the chapter ([`crate::refresh`]). The same
/// model, book and chunk give the same spans, phrases, scores and candidates in the
/// same order. The actor, unless one is named, is [`crate::DEFAULT_ACTOR`]; the
/// source, unless one is given, `chCHAPTER/CHUNK`.
pub fn suggest(
    book: &mut Book,
    model: &mut Model,
    chapter: u32,
    chunk_key: &str,
    text: &str,
    options: &SuggestOptions,
    write: &WriteOptions,
) -> Result<Suggested, SuggestError> {
    let SuggestOptions { min_score, phrases: with_phrases, dry_run } = *options;
    if chapter == 0 {
        return Err(SuggestError::Invalid("chapters are numbered from 1, got 0".into()));
    }
    let state = book.state(None)?;
    let (set, _) = vectors::book_terms(&state)?;
    model.check(&set)?;
    let min_score = crate::model::min_score(min_score, set.suggest_min_score)?;
    let lang = lang_of(&state)?;
    let profile = book.profile(&state)?;
    // Every surface of every active term, in any window, is known; what the
    // assembly matched is covered.
    let names = book.chunk_names(profile, chapter, chunk_key, text)?;
    let found = names.unknown(lang, text);

    // The terms of the chapter and their surface rows, in id order.
    let in_chapter: BTreeSet<RecordId> = state.active_terms(Some(chapter)).iter().map(|active| active.id).collect();
    let terms: Vec<vectors::Versioned> = vectors::versioned(&state, model.vectors_key())
        .into_iter()
        .filter(|term| in_chapter.contains(&term.id))
        .collect();
    let compared = Compared { set: &set, terms };
    let mut spans: Vec<Span> =
        found.into_iter().map(|sighting| Span { sighting, nearest: None, candidate: None }).collect();
    nearest_terms(book, model, &compared, &mut spans)?;
    let (mut phrases, n_phrases) = if with_phrases {
        near_phrases(book, model, &compared, &names, lang, text, min_score)?
    } else {
        (Vec::new(), 0)
    };

    let mut sightings = Sightings::new(&state, &names, (chapter, chunk_key, text));
    for span in &mut spans {
        let Some(nearest) = &span.nearest else { continue };
        if nearest.3 < min_score {
            continue;
        }
        let chars = (span.sighting.chars.0 as usize, span.sighting.chars.1 as usize);
        span.candidate = Some(sightings.sight(&span.sighting.surface, chars, "", nearest)?);
    }
    for phrase in &mut phrases {
        let chars = (phrase.chars.0 as usize, phrase.chars.1 as usize);
        phrase.candidate = Some(sightings.sight(&phrase.surface, chars, "phrase ", &phrase.nearest)?);
    }
    let proposed: Vec<CandidateProposed> = sightings.changed.into_values().collect();
    // The write changes the head in place once nothing here holds it.
    drop(state);
    let source = format!("ch{chapter}/{chunk_key}");
    let written = book.propose(&write.acting_as(crate::DEFAULT_ACTOR), &proposed, &source, dry_run)?;
    Ok(Suggested { spans, phrases, n_phrases, min_score, proposed, written })
}

/// What [`suggest`] compares a chunk with: the terms of the chapter (with their texts,
/// in id order) under the book's model.
struct Compared<'a> {
    set: &'a EmbeddingModelSet,
    terms: Vec<vectors::Versioned>,
}

impl Compared<'_> {
    /// The search matrix of the surface rows of `these` terms of the chapter, and what
    /// each row is; the vectors of every term of the chapter must be fresh.
    fn matrix<'t>(
        &'t self,
        book: &Book,
        these: impl IntoIterator<Item = &'t vectors::Versioned>,
    ) -> Result<(Matrix, Vec<Row>), SuggestError> {
        let stored = vectors::load_all(book, self.set, &self.terms)?;
        surface_rows(self.set.dim, &stored, these)
    }
}

/// Finds the term of the chapter nearest to each span (by its best surface row).
fn nearest_terms(book: &Book, model: &mut Model, compared: &Compared, spans: &mut [Span]) -> Result<(), SuggestError> {
    if spans.is_empty() || compared.terms.is_empty() {
        return Ok(());
    }
    let (matrix, rows) = compared.matrix(book, &compared.terms)?;
    let surfaces: Vec<&str> = spans.iter().map(|span| span.sighting.surface.as_str()).collect();
    let queries = model.embed(&surfaces)?;
    let queries: Vec<&[f32]> = queries.iter().map(|vector| vector.as_slice()).collect();
    let neighbours = matrix.search(&queries, NEIGHBOURS).map_err(|error| SuggestError::Invalid(error.to_string()))?;
    for (span, neighbours) in spans.iter_mut().zip(neighbours) {
        if let Some(best) = neighbours.first() {
            let (id, role, text) = &rows[best.index as usize];
            span.nearest = Some((*id, *role, text.clone(), best.score.millionths()));
        }
    }
    Ok(())
}

/// The phrases of the chunk ([`phrases_of`]) compared with the terms of the chapter
/// the chunk does not name: those at `min_score` or more that no overlapping phrase
/// beats, in text order; and the number of distinct phrases compared.
fn near_phrases(
    book: &Book,
    model: &mut Model,
    compared: &Compared,
    names: &ChunkNames,
    lang: Lang,
    text: &str,
    min_score: i32,
) -> Result<(Vec<Phrase>, usize), SuggestError> {
    let named: BTreeSet<u32> = names.assembled.receipt.hits.iter().map(|hit| hit.term).collect();
    let unnamed: Vec<&vectors::Versioned> =
        compared.terms.iter().filter(|term| !named.contains(&term.id.number())).collect();
    let all = phrases_of(text, lang, names.covered(), &|surface: &str| names.is_known(surface));
    // Distinct texts, embedded once each, in first-occurrence order.
    let mut distinct: BTreeMap<&str, usize> = BTreeMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for phrase in &all {
        distinct.entry(phrase.surface.as_str()).or_insert_with(|| {
            texts.push(phrase.surface.as_str());
            texts.len() - 1
        });
    }
    let n_phrases = texts.len();
    if n_phrases > PHRASES_MAX {
        return Err(SuggestError::Invalid(format!(
            "the chunk gives {n_phrases} distinct phrases, more than the limit of {PHRASES_MAX}: split it"
        )));
    }
    if texts.is_empty() || unnamed.is_empty() {
        return Ok((Vec::new(), n_phrases));
    }
    let (matrix, rows) = compared.matrix(book, unnamed)?;
    let mut best: Vec<Option<(usize, i32)>> = Vec::with_capacity(texts.len());
    for batch in texts.chunks(EMBED_BATCH) {
        let vectors = model.embed(batch)?;
        let queries: Vec<&[f32]> = vectors.iter().map(|vector| vector.as_slice()).collect();
        let neighbours = matrix.search(&queries, 1).map_err(|error| SuggestError::Invalid(error.to_string()))?;
        best.extend(neighbours.iter().map(|top| top.first().map(|n| (n.index as usize, n.score.millionths()))));
    }
    let scored = all.iter().filter_map(|phrase| {
        let (row, score) = best[distinct[phrase.surface.as_str()]]?;
        Some((score, phrase, row))
    });
    let phrases = best_of_overlapping(scored, min_score)
        .into_iter()
        .map(|(score, phrase, row)| {
            let (id, role, row_text) = &rows[row];
            Phrase {
                surface: phrase.surface.clone(),
                bytes: phrase.bytes,
                chars: phrase.chars,
                nearest: (*id, *role, row_text.clone(), score),
                candidate: None,
            }
        })
        .collect();
    Ok((phrases, n_phrases))
}

/// Of phrases scored (score, phrase, row), those at `min_score` or more that no
/// overlapping one beats (a higher score, then the earlier, then the shorter), so each
/// mention gives one phrase; in text order.
fn best_of_overlapping<'p>(
    scored: impl Iterator<Item = (i32, &'p PhraseSpan, usize)>,
    min_score: i32,
) -> Vec<(i32, &'p PhraseSpan, usize)> {
    let mut ranked: Vec<(i32, &PhraseSpan, usize)> = scored.filter(|(score, _, _)| *score >= min_score).collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.chars.0.cmp(&b.1.chars.0)).then(a.1.chars.1.cmp(&b.1.chars.1)));
    let mut kept: Vec<(i32, &PhraseSpan, usize)> = Vec::new();
    for candidate in ranked {
        let (start, end) = candidate.1.chars;
        if kept.iter().all(|(_, other, _)| end <= other.chars.0 || other.chars.1 <= start) {
            kept.push(candidate);
        }
    }
    kept.sort_by_key(|(_, phrase, _)| phrase.chars);
    kept
}

/// The candidates of the embedding tier that a chunk's sightings create or add
/// evidence to ([`suggest`]), keyed by (folded surface, term), open or judged.
struct Sightings<'a> {
    state: &'a projections::State,
    names: &'a ChunkNames,
    /// The chapter, chunk key and text of the chunk.
    chunk: (u32, &'a str, &'a str),
    by_key: BTreeMap<(String, RecordId), (CandidateProposed, bool)>,
    free: projections::FreeIds,
    /// The candidates to write, new or with new evidence.
    changed: BTreeMap<RecordId, CandidateProposed>,
}

impl<'a> Sightings<'a> {
    fn new(state: &'a projections::State, names: &'a ChunkNames, chunk: (u32, &'a str, &'a str)) -> Sightings<'a> {
        let mut by_key: BTreeMap<(String, RecordId), (CandidateProposed, bool)> = BTreeMap::new();
        for candidate in state.candidates().values() {
            let proposed = &candidate.proposed;
            if let (Origin::Embedding, Some(related), None) = (proposed.origin, proposed.related, proposed.duplicate) {
                by_key
                    .entry((names.fold(&proposed.surface), related))
                    .or_insert_with(|| (proposed.clone(), candidate.verdict.is_some()));
            }
        }
        let free = state.free_ids(RecordKind::Candidate);
        Sightings { state, names, chunk, by_key, free, changed: BTreeMap::new() }
    }

    /// One sighting: `surface` at chars `[start, end)` near the term, as evidence of
    /// the candidate of (surface, term), which it creates when there is none. A judged
    /// candidate is left alone.
    fn sight(
        &mut self,
        surface: &str,
        (start, end): (usize, usize),
        what: &str,
        (id, role, nearest_text, score): &(RecordId, Role, String, i32),
    ) -> Result<RecordId, SuggestError> {
        let (chapter, chunk_key, text) = self.chunk;
        let line = format!(
            "ch{chapter}/{chunk_key}@{start}-{end} {what}near {id} {} {nearest_text} {}: «{}»",
            role.as_str(),
            embed::Score::from_millionths(*score),
            sentence(text, start, end)
        );
        let key = (self.names.fold(surface), *id);
        if !self.by_key.contains_key(&key) {
            let candidate = self.free.take().map_err(book::BookError::from)?;
            let proposed = CandidateProposed {
                score: Some(*score),
                related: Some(*id),
                ..CandidateProposed::new(candidate, surface, Origin::Embedding)
            };
            self.by_key.insert(key.clone(), (proposed, false));
        }
        let Some((candidate, judged)) = self.by_key.get_mut(&key) else {
            return Err(SuggestError::Invalid(format!("no candidate for {surface} near {id}")));
        };
        if *judged {
            return Ok(candidate.id);
        }
        let before = candidate.clone();
        candidate.evidence = Some(add_line(candidate.evidence.as_deref(), &line));
        candidate.score = Some(candidate.score.unwrap_or(*score).max(*score));
        if *candidate != before || !self.state.candidates().contains_key(&candidate.id) {
            self.changed.insert(candidate.id, candidate.clone());
        }
        Ok(candidate.id)
    }
}

/// A phrase of a chunk, before it is compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhraseSpan {
    /// The phrase.
    pub surface: String,
    /// Byte offsets `[start, end)` into the chunk.
    pub bytes: (u32, u32),
    /// Char offsets `[start, end)` into the chunk.
    pub chars: (u32, u32),
}

/// Whether `c` can be part of a phrase: a Han character, kana (the prolonged sound
/// mark and iteration marks included), or half-width katakana. Punctuation, spaces,
/// digits and Latin letters end a phrase.
fn phrase_char(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{20000}'..='\u{3134f}'
        | '\u{3005}' | '\u{3006}' | '\u{3041}'..='\u{309f}' | '\u{30a1}'..='\u{30fa}' | '\u{30fc}'..='\u{30ff}'
        | '\u{ff66}'..='\u{ff9f}')
}

/// The phrases of `text`: every run of [`PHRASE_CHARS_MIN`] to [`PHRASE_CHARS_MAX`]
/// phrase characters (Han, kana) inside a stretch no punctuation, space or `covered`
/// byte span breaks, that is not a `known` surface, in text order (by start, then
/// length). In a Japanese text an Aozora ruby reading (`《…》`) is no part of a
/// phrase. Pure: the same text gives the same phrases.
pub fn phrases_of(text: &str, lang: Lang, covered: &[(u32, u32)], known: &dyn Fn(&str) -> bool) -> Vec<PhraseSpan> {
    // Per char: (byte offset, char, usable).
    let mut chars: Vec<(u32, char, bool)> = Vec::with_capacity(text.len() / 3);
    let mut in_reading = false;
    for (byte, c) in text.char_indices() {
        let byte = byte as u32;
        let hidden = lang == Lang::Ja && (in_reading || c == '《');
        match c {
            '《' if lang == Lang::Ja => in_reading = true,
            '》' => in_reading = false,
            _ => {}
        }
        let in_hit = covered.iter().any(|&(start, end)| start <= byte && byte < end);
        chars.push((byte, c, !hidden && !in_hit && phrase_char(c)));
    }
    let end_byte = |idx: usize| chars.get(idx).map_or(text.len() as u32, |(byte, _, _)| *byte);
    let mut out = Vec::new();
    let mut run_start = 0;
    while run_start < chars.len() {
        if !chars[run_start].2 {
            run_start += 1;
            continue;
        }
        let mut run_end = run_start;
        while run_end < chars.len() && chars[run_end].2 {
            run_end += 1;
        }
        for start in run_start..run_end {
            for len in PHRASE_CHARS_MIN..=PHRASE_CHARS_MAX {
                let end = start + len;
                if end > run_end {
                    break;
                }
                let surface: String = chars[start..end].iter().map(|(_, c, _)| *c).collect();
                if known(&surface) {
                    continue;
                }
                out.push(PhraseSpan {
                    surface,
                    bytes: (chars[start].0, end_byte(end)),
                    chars: (start as u32, end as u32),
                });
            }
        }
        run_start = run_end;
    }
    out
}
