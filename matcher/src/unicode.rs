//! Character classes the fold and the matcher need: normalization boundaries, CJK
//! scripts (matched anywhere) and word characters (Latin, Cyrillic, …: matched only at
//! word boundaries).

use std::sync::OnceLock;

use unicode_normalization::{char::canonical_combining_class, is_nfkc_quick, IsNormalized};

/// True when NFKC never looks across the point just before `c`: the compatibility
/// decomposition of `c` starts with a starter (combining class 0) that cannot be the
/// second half of a canonical composition (NFKC_Quick_Check = Yes).
///
/// Text can be normalized segment by segment when it is cut before such chars.
pub(crate) fn boundary_before_uncached(c: char) -> bool {
    if (c as u32) < 0x300 {
        return true;
    }
    let mut first = None;
    unicode_normalization::char::decompose_compatible(c, |d| {
        if first.is_none() {
            first = Some(d);
        }
    });
    let Some(first) = first else { return true };
    canonical_combining_class(first) == 0 && is_nfkc_quick(std::iter::once(first)) == IsNormalized::Yes
}

/// Bitset over the BMP: bit set = the char has *no* boundary before it (it may combine
/// with what precedes it). Computed once per process from the linked Unicode tables.
fn bmp_joins() -> &'static [u64] {
    static JOINS: OnceLock<Box<[u64]>> = OnceLock::new();
    JOINS.get_or_init(|| {
        let mut bits = vec![0u64; 0x10000 / 64];
        for code in 0x300u32..0x10000 {
            if let Some(c) = char::from_u32(code) {
                if !boundary_before_uncached(c) {
                    bits[(code / 64) as usize] |= 1u64 << (code % 64);
                }
            }
        }
        bits.into_boxed_slice()
    })
}

/// True when `c` may combine with the char before it under NFKC (no boundary before).
#[inline]
pub(crate) fn joins_previous(c: char) -> bool {
    let code = c as u32;
    if code < 0x300 {
        false
    } else if code < 0x10000 {
        bmp_joins()[(code / 64) as usize] & (1u64 << (code % 64)) != 0
    } else {
        !boundary_before_uncached(c)
    }
}

/// True for scripts written without spaces between words (Han, kana, Hangul, …): keys
/// in these scripts match anywhere, with no word-boundary check.
pub(crate) fn is_scriptio_continua(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF        // Thai, Lao
        | 0x1000..=0x109F      // Myanmar
        | 0x1100..=0x11FF      // Hangul Jamo
        | 0x1780..=0x17FF      // Khmer
        | 0x2E80..=0x2FDF      // CJK radicals, Kangxi radicals
        | 0x3005..=0x3007      // 々 〆 〇
        | 0x3021..=0x3029      // Hangzhou numerals
        | 0x3031..=0x3035      // kana repeat marks
        | 0x303B..=0x303C
        | 0x3040..=0x30FF      // hiragana, katakana
        | 0x3100..=0x31BF      // bopomofo, Hangul compatibility jamo, kanbun
        | 0x31F0..=0x31FF      // katakana phonetic extensions
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xA000..=0xA4CF      // Yi
        | 0xA960..=0xA97F      // Hangul Jamo extended A
        | 0xAC00..=0xD7FF      // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFF66..=0xFF9F      // half-width katakana
        | 0x1B000..=0x1B16F    // kana supplement / extended
        | 0x20000..=0x3FFFF    // CJK extensions B and later
    )
}

/// A word character for the boundary check: alphanumeric (or `_`) and not in a
/// script written without spaces.
#[inline]
pub(crate) fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    c.is_alphanumeric() && !is_scriptio_continua(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_of_known_chars() {
        // Starters that never compose backwards.
        for c in ['a', '漢', 'カ', 'が', '\u{3000}'] {
            assert!(!joins_previous(c), "{c:?}");
        }
        // Combining marks, the half-width voiced mark and Hangul medial vowels do.
        for c in ['\u{301}', '\u{3099}', '\u{FF9E}', '\u{1161}', '\u{314F}'] {
            assert!(joins_previous(c), "{c:?}");
        }
    }

    #[test]
    fn word_chars() {
        assert!(is_word_char('a') && is_word_char('ё') && is_word_char('7'));
        assert!(!is_word_char('漢') && !is_word_char('か') && !is_word_char(' '));
        assert!(!is_word_char('-'));
    }
}
