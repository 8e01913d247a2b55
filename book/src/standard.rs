//! Names by the standard: which character and place terms render their source
//! otherwise than the Russian standard transcription says (Palladius for a Chinese
//! book, Polivanov for Japanese written in kana; `translit` holds both), for
//! `lorebank names lint`, and the rendering `review accept` gives a name accepted
//! without one.
//!
//! A term an editor keeps on purpose (an established form such as Сунь Ятсен, a
//! publisher's choice) is marked by an `accept` verdict with the reason
//! [`NAME_EXCEPTION`] and is listed apart, not flagged. A Japanese source in kanji is
//! read by the term's declared reading (a reading alias in kana); without one, by the
//! readings a name dictionary gives ([`NameDictionary`]: Debian's `enamdict`, or the
//! file `LOREBANK_ENAMDICT` names), the reading that gives the rendering counting as
//! the term's (the dictionary cannot tell which reading the author meant); without
//! either it is counted as unchecked with the reason.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ledger_model::limits::input::NAME_DICTIONARY_BYTES_MAX;
use ledger_model::*;
use translit::enamdict::{self, NameReadings};

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

/// The name dictionary read for Japanese names in kanji: the file `LOREBANK_ENAMDICT`
/// names, else Debian's `/usr/share/edict/enamdict` (package `enamdict`), in the
/// ENAMDICT format, EUC-JP or UTF-8.
#[derive(Clone, Debug)]
pub struct NameDictionary {
    /// Where it is read from.
    pub path: PathBuf,
}

/// The environment variable that names the name dictionary.
pub const NAME_DICTIONARY_ENV: &str = "LOREBANK_ENAMDICT";
/// Where Debian's `enamdict` puts it.
pub const NAME_DICTIONARY_PATH: &str = "/usr/share/edict/enamdict";

impl NameDictionary {
    /// The dictionary this process reads: `LOREBANK_ENAMDICT`, else Debian's path.
    pub fn configured() -> NameDictionary {
        let path =
            std::env::var_os(NAME_DICTIONARY_ENV).map_or_else(|| PathBuf::from(NAME_DICTIONARY_PATH), PathBuf::from);
        NameDictionary { path }
    }

    /// The readings of the headwords `needed`, or why there are none: the file is
    /// missing, over [`NAME_DICTIONARY_BYTES_MAX`], or neither UTF-8 nor EUC-JP.
    pub fn readings(&self, needed: &BTreeSet<String>) -> Result<NameReadings, String> {
        use std::io::Read;
        let path = self.path.display();
        let unread = |error: std::io::Error| {
            format!("no name dictionary at {path} ({error}; install Debian's enamdict or set {NAME_DICTIONARY_ENV})")
        };
        let file = std::fs::File::open(&self.path).map_err(unread)?;
        let size = file.metadata().map_err(unread)?.len();
        if size > NAME_DICTIONARY_BYTES_MAX {
            return Err(format!(
                "the name dictionary {path} has {size} bytes, over the limit of {NAME_DICTIONARY_BYTES_MAX}"
            ));
        }
        // What is not a regular file (a pipe, `/dev/zero`) has no size to check: it is
        // read to one byte past the limit at most.
        let mut bytes = Vec::new();
        file.take(NAME_DICTIONARY_BYTES_MAX + 1).read_to_end(&mut bytes).map_err(unread)?;
        if bytes.len() as u64 > NAME_DICTIONARY_BYTES_MAX {
            return Err(format!(
                "the name dictionary {path} is longer than the limit of {NAME_DICTIONARY_BYTES_MAX} bytes"
            ));
        }
        dictionary_readings(&bytes, needed)
            .ok_or_else(|| format!("the name dictionary {path} is neither UTF-8 nor EUC-JP"))
    }
}

/// The readings of the headwords `needed` in a dictionary's bytes, UTF-8 or EUC-JP
/// (`None`: neither). What decoding the whole file and parsing every line gives
/// (a test holds them equal), without either: a headword runs from the start of its
/// line to the first space (anything longer is not one [`enamdict::parse_line`]
/// accepts), so only the lines that start with a needed headword, spelled in the
/// file's encoding, are decoded and parsed. A newline or a space is never part of a
/// multibyte character in either encoding, so lines and headwords split on bytes.
/// Debian's 26 MB file is read this way without a copy of it in UTF-8 or a list of
/// tags per line.
pub fn dictionary_readings(bytes: &[u8], needed: &BTreeSet<String>) -> Option<NameReadings> {
    let utf8 = std::str::from_utf8(bytes).is_ok();
    if !utf8 && !is_euc_jp(bytes) {
        return None;
    }
    let spelled: BTreeSet<Vec<u8>> = needed
        .iter()
        .filter_map(|headword| {
            if utf8 {
                return Some(headword.as_bytes().to_vec());
            }
            // A headword EUC-JP cannot spell is in no EUC-JP file.
            let (encoded, _, unmappable) = encoding_rs::EUC_JP.encode(headword);
            (!unmappable).then(|| encoded.into_owned())
        })
        .collect();
    let mut readings = NameReadings::default();
    for line in bytes.split(|&byte| byte == b'\n') {
        let head = line.split(|&byte| byte == b' ').next().unwrap_or_default();
        if !spelled.contains(head) {
            continue;
        }
        let text = if utf8 {
            std::borrow::Cow::Borrowed(std::str::from_utf8(line).ok()?)
        } else {
            encoding_rs::EUC_JP.decode_without_bom_handling(line).0
        };
        if let Some(entry) = enamdict::parse_line(&text).filter(|entry| needed.contains(entry.headword)) {
            readings.insert(&entry);
        }
    }
    Some(readings)
}

/// Whether `bytes` decode as EUC-JP without an error, decoded a piece at a time into
/// one small buffer (the dictionary is not kept in UTF-8).
fn is_euc_jp(bytes: &[u8]) -> bool {
    let mut decoder = encoding_rs::EUC_JP.new_decoder_without_bom_handling();
    let mut buffer = [0u8; 16 * 1024];
    let mut rest = bytes;
    loop {
        let (result, read, _) = decoder.decode_to_utf8_without_replacement(rest, &mut buffer, true);
        rest = &rest[read..];
        match result {
            encoding_rs::DecoderResult::InputEmpty => return true,
            encoding_rs::DecoderResult::OutputFull => {}
            encoding_rs::DecoderResult::Malformed(..) => return false,
        }
    }
}

/// The readings of Japanese names in kanji a check may use, read for the terms that
/// need them: those the book's own source text gives in ruby (`｜碇《いかり》`, or HTML
/// `<ruby>`, as the book's profile reads markup), and the name dictionary's, or why
/// there are none.
#[derive(Clone, Debug, Default)]
pub struct KanjiReadings {
    /// Readings the source text gives in ruby, by the annotated text.
    pub ruby: NameReadings,
    /// The name dictionary's readings, or why none were read (`None`: not read).
    pub dictionary: Option<Result<NameReadings, String>>,
}

/// Whether `term`, in a book whose source language is `language`, would be read by
/// the name dictionary: a Japanese character or place in kanji without a reading
/// alias. Its headwords are [`enamdict::needed_headwords`] of its source.
pub fn needs_dictionary(language: &str, term: &projections::Term) -> bool {
    matches!(term.put.kind.as_deref(), Some("character" | "place"))
        && is_japanese(language)
        && !is_kana_name(&term.put.src)
        && reading_alias(term).is_none()
}

/// The term's declared reading: its first reading alias written in kana.
fn reading_alias(term: &projections::Term) -> Option<&str> {
    term.aliases
        .values()
        .filter(|alias| alias.kind == AliasKind::Reading)
        .map(|alias| alias.surface.as_str())
        .find(|surface| is_kana_name(surface))
}

/// The check of `term` (an active term of a book whose source language is
/// `language`); `None` unless it is a character or a place. A Japanese source in
/// kanji is read by its declared reading (the first reading alias written in kana),
/// else by the readings of the name dictionary (`dictionary`, read for the terms that
/// need it, or why it could not be): the reading whose standard form is the
/// rendering, else the one whose form is closest to it (fewest chars to change; the
/// dictionary's order breaks ties).
pub fn check_name(
    language: &str,
    id: RecordId,
    term: &projections::Term,
    readings: &KanjiReadings,
) -> Option<NameCheck> {
    let put = &term.put;
    let kind @ ("character" | "place") = put.kind.as_deref()? else { return None };
    let source = match reading_alias(term) {
        Some(reading) if !is_kana_name(&put.src) && is_japanese(language) => reading,
        _ => put.src.as_str(),
    };
    let dst = comparable(&put.dst);
    let expected = if needs_dictionary(language, term) {
        match from_readings(kind, &put.src, &dst, readings) {
            Ok(expected) => expected,
            Err(why) => return Some(NameCheck::Unchecked(why)),
        }
    } else {
        match standard(language, kind, source) {
            Ok(expected) => expected,
            Err(why) => return Some(NameCheck::Unchecked(why)),
        }
    };
    let text = expected.text();
    if dst == comparable(&text) {
        return Some(NameCheck::Standard);
    }
    let syllable = first_differing(&expected, &dst);
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
        let active = state.active_terms(None);
        let readings = self.kanji_readings(&state, active.iter().map(|active| active.term))?;
        for active in active {
            match check_name(&language, active.id, active.term, &readings) {
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

impl Book {
    /// The readings of Japanese names in kanji the `terms` of `state` need (none is
    /// read when none needs one): the ruby of the book's source text whose annotated
    /// text is one of the headwords they may need, and the name dictionary's.
    pub(crate) fn kanji_readings<'a>(
        &mut self,
        state: &projections::State,
        terms: impl Iterator<Item = &'a projections::Term>,
    ) -> Result<KanjiReadings, BookError> {
        let language = state.source_lang().to_owned();
        let sources: Vec<&str> =
            terms.filter(|term| needs_dictionary(&language, term)).map(|term| term.put.src.as_str()).collect();
        self.kanji_readings_of(state, sources.into_iter())
    }

    /// The readings the names `sources` (Japanese, in kanji) may need, as
    /// [`Book::kanji_readings`] reads them.
    pub(crate) fn kanji_readings_of<'a>(
        &mut self,
        state: &projections::State,
        sources: impl Iterator<Item = &'a str>,
    ) -> Result<KanjiReadings, BookError> {
        let needed: BTreeSet<String> = sources.flat_map(enamdict::needed_headwords).collect();
        let mut readings = KanjiReadings::default();
        if needed.is_empty() {
            return Ok(readings);
        }
        if let Some(profile) = self.profile(state)? {
            for (source, _) in state.source_chapters() {
                let text = self.stored_text(source)?;
                // A chapter the profile cannot fold gives no ruby.
                let Ok(normalized) = profile.normalize(&text) else { continue };
                for ruby in normalized.rubies() {
                    let base = &text[ruby.base.bytes()];
                    if needed.contains(base) {
                        readings.ruby.insert_reading(base, normalized.reading(ruby));
                    }
                }
            }
        }
        readings.dictionary = Some(NameDictionary::configured().readings(&needed));
        Ok(readings)
    }
}

/// The standard's form of a Japanese name in kanji read by the source text's ruby and
/// the name dictionary (a part of the name the ruby reads is read only as the ruby
/// reads it: the author's reading): the form of the reading that gives `dst`
/// (comparable), else the closest.
fn from_readings(kind: &str, src: &str, dst: &str, readings: &KanjiReadings) -> Result<translit::RussianName, String> {
    let mut best: Option<(usize, translit::RussianName)> = None;
    for name in name_forms(kind, src, readings)? {
        let distance = edit_distance(&comparable(&name.text()), dst);
        if best.as_ref().is_none_or(|(known, _)| distance < *known) {
            best = Some((distance, name));
        }
        if distance == 0 {
            break;
        }
    }
    best.map(|(_, name)| name).ok_or_else(|| {
        format!("no kana reading (no reading alias, no ruby, and the name dictionary has none of {src})")
    })
}

/// The standard's forms of every reading a Japanese name in kanji may have, as
/// [`from_readings`] reads it (ruby over the dictionary), in the readings' order,
/// each form once; or why there is none.
fn name_forms(kind: &str, src: &str, readings: &KanjiReadings) -> Result<Vec<translit::RussianName>, String> {
    let combined = match &readings.dictionary {
        Some(Ok(dictionary)) => dictionary.overridden_by(&readings.ruby),
        _ => readings.ruby.clone(),
    };
    let none = || match &readings.dictionary {
        Some(Ok(_)) => {
            format!("no kana reading (no reading alias, no ruby, and the name dictionary has none of {src})")
        }
        Some(Err(why)) => format!("no kana reading (no reading alias, no ruby, and {why})"),
        None => "no kana reading (no reading alias, no ruby, and no name dictionary read)".into(),
    };
    let mut forms: Vec<translit::RussianName> = Vec::new();
    for (family, given) in enamdict::name_readings(src, kind == "place", &combined) {
        let name = match &family {
            Some(family) => translit::polivanov_name(family, &given),
            None => {
                translit::polivanov_word(&given).map(|word| translit::RussianName { family: None, given: Some(word) })
            }
        };
        if let Ok(name) = name {
            if !forms.iter().any(|known| known.text() == name.text()) {
                forms.push(name);
            }
        }
    }
    if forms.is_empty() {
        return Err(none());
    }
    Ok(forms)
}

impl Book {
    /// The rendering `review accept` gives a name accepted without one: the standard's
    /// form of `surface` as a term of `kind`; a Japanese name in kanji is read by the
    /// source text's ruby and the name dictionary, and given a form only when they
    /// read it one way (else the error lists the forms they allow, for the reviewer
    /// to choose with `--dst`).
    pub(crate) fn proposed_name(
        &mut self,
        state: &projections::State,
        kind: &str,
        surface: &str,
    ) -> Result<String, String> {
        let language = state.source_lang();
        if !is_japanese(language) || is_kana_name(surface) {
            return standard(language, kind, surface).map(|name| name.text());
        }
        let readings = self.kanji_readings_of(state, std::iter::once(surface)).map_err(|error| error.to_string())?;
        let forms = name_forms(kind, surface, &readings)?;
        match forms.as_slice() {
            [only] => Ok(only.text()),
            _ => {
                let listed: Vec<String> = forms.iter().take(6).map(|name| name.text()).collect();
                let more = if forms.len() > 6 { format!(" and {} more", forms.len() - 6) } else { String::new() };
                Err(format!("its readings give {}{more}", listed.join(", ")))
            }
        }
    }
}

/// Levenshtein distance in chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
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
    use proptest::prelude::*;

    /// The dictionary read as it is defined: the whole file decoded, every line
    /// parsed, the needed headwords kept.
    fn readings_by_every_line(bytes: &[u8], needed: &BTreeSet<String>) -> Option<NameReadings> {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                let (text, had_errors) = encoding_rs::EUC_JP.decode_without_bom_handling(bytes);
                if had_errors {
                    return None;
                }
                text
            }
        };
        let mut readings = NameReadings::default();
        for entry in text.lines().filter_map(enamdict::parse_line) {
            if needed.contains(entry.headword) {
                readings.insert(&entry);
            }
        }
        Some(readings)
    }

    fn dictionary_line() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "碇",
            "いかり",
            "シンジ",
            "宮崎",
            "駿",
            "みやざき",
            " ",
            "　",
            " [",
            "] ",
            "]",
            " /",
            "/",
            "(s)",
            "(g)",
            "(p,s)",
            "(",
            ")",
            "u",
            "\r",
            "X",
            "é",
            "😀",
        ]);
        let noise = prop::collection::vec(pieces, 0..10).prop_map(|pieces| pieces.concat());
        // Lines shaped like entries, most of them well formed, some not.
        let word =
            prop::sample::select(vec!["碇", "いかり", "シンジ", "宮崎", "駿", "みやざき", "碇　X", "X", "😀", ""]);
        let entry = (
            word.clone(),
            prop::option::of(word),
            prop::sample::select(vec!["s", "g", "p,s", "", "u"]),
            "[ /a-z]{0,3}",
        )
            .prop_map(|(headword, reading, tags, tail)| match reading {
                Some(reading) => format!("{headword} [{reading}] /({tags}){tail}/"),
                None => format!("{headword} /({tags}){tail}/"),
            });
        prop_oneof![noise, entry]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn only_the_lines_of_needed_headwords_are_read_and_they_give_what_every_line_does(
            lines in prop::collection::vec(dictionary_line(), 0..12),
            needed in prop::collection::btree_set(
                prop::sample::select(vec!["碇", "いかり", "宮崎", "駿", "シンジ", "😀", "X", ""]).prop_map(str::to_owned),
                0..5,
            ),
            euc_jp in any::<bool>(),
        ) {
            let text = lines.join("\n");
            let bytes = if euc_jp { encoding_rs::EUC_JP.encode(&text).0.into_owned() } else { text.into_bytes() };
            prop_assert_eq!(dictionary_readings(&bytes, &needed), readings_by_every_line(&bytes, &needed));
        }
    }

    /// A dictionary with no size to check beforehand (a device, a pipe) is read to one
    /// byte past the limit, then refused.
    #[cfg(unix)]
    #[test]
    fn an_endless_dictionary_is_refused_at_the_limit() {
        let dictionary = NameDictionary { path: PathBuf::from("/dev/zero") };
        let error = dictionary.readings(&["碇".to_owned()].into()).unwrap_err();
        assert!(error.contains("/dev/zero is longer than the limit of 67108864 bytes"), "{error}");
    }

    #[test]
    fn a_dictionary_in_neither_encoding_gives_no_readings() {
        let needed: BTreeSet<String> = ["碇".to_owned()].into();
        // 0xFF starts no character in UTF-8 or EUC-JP.
        assert_eq!(dictionary_readings(b"\xFF [x] /(s)/", &needed), None);
        let euc_jp = encoding_rs::EUC_JP.encode("碇 [いかり] /(s)/\n").0.into_owned();
        assert_eq!(dictionary_readings(&euc_jp, &needed).map(|readings| readings.len()), Some(1));
    }

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
