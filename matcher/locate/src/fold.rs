//! A text as the locator reads it: the profile's fold as a sequence of chars, the
//! folded byte offset of each char (to map spans back through the matcher's offset
//! map), and where the original text broke its lines.
//!
//! Positions here count folded chars. The fold collapses whitespace, so a line break
//! is remembered as the folded whitespace char whose source holds it.

use matcher::{NormSpan, NormalizedText, Profile, SrcSpan, TextError};

/// A text folded with a profile.
pub(crate) struct Folded<'t> {
    pub(crate) norm: NormalizedText<'t>,
    /// The folded chars.
    pub(crate) chars: Vec<char>,
    /// The folded byte offset of each char, then the folded length: `chars.len() + 1`
    /// entries.
    pub(crate) byte_of: Vec<u32>,
    pub(crate) lines: Lines,
}

impl<'t> Folded<'t> {
    pub(crate) fn new(profile: &Profile, text: &'t str) -> Result<Folded<'t>, TextError> {
        let norm = profile.normalize(text)?;
        let folded = norm.as_str();
        let mut chars = Vec::with_capacity(folded.len() / 2);
        let mut byte_of = Vec::with_capacity(folded.len() / 2 + 1);
        for (at, c) in folded.char_indices() {
            chars.push(c);
            byte_of.push(to_u32(at));
        }
        byte_of.push(to_u32(folded.len()));
        let mut breaks = Vec::new();
        for (norm_span, src_span) in norm.segments() {
            if !text[src_span.bytes()].contains(is_line_break) {
                continue;
            }
            // The first folded whitespace char of the segment stands for its breaks.
            let seg = &folded[norm_span.bytes()];
            if let Some((offset, _)) = seg.char_indices().find(|(_, c)| c.is_whitespace()) {
                let at = to_u32(norm_span.start.as_usize() + offset);
                let idx = byte_of.partition_point(|&b| b < at);
                breaks.push(to_u32(idx));
            }
        }
        let lines = Lines::new(breaks, &chars, 0);
        Ok(Folded { norm, chars, byte_of, lines })
    }

    /// The source span of folded chars `start..end`, or `None` when either end cuts a
    /// segment of the offset map (the `株` inside the fold `(株)` of `㈱`).
    pub(crate) fn src_span(&self, start: usize, end: usize) -> Option<SrcSpan> {
        let span = NormSpan {
            start: matcher::NormByte(*self.byte_of.get(start)?),
            end: matcher::NormByte(*self.byte_of.get(end)?),
        };
        self.norm.src_span(span)
    }

    /// Whether folded char `at` starts a segment of the offset map (or is the end).
    pub(crate) fn is_boundary(&self, at: usize) -> bool {
        self.byte_of.get(at).is_some_and(|&byte| self.norm.is_boundary(matcher::NormByte(byte)))
    }
}

/// Where lines break, in folded chars: each break is the folded whitespace char that
/// holds one or more line breaks of the source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Lines {
    /// Positions of the breaks, increasing.
    pub(crate) breaks: Vec<u32>,
    /// `filled[i]`: how many of the lines after breaks `0..i` (each up to the next
    /// break) hold a char other than whitespace. `breaks.len() + 1` entries.
    pub(crate) filled: Vec<u32>,
}

impl Lines {
    /// The lines of `chars` (whose first char is at position `origin`) with breaks at
    /// `breaks`, appended to nothing.
    pub(crate) fn new(breaks: Vec<u32>, chars: &[char], origin: u32) -> Lines {
        let mut lines = Lines { breaks: Vec::new(), filled: vec![0] };
        lines.extend(&breaks, chars, origin);
        lines
    }

    /// Appends the breaks of one more text (positions from `origin`, increasing, after
    /// every break already held).
    pub(crate) fn extend(&mut self, breaks: &[u32], chars: &[char], origin: u32) {
        let end = origin as usize + chars.len();
        for (idx, &at) in breaks.iter().enumerate() {
            let next = breaks.get(idx + 1).map_or(end, |&b| b as usize);
            let line = &chars[(at as usize + 1).min(end) - origin as usize..next - origin as usize];
            let filled = u32::from(line.iter().any(|c| !c.is_whitespace()));
            let total = self.filled.last().copied().unwrap_or(0);
            self.breaks.push(at);
            self.filled.push(total + filled);
        }
    }

    /// How many whole lines holding some text lie inside folded chars `start..end`:
    /// lines whose breaks before and after are both inside the range.
    pub(crate) fn whole_lines(&self, start: u32, end: u32) -> u32 {
        let first = self.breaks.partition_point(|&b| b < start);
        let after = self.breaks.partition_point(|&b| b < end);
        if after <= first + 1 {
            return 0;
        }
        // Lines after breaks first..after-1, each ended by the next break.
        self.filled[after - 1] - self.filled[first]
    }
}

/// The chars that end a line (Unicode's mandatory breaks).
pub(crate) fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Han, kana and Hangul: the letters of the books this crate serves, counted when a
/// request's share of registered text is measured.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF          // Hangul Jamo
        | 0x3005..=0x3007        // 々 〆 〇
        | 0x3040..=0x30FF        // hiragana, katakana
        | 0x31F0..=0x31FF        // katakana phonetic extensions
        | 0x3400..=0x4DBF        // CJK extension A
        | 0x4E00..=0x9FFF        // CJK unified ideographs
        | 0xAC00..=0xD7AF        // Hangul syllables
        | 0xF900..=0xFAFF        // CJK compatibility ideographs
        | 0xFF66..=0xFF9F        // half-width katakana
        | 0x20000..=0x3FFFF      // CJK extensions B and later
    )
}

/// Offsets are `u32`: texts are bounded far below 4 GiB (see the crate's limits).
pub(crate) fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Lines {
        let chars: Vec<char> = text.chars().collect();
        let breaks = chars.iter().enumerate().filter(|(_, &c)| c == '\n').map(|(i, _)| i as u32).collect();
        Lines::new(breaks, &chars, 0)
    }

    #[test]
    fn whole_lines_count_only_lines_with_text_between_two_breaks_in_the_range() {
        let text = "ab\ncd\n\nef\ngh";
        let lines = lines(text);
        assert_eq!(lines.breaks, [2, 5, 6, 9]);
        assert_eq!(lines.whole_lines(0, 12), 2); // cd, ef (the empty line is no line with text)
        assert_eq!(lines.whole_lines(2, 6), 1); // cd, between the breaks at 2 and 5
        assert_eq!(lines.whole_lines(3, 12), 1); // ef only: cd's break before is outside
        assert_eq!(lines.whole_lines(2, 5), 0); // the break after cd is outside
        assert_eq!(lines.whole_lines(6, 6), 0);
    }
}
