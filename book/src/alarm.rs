//! The name alarm over the whole book (`lorebank scan --chapters A-B`): every chunk of
//! the chapters' registered source text read at once by the `names` crate's ranking
//! ([`names::Scanner::rank`]), so a name is judged by all the book says of it (its cues
//! in every chunk, how many chunks and chapters, whether a longer name holds it), not
//! chunk by chunk.
//!
//! **Chunks** are each chapter's source text in whole lines of at most
//! [`crate::eval::CHUNK_CHARS_DEFAULT`] characters, keyed by their byte span as the
//! proxy keys a located chunk; each is assembled at the head (not recorded) for the
//! spans its hits cover, and a surface the book knows (a term's source or alias,
//! folded) is never proposed.
//!
//! **Candidates.** Each ranked surface scoring at least the caller's minimum (by
//! default [`names::LIKELY`]) is proposed as the name alarm proposes (`origin:
//! extractor`), one candidate per folded surface: a surface already proposed (by any
//! origin) gets the new evidence. The evidence is one summary line (`ch1-30 ranked:
//! score 212, 170 time(s) in 25 chunk(s) of 3 chapter(s); cues speaker 12, …`) and
//! the first [`SIGHTINGS_LISTED`] sightings, so scanning the same chapters again
//! writes nothing. The candidate's `score` is the
//! ranking's (kept when an earlier ranking scored it higher), which puts it before
//! unscored candidates in the review queue: the likeliest names first.

use ledger_model::*;
use names::{Chunk, Ranked, Scanner};

use crate::book::Book;
use crate::error::BookError;
use crate::eval::{chunk_spans, CHUNK_CHARS_DEFAULT};
use crate::proxy::source_chunk_key;
use crate::review::{add_sighting, fold_by, known_surfaces, names_lang, sighting_line, Slate};
use crate::service::{WriteOptions, Written};

/// The sightings of a ranked surface its evidence lists, after the summary line.
pub const SIGHTINGS_LISTED: usize = 3;

/// The most chunks one book-wide scan reads (`limits::input::BOOK_JOB_CHUNKS_MAX`).
pub const RANKED_CHUNKS_MAX: usize = ledger_model::limits::input::BOOK_JOB_CHUNKS_MAX;

/// What a book-wide scan found.
#[derive(Debug)]
pub struct RankedScan {
    /// Chunks read.
    pub chunks: u32,
    /// Every ranked surface at or over the minimum, best first, with its candidate.
    pub ranked: Vec<(Ranked, RecordId)>,
    /// Ranked surfaces under the minimum, not proposed.
    pub below: u32,
    /// Candidates proposed or given new evidence.
    pub proposed: Vec<CandidateProposed>,
    /// The write, if anything was written.
    pub written: Option<Written>,
}

impl Book {
    /// Ranks the name-like surfaces of chapters `from..=to` (their registered source
    /// texts) over all of them at once and proposes those scoring `min_score` or more
    /// (by default [`names::LIKELY`]), as the module documentation says; unless
    /// `dry_run`.
    pub fn scan_ranked(
        &mut self,
        (from, to): (u32, u32),
        min_score: Option<u32>,
        dry_run: bool,
        write: &WriteOptions,
    ) -> Result<RankedScan, BookError> {
        let min_score = min_score.unwrap_or(names::LIKELY);
        let texts = self.chapter_texts((from, to), None)?;
        let state = self.state(None)?;
        let lang = names_lang(&state, "the name alarm")?;
        let profile = self.profile(&state)?;
        let mut pieces: Vec<(u32, String, &str)> = Vec::new();
        for (chapter, text) in &texts {
            for span in chunk_spans(text, CHUNK_CHARS_DEFAULT) {
                pieces.push((*chapter, source_chunk_key(&span), &text[span]));
            }
        }
        if pieces.len() > RANKED_CHUNKS_MAX {
            return Err(BookError::TooLarge(format!(
                "chapters {from}-{to} make {} chunks, more than BOOK_JOB_CHUNKS_MAX ({RANKED_CHUNKS_MAX})",
                pieces.len()
            )));
        }
        if pieces.is_empty() {
            return Ok(RankedScan { chunks: 0, ranked: Vec::new(), below: 0, proposed: Vec::new(), written: None });
        }
        // What the book knows, once; what each chunk's hits cover, from one assembler.
        let fold = |text: &str| fold_by(profile.as_deref(), text);
        let known = known_surfaces(&state, &fold);
        let assembler = self.assembler()?;
        let mut covered: Vec<Vec<(u32, u32)>> = Vec::with_capacity(pieces.len());
        for (chapter, key, text) in &pieces {
            let assembled = assembler.assemble_chunk(*chapter, key, text, None, false)?;
            covered.push(assembled.receipt.hits.iter().map(|hit| hit.bytes).collect());
        }
        let chunks: Vec<Chunk> = pieces
            .iter()
            .zip(&covered)
            .map(|((chapter, _, text), covered)| Chunk { text, chapter: *chapter, covered })
            .collect();
        let ranked = Scanner::new(lang).rank(&chunks, &|surface| known.contains(&fold(surface)), &fold);
        let below = ranked.iter().filter(|ranked| ranked.score < min_score).count() as u32;

        let mut slate = Slate::of(&state, &fold);
        let mut out = Vec::new();
        for ranked in ranked.into_iter().filter(|ranked| ranked.score >= min_score) {
            let Some((_, first)) = ranked.sightings.first() else { continue };
            let cues: Vec<String> =
                ranked.cues.iter().map(|(cue, n)| format!("{} {n}", format!("{cue:?}").to_lowercase())).collect();
            let summary = format!(
                "ch{from}-{to} ranked: score {}, {} time(s) in {} chunk(s) of {} chapter(s); cues {}",
                ranked.score,
                ranked.count,
                ranked.chunks,
                ranked.chapters,
                cues.join(", ")
            );
            let score = i32::try_from(ranked.score).unwrap_or(i32::MAX).min(1_000_000);
            let (id, ..) = slate.update(ranked.surface.clone(), &first.surface, Origin::Extractor, |candidate| {
                let mut touched = false;
                if candidate.score.is_none_or(|known| known < score) && candidate.trust == Trust::Normal {
                    candidate.score = Some(score);
                    touched = true;
                }
                touched |= add_sighting(candidate, &summary);
                for (chunk, sighting) in ranked.sightings.iter().take(SIGHTINGS_LISTED) {
                    let (chapter, key, _) = &pieces[*chunk as usize];
                    touched |= add_sighting(candidate, &sighting_line(*chapter, key, sighting));
                }
                touched
            })?;
            out.push((ranked, id));
        }
        let proposed = slate.proposed();
        drop(state);
        let written = self.propose(write, &proposed, &format!("scan ch{from}-{to}"), dry_run)?;
        Ok(RankedScan { chunks: pieces.len() as u32, ranked: out, below, proposed, written })
    }
}
