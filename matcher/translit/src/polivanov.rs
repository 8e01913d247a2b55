//! Japanese in Polivanov: kana → Cyrillic, with the rules that depend on the
//! neighbours (っ, ん, long vowels, い after a vowel).

use crate::{NameWord, RussianName, Syllable, TranslitError};

/// Kana (hiragana; katakana is folded to it first) → Polivanov form in lower case,
/// **sorted by the kana's bytes** for binary search (a test checks the order).
/// Keys are one kana or a kana with its small companion (きゃ, ちぇ, ふぁ).
///
/// The basic table and the yōon (きゃ кя, しゃ ся, じゃ дзя, ちゃ тя, にゃ ня, ひゃ хя,
/// みゃ мя, りゃ ря, ぎゃ гя, びゃ бя, ぴゃ пя, ぢゃ дзя) are Polivanov's as printed in
/// the Russian references: し си, ち ти, つ цу, ふ фу, じ/ぢ дзи, ず/づ дзу, ざ行 дз-,
/// え э, や/ゆ/よ я/ю/ё, わ ва, and the old ゐ ви, ゑ вэ, を во of the table's わ row.
/// The rows for loanword katakana (ティ ти, ディ ди, トゥ ту, ファ фа, フィ фи, フェ фэ,
/// フォ фо, ヴ ву, ヴァ ва, ヴィ ви, ヴェ вэ, ヴォ во, シェ сэ, ジェ дзэ, チェ тэ, ツァ ца,
/// ウィ уи, ウェ уэ, ウォ уо, イェ е) are this crate's: Polivanov has none, and they
/// follow his letters for the nearest sounds (ф of ふ, т/д of た/だ, the э of え), so
/// that a katakana name reads as its kana does, not as the foreign word it came from.
pub const KANA: &[(&str, &str)] = &[
    ("ぁ", "а"),
    ("あ", "а"),
    ("ぃ", "и"),
    ("い", "и"),
    ("いぇ", "е"),
    ("ぅ", "у"),
    ("う", "у"),
    ("うぃ", "уи"),
    ("うぇ", "уэ"),
    ("うぉ", "уо"),
    ("ぇ", "э"),
    ("え", "э"),
    ("ぉ", "о"),
    ("お", "о"),
    ("か", "ка"),
    ("が", "га"),
    ("き", "ки"),
    ("きゃ", "кя"),
    ("きゅ", "кю"),
    ("きょ", "кё"),
    ("ぎ", "ги"),
    ("ぎゃ", "гя"),
    ("ぎゅ", "гю"),
    ("ぎょ", "гё"),
    ("く", "ку"),
    ("くぁ", "куа"),
    ("ぐ", "гу"),
    ("ぐぁ", "гуа"),
    ("け", "кэ"),
    ("げ", "гэ"),
    ("こ", "ко"),
    ("ご", "го"),
    ("さ", "са"),
    ("ざ", "дза"),
    ("し", "си"),
    ("しぇ", "сэ"),
    ("しゃ", "ся"),
    ("しゅ", "сю"),
    ("しょ", "сё"),
    ("じ", "дзи"),
    ("じぇ", "дзэ"),
    ("じゃ", "дзя"),
    ("じゅ", "дзю"),
    ("じょ", "дзё"),
    ("す", "су"),
    ("すぃ", "си"),
    ("ず", "дзу"),
    ("ずぃ", "дзи"),
    ("せ", "сэ"),
    ("ぜ", "дзэ"),
    ("そ", "со"),
    ("ぞ", "дзо"),
    ("た", "та"),
    ("だ", "да"),
    ("ち", "ти"),
    ("ちぇ", "тэ"),
    ("ちゃ", "тя"),
    ("ちゅ", "тю"),
    ("ちょ", "тё"),
    ("ぢ", "дзи"),
    ("ぢゃ", "дзя"),
    ("ぢゅ", "дзю"),
    ("ぢょ", "дзё"),
    ("つ", "цу"),
    ("つぁ", "ца"),
    ("つぃ", "ци"),
    ("つぇ", "цэ"),
    ("つぉ", "цо"),
    ("づ", "дзу"),
    ("て", "тэ"),
    ("てぃ", "ти"),
    ("てゅ", "тю"),
    ("で", "дэ"),
    ("でぃ", "ди"),
    ("でゅ", "дю"),
    ("と", "то"),
    ("とぅ", "ту"),
    ("ど", "до"),
    ("どぅ", "ду"),
    ("な", "на"),
    ("に", "ни"),
    ("にゃ", "ня"),
    ("にゅ", "ню"),
    ("にょ", "нё"),
    ("ぬ", "ну"),
    ("ね", "нэ"),
    ("の", "но"),
    ("は", "ха"),
    ("ば", "ба"),
    ("ぱ", "па"),
    ("ひ", "хи"),
    ("ひゃ", "хя"),
    ("ひゅ", "хю"),
    ("ひょ", "хё"),
    ("び", "би"),
    ("びゃ", "бя"),
    ("びゅ", "бю"),
    ("びょ", "бё"),
    ("ぴ", "пи"),
    ("ぴゃ", "пя"),
    ("ぴゅ", "пю"),
    ("ぴょ", "пё"),
    ("ふ", "фу"),
    ("ふぁ", "фа"),
    ("ふぃ", "фи"),
    ("ふぇ", "фэ"),
    ("ふぉ", "фо"),
    ("ふゅ", "фю"),
    ("ぶ", "бу"),
    ("ぷ", "пу"),
    ("へ", "хэ"),
    ("べ", "бэ"),
    ("ぺ", "пэ"),
    ("ほ", "хо"),
    ("ぼ", "бо"),
    ("ぽ", "по"),
    ("ま", "ма"),
    ("み", "ми"),
    ("みゃ", "мя"),
    ("みゅ", "мю"),
    ("みょ", "мё"),
    ("む", "му"),
    ("め", "мэ"),
    ("も", "мо"),
    ("ゃ", "я"),
    ("や", "я"),
    ("ゅ", "ю"),
    ("ゆ", "ю"),
    ("ょ", "ё"),
    ("よ", "ё"),
    ("ら", "ра"),
    ("り", "ри"),
    ("りゃ", "ря"),
    ("りゅ", "рю"),
    ("りょ", "рё"),
    ("る", "ру"),
    ("れ", "рэ"),
    ("ろ", "ро"),
    ("ゎ", "ва"),
    ("わ", "ва"),
    ("ゐ", "ви"),
    ("ゑ", "вэ"),
    ("を", "во"),
    ("ん", "н"),
    ("ゔ", "ву"),
    ("ゔぁ", "ва"),
    ("ゔぃ", "ви"),
    ("ゔぇ", "вэ"),
    ("ゔぉ", "во"),
    ("ゔゅ", "вю"),
    ("ゕ", "ка"),
    ("ゖ", "кэ"),
];

/// Word separators in kana input: a space, the ideographic space, the katakana
/// middle dot of foreign names (ジョン・スミス).
const SEPARATORS: [char; 3] = [' ', '\u{3000}', '\u{30FB}'];

/// Small kana that join the kana before them into one unit when the pair is a row of
/// [`KANA`].
const COMBINING: [char; 8] = ['ゃ', 'ゅ', 'ょ', 'ぁ', 'ぃ', 'ぅ', 'ぇ', 'ぉ'];

/// Kana that start a syllable with a vowel or a glide: ん before them is written нъ.
const VOWEL_OR_GLIDE: [char; 8] = ['あ', 'い', 'う', 'え', 'お', 'や', 'ゆ', 'よ'];

/// One unit of kana input.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Unit {
    /// A row of [`KANA`]: its key and its form.
    Kana { key: String, form: &'static str },
    /// っ: the next consonant is doubled.
    Geminate,
    /// ー: the vowel before is long.
    Long,
}

/// A unit with where it came from.
#[derive(Clone, Debug)]
struct Token {
    unit: Unit,
    position: usize,
    source: String,
}

/// Kana to Polivanov, in lower case (the standard writes no capitals; names are
/// capitalised by [`polivanov_name`]). Words separated by a space, `　` or `・` stay
/// separated by one space.
///
/// Context rules, each decided in docs/names.md ("Names by the standard"):
/// * っ doubles the first consonant of the next kana (ほっかいどう Хоккайдо, さっぽろ
///   Саппоро, マッチ матти); before a vowel or at the end it is not written.
/// * ん is м before б, п, м (ぐんま Гумма, しんばし Симбаси), нъ before a vowel or
///   や/ゆ/よ (しんいち Синъити), н elsewhere.
/// * Long vowels are not marked, as in common publishing: おう and おお → о, うう → у
///   (とうきょう Токё, おおさか Осака, ゆうこ Юко), ー is not written; えい stays эй
///   and いい ии, as spelled. A う before え is a syllable of its own (いのうえ Иноуэ:
///   うえ is 上); only one kana lengthens a vowel (おおうち Оути).
/// * い after а, у, э, о is й (あいこ Айко, けいこ Кэйко, ほっかいどう Хоккайдо,
///   くうかい Кукай), but и after a long vowel (そういちろう Соитиро, おおいた Оита) and
///   at the end of a word after у, where it is its own morpheme 井 (まつい Мацуи, ふくい
///   Фукуи). Kana alone cannot see the other morpheme boundaries (ひさいし is Хисаиси,
///   ながい Нагаи, さくらい Сакураи): that is the caller's to know.
pub fn polivanov_kana(kana: &str) -> Result<String, TranslitError> {
    let words = split_words(kana)?;
    let rendered: Vec<String> = words.iter().map(|w| render(w).into_iter().map(|s| s.russian).collect()).collect();
    Ok(rendered.join(" "))
}

/// One kana word, capitalised (a place: おおさか Осака).
pub fn polivanov_word(kana: &str) -> Result<NameWord, TranslitError> {
    let tokens = tokenize(kana, 0)?;
    if tokens.is_empty() {
        return Err(TranslitError::Empty);
    }
    Ok(NameWord::from_syllables(render(&tokens)))
}

/// A Japanese name from the kana of its family and given name, each word capitalised,
/// family first (いかり, しんじ → Икари Синдзи). `given` may be empty (a family name
/// alone, or a one-word name).
pub fn polivanov_name(family_kana: &str, given_kana: &str) -> Result<RussianName, TranslitError> {
    let family = polivanov_word(family_kana)?;
    let given = if given_kana.is_empty() { None } else { Some(polivanov_word(given_kana)?) };
    Ok(RussianName { family: Some(family), given })
}

/// Splits at separators and tokenises each word; an empty input is an error, empty
/// words between separators are skipped.
fn split_words(kana: &str) -> Result<Vec<Vec<Token>>, TranslitError> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut word = String::new();
    for (i, ch) in kana.chars().enumerate() {
        if SEPARATORS.contains(&ch) {
            words.push(tokenize(&word, start)?);
            word.clear();
            start = i + 1;
        } else {
            word.push(ch);
        }
    }
    words.push(tokenize(&word, start)?);
    words.retain(|w| !w.is_empty());
    if words.is_empty() {
        return Err(TranslitError::Empty);
    }
    Ok(words)
}

/// Katakana folded to hiragana (the tables are in hiragana), each char with its
/// position; ヷ ヸ ヹ ヺ become ゔ and a small vowel.
fn fold(word: &str, offset: usize) -> Vec<(char, usize)> {
    let mut out = Vec::with_capacity(word.len());
    for (i, ch) in word.chars().enumerate() {
        let position = offset + i;
        match ch {
            // ァ..ヶ sit exactly 0x60 above ぁ..ゖ.
            '\u{30A1}'..='\u{30F6}' => out.push((char::from_u32(u32::from(ch) - 0x60).unwrap_or(ch), position)),
            '\u{30F7}'..='\u{30FA}' => {
                let vowel = ['ぁ', 'ぃ', 'ぇ', 'ぉ'][(u32::from(ch) - 0x30F7) as usize];
                out.push(('ゔ', position));
                out.push((vowel, position));
            }
            _ => out.push((ch, position)),
        }
    }
    out
}

/// Kana units of one word: a kana with its small companion when the pair is a row,
/// else the kana alone.
fn tokenize(word: &str, offset: usize) -> Result<Vec<Token>, TranslitError> {
    let chars = fold(word, offset);
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (ch, position) = chars[i];
        let original: String = word.chars().nth(position - offset).map(String::from).unwrap_or_default();
        if let Some(&(next, _)) = chars.get(i + 1).filter(|(next, _)| COMBINING.contains(next)) {
            let pair: String = [ch, next].iter().collect();
            if let Some(form) = kana_form(&pair) {
                let source: String = word.chars().skip(position - offset).take(2).collect();
                tokens.push(Token { unit: Unit::Kana { key: pair, form }, position, source });
                i += 2;
                continue;
            }
        }
        let unit = match ch {
            'っ' => Unit::Geminate,
            'ー' => Unit::Long,
            _ => {
                let key = ch.to_string();
                let form = kana_form(&key).ok_or(TranslitError::UnknownCharacter {
                    ch: original_char(word, position - offset, ch),
                    position,
                })?;
                Unit::Kana { key, form }
            }
        };
        tokens.push(Token { unit, position, source: original });
        i += 1;
    }
    Ok(tokens)
}

/// The character the caller wrote at `index` (errors name it, not its folded form).
fn original_char(word: &str, index: usize, fallback: char) -> char {
    word.chars().nth(index).unwrap_or(fallback)
}

/// The row of one kana key.
fn kana_form(key: &str) -> Option<&'static str> {
    KANA.binary_search_by(|(kana, _)| (*kana).cmp(key)).ok().map(|i| KANA[i].1)
}

/// The vowel a Cyrillic form ends in, as one of а и у э о (я ю е ё count as the
/// vowels they contain); `None` after a consonant.
fn final_vowel(form: &str) -> Option<char> {
    match form.chars().last()? {
        'а' | 'я' => Some('а'),
        'и' => Some('и'),
        'у' | 'ю' => Some('у'),
        'э' | 'е' => Some('э'),
        'о' | 'ё' => Some('о'),
        _ => None,
    }
}

/// The kana key of a token, if it is a kana.
fn key_of(token: Option<&Token>) -> Option<&str> {
    match token.map(|t| &t.unit) {
        Some(Unit::Kana { key, .. }) => Some(key.as_str()),
        _ => None,
    }
}

/// Renders one word's tokens in context, one [`Syllable`] per token.
fn render(tokens: &[Token]) -> Vec<Syllable> {
    let mut out = Vec::with_capacity(tokens.len());
    // The vowel the word has reached, and whether it was already lengthened.
    let mut vowel: Option<char> = None;
    let mut lengthened = false;
    for (i, token) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        let (russian, lengthens) = match &token.unit {
            Unit::Geminate => (geminate(next), false),
            Unit::Long => (String::new(), true),
            Unit::Kana { key, form } => kana_in_context(key, form, vowel, lengthened, next),
        };
        if lengthens {
            lengthened = true;
        } else {
            vowel = final_vowel(&russian);
            lengthened = false;
        }
        let reading = match &token.unit {
            Unit::Kana { key, .. } => key.clone(),
            Unit::Geminate => "っ".to_string(),
            Unit::Long => "ー".to_string(),
        };
        out.push(Syllable { position: token.position, source: token.source.clone(), reading, russian });
    }
    out
}

/// っ: the first letter of the next kana's form when it is a consonant.
fn geminate(next: Option<&Token>) -> String {
    match next.map(|t| &t.unit) {
        Some(Unit::Kana { form, .. }) => {
            form.chars().next().filter(|c| !"аиуэояюеё".contains(*c)).map(String::from).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// The form of a kana given the vowel before it and the token after it; the flag
/// says the kana only lengthened the vowel.
fn kana_in_context(
    key: &str,
    form: &'static str,
    vowel: Option<char>,
    lengthened: bool,
    next: Option<&Token>,
) -> (String, bool) {
    let next_key = key_of(next);
    // う before え is read as its own syllable: うえ is 上 "above", the commonest
    // name element that puts them together (いのうえ Иноуэ, おのうえ Оноуэ).
    let before_e = next_key.is_some_and(|k| k.starts_with('え'));
    match key {
        "う" if !lengthened && matches!(vowel, Some('у' | 'о')) && !before_e => (String::new(), true),
        "お" if !lengthened && vowel == Some('о') => (String::new(), true),
        "い" if !lengthened => match vowel {
            Some('э') => ("й".to_string(), false),
            Some('а' | 'о') => ("й".to_string(), false),
            Some('у') if next.is_some() => ("й".to_string(), false),
            _ => (form.to_string(), false),
        },
        "ん" => (syllabic_n(next), false),
        _ => (form.to_string(), false),
    }
}

/// ん by what follows: нъ before a vowel or glide, м before б п м, else н.
fn syllabic_n(next: Option<&Token>) -> String {
    let Some(Unit::Kana { key, form }) = next.map(|t| &t.unit) else {
        return "н".to_string();
    };
    if key.chars().next().is_some_and(|c| VOWEL_OR_GLIDE.contains(&c)) {
        "нъ".to_string()
    } else if form.starts_with(['б', 'п', 'м']) {
        "м".to_string()
    } else {
        "н".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kana(s: &str) -> String {
        polivanov_kana(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn context_rules() {
        assert_eq!(kana("ほっかいどう"), "хоккайдо");
        assert_eq!(kana("さっぽろ"), "саппоро");
        assert_eq!(kana("マッチ"), "матти");
        assert_eq!(kana("ぐんま"), "гумма");
        assert_eq!(kana("しんばし"), "симбаси");
        assert_eq!(kana("さんぽ"), "сампо");
        assert_eq!(kana("しんいち"), "синъити");
        assert_eq!(kana("きんよう"), "кинъё");
        assert_eq!(kana("とうきょう"), "токё");
        assert_eq!(kana("おおさか"), "осака");
        assert_eq!(kana("いのうえ"), "иноуэ");
        assert_eq!(kana("おおうち"), "оути");
        assert_eq!(kana("せんせい"), "сэнсэй");
        assert_eq!(kana("そういちろう"), "соитиро");
        assert_eq!(kana("まつい"), "мацуи");
        assert_eq!(kana("くうかい"), "кукай");
        assert_eq!(kana("ユーリ"), "юри");
        assert_eq!(kana("ヴァイオリン"), "вайорин");
        assert_eq!(kana("いかり しんじ"), "икари синдзи");
    }

    #[test]
    fn names_are_capitalised() {
        let name = polivanov_name("いかり", "しんじ").map(|n| n.text());
        assert_eq!(name, Ok("Икари Синдзи".to_string()));
        assert_eq!(polivanov_word("ミナト").map(|w| w.text), Ok("Минато".to_string()));
    }

    #[test]
    fn errors_name_the_character_and_position() {
        assert_eq!(polivanov_kana(""), Err(TranslitError::Empty));
        assert_eq!(polivanov_kana(" ・ "), Err(TranslitError::Empty));
        assert_eq!(polivanov_kana("しん字"), Err(TranslitError::UnknownCharacter { ch: '字', position: 2 }));
        assert_eq!(polivanov_kana("あ カb"), Err(TranslitError::UnknownCharacter { ch: 'b', position: 3 }));
        assert_eq!(polivanov_name("", "しんじ"), Err(TranslitError::Empty));
    }
}
