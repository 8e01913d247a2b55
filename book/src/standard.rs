//! Names by the standard: which character and place terms render their source
//! otherwise than the Russian standard transcription says (Palladius for a Chinese
//! book, Polivanov for Japanese written in kana; `translit` holds both), for
//! `lorebank names lint`, and the rendering `review accept` gives a name accepted
//! without one.
//!
//! A term an editor keeps on purpose (an established form such as Сунь Ятсен, a
//! publisher's choice) is marked by an `accept` verdict with the reason
//! [`NAME_EXCEPTION`] and is listed apart, not flagged. A Japanese source in kanji is
//! read by the term's declared reading (a reading alias in kana); without one it is
//! counted as unchecked with the reason.

use ledger_model::*;

use crate::book::Book;
use crate::error::BookError;

/// The reason code of an `accept` verdict that marks a term's rendering as a
/// deliberate exception to the standard.
pub const NAME_EXCEPTION: &str = "name_exception";

/// A term whose rendering differs from the standard's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deviation {
    /// The term.
    pub id: RecordId,
    /// Its source and rendering.
    pub src: String,
    /// Its rendering.
    pub dst: String,
    /// The standard's form.
    pub expected: String,
    /// The first syllable of the standard's form, read in order, that the rendering
    /// writes otherwise (`None`: every syllable is there in order, and what differs
    /// is around or between them: spacing, a hyphen, an added word).
    pub syllable: Option<translit::Syllable>,
}

/// What `names lint` found at the head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameLint {
    /// The revision linted.
    pub revision: Seq,
    /// The source language whose standard applies.
    pub language: String,
    /// Character and place terms whose source the standard could transcribe.
    pub n_checked: usize,
    /// Those whose rendering differs, in term order.
    pub deviations: Vec<Deviation>,
    /// Those that differ and are marked as exceptions ([`NAME_EXCEPTION`]).
    pub exceptions: Vec<RecordId>,
    /// Character and place terms the standard could not transcribe, with why.
    pub unchecked: Vec<(RecordId, String)>,
}

/// How one character or place term stands against the standard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameCheck {
    /// Its rendering is the standard's form.
    Standard,
    /// Its rendering differs, and nothing marks it as meant.
    Deviates(Deviation),
    /// Its rendering differs, and an `accept` verdict ([`NAME_EXCEPTION`]) keeps it.
    Exception(Deviation),
    /// The standard cannot transcribe its source: why.
    Unchecked(String),
}

/// The check of `term` (an active term of a book whose source language is
/// `language`); `None` unless it is a character or a place. A Japanese source in
/// kanji is read by its declared reading: the first reading alias written in kana.
pub fn check_name(language: &str, id: RecordId, term: &projections::Term) -> Option<NameCheck> {
    let put = &term.put;
    let kind @ ("character" | "place") = put.kind.as_deref()? else { return None };
    let reading = term
        .aliases
        .values()
        .filter(|alias| alias.kind == AliasKind::Reading)
        .map(|alias| alias.surface.as_str())
        .find(|surface| is_kana_name(surface));
    let source = match reading {
        Some(reading) if !is_kana_name(&put.src) && is_japanese(language) => reading,
        _ => put.src.as_str(),
    };
    let expected = match standard(language, kind, source) {
        Ok(expected) => expected,
        Err(why) => return Some(NameCheck::Unchecked(why)),
    };
    let text = expected.text();
    if comparable(&put.dst) == comparable(&text) {
        return Some(NameCheck::Standard);
    }
    let syllable = first_differing(&expected, &comparable(&put.dst));
    let deviation = Deviation { id, src: put.src.clone(), dst: put.dst.clone(), expected: text, syllable };
    let marked = matches!(&term.verdict, Some((Verdict::Accept, reason)) if reason == NAME_EXCEPTION);
    Some(if marked { NameCheck::Exception(deviation) } else { NameCheck::Deviates(deviation) })
}

impl Book {
    /// Every active character and place term at the head whose rendering deviates
    /// from the standard transcription of its source ([`NameLint`], each term as
    /// [`check_name`] sees it).
    pub fn names_lint(&mut self) -> Result<NameLint, BookError> {
        let state = self.state(None)?;
        let language = state.source_lang().to_owned();
        let mut lint = NameLint {
            revision: state.revision(),
            language: language.clone(),
            n_checked: 0,
            deviations: Vec::new(),
            exceptions: Vec::new(),
            unchecked: Vec::new(),
        };
        for active in state.active_terms(None) {
            match check_name(&language, active.id, active.term) {
                None => {}
                Some(NameCheck::Unchecked(why)) => lint.unchecked.push((active.id, why)),
                Some(NameCheck::Standard) => lint.n_checked += 1,
                Some(NameCheck::Exception(_)) => {
                    lint.n_checked += 1;
                    lint.exceptions.push(active.id);
                }
                Some(NameCheck::Deviates(deviation)) => {
                    lint.n_checked += 1;
                    lint.deviations.push(deviation);
                }
            }
        }
        Ok(lint)
    }
}

/// The standard's form of `src`, a term of `kind` in a book whose source language is
/// `language`, or why there is none.
pub(crate) fn standard(language: &str, kind: &str, src: &str) -> Result<translit::RussianName, String> {
    let word = |word: translit::NameWord| translit::RussianName { family: None, given: Some(word) };
    let src = src.trim();
    if language == "zh" || language.starts_with("zh-") {
        let name =
            if kind == "place" { translit::palladius_word(src).map(word) } else { translit::palladius_name(src) };
        return name.map_err(|error| error.to_string());
    }
    if is_japanese(language) {
        if !is_kana_name(src) {
            return Err("no kana reading (the source is not written in kana, and no reading alias is)".into());
        }
        let parts: Vec<&str> = src.split([' ', '・', '\u{3000}']).filter(|part| !part.is_empty()).collect();
        let name = match parts.as_slice() {
            [family, given] if kind == "character" => translit::polivanov_name(family, given),
            _ => translit::polivanov_word(&parts.concat()).map(word),
        };
        return name.map_err(|error| error.to_string());
    }
    Err(format!("no standard for source language {language}"))
}

fn is_japanese(language: &str) -> bool {
    language == "ja" || language.starts_with("ja-")
}

/// Whether `text` is a name written in kana (with a space or `・` between its parts).
fn is_kana_name(text: &str) -> bool {
    !text.trim().is_empty() && text.trim().chars().all(|c| is_kana(c) || matches!(c, ' ' | '・' | '\u{3000}'))
}

/// The first syllable of `expected`, read in order against `dst` (words apart by a
/// space or none), that `dst` writes otherwise; `None` when every syllable is there
/// in order and only what is around or between them differs.
fn first_differing(expected: &translit::RussianName, dst: &str) -> Option<translit::Syllable> {
    let mut rest = dst;
    for word in [&expected.family, &expected.given].into_iter().flatten() {
        rest = rest.trim_start();
        for (index, syllable) in word.syllables.iter().enumerate() {
            // A hyphen between the syllables of a word is the joining, not a syllable.
            if index > 0 {
                rest = rest.strip_prefix('-').unwrap_or(rest);
            }
            let last = index + 1 == word.syllables.len();
            match rest.strip_prefix(comparable(&syllable.russian).as_str()) {
                // The last syllable of a word ends it: Вань is not Ван.
                Some(after) if last && after.starts_with(char::is_alphabetic) => return Some(syllable.clone()),
                Some(after) => rest = after,
                None => return Some(syllable.clone()),
            }
        }
    }
    None
}

/// Hiragana, katakana or the prolonged sound mark.
fn is_kana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{309F}' | '\u{30A0}'..='\u{30FF}')
}

/// A rendering as the lint compares it: lower case, ё as е, one space between words.
fn comparable(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase().replace('ё', "е")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_gets_its_standard_and_others_none() {
        assert_eq!(standard("zh", "character", "贾宝玉").unwrap().text(), "Цзя Баоюй");
        assert_eq!(standard("zh-Hant", "place", "长安").unwrap().text().chars().next(), Some('Ч'));
        assert_eq!(standard("ja", "character", "いかり しんじ").unwrap().text(), "Икари Синдзи");
        assert_eq!(standard("ja", "place", "みなと").unwrap().text(), "Минато");
        assert!(standard("ja", "character", "碇シンジ").unwrap_err().contains("not written in kana"));
        assert!(standard("ko", "character", "김").unwrap_err().contains("ko"));
        assert_eq!(comparable("  Шэнь   Чжао "), comparable("шэнь чжао"));
        assert_eq!(comparable("Пётр"), "петр");
        let wang = standard("zh", "character", "王熙凤").unwrap();
        let differing = |dst: &str| first_differing(&wang, &comparable(dst)).map(|syllable| syllable.source);
        assert_eq!(differing("Ван Ксифэн").as_deref(), Some("熙"));
        assert_eq!(differing("Вань Сифэн").as_deref(), Some("王"));
        assert_eq!(differing("Ван Сифын").as_deref(), Some("凤"));
        assert_eq!(differing("Ван Си-фэн"), None);
    }
}
