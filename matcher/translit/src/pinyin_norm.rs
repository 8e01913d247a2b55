//! Pinyin in any common spelling to the table's key: lower case, toneless, `ü` kept
//! only where it is written in standard pinyin (after `n` and `l`).

/// Normalises one pinyin syllable: tone marks (`zhāng`, precomposed or combining),
/// a tone number anywhere in it (`zhang1`, `zha1ng`, `lv3`, 0 and 5 for the neutral
/// tone), `ü` written `ü`, `v` or `u:`, any case. Returns `None` for an empty
/// syllable, two tone numbers, or a character pinyin does not use.
///
/// After `j`, `q`, `x` and `y` standard pinyin writes `ü` as `u` (`ju`, `xue`,
/// `yuan`), so `jü`/`jv` normalise to `ju`; after `n` and `l` the dots are what
/// tells 女 `nü` from 奴 `nu`, so they are kept.
pub fn normalize_pinyin(pinyin: &str) -> Option<String> {
    let mut out = String::with_capacity(pinyin.len());
    let mut tone_digits = 0;
    let mut chars = pinyin.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '0'..='5' => {
                tone_digits += 1;
                if tone_digits > 1 {
                    return None;
                }
            }
            // A combining diaeresis makes the `u` before it `ü`; a combining
            // circumflex makes `e` into `ê`; any other combining mark is a tone.
            '\u{0308}' => replace_last(&mut out, 'u', 'ü')?,
            '\u{0302}' => replace_last(&mut out, 'e', 'ê')?,
            '\u{0300}'..='\u{036F}' => {}
            'u' | 'U' if chars.peek() == Some(&':') => {
                chars.next();
                out.push('ü');
            }
            _ => out.push(fold_letter(ch)?),
        }
    }
    if out.is_empty() {
        return None;
    }
    Some(standard_u(out))
}

/// Replaces the last letter pushed when it is `from` (a combining mark applies to
/// the letter before it); a stray mark is not pinyin.
fn replace_last(out: &mut String, from: char, to: char) -> Option<()> {
    if out.ends_with(from) {
        out.pop();
        out.push(to);
        Some(())
    } else {
        None
    }
}

/// One letter, without its tone mark and in lower case; `None` if pinyin has no such
/// letter.
fn fold_letter(ch: char) -> Option<char> {
    let lower = match ch {
        'A'..='Z' => ch.to_ascii_lowercase(),
        _ => ch,
    };
    let folded = match lower {
        'a'..='z' if lower != 'v' => lower,
        'v' => 'ü',
        'ā' | 'á' | 'ǎ' | 'à' | 'Ā' | 'Á' | 'Ǎ' | 'À' => 'a',
        'ē' | 'é' | 'ě' | 'è' | 'Ē' | 'É' | 'Ě' | 'È' => 'e',
        'ī' | 'í' | 'ǐ' | 'ì' | 'Ī' | 'Í' | 'Ǐ' | 'Ì' => 'i',
        'ō' | 'ó' | 'ǒ' | 'ò' | 'Ō' | 'Ó' | 'Ǒ' | 'Ò' => 'o',
        'ū' | 'ú' | 'ǔ' | 'ù' | 'Ū' | 'Ú' | 'Ǔ' | 'Ù' => 'u',
        'ü' | 'ǖ' | 'ǘ' | 'ǚ' | 'ǜ' | 'Ü' | 'Ǖ' | 'Ǘ' | 'Ǚ' | 'Ǜ' => 'ü',
        'ê' | 'ế' | 'ề' | 'Ê' | 'Ế' | 'Ề' => 'ê',
        'ḿ' | 'Ḿ' => 'm',
        'ń' | 'ň' | 'ǹ' | 'Ń' | 'Ň' | 'Ǹ' => 'n',
        _ => return None,
    };
    Some(folded)
}

/// Writes `ü` the way the standard spelling (and so the table) does: `u` after `j`,
/// `q`, `x`, `y`, where no `u` could be confused with it.
fn standard_u(syllable: String) -> String {
    let mut chars = syllable.chars();
    match (chars.next(), chars.next()) {
        (Some(initial @ ('j' | 'q' | 'x' | 'y')), Some('ü')) => {
            let rest: String = chars.collect();
            format!("{initial}u{rest}")
        }
        _ => syllable,
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_pinyin;

    #[test]
    fn spellings_of_one_syllable_agree() {
        for spelling in ["zhang", "Zhāng", "zhang1", "zha1ng", "ZHANG", "Zha\u{0304}ng"] {
            assert_eq!(normalize_pinyin(spelling).as_deref(), Some("zhang"), "{spelling}");
        }
        for spelling in ["lü", "lv", "lu:", "lǚ", "lv3", "LÜ", "lu\u{0308}"] {
            assert_eq!(normalize_pinyin(spelling).as_deref(), Some("lü"), "{spelling}");
        }
        assert_eq!(normalize_pinyin("nüè").as_deref(), Some("nüe"));
        assert_eq!(normalize_pinyin("xǖ").as_deref(), Some("xu"));
        assert_eq!(normalize_pinyin("jv").as_deref(), Some("ju"));
        assert_eq!(normalize_pinyin("yuán").as_deref(), Some("yuan"));
        assert_eq!(normalize_pinyin("ê̄").as_deref(), Some("ê"));
        assert_eq!(normalize_pinyin("m̀").as_deref(), Some("m"));
    }

    #[test]
    fn what_is_not_pinyin_is_refused() {
        for bad in ["", "3", "zhang12", "чжан", "zh ang", "\u{0308}", "a\u{0308}"] {
            assert_eq!(normalize_pinyin(bad), None, "{bad:?}");
        }
    }
}
