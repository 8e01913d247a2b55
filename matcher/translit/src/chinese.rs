//! Chinese names: hanzi → pinyin syllables → Palladius, joined by the standard's
//! rules.

use pinyin::ToPinyin;

use crate::palladius::lookup;
use crate::pinyin_norm::normalize_pinyin;
use crate::surnames::{surname_prefix, surname_reading};
use crate::{NameWord, RussianName, Syllable, TranslitError};

/// Characters a caller may put between family and given name to say where the split
/// is (a space, the ideographic space, the middle dots of Chinese and Japanese
/// typesetting).
const SEPARATORS: [char; 4] = [' ', '\u{3000}', '\u{00B7}', '\u{30FB}'];

/// Russian vowel letters: a syllable starting with one after a syllable ending in `н`
/// gets a separating `ъ`.
const VOWELS: [char; 10] = ['а', 'е', 'ё', 'и', 'о', 'у', 'ы', 'э', 'ю', 'я'];

/// A Chinese personal name in Palladius: the surname its own capitalised word, the
/// given name one word (Цзя Баоюй, Ван Сифэн, Чжугэ Лян).
///
/// The split: one separator (space, `·`, `・`) in the input says where it is
/// (`猪·八戒`); otherwise the longest surname of the built-in table the name starts
/// with (two characters before one: 欧阳修 Оуян Сю), as long as a given name is left.
/// A single character that is a surname is a family name alone; a name that starts
/// with no known surname is one word (妙玉 Мяоюй, 玄奘 Сюаньцзан).
pub fn palladius_name(hanzi: &str) -> Result<RussianName, TranslitError> {
    let chars: Vec<char> = hanzi.chars().collect();
    let mut separators = chars.iter().enumerate().filter(|(_, c)| SEPARATORS.contains(c)).map(|(i, _)| i);
    let first = separators.next();
    if let Some(position) = separators.next() {
        return Err(TranslitError::TooManyParts { position });
    }
    if let Some(split) = first {
        let family = &chars[..split];
        let given = &chars[split + 1..];
        if family.is_empty() || given.is_empty() {
            return Err(TranslitError::Empty);
        }
        return Ok(RussianName { family: Some(family_word(family, 0)?), given: Some(plain_word(given, split + 1)?) });
    }
    if chars.is_empty() {
        return Err(TranslitError::Empty);
    }
    match surname_prefix(&chars) {
        Some(len) => Ok(RussianName {
            family: Some(family_word(&chars[..len], 0)?),
            given: Some(plain_word(&chars[len..], len)?),
        }),
        None if chars.len() == 1 && surname_reading(hanzi).is_some() => {
            Ok(RussianName { family: Some(family_word(&chars, 0)?), given: None })
        }
        None => Ok(RussianName { family: None, given: Some(plain_word(&chars, 0)?) }),
    }
}

/// A Chinese name whose split the caller knows (from a glossary, or a surname the
/// table lacks: 猪 of 猪八戒). The family part is read with the surname table where
/// it is a surname there; `given` may be empty (a surname alone). Positions in
/// errors count within the part they are in.
pub fn palladius_name_parts(family: &str, given: &str) -> Result<RussianName, TranslitError> {
    let family: Vec<char> = family.chars().collect();
    let given: Vec<char> = given.chars().collect();
    if family.is_empty() {
        return Err(TranslitError::Empty);
    }
    let given = if given.is_empty() { None } else { Some(plain_word(&given, 0)?) };
    Ok(RussianName { family: Some(family_word(&family, 0)?), given })
}

/// One word with every character read as usual, no surname split: a place (西安
/// Сиань, 平遥 Пинъяо) or a given name alone.
pub fn palladius_word(hanzi: &str) -> Result<NameWord, TranslitError> {
    let chars: Vec<char> = hanzi.chars().collect();
    if chars.is_empty() {
        return Err(TranslitError::Empty);
    }
    plain_word(&chars, 0)
}

/// The family word: the surname table's reading for the whole part when it has one
/// (尉迟 Yùchí), else each character's own (a surname reading if it has one alone).
fn family_word(chars: &[char], offset: usize) -> Result<NameWord, TranslitError> {
    let whole: String = chars.iter().collect();
    let readings: Vec<&str> = match surname_reading(&whole) {
        Some(reading) if reading.split(' ').count() == chars.len() => reading.split(' ').collect(),
        _ => Vec::new(),
    };
    let syllables = chars
        .iter()
        .enumerate()
        .map(|(i, &ch)| match readings.get(i) {
            Some(pinyin) => syllable(ch, offset + i, pinyin),
            None => {
                let single = ch.to_string();
                match surname_reading(&single) {
                    Some(pinyin) => syllable(ch, offset + i, pinyin),
                    None => common_syllable(ch, offset + i),
                }
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(join(syllables))
}

/// A word of characters read with their common readings.
fn plain_word(chars: &[char], offset: usize) -> Result<NameWord, TranslitError> {
    let syllables =
        chars.iter().enumerate().map(|(i, &ch)| common_syllable(ch, offset + i)).collect::<Result<Vec<_>, _>>()?;
    Ok(join(syllables))
}

/// The character's most common reading (the first one pinyin-data lists).
fn common_syllable(ch: char, position: usize) -> Result<Syllable, TranslitError> {
    match ch.to_pinyin() {
        Some(reading) => syllable(ch, position, reading.plain()),
        None => Err(TranslitError::UnknownCharacter { ch, position }),
    }
}

/// One syllable from its pinyin, or the error naming the character and reading.
fn syllable(ch: char, position: usize, pinyin: &str) -> Result<Syllable, TranslitError> {
    let unknown = || TranslitError::UnknownSyllable { ch, pinyin: pinyin.to_string(), position };
    let key = normalize_pinyin(pinyin).ok_or_else(unknown)?;
    let russian = lookup(&key).ok_or_else(unknown)?;
    Ok(Syllable { position, source: ch.to_string(), reading: key, russian: russian.to_string() })
}

/// Joins syllables into a word, writing `ъ` where a syllable ending in `н` (pinyin
/// `-ng`) meets one starting with a vowel: without it the reader would take the `н`
/// into the next syllable (Чан-ань, not Ча-нань; Сянъюнь, not Сянюнь). After `нь`
/// (pinyin `-n`) the soft sign already separates (Яньань), and two vowels meeting are
/// written as they come (西安 Сиань), as the references write them.
fn join(mut syllables: Vec<Syllable>) -> NameWord {
    for i in 1..syllables.len() {
        let ends_in_n = syllables[i - 1].russian.ends_with('н');
        let starts_with_vowel = syllables[i].russian.chars().next().is_some_and(|c| VOWELS.contains(&c));
        if ends_in_n && starts_with_vowel {
            syllables[i].russian.insert(0, 'ъ');
        }
    }
    NameWord::from_syllables(syllables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surname_and_given_name() {
        assert_eq!(palladius_name("贾宝玉").map(|n| n.text()), Ok("Цзя Баоюй".to_string()));
        assert_eq!(palladius_name("欧阳修").map(|n| n.text()), Ok("Оуян Сю".to_string()));
        assert_eq!(palladius_name("曾国藩").map(|n| n.text()), Ok("Цзэн Гофань".to_string()));
        assert_eq!(palladius_name("单雄信").map(|n| n.text()), Ok("Шань Сюнсинь".to_string()));
        assert_eq!(palladius_name("猪·八戒").map(|n| n.text()), Ok("Чжу Бацзе".to_string()));
        assert_eq!(palladius_name("王").map(|n| n.text()), Ok("Ван".to_string()));
        assert_eq!(palladius_name("妙玉").map(|n| n.text()), Ok("Мяоюй".to_string()));
    }

    #[test]
    fn hard_sign_after_ng_before_a_vowel() {
        assert_eq!(palladius_word("平遥").map(|w| w.text), Ok("Пинъяо".to_string()));
        assert_eq!(palladius_word("雄安").map(|w| w.text), Ok("Сюнъань".to_string()));
        assert_eq!(palladius_word("西安").map(|w| w.text), Ok("Сиань".to_string()));
        assert_eq!(palladius_word("延安").map(|w| w.text), Ok("Яньань".to_string()));
        assert_eq!(palladius_name("史湘云").map(|n| n.text()), Ok("Ши Сянъюнь".to_string()));
    }

    #[test]
    fn traditional_characters_read_the_same() {
        assert_eq!(palladius_name("賈寶玉").map(|n| n.text()), Ok("Цзя Баоюй".to_string()));
        assert_eq!(palladius_name("歐陽修").map(|n| n.text()), Ok("Оуян Сю".to_string()));
    }

    #[test]
    fn errors_name_the_character_and_position() {
        assert_eq!(palladius_name(""), Err(TranslitError::Empty));
        assert_eq!(palladius_name("王x"), Err(TranslitError::UnknownCharacter { ch: 'x', position: 1 }));
        assert_eq!(palladius_name("王 小 明"), Err(TranslitError::TooManyParts { position: 3 }));
        assert_eq!(palladius_name(" 明"), Err(TranslitError::Empty));
    }

    #[test]
    fn syllables_keep_source_reading_and_form() {
        let name = palladius_name("史湘云").expect("a name");
        let given = name.given.expect("a given name");
        let forms: Vec<(&str, &str, &str)> =
            given.syllables.iter().map(|s| (s.source.as_str(), s.reading.as_str(), s.russian.as_str())).collect();
        assert_eq!(forms, [("湘", "xiang", "сян"), ("云", "yun", "ъюнь")]);
        assert_eq!(given.syllables[1].position, 2);
    }
}
