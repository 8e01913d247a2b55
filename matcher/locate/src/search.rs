//! Finding the chunk: runs of registered text in a request, chained into chunks, and
//! the choice of the chunk the request translates.
//!
//! 1. **Runs.** Every shingle of the folded request is looked up in the table; each
//!    anchor that matches is extended both ways to the maximal run of chars the
//!    request and the chapter share. A run is kept when, without whitespace at its
//!    ends, it is at least [`RUN_CHARS_MIN`] chars long: every such run holds an
//!    anchor, so none is missed (unless all of its anchors are too frequent).
//! 2. **Chains.** A tool sends a chunk line by line inside its own syntax (numbers,
//!    JSON, table cells), so one chunk is many runs. Runs of one chapter chain when
//!    they follow each other in the request and in the chapter with small gaps, and
//!    the request's gap holds no more whole lines of text than the chapter's does (a
//!    header such as `###上文内容` or `<textarea>` between two blocks is a line the
//!    chapter does not have). A chain's score is the chars of its runs.
//! 3. **The choice.** The chain with the highest score, then the chain that follows it
//!    in the request and continues it in the chapter, if any (the highest-scoring one
//!    is then the previous chunk sent as context). Another chain with the same score
//!    over the same part of the request makes the answer ambiguous.
//! 4. **Edges.** Lines shorter than a run (`“是。”`) at either end of the chosen chain
//!    join it when the request holds them, in place, by the same gap rule.
//! 5. **Thresholds.** The chunk must have [`Options::chars_min`] chars, and the
//!    registered text in the request must be [`Options::share_min_percent`] of its
//!    CJK letters.

use std::ops::Range;

use matcher::{SrcSpan, TextError};

use crate::fold::{is_cjk, to_u32, Folded, Lines};
use crate::index::{key_of, roll, shingle_hash, Index};
use crate::{
    CANDIDATES_LISTED_MAX, CHAPTER_GAP_CHARS_MAX, REQUEST_BYTES_MAX, REQUEST_GAP_CHARS_MAX, RUNS_MAX, RUN_CHARS_MIN,
    SHINGLE_CHARS,
};

/// Why a request could not be searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The request is longer than [`REQUEST_BYTES_MAX`].
    #[error("a request of {n_bytes} bytes exceeds the limit of {limit} bytes")]
    TooLong {
        /// Its length.
        n_bytes: usize,
        /// The limit.
        limit: usize,
    },
}

/// What a search asks for beyond the request: a chapter to search alone, and the
/// thresholds a chunk must pass. [`Options::default`] holds the documented defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Search this chapter only (when the caller knows the chapter, from a header, and
    /// needs the span).
    pub chapter: Option<u32>,
    /// The least chars (folded, without whitespace) of the request the chunk must
    /// match. Default [`CHUNK_CHARS_MIN`](crate::CHUNK_CHARS_MIN).
    pub chars_min: usize,
    /// The least share, in percent, of the request's CJK letters that must lie in
    /// registered text (the chunk, its context, any run). Default
    /// [`SHARE_MIN_PERCENT`](crate::SHARE_MIN_PERCENT).
    pub share_min_percent: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { chapter: None, chars_min: crate::CHUNK_CHARS_MIN, share_min_percent: crate::SHARE_MIN_PERCENT }
    }
}

/// A registered span of source text found in a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Located {
    /// The chapter's number.
    pub chapter: u32,
    /// The span in the chapter's original text, in bytes: from the first matched char
    /// to the last.
    pub source: Range<usize>,
    /// The span in the original request, in bytes: from the first matched char to the
    /// last (the wrapper between lines included).
    pub request: Range<usize>,
    /// How many chars (folded, without whitespace) of the request the chapter's text
    /// matches inside the span.
    pub chars: usize,
}

/// How much of a request is registered text, in CJK letters (Han, kana, Hangul) after
/// the fold: the measure of [`Options::share_min_percent`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Coverage {
    /// The request's CJK letters.
    pub request_cjk: usize,
    /// Those inside a run of registered text (any chapter, context included).
    pub registered_cjk: usize,
}

/// The answer of [`Index::locate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The chunk the request translates.
    Found {
        /// Where it is.
        chunk: Located,
        /// How much of the request is registered text.
        coverage: Coverage,
    },
    /// Several registered spans match the same part of the request equally well (a
    /// line repeated in two chapters). The caller should refuse or ask for a header.
    Ambiguous {
        /// The spans, at least two and at most
        /// [`CANDIDATES_LISTED_MAX`](crate::CANDIDATES_LISTED_MAX), ordered by chapter
        /// and then by position: the first is the deterministic pick of a caller that
        /// must pick one.
        candidates: Vec<Located>,
        /// How much of the request is registered text.
        coverage: Coverage,
    },
    /// No chunk passes the thresholds.
    NotFound {
        /// The best chunk found, when one was found and failed a threshold.
        nearest: Option<Located>,
        /// How much of the request is registered text.
        coverage: Coverage,
    },
}

impl Outcome {
    /// The chunk, when exactly one was found.
    pub fn found(&self) -> Option<&Located> {
        match self {
            Outcome::Found { chunk, .. } => Some(chunk),
            _ => None,
        }
    }

    /// How much of the request is registered text.
    pub fn coverage(&self) -> Coverage {
        match self {
            Outcome::Found { coverage, .. }
            | Outcome::Ambiguous { coverage, .. }
            | Outcome::NotFound { coverage, .. } => *coverage,
        }
    }
}

/// A run of chars the request and a chapter share: request chars `req..req + len`
/// are the book's folded chars `pos..pos + len` (global positions), in chapter
/// `chapter` (its index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Run {
    chapter: u32,
    req: u32,
    pos: u32,
    len: u32,
    /// Chars that are not whitespace.
    solid: u32,
}

impl Run {
    fn req_end(&self) -> u32 {
        self.req + self.len
    }

    fn pos_end(&self) -> u32 {
        self.pos + self.len
    }
}

/// A chain of runs of one chapter, in order, and its score.
#[derive(Clone, Debug)]
struct Chain {
    runs: Vec<Run>,
    score: u32,
}

impl Chain {
    fn chapter(&self) -> u32 {
        self.runs[0].chapter
    }

    fn req(&self) -> Range<u32> {
        self.runs[0].req..self.runs[self.runs.len() - 1].req_end()
    }

    fn pos(&self) -> Range<u32> {
        self.runs[0].pos..self.runs[self.runs.len() - 1].pos_end()
    }
}

impl Index {
    /// Finds the registered span that `request` translates, with the default
    /// [`Options`].
    pub fn locate(&self, request: &str) -> Result<Outcome, RequestError> {
        self.locate_with(request, &Options::default())
    }

    /// Finds the registered span that `request` translates (see the crate
    /// documentation for the rules).
    pub fn locate_with(&self, request: &str, options: &Options) -> Result<Outcome, RequestError> {
        if request.len() > REQUEST_BYTES_MAX {
            return Err(RequestError::TooLong { n_bytes: request.len(), limit: REQUEST_BYTES_MAX });
        }
        let req = Folded::new(&self.profile, request).map_err(|error| match error {
            TextError::TooLong { n_bytes, .. } | TextError::FoldedTooLong { n_bytes, .. } => {
                RequestError::TooLong { n_bytes, limit: REQUEST_BYTES_MAX }
            }
            _ => RequestError::TooLong { n_bytes: request.len(), limit: REQUEST_BYTES_MAX },
        })?;
        let only = match options.chapter {
            Some(number) => match self.chapters.binary_search_by_key(&number, |chapter| chapter.number) {
                Ok(idx) => Some(to_u32(idx)),
                Err(_) => {
                    let coverage = Coverage { request_cjk: count_cjk(&req.chars), registered_cjk: 0 };
                    return Ok(Outcome::NotFound { nearest: None, coverage });
                }
            },
            None => None,
        };
        let runs = self.runs(&req.chars, only);
        let coverage =
            Coverage { request_cjk: count_cjk(&req.chars), registered_cjk: registered_cjk(&req.chars, &runs) };
        let chains = self.chains(runs, &req.lines);
        let Some(chosen) = self.choose(&chains) else {
            return Ok(Outcome::NotFound { nearest: None, coverage });
        };
        let best = &chains[chosen];
        let mut rivals: Vec<&Chain> = chains
            .iter()
            .enumerate()
            .filter(|&(idx, chain)| {
                idx == chosen
                    || (chain.score == best.score
                        && overlaps(&chain.req(), &best.req())
                        && (chain.chapter(), chain.pos()) != (best.chapter(), best.pos()))
            })
            .map(|(_, chain)| chain)
            .collect();
        rivals.sort_by_key(|chain| (chain.chapter(), chain.pos().start));
        let mut located: Vec<Located> =
            rivals.iter().filter_map(|chain| self.located(&req, chain)).take(CANDIDATES_LISTED_MAX).collect();
        located.dedup();
        let passes = |chunk: &Located| {
            chunk.chars >= options.chars_min
                && coverage.registered_cjk * 100 >= options.share_min_percent * coverage.request_cjk
        };
        Ok(match located.len() {
            0 => Outcome::NotFound { nearest: None, coverage },
            1 if passes(&located[0]) => Outcome::Found { chunk: located.remove(0), coverage },
            1 => Outcome::NotFound { nearest: located.pop(), coverage },
            _ if passes(&located[0]) => Outcome::Ambiguous { candidates: located, coverage },
            _ => Outcome::NotFound { nearest: None, coverage },
        })
    }

    /// Every maximal run of at least [`RUN_CHARS_MIN`] chars (whitespace at its ends
    /// left out) that the request shares with a chapter (with chapter `only` when
    /// given) and that holds an anchor of the table; at most [`RUNS_MAX`], the longest.
    fn runs(&self, req: &[char], only: Option<u32>) -> Vec<Run> {
        let mut runs = Vec::new();
        if req.len() < SHINGLE_CHARS || self.table.entries.is_empty() {
            return runs;
        }
        // Runs whose request span is not yet passed, by diagonal (book position minus
        // request position): an anchor inside one of them is the same run again.
        let mut active: Vec<(i64, usize)> = Vec::new();
        let mut hash = shingle_hash(&req[..SHINGLE_CHARS]);
        for at in 0..=req.len() - SHINGLE_CHARS {
            if at > 0 {
                hash = roll(hash, req[at - 1], req[at + SHINGLE_CHARS - 1]);
                if !active.is_empty() {
                    active.retain(|&(_, end)| end > at);
                }
            }
            let shingle = &req[at..at + SHINGLE_CHARS];
            for pos in self.table.candidates(key_of(hash)) {
                let pos = pos as usize;
                let diagonal = pos as i64 - at as i64;
                if active.iter().any(|&(d, _)| d == diagonal) {
                    continue;
                }
                if self.folded.get(pos..pos + SHINGLE_CHARS) != Some(shingle) {
                    continue; // another shingle in the bucket with the same fingerprint
                }
                let chapter = self.chapter_at(to_u32(pos));
                let Some(range) = self.chapters.get(chapter).map(|c| c.folded.start as usize..c.folded.end as usize)
                else {
                    continue;
                };
                if pos + SHINGLE_CHARS > range.end || only.is_some_and(|only| only as usize != chapter) {
                    continue;
                }
                let mut before = 0;
                while before < at && pos - before > range.start && req[at - before - 1] == self.folded[pos - before - 1]
                {
                    before += 1;
                }
                let mut after = SHINGLE_CHARS;
                while at + after < req.len() && pos + after < range.end && req[at + after] == self.folded[pos + after] {
                    after += 1;
                }
                let (start, end) = (at - before, at + after);
                active.push((diagonal, end));
                let (lead, len) = trim(&req[start..end]);
                if len < RUN_CHARS_MIN {
                    continue;
                }
                let solid = req[start + lead..start + lead + len].iter().filter(|c| !c.is_whitespace()).count();
                runs.push(Run {
                    chapter: to_u32(chapter),
                    req: to_u32(start + lead),
                    pos: to_u32(pos - before + lead),
                    len: to_u32(len),
                    solid: to_u32(solid),
                });
            }
        }
        if runs.len() > RUNS_MAX {
            runs.sort_by_key(|run| (std::cmp::Reverse(run.len), run.req, run.pos));
            runs.truncate(RUNS_MAX);
        }
        runs.sort_unstable();
        runs
    }

    /// Whether run `b` may follow run `a` in one chunk: same chapter, in order in the
    /// request and in the chapter, gaps of at most [`REQUEST_GAP_CHARS_MAX`] and
    /// [`CHAPTER_GAP_CHARS_MAX`] chars, and no more whole lines of text in the
    /// request's gap than in the chapter's.
    fn linkable(&self, req_lines: &Lines, a: &Run, b: &Run) -> bool {
        a.chapter == b.chapter
            && a.req_end() <= b.req
            && b.req - a.req_end() <= REQUEST_GAP_CHARS_MAX
            && a.pos_end() <= b.pos
            && b.pos - a.pos_end() <= CHAPTER_GAP_CHARS_MAX
            && req_lines.whole_lines(a.req_end(), b.req) <= self.lines.whole_lines(a.pos_end(), b.pos)
    }

    /// The best chain ending at each run: `runs` sorted by chapter, then request
    /// position; each run takes the predecessor that gives the highest score (the
    /// nearest one on a tie).
    fn chains(&self, runs: Vec<Run>, req_lines: &Lines) -> Vec<Chain> {
        let n = runs.len();
        let mut score = vec![0u32; n];
        let mut pred = vec![usize::MAX; n];
        let mut group = 0;
        while group < n {
            let chapter = runs[group].chapter;
            let end = group + runs[group..].partition_point(|run| run.chapter == chapter);
            let longest = runs[group..end].iter().map(|run| run.len).max().unwrap_or(0);
            for r in group..end {
                score[r] = runs[r].solid;
                let reach = runs[r].req.saturating_sub(REQUEST_GAP_CHARS_MAX + longest);
                for p in (group..r).rev() {
                    if runs[p].req < reach {
                        break;
                    }
                    if score[p] + runs[r].solid > score[r] && self.linkable(req_lines, &runs[p], &runs[r]) {
                        score[r] = score[p] + runs[r].solid;
                        pred[r] = p;
                    }
                }
            }
            group = end;
        }
        (0..n)
            .map(|tail| {
                let mut members = vec![runs[tail]];
                let mut at = tail;
                while pred[at] != usize::MAX {
                    at = pred[at];
                    members.push(runs[at]);
                }
                members.reverse();
                Chain { runs: members, score: score[tail] }
            })
            .collect()
    }

    /// The chain of the chunk: the highest score (the later one in the request on a
    /// tie), then, while a chain follows it in the request and continues it in the
    /// chapter, the best such chain (the chosen one was its context).
    fn choose(&self, chains: &[Chain]) -> Option<usize> {
        let mut chosen = (0..chains.len()).max_by_key(|&idx| (chains[idx].score, chains[idx].req().end, idx))?;
        loop {
            let (req, pos, chapter) = (chains[chosen].req(), chains[chosen].pos(), chains[chosen].chapter());
            let next = (0..chains.len())
                .filter(|&idx| {
                    let chain = &chains[idx];
                    chain.chapter() == chapter
                        && chain.req().start >= req.end
                        && chain.pos().start >= pos.end
                        && chain.pos().start - pos.end <= CHAPTER_GAP_CHARS_MAX
                })
                .max_by_key(|&idx| (chains[idx].score, std::cmp::Reverse(idx)));
            match next {
                Some(next) => chosen = next,
                None => return Some(chosen),
            }
        }
    }

    /// A chain with its edge lines, as spans of the original texts.
    fn located(&self, req: &Folded<'_>, chain: &Chain) -> Option<Located> {
        let mut runs = chain.runs.clone();
        self.extend_edges(req, &mut runs);
        let chapter = runs[0].chapter as usize;
        let origin = self.chapters[chapter].folded.start;
        let folded = Folded::new(&self.profile, self.text_of(chapter)).ok()?;
        let stored = &self.folded[origin as usize..self.chapters[chapter].folded.end as usize];
        if folded.chars != stored {
            return None; // the index was not built with this profile from this text
        }
        let (first, last) = (runs[0], runs[runs.len() - 1]);
        // Both ends on segment boundaries of both offset maps, moving inwards.
        let start = (0..first.len).find(|&t| {
            req.is_boundary((first.req + t) as usize) && folded.is_boundary((first.pos - origin + t) as usize)
        })?;
        let end = (0..last.len).find(|&t| {
            req.is_boundary((last.req_end() - t) as usize) && folded.is_boundary((last.pos_end() - origin - t) as usize)
        })?;
        let (req_start, req_end) = ((first.req + start) as usize, (last.req_end() - end) as usize);
        let (pos_start, pos_end) = ((first.pos - origin + start) as usize, (last.pos_end() - origin - end) as usize);
        if req_start >= req_end || pos_start >= pos_end {
            return None;
        }
        let source: SrcSpan = folded.src_span(pos_start, pos_end)?;
        let request: SrcSpan = req.src_span(req_start, req_end)?;
        let chars = runs.iter().map(|run| run.solid as usize).sum::<usize>()
            - req.chars[first.req as usize..req_start].iter().filter(|c| !c.is_whitespace()).count()
            - req.chars[req_end..last.req_end() as usize].iter().filter(|c| !c.is_whitespace()).count();
        Some(Located {
            chapter: self.chapters[chapter].number,
            source: source.bytes(),
            request: request.bytes(),
            chars,
        })
    }

    /// Adds to a chain the chapter's lines shorter than a run that the request holds
    /// right after its end and right before its start, as long as the gap rule of
    /// [`Index::linkable`] holds.
    fn extend_edges(&self, req: &Folded<'_>, runs: &mut Vec<Run>) {
        let chapter = runs[0].chapter;
        let range = self.chapters[chapter as usize].folded.clone();
        let breaks = &self.lines.breaks;
        let is_blank = |from: u32, to: u32| self.folded[from as usize..to as usize].iter().all(|c| c.is_whitespace());
        // After the end.
        loop {
            let last = runs[runs.len() - 1];
            let idx = breaks.partition_point(|&b| b < last.pos_end());
            let Some(&brk) = breaks.get(idx).filter(|&&b| b < range.end) else { break };
            if !is_blank(last.pos_end(), brk) {
                break; // the chain ends inside a line
            }
            let line_end = breaks.get(idx + 1).copied().filter(|&b| b < range.end).unwrap_or(range.end);
            let Some(line) = self.short_line(chapter, brk + 1, line_end) else { break };
            let needle = &self.folded[line.pos as usize..line.pos_end() as usize];
            let window = last.req_end() as usize
                ..req.chars.len().min(last.req_end() as usize + REQUEST_GAP_CHARS_MAX as usize + needle.len());
            let found = (window.start..window.end.saturating_sub(needle.len()) + 1)
                .find(|&at| req.chars.get(at..at + needle.len()) == Some(needle));
            let Some(at) = found else { break };
            let run = Run { req: to_u32(at), ..line };
            if !self.linkable(&req.lines, &last, &run) {
                break;
            }
            runs.push(run);
        }
        // Before the start.
        loop {
            let first = runs[0];
            let idx = breaks.partition_point(|&b| b < first.pos);
            let Some(&brk) = idx.checked_sub(1).and_then(|i| breaks.get(i)).filter(|&&b| b >= range.start) else {
                break;
            };
            if !is_blank(brk + 1, first.pos) {
                break; // the chain starts inside a line
            }
            let line_start = idx
                .checked_sub(2)
                .and_then(|i| breaks.get(i))
                .copied()
                .filter(|&b| b >= range.start)
                .map_or(range.start, |b| b + 1);
            let Some(line) = self.short_line(chapter, line_start, brk) else { break };
            let needle = &self.folded[line.pos as usize..line.pos_end() as usize];
            let lowest = (first.req as usize).saturating_sub(REQUEST_GAP_CHARS_MAX as usize + needle.len());
            let found = (lowest..(first.req as usize).saturating_sub(needle.len()) + 1).rev().find(|&at| {
                at + needle.len() <= first.req as usize && req.chars.get(at..at + needle.len()) == Some(needle)
            });
            let Some(at) = found else { break };
            let run = Run { req: to_u32(at), ..line };
            if !self.linkable(&req.lines, &run, &first) {
                break;
            }
            runs.insert(0, run);
        }
    }

    /// The line of folded chars `from..to` of chapter `chapter` without whitespace at
    /// its ends, as a run (its request position left 0), when it holds text and is
    /// shorter than a run.
    fn short_line(&self, chapter: u32, from: u32, to: u32) -> Option<Run> {
        let line = &self.folded[from as usize..to as usize];
        let lead = line.iter().take_while(|c| c.is_whitespace()).count();
        let trail = line.iter().rev().take_while(|c| c.is_whitespace()).count();
        let len = line.len().saturating_sub(lead + trail);
        if len == 0 || len >= RUN_CHARS_MIN {
            return None;
        }
        let solid = line[lead..lead + len].iter().filter(|c| !c.is_whitespace()).count();
        Some(Run { chapter, req: 0, pos: from + to_u32(lead), len: to_u32(len), solid: to_u32(solid) })
    }
}

/// The part of a shared run that counts, as (chars left out at the start, length):
/// without whitespace at its ends, and without a piece at either end that holds no
/// letter or digit before (after) whitespace. Such a piece is the wrapper continuing
/// the chapter across a line break: the `：` of `翻译成俄文：⏎` meeting the `：` that
/// ends the paragraph before the chunk.
fn trim(shared: &[char]) -> (usize, usize) {
    let mut start = 0;
    let mut end = shared.len();
    if let Some(space) = shared.iter().position(|c| c.is_whitespace()) {
        if !shared[..space].iter().any(|c| c.is_alphanumeric()) {
            start = space;
        }
    }
    if let Some(space) = shared.iter().rposition(|c| c.is_whitespace()) {
        if space >= start && !shared[space + 1..].iter().any(|c| c.is_alphanumeric()) {
            end = space + 1;
        }
    }
    while start < end && shared[start].is_whitespace() {
        start += 1;
    }
    while end > start && shared[end - 1].is_whitespace() {
        end -= 1;
    }
    (start, end - start)
}

fn overlaps(a: &Range<u32>, b: &Range<u32>) -> bool {
    a.start < b.end && b.start < a.end
}

fn count_cjk(chars: &[char]) -> usize {
    chars.iter().filter(|&&c| is_cjk(c)).count()
}

/// The CJK letters of the request inside any run.
fn registered_cjk(req: &[char], runs: &[Run]) -> usize {
    let mut spans: Vec<(u32, u32)> = runs.iter().map(|run| (run.req, run.req_end())).collect();
    spans.sort_unstable();
    let mut total = 0;
    let mut covered_to = 0u32;
    for (start, end) in spans {
        let start = start.max(covered_to);
        if start < end {
            total += count_cjk(&req[start as usize..end as usize]);
            covered_to = end;
        }
    }
    total
}
