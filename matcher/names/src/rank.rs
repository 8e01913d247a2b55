//! The book-wide ranking of the alarm: every chunk of a book at once (see
//! [`Scanner::rank`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::{is_han, is_kanji, is_katakana, runs_on, Candidate, Cue, Lang, Mode, Read, Scanner, Sighting};

/// One chunk of a book, as [`Scanner::rank`] reads it.
#[derive(Clone, Copy, Debug)]
pub struct Chunk<'a> {
    /// The chunk's text as stored (not folded); sightings give offsets into it.
    pub text: &'a str,
    /// The chapter the chunk belongs to. Only equality matters: the chunks of one
    /// chapter share it.
    pub chapter: u32,
    /// Byte ranges `[start, end)` of `text` the assembly already matched, as for
    /// [`Scanner::scan`].
    pub covered: &'a [(u32, u32)],
}

/// A name-like surface of a whole book and its evidence.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ranked {
    /// The surface, folded by the caller's fold.
    pub surface: String,
    /// The evidence, higher for a likelier name (see [`Scanner::rank`]); [`LIKELY`]
    /// is the cut-off.
    pub score: u32,
    /// Occurrences of the surface in the book, cue or not (of every spelling a
    /// candidate had that folds to it).
    pub count: u32,
    /// Chunks with a sighting of it.
    pub chunks: u32,
    /// Chapters with a sighting of it.
    pub chapters: u32,
    /// Sightings by cue, in [`Cue`] order, each cue once. A span proposed by several
    /// cues counts for each.
    pub cues: Vec<(Cue, u32)>,
    /// Every sighting: the chunk's index in the input and the sighting, whose offsets
    /// are into that chunk's text and whose cue is the strongest that proposed its
    /// span; by chunk, then in text order.
    pub sightings: Vec<(u32, Sighting)>,
}

/// The cut-off of [`Scanner::rank`]: a surface scoring this or more is a likely name,
/// what a review queue shows first. Below it the evidence is thin: one or two weak
/// sightings in one chunk, or one sighting of the one occurrence in the book.
pub const LIKELY: u32 = 16;

/// Points one firm sighting of a cue adds.
fn weight(cue: Cue) -> u32 {
    match cue {
        Cue::Title | Cue::Honorific => 12,
        Cue::Quoted | Cue::Speaker | Cue::Addressed => 9,
        Cue::Katakana => 8,
        Cue::Place | Cue::Surname => 6,
        Cue::Listed => 3,
        Cue::Repeated => 2,
    }
}

/// Sightings of one cue counted at most: past them a name is certain enough.
const PER_CUE_MAX: u32 = 12;

/// The points of one cue's loose sightings counted at most.
const LOOSE_POINTS_MAX: u32 = 60;

/// Chunks and chapters counted at most for the spread.
const SPREAD_MAX: u32 = 20;

/// What the book says of one folded surface.
#[derive(Clone, Default)]
struct Evidence {
    /// Firm and loose sightings by cue.
    firm: BTreeMap<Cue, u32>,
    loose: BTreeMap<Cue, u32>,
    /// The points of the loose sightings: each shares its cue's weight with the other
    /// spans its context allowed.
    shared: BTreeMap<Cue, u32>,
    chunks: BTreeSet<u32>,
    chapters: BTreeSet<u32>,
    /// Occurrences in the book, and those that start a word.
    count: u32,
    word_starts: u32,
}

impl Evidence {
    fn seen(&self) -> u32 {
        self.firm.values().chain(self.loose.values()).sum()
    }

    fn strong(&self) -> bool {
        self.firm.keys().any(|cue| cue.is_strong())
    }

    /// The score [`Scanner::rank`] documents.
    fn score(&self) -> u32 {
        let cue_points: u32 = self
            .firm
            .iter()
            .map(|(&cue, &n)| weight(cue) * n.min(PER_CUE_MAX))
            .chain(self.shared.values().map(|&points| points.min(LOOSE_POINTS_MAX)))
            .sum();
        let spread = 2 * (self.chunks.len() as u32).min(SPREAD_MAX) + 2 * (self.chapters.len() as u32).min(SPREAD_MAX);
        let raw = cue_points + spread;
        // A surface the book holds once is thin evidence, whatever its cue.
        let raw = if self.count <= 1 { raw / 2 } else { raw };
        if self.count == 0 {
            return raw;
        }
        let starts = self.word_starts.min(self.count);
        (u64::from(raw) * u64::from(self.count + 3 * starts) / u64::from(4 * self.count)) as u32
    }
}

/// A candidate span of a chunk: the index of its folded surface and every cue that
/// proposed it (loose or not, and among how many spans), strongest first.
struct Found {
    start: usize,
    end: usize,
    key: usize,
    known: bool,
    cues: Vec<(Cue, bool, u8)>,
}

impl Found {
    fn len(&self) -> usize {
        self.end - self.start
    }
}

impl Scanner {
    /// The name-like surfaces of a whole book, likeliest first.
    ///
    /// Every chunk is read for the cues of [`Scanner::scan`], but where a context
    /// allows several spans (the characters before `道` may be 悟空 or 孙悟空, the
    /// place after `往` 东土 or 东土寻) every span is kept as a *loose* candidate and
    /// the book decides. Surfaces are merged by `fold(surface)`: the caller's fold, the
    /// one it looks surfaces up with (霧川 and 雾川 are one); `fold` is asked of
    /// surfaces only, never of whole texts. `known(surface)` is asked of unfolded
    /// surfaces, as in `scan`: a known surface is never ranked but still claims its
    /// span. Spans overlapping a chunk's `covered` ranges are left out.
    ///
    /// A surface's **score** adds, for each cue, 12 points a firm sighting for a title
    /// or an honorific; 9 for quoted, speaker and addressed; 8 for katakana; 6 for place
    /// and surname; 3 for a list item and 2 for a repeated n-gram (at most 12 sightings
    /// a cue). A loose sighting shares its cue's points with the other spans of its
    /// context (a third each when it allowed three), at most 60 points a cue. Then 2
    /// points for each chunk and each chapter it is sighted in (at most 20 of each). The
    /// sum is halved when the surface occurs once in the book, and scaled by
    /// `(count + 3 × word starts) / (4 × count)`, where `count` is the number of
    /// occurrences of the surface in the book (cue or not; of every spelling a
    /// candidate had that folds alike) and word starts those not run into from the
    /// character before (Chinese: a Han character that is not a grammar word; Japanese:
    /// a kanji before kanji, a katakana before katakana), so that a fragment of longer
    /// words (天大圣 of 齐天大圣) loses up to three quarters.
    ///
    /// Then, chunk by chunk, overlapping candidates are settled: known ones first, then
    /// by score times length squared, doubled where the span starts a word and doubled
    /// again where it ends one (a longer span is less likely by chance, and 美猴王
    /// starts a word where 猴王 inside it does not); ties go to the longer, then the
    /// earlier span. Scores are computed again over the sightings each surface kept,
    /// and a surface is dropped when it kept none, when it kept one by a weak cue only,
    /// or when it occurs only inside a longer ranked surface (its count does not exceed
    /// the longer one's: 天大圣 of 齐天大圣, not 猴王 of 美猴王).
    ///
    /// The result is sorted by score, highest first, ties by surface in code-point
    /// order; [`LIKELY`] is the cut-off for a queue. Integer arithmetic only. The
    /// result depends on the chunks and not on their order, except that each sighting
    /// names its chunk by its index in `chunks`. Any text is accepted.
    pub fn rank(&self, chunks: &[Chunk], known: &dyn Fn(&str) -> bool, fold: &dyn Fn(&str) -> String) -> Vec<Ranked> {
        let mut keys: BTreeMap<String, usize> = BTreeMap::new();
        // Every unfolded surface a candidate had, and its key.
        let mut spellings: BTreeMap<Vec<char>, usize> = BTreeMap::new();
        let mut reads = Vec::with_capacity(chunks.len());
        let mut founds: Vec<Vec<Found>> = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let read = Read::new(self.lang, chunk.text);
            let mut candidates = self.candidates(&read, known, Mode::Loose);
            // One candidate a span and cue, a firm one before a loose one; the cues of
            // a span together, the strongest first.
            candidates.sort_by_key(|c| (c.start, c.end, c.cue.rank(), c.cue, c.loose));
            candidates.dedup_by_key(|c| (c.start, c.end, c.cue));
            let mut found: Vec<Found> = Vec::with_capacity(candidates.len());
            for candidate in candidates {
                let cue = (candidate.cue, candidate.loose, candidate.alternatives);
                if let Some(last) = found.last_mut().filter(|f| (f.start, f.end) == (candidate.start, candidate.end)) {
                    last.cues.push(cue);
                    continue;
                }
                let Some(raw) = read.chars.get(candidate.start..candidate.end).filter(|raw| !raw.is_empty()) else {
                    continue;
                };
                let key = match spellings.get(raw) {
                    Some(&key) => key,
                    None => {
                        let folded = fold(&raw.iter().collect::<String>());
                        if folded.is_empty() {
                            continue;
                        }
                        let next = keys.len();
                        let key = *keys.entry(folded).or_insert(next);
                        spellings.insert(raw.to_vec(), key);
                        key
                    }
                };
                let known = known(&raw.iter().collect::<String>());
                found.push(Found { start: candidate.start, end: candidate.end, key, known, cues: vec![cue] });
            }
            reads.push(read);
            founds.push(found);
        }
        let mut surfaces: Vec<String> = vec![String::new(); keys.len()];
        keys.into_iter().for_each(|(surface, i)| surfaces[i] = surface);
        let (count, word_starts) = self.occurrences(&reads, &spellings, surfaces.len());
        let evidence = |kept: &dyn Fn(usize, usize) -> bool| {
            let mut evidence = vec![Evidence::default(); surfaces.len()];
            for (i, found) in founds.iter().enumerate() {
                for (_, f) in found.iter().enumerate().filter(|&(j, f)| !f.known && kept(i, j)) {
                    let e = &mut evidence[f.key];
                    for &(cue, loose, alternatives) in &f.cues {
                        if loose {
                            *e.loose.entry(cue).or_default() += 1;
                            *e.shared.entry(cue).or_default() += weight(cue) / u32::from(alternatives.max(1));
                        } else {
                            *e.firm.entry(cue).or_default() += 1;
                        }
                    }
                    e.chunks.insert(i as u32);
                    e.chapters.insert(chunks[i].chapter);
                }
            }
            for (k, e) in evidence.iter_mut().enumerate() {
                e.count = count[k];
                e.word_starts = word_starts[k];
            }
            evidence
        };
        let priority: Vec<u32> = evidence(&|_, _| true).iter().map(Evidence::score).collect();
        // Chunk by chunk, the spans go to the best candidates.
        let mut kept: Vec<BTreeSet<usize>> = Vec::with_capacity(chunks.len());
        let mut sightings: Vec<Vec<(u32, Sighting)>> = vec![Vec::new(); surfaces.len()];
        for (i, (found, read)) in founds.iter().zip(&reads).enumerate() {
            let chars = &read.chars;
            let bounds = |f: &Found| {
                let start = f.start == 0 || !self.runs_into(chars[f.start - 1], chars[f.start]);
                let end = f.end == chars.len() || !self.runs_into(chars[f.end - 1], chars[f.end]);
                (1 + u64::from(start)) * (1 + u64::from(end))
            };
            let mut order: Vec<usize> = (0..found.len()).collect();
            order.sort_by_key(|&j| {
                let f = &found[j];
                let len = f.len() as u64;
                let p = if f.known { u64::MAX } else { u64::from(priority[f.key]) * len * len * bounds(f) };
                (u64::MAX - p, usize::MAX - f.len(), f.start)
            });
            let mut taken = vec![false; chars.len()];
            let mut won = BTreeSet::new();
            for j in order {
                let f = &found[j];
                let Some(span) = taken.get_mut(f.start..f.end) else { continue };
                if span.iter().any(|&t| t) {
                    continue;
                }
                let candidate = Candidate::new(f.start, f.end, f.cues[0].0);
                let Some(sighting) = read.sighting(chunks[i].text, &candidate, chunks[i].covered) else { continue };
                span.iter_mut().for_each(|t| *t = true);
                if !f.known {
                    won.insert(j);
                    sightings[f.key].push((i as u32, sighting));
                }
            }
            kept.push(won);
        }
        let after = evidence(&|i, j| kept[i].contains(&j));
        let mut ranked: BTreeMap<String, Ranked> = BTreeMap::new();
        for (k, e) in after.iter().enumerate() {
            let seen = e.seen();
            if seen == 0 || (seen == 1 && !e.strong()) {
                continue;
            }
            let mut cues: BTreeMap<Cue, u32> = e.firm.clone();
            e.loose.iter().for_each(|(&cue, &n)| *cues.entry(cue).or_default() += n);
            let mut seen_at = std::mem::take(&mut sightings[k]);
            seen_at.sort_by_key(|(chunk, s)| (*chunk, s.bytes, s.cue));
            let surface = std::mem::take(&mut surfaces[k]);
            ranked.insert(
                surface.clone(),
                Ranked {
                    surface,
                    score: e.score(),
                    count: e.count,
                    chunks: e.chunks.len() as u32,
                    chapters: e.chapters.len() as u32,
                    cues: cues.into_iter().collect(),
                    sightings: seen_at,
                },
            );
        }
        // A surface seen only inside a longer ranked surface is that surface's part.
        let mut parts: BTreeSet<String> = BTreeSet::new();
        for longer in ranked.values() {
            let chars: Vec<char> = longer.surface.chars().collect();
            for start in 0..chars.len() {
                for end in start + 1..=chars.len() {
                    if end - start == chars.len() {
                        continue;
                    }
                    let part: String = chars[start..end].iter().collect();
                    if ranked.get(&part).is_some_and(|p| p.count <= longer.count) {
                        parts.insert(part);
                    }
                }
            }
        }
        let mut ranked: Vec<Ranked> = ranked.into_values().filter(|r| !parts.contains(&r.surface)).collect();
        ranked.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.surface.cmp(&b.surface)));
        ranked
    }

    /// Occurrences of every key in the chunks (of any spelling of it a candidate had),
    /// and of those at a word start.
    fn occurrences(&self, reads: &[Read], spellings: &BTreeMap<Vec<char>, usize>, keys: usize) -> (Vec<u32>, Vec<u32>) {
        let lengths: BTreeSet<usize> = spellings.keys().map(Vec::len).collect();
        let firsts: BTreeSet<char> = spellings.keys().filter_map(|k| k.first().copied()).collect();
        let mut count = vec![0u32; keys];
        let mut word_starts = vec![0u32; keys];
        for read in reads {
            let text = &read.chars;
            for start in 0..text.len() {
                if !firsts.contains(&text[start]) {
                    continue;
                }
                let at_word_start = start == 0 || !self.runs_into(text[start - 1], text[start]);
                for &len in &lengths {
                    let Some(s) = text.get(start..start + len) else { break };
                    if let Some(&k) = spellings.get(s) {
                        count[k] = count[k].saturating_add(1);
                        word_starts[k] = word_starts[k].saturating_add(u32::from(at_word_start));
                    }
                }
            }
        }
        (count, word_starts)
    }

    /// Whether a word runs on from `before` into `c`: Chinese, a Han character that is
    /// no grammar word before a Han character; Japanese, kanji before kanji or
    /// katakana before katakana.
    fn runs_into(&self, before: char, c: char) -> bool {
        match self.lang {
            Lang::Ja if is_katakana(c) => is_katakana(before),
            Lang::Ja => is_kanji(before) && is_kanji(c),
            Lang::Zh => is_han(c) && runs_on(Lang::Zh, before),
        }
    }
}
