//! Names by the standard: a source name transcribed into Russian the way Russian
//! readers and publishers expect it, by **Palladius** (Палладий) for Chinese and by
//! **Polivanov** (Поливанов) for Japanese.
//!
//! What this crate owns:
//!
//! * the complete Palladius syllable table and a pinyin normaliser
//!   ([`palladius_syllable`], [`normalize_pinyin`]);
//! * Chinese names from characters ([`palladius_name`], [`palladius_name_parts`],
//!   [`palladius_word`]): readings from the `pinyin` crate's data, surnames read as
//!   surnames from a built-in table, and the standard's joining rules (the surname
//!   its own word, the given name one word, `ъ` after a syllable ending in `н` before
//!   a vowel: Чанъань, Ши Сянъюнь);
//! * the complete Polivanov kana table and Japanese names from kana
//!   ([`polivanov_kana`], [`polivanov_name`]).
//!
//! What it must not do: it is pure. No I/O, no clock, no randomness, no `HashMap`
//! iteration in anything it returns; every table is a sorted `const` array searched
//! by binary search. It never panics on input: any `&str` gets a value or a
//! [`TranslitError`] naming the character or syllable and its position.
//!
//! What is not its job: **choosing the reading of kanji.** A Japanese name written in
//! kanji has no reading this crate could know for sure (松本 may be Matsumoto or a
//! dozen other readings); the caller passes kana, from ruby in the source text or from
//! the term's recorded reading, or asks [`enamdict`] for every reading a name
//! dictionary gives and chooses among them. A Chinese reading is taken from the characters, and where a character
//! has several, the most common one is taken unless the surname table says otherwise;
//! a given name that needs a rarer reading (刘禅 Liú Shàn) is outside what characters
//! alone can tell, and the caller who knows better passes pinyin to
//! [`palladius_syllable`] itself.
//!
//! Established forms that break the standard (Сунь Ятсен, Чан Кайши, Токио, Акутагава
//! Рюноскэ) are **not** produced: the crate gives the standard's form, and the
//! caller's lint reports the difference as a deviation (docs/names.md, "Names by the
//! standard").

mod chinese;
pub mod enamdict;
mod error;
mod palladius;
mod pinyin_norm;
mod polivanov;
mod surnames;

pub use chinese::{palladius_name, palladius_name_parts, palladius_word};
pub use error::TranslitError;
pub use palladius::{palladius_syllable, PALLADIUS};
pub use pinyin_norm::normalize_pinyin;
pub use polivanov::{polivanov_kana, polivanov_name, polivanov_word, KANA};
pub use surnames::{surname_reading, SURNAMES};

/// One syllable of a transcribed name: where it came from and what it became, so a
/// caller can point at "the syllable that differs".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syllable {
    /// Position of the syllable's first character in the input, counted in `char`s
    /// (for a name given in parts, in that part).
    pub position: usize,
    /// The source text of the syllable: one hanzi, or one kana unit (きゃ, っ, ー).
    pub source: String,
    /// The reading: toneless pinyin for Chinese, the kana unit folded to hiragana for
    /// Japanese.
    pub reading: String,
    /// What the syllable contributes to the Russian word, lower case, in context
    /// (a geminating っ gives the doubled consonant, a lengthening う gives nothing, a
    /// separating `ъ` is carried by the syllable after it).
    pub russian: String,
}

/// One Russian word of a name (a surname, a given name, a place).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameWord {
    /// The syllables in source order.
    pub syllables: Vec<Syllable>,
    /// The word as written: the syllables joined, first letter capitalised.
    pub text: String,
}

impl NameWord {
    /// Joins the syllables' Russian forms and capitalises the first letter.
    fn from_syllables(syllables: Vec<Syllable>) -> NameWord {
        let joined: String = syllables.iter().map(|s| s.russian.as_str()).collect();
        NameWord { text: capitalise(&joined), syllables }
    }
}

/// A name in Russian: a family name, a given name, or both (family first, as both
/// standards write it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RussianName {
    /// The family name, where the source has one.
    pub family: Option<NameWord>,
    /// The given name (or the one word of a name with no surname, or of a place).
    pub given: Option<NameWord>,
}

impl RussianName {
    /// The name as written: the words joined by one space.
    pub fn text(&self) -> String {
        let words: Vec<&str> = [&self.family, &self.given].into_iter().flatten().map(|w| w.text.as_str()).collect();
        words.join(" ")
    }
}

/// Upper-cases the first letter (Cyrillic upper case is one `char` for every letter
/// this crate writes, ё included).
fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
