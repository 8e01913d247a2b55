//! The fold itself: text in, folded text plus an offset map back to the original out.
//!
//! The text is cut into *segments* before every char that NFKC never looks across
//! (see `unicode::joins_previous`). A one-char segment (almost all of real text) is one
//! table lookup. A longer segment (a base with combining marks, half-width `ｶﾞ`, a
//! Hangul syllable plus a trailing jamo) is composed with NFKC at run time, mapped
//! through the table, and folded again until nothing changes; the whole segment then
//! maps to the whole source range it came from. Hidden markup (ruby readings, notes,
//! tags) is skipped and belongs to no segment.

use unicode_normalization::UnicodeNormalization;

use crate::markup;
use crate::offset::{NormByte, NormSpan, SrcByte, SrcChar, SrcSpan};
use crate::profile::{Folded, Profile, ProfileInner, V_JOINS, V_SLOW};
use crate::unicode::joins_previous;
use crate::TEXT_BYTES_MAX;

/// How many times a multi-char segment is re-folded looking for a fixed point.
const FIXPOINT_ROUNDS_MAX: usize = 8;

/// Why a text could not be normalized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// The text is longer than [`TEXT_BYTES_MAX`].
    #[error("text of {n_bytes} bytes exceeds the limit of {limit} bytes")]
    TooLong {
        /// Its length.
        n_bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The folded text would not fit `u32` offsets.
    #[error("folded text of {n_bytes} bytes exceeds the limit of {limit} bytes")]
    FoldedTooLong {
        /// Its length.
        n_bytes: usize,
        /// The limit.
        limit: usize,
    },
}

/// One segment of the offset map: folded bytes `norm_start..next.norm_start` came from
/// source bytes `src_start..src_end` (chars `char_start..char_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seg {
    pub(crate) norm_start: u32,
    pub(crate) src_start: u32,
    pub(crate) src_end: u32,
    pub(crate) char_start: u32,
    pub(crate) char_end: u32,
}

/// A ruby annotation: the base (matched as ordinary text) and its reading (hidden from
/// matching; use it as an alias).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ruby {
    /// The annotated base text in the original.
    pub base: SrcSpan,
    /// The reading in the original.
    pub reading: SrcSpan,
}

/// A text folded with a profile, with its offset map and ruby annotations.
///
/// # Offset contract
///
/// The folded text ([`NormalizedText::as_str`]) is a sequence of segments; each
/// segment is the fold of a contiguous run of visible source chars and maps to the
/// source span from its first to its last char. A span of folded text that starts and
/// ends on segment boundaries maps ([`NormalizedText::src_span`]) to the source span
/// from the start of its first segment to the end of its last one. Then, for plain
/// text, `fold(&original[span]) == folded[norm_span]`; with markup, the same holds once
/// the hidden markup inside the span is removed. A span that cuts a segment (the `株`
/// inside the fold `(株)` of `㈱`) has no source span: no substring of the original
/// folds to it.
#[derive(Clone, Debug)]
pub struct NormalizedText<'t> {
    src: &'t str,
    norm: String,
    segs: Vec<Seg>,
    rubies: Vec<Ruby>,
}

impl<'t> NormalizedText<'t> {
    /// The original text.
    pub fn source(&self) -> &'t str {
        self.src
    }

    /// The folded text.
    pub fn as_str(&self) -> &str {
        &self.norm
    }

    /// Ruby annotations in source order.
    pub fn rubies(&self) -> &[Ruby] {
        &self.rubies
    }

    /// The reading of a ruby, as written in the original.
    pub fn reading(&self, ruby: &Ruby) -> &'t str {
        &self.src[ruby.reading.bytes()]
    }

    /// The segments of the offset map: each folded span with the source span it came
    /// from, in order. Folded spans tile the folded text; source spans increase.
    pub fn segments(&self) -> impl Iterator<Item = (NormSpan, SrcSpan)> + '_ {
        self.segs.iter().enumerate().map(move |(idx, seg)| {
            let norm_end = self.segs.get(idx + 1).map_or(self.norm.len() as u32, |next| next.norm_start);
            (
                NormSpan { start: NormByte(seg.norm_start), end: NormByte(norm_end) },
                SrcSpan {
                    start: SrcByte(seg.src_start),
                    end: SrcByte(seg.src_end),
                    start_char: SrcChar(seg.char_start),
                    end_char: SrcChar(seg.char_end),
                },
            )
        })
    }

    /// True when a folded byte offset is a segment boundary (or the end).
    pub fn is_boundary(&self, at: NormByte) -> bool {
        at.as_usize() == self.norm.len() || self.segs.binary_search_by_key(&at.0, |seg| seg.norm_start).is_ok()
    }

    /// The source span of a non-empty folded span, or `None` when either end cuts a
    /// segment or lies out of range (see the offset contract above).
    pub fn src_span(&self, norm: NormSpan) -> Option<SrcSpan> {
        if norm.start >= norm.end || norm.end.as_usize() > self.norm.len() {
            return None;
        }
        let first = self.segs.binary_search_by_key(&norm.start.0, |seg| seg.norm_start).ok()?;
        let after_last = if norm.end.as_usize() == self.norm.len() {
            self.segs.len()
        } else {
            self.segs.binary_search_by_key(&norm.end.0, |seg| seg.norm_start).ok()?
        };
        let last = self.segs.get(after_last.checked_sub(1)?)?;
        Some(self.span_of(&self.segs[first], last))
    }
}

impl NormalizedText<'_> {
    /// Whether the offset map keeps its contract: its segments tile the folded text in
    /// order (each non-empty, from a char boundary), and map to non-empty source spans
    /// on char boundaries within the source, in increasing order without overlap,
    /// each with its count of chars.
    fn offset_map_holds(&self) -> bool {
        let (src, norm) = (self.src, self.norm.as_str());
        let mut before: Option<&Seg> = None;
        for seg in &self.segs {
            let (src_start, src_end) = (seg.src_start as usize, seg.src_end as usize);
            let holds = src_start < src_end
                && src_end <= src.len()
                && src.is_char_boundary(src_start)
                && src.is_char_boundary(src_end)
                && (seg.norm_start as usize) < norm.len()
                && norm.is_char_boundary(seg.norm_start as usize)
                && src[src_start..src_end].chars().count() == (seg.char_end - seg.char_start) as usize
                && before.is_none_or(|before| {
                    before.norm_start < seg.norm_start
                        && before.src_end <= seg.src_start
                        && before.char_end <= seg.char_start
                });
            if !holds {
                return false;
            }
            before = Some(seg);
        }
        self.segs.first().map_or(norm.is_empty(), |first| first.norm_start == 0)
    }

    /// Whether `span` is a non-empty span within the source, on its char boundaries.
    pub(crate) fn holds_in_source(&self, span: &SrcSpan) -> bool {
        span.start < span.end
            && span.start_char < span.end_char
            && self.src.is_char_boundary(span.start.as_usize())
            && self.src.is_char_boundary(span.end.as_usize())
    }

    /// [`NormalizedText::src_span`] for spans given in increasing order: `hint` is the
    /// index of the first segment not before the previous span's start, so a whole
    /// chunk's hits cost one pass over the segments.
    #[inline]
    pub(crate) fn src_span_hinted(&self, norm: NormSpan, hint: &mut usize) -> Option<SrcSpan> {
        if norm.start >= norm.end || norm.end.as_usize() > self.norm.len() {
            return None;
        }
        let segs = &self.segs;
        let mut first = (*hint).min(segs.len());
        if first > 0 && segs[first - 1].norm_start >= norm.start.0 {
            first = 0; // spans went backwards: start over
        }
        while first < segs.len() && segs[first].norm_start < norm.start.0 {
            first += 1;
        }
        *hint = first;
        if segs.get(first)?.norm_start != norm.start.0 {
            return None;
        }
        let mut after_last = first + 1;
        while after_last < segs.len() && segs[after_last].norm_start < norm.end.0 {
            after_last += 1;
        }
        let end_ok = match segs.get(after_last) {
            Some(next) => next.norm_start == norm.end.0,
            None => norm.end.as_usize() == self.norm.len(),
        };
        if !end_ok {
            return None;
        }
        Some(self.span_of(&segs[first], &segs[after_last - 1]))
    }

    /// The source span from the start of segment `first` to the end of segment `last`.
    #[inline]
    fn span_of(&self, first: &Seg, last: &Seg) -> SrcSpan {
        let span = SrcSpan {
            start: SrcByte(first.src_start),
            end: SrcByte(last.src_end),
            start_char: SrcChar(first.char_start),
            end_char: SrcChar(last.char_end),
        };
        // Postcondition: a folded span maps into the source.
        assert!(self.holds_in_source(&span), "a source span is within the source");
        span
    }
}

impl Profile {
    /// Fold a text for matching, keeping the offset map, and capture ruby (per the
    /// profile's markup options).
    pub fn normalize<'t>(&self, text: &'t str) -> Result<NormalizedText<'t>, TextError> {
        if text.len() > TEXT_BYTES_MAX {
            return Err(TextError::TooLong { n_bytes: text.len(), limit: TEXT_BYTES_MAX });
        }
        let options = self.inner.options;
        let markup = if options.aozora_ruby || options.html_ruby {
            markup::scan(text, options.aozora_ruby, options.html_ruby)
        } else {
            markup::Markup::default()
        };
        let mut folder = Folder::new(&self.inner, text.len());
        folder.run(text, &markup.hidden);
        let (norm, segs) = folder.finish();
        if norm.len() > u32::MAX as usize {
            return Err(TextError::FoldedTooLong { n_bytes: norm.len(), limit: u32::MAX as usize });
        }
        let rubies = convert_rubies(text, &markup.rubies);
        let normalized = NormalizedText { src: text, norm, segs, rubies };
        // Postcondition: the offset map keeps its contract (a walk over the text:
        // debug builds only, folding stays fast).
        debug_assert!(normalized.offset_map_holds(), "the offset map is monotone and in bounds of both texts");
        Ok(normalized)
    }

    /// Fold a string (a glossary key, or any text) without markup handling or offsets.
    ///
    /// This is the canonical fold: `fold(fold(x)) == fold(x)`, and
    /// `normalize(x).as_str() == fold(x)` for text without markup.
    pub fn fold(&self, text: &str) -> String {
        // Most keys are chars that fold alone (one table entry each, nothing to
        // combine with its neighbours): those need no segments, so no offset map is
        // kept. The first char that may combine hands the whole text to the folder,
        // which gives the same string (the property tests hold `fold` to `normalize`).
        let table = &*self.inner;
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            let value = table.lookup(c);
            if value & (V_JOINS | V_SLOW) != 0 {
                let mut folder = Folder::new(table, text.len());
                folder.run(text, &[]);
                return folder.finish().0;
            }
            push_output(table, &mut out, value);
        }
        out
    }
}

fn convert_rubies(text: &str, raw: &[markup::RawRuby]) -> Vec<Ruby> {
    if raw.is_empty() {
        return Vec::new();
    }
    let mut positions: Vec<usize> = raw.iter().flat_map(|r| [r.base.0, r.base.1, r.reading.0, r.reading.1]).collect();
    positions.sort_unstable();
    positions.dedup();
    let mut chars = Vec::with_capacity(positions.len());
    let mut n_chars = 0usize;
    let mut byte_pos = 0usize;
    for &target in &positions {
        n_chars += text[byte_pos..target].chars().count();
        byte_pos = target;
        chars.push(n_chars);
    }
    let span = |(start, end): (usize, usize)| {
        let char_of = |pos: usize| {
            let idx = positions.binary_search(&pos).unwrap_or(0);
            SrcChar(chars[idx] as u32)
        };
        SrcSpan {
            start: SrcByte(start as u32),
            end: SrcByte(end as u32),
            start_char: char_of(start),
            end_char: char_of(end),
        }
    };
    raw.iter().map(|r| Ruby { base: span(r.base), reading: span(r.reading) }).collect()
}

struct Folder<'p> {
    table: &'p ProfileInner,
    collapse: bool,
    out: String,
    /// The offset map; the last segment is still open (it may grow or be refolded).
    segs: Vec<Seg>,
}

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The visible chars of `src[from..to]` (skipping hidden ranges), appended to `out`.
fn push_visible(src: &str, hidden: &[(usize, usize)], from: usize, to: usize, out: &mut String) {
    for (offset, c) in src[from..to].char_indices() {
        let at = from + offset;
        let idx = hidden.partition_point(|&(_, end)| end <= at);
        if hidden.get(idx).is_some_and(|&(start, _)| start <= at) {
            continue;
        }
        out.push(c);
    }
}

impl<'p> Folder<'p> {
    fn new(table: &'p ProfileInner, capacity: usize) -> Folder<'p> {
        Folder {
            table,
            collapse: table.options.collapse_whitespace,
            out: String::with_capacity(capacity + capacity / 8),
            segs: Vec::with_capacity(capacity / 2),
        }
    }

    fn run(&mut self, src: &str, hidden: &[(usize, usize)]) {
        let mut hidden_idx = 0usize;
        let mut next_hidden = hidden.first().map_or(usize::MAX, |h| h.0);
        let mut char_idx = 0usize;
        for (byte_idx, c) in src.char_indices() {
            if byte_idx >= next_hidden {
                while hidden_idx < hidden.len() && hidden[hidden_idx].1 <= byte_idx {
                    hidden_idx += 1;
                }
                next_hidden = hidden.get(hidden_idx).map_or(usize::MAX, |h| h.0);
                if byte_idx >= next_hidden {
                    char_idx += 1;
                    continue;
                }
            }
            let byte_end = byte_idx + c.len_utf8();
            let value = self.table.lookup(c);
            if value & (V_JOINS | V_SLOW) == 0 {
                match self.table.lookup_output(value) {
                    Folded::One(d) => self.emit_one(d, byte_idx, byte_end, char_idx),
                    Folded::Many(ds) => self.emit(ds.iter().copied(), (byte_idx, byte_end), (char_idx, char_idx + 1)),
                }
            } else {
                self.slow(src, hidden, c, value, (byte_idx, byte_end), char_idx);
            }
            char_idx += 1;
        }
    }

    fn finish(self) -> (String, Vec<Seg>) {
        (self.out, self.segs)
    }

    /// The common case: one char in, one char out, a new segment.
    #[inline]
    fn emit_one(&mut self, d: char, src_start: usize, src_end: usize, char_idx: usize) {
        if d == ' ' && self.collapse && self.out.as_bytes().last() == Some(&b' ') {
            if let Some(last) = self.segs.last_mut() {
                last.src_end = to_u32(src_end);
                last.char_end = to_u32(char_idx + 1);
            }
            return;
        }
        self.segs.push(Seg {
            norm_start: to_u32(self.out.len()),
            src_start: to_u32(src_start),
            src_end: to_u32(src_end),
            char_start: to_u32(char_idx),
            char_end: to_u32(char_idx + 1),
        });
        self.out.push(d);
    }

    /// A char that combines with what precedes it, or whose fold starts with such a
    /// char: refold it together with the previous segment.
    #[cold]
    fn slow(
        &mut self,
        src: &str,
        hidden: &[(usize, usize)],
        c: char,
        value: u32,
        bytes: (usize, usize),
        char_idx: usize,
    ) {
        let mut span = bytes;
        let mut chars = (char_idx, char_idx + 1);
        let mut source = String::new();
        if value & V_JOINS != 0 {
            if let Some(last) = self.segs.pop() {
                self.out.truncate(last.norm_start as usize);
                span.0 = last.src_start as usize;
                chars.0 = last.char_start as usize;
                push_visible(src, hidden, span.0, bytes.0, &mut source);
            }
        }
        source.push(c);
        let mut folded = stabilize(self.table, &source);
        // A fold that starts with a combining char would combine with the previous
        // segment when folded again: merge them, so the output is a fixed point.
        while folded.chars().next().is_some_and(joins_previous) {
            let Some(last) = self.segs.pop() else { break };
            let mut combined = self.out[last.norm_start as usize..].to_string();
            combined.push_str(&folded);
            self.out.truncate(last.norm_start as usize);
            span.0 = last.src_start as usize;
            chars.0 = last.char_start as usize;
            folded = stabilize(self.table, &combined);
        }
        self.emit(folded.chars(), span, chars);
    }

    fn emit(&mut self, output: impl Iterator<Item = char>, src: (usize, usize), chars: (usize, usize)) {
        let norm_start = self.out.len();
        let mut collapsed = false;
        for d in output {
            if self.collapse && d == ' ' && self.out.ends_with(' ') {
                collapsed = true;
                continue;
            }
            self.out.push(d);
        }
        let grew = self.out.len() > norm_start;
        match self.segs.last_mut() {
            // The output's leading space merged into the previous segment's space: the
            // rest of the output (if any) joins that segment too, so no segment starts
            // in the middle of this source run.
            Some(last) if collapsed => {
                last.src_end = to_u32(src.1);
                last.char_end = to_u32(chars.1);
            }
            _ if grew => self.segs.push(Seg {
                norm_start: to_u32(norm_start),
                src_start: to_u32(src.0),
                src_end: to_u32(src.1),
                char_start: to_u32(chars.0),
                char_end: to_u32(chars.1),
            }),
            _ => {}
        }
    }
}

/// Fold `s` repeatedly until it stops changing.
fn stabilize(table: &ProfileInner, s: &str) -> String {
    let mut current = fold_once(table, s);
    for _ in 0..FIXPOINT_ROUNDS_MAX {
        let next = fold_once(table, &current);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

/// Appends the table's output for `value` (a [`ProfileInner::lookup`]) to `out`, a
/// space not after a space when the profile collapses whitespace.
fn push_output(table: &ProfileInner, out: &mut String, value: u32) {
    let collapse = table.options.collapse_whitespace;
    let mut push = |d: char| {
        if !(collapse && d == ' ' && out.ends_with(' ')) {
            out.push(d);
        }
    };
    match table.lookup_output(value) {
        Folded::One(d) => push(d),
        Folded::Many(ds) => ds.iter().for_each(|&d| push(d)),
    }
}

/// One pass of the fold without offsets: segments, NFKC of multi-char segments, the
/// table, whitespace collapse.
fn fold_once(table: &ProfileInner, s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut segment = String::new();
    let flush = |out: &mut String, segment: &str| {
        let mut chars = segment.chars();
        match (chars.next(), chars.next()) {
            (None, _) => {}
            (Some(c), None) => push_output(table, out, table.lookup(c)),
            _ => segment.nfkc().for_each(|c| push_output(table, out, table.lookup(c))),
        }
    };
    for c in s.chars() {
        if table.lookup(c) & V_JOINS == 0 {
            flush(&mut out, &segment);
            segment.clear();
        }
        segment.push(c);
    }
    flush(&mut out, &segment);
    out
}
