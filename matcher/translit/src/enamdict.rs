//! Readings of Japanese names written in kanji, from a name dictionary in the
//! ENAMDICT format (the Electronic Dictionary Research and Development Group's
//! Japanese proper-name dictionary, Debian's `enamdict`).
//!
//! A line is `HEADWORD [READING] /(tags) gloss/…/`, or `KANA /(tags) gloss/` for a
//! headword written in kana. The tags say what the name is: `s` a surname, `g` a given
//! name, `f`/`m` a female/male given name, `u` unclassified, `p` a place, `st` a
//! station, and others (companies, products, full names) this crate does not use.
//!
//! The crate stays pure: the caller reads the file, decodes it (it ships in EUC-JP)
//! and feeds the lines it wants ([`parse_line`], [`NameReadings::insert`]);
//! [`needed_headwords`] says which headwords a name may need, so a caller keeps only
//! those of a 740,000-line file.

use std::collections::BTreeMap;

/// At most this many readings of one name are returned ([`name_readings`]).
pub const NAME_READINGS_MAX: usize = 256;

/// What a name is, by its tags.
const SURNAME: u8 = 1;
const GIVEN: u8 = 2;
const UNCLASSIFIED: u8 = 4;
const PLACE: u8 = 8;

/// One line of the dictionary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The name as written.
    pub headword: &'a str,
    /// Its reading in kana (the headword itself for a headword in kana).
    pub reading: &'a str,
    /// The tags of its first sense (`s`, `g`, `f`, `m`, `u`, `p`, `st`, …).
    pub tags: Vec<&'a str>,
}

/// Parses one line; `None` for a line that is not an entry (the header, a blank or
/// malformed line, or a reading not written in kana).
pub fn parse_line(line: &str) -> Option<Entry<'_>> {
    let line = line.trim_end_matches(['\r', '\n']);
    let (head, senses) = line.split_once(" /")?;
    let tags = senses.strip_prefix('(')?.split_once(')')?.0;
    let tags: Vec<&str> = tags.split(',').map(str::trim).filter(|tag| !tag.is_empty()).collect();
    let (headword, reading) = match head.split_once(" [") {
        Some((headword, reading)) => (headword, reading.strip_suffix(']')?),
        None => (head, head),
    };
    let plain = |text: &str| !text.is_empty() && !text.contains(char::is_whitespace);
    if tags.is_empty() || !plain(headword) || !plain(reading) || !reading.chars().all(is_kana) {
        return None;
    }
    Some(Entry { headword, reading, tags })
}

/// Whether `c` is kana (hiragana, katakana, the prolonged sound mark).
pub fn is_kana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}' | '\u{309D}'..='\u{309F}' | '\u{30A1}'..='\u{30FA}' | '\u{30FC}'..='\u{30FF}')
}

/// Readings by headword: the part of a dictionary a caller kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameReadings {
    by_headword: BTreeMap<String, Vec<(String, u8)>>,
}

impl NameReadings {
    /// Keeps `entry` (in the dictionary's order; a reading seen again for the same
    /// headword adds its tags).
    pub fn insert(&mut self, entry: &Entry<'_>) {
        let what = entry.tags.iter().fold(0u8, |what, tag| {
            what | match *tag {
                "s" => SURNAME,
                "g" | "f" | "m" => GIVEN,
                "u" => UNCLASSIFIED,
                "p" | "st" => PLACE,
                _ => 0,
            }
        });
        if what == 0 {
            return;
        }
        let readings = self.by_headword.entry(entry.headword.to_owned()).or_default();
        match readings.iter_mut().find(|(reading, _)| reading == entry.reading) {
            Some((_, known)) => *known |= what,
            None => readings.push((entry.reading.to_owned(), what)),
        }
    }

    /// Keeps `reading` of `headword` as a reading the text itself gives (ruby): good
    /// for a surname, a given name and a place alike. A reading not written in kana
    /// is not kept.
    pub fn insert_reading(&mut self, headword: &str, reading: &str) {
        if headword.is_empty() || reading.is_empty() || !reading.chars().all(is_kana) {
            return;
        }
        let readings = self.by_headword.entry(headword.to_owned()).or_default();
        match readings.iter_mut().find(|(known, _)| known == reading) {
            Some((_, what)) => *what |= SURNAME | GIVEN | PLACE,
            None => readings.push((reading.to_owned(), SURNAME | GIVEN | PLACE)),
        }
    }

    /// These readings, with every headword `other` reads read only as `other` reads
    /// it (the text's own readings over a dictionary's).
    pub fn overridden_by(&self, other: &NameReadings) -> NameReadings {
        let mut by_headword = self.by_headword.clone();
        for (headword, readings) in &other.by_headword {
            by_headword.insert(headword.clone(), readings.clone());
        }
        NameReadings { by_headword }
    }

    /// How many headwords are kept.
    pub fn len(&self) -> usize {
        self.by_headword.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_headword.is_empty()
    }

    /// The readings of `text` as a name of kind `wanted`: itself when it is kana,
    /// else the dictionary's readings tagged so (or unclassified), in its order.
    fn readings<'a>(&'a self, text: &'a str, wanted: u8) -> Vec<&'a str> {
        if text.chars().all(is_kana) {
            return vec![text];
        }
        let Some(readings) = self.by_headword.get(text) else { return Vec::new() };
        readings.iter().filter(|(_, what)| what & (wanted | UNCLASSIFIED) != 0).map(|(r, _)| r.as_str()).collect()
    }
}

/// Splits a name at a space, a full-width space or `・`.
fn parts(src: &str) -> Vec<&str> {
    src.split([' ', '\u{3000}', '・']).filter(|part| !part.is_empty()).collect()
}

/// Every headword a reading of `src` may look up: each part, and, for a name in one
/// part, every prefix and suffix of it (a surname and a given name written together).
pub fn needed_headwords(src: &str) -> Vec<String> {
    let mut needed = Vec::new();
    for part in parts(src) {
        needed.push(part.to_owned());
        for (at, _) in part.char_indices().skip(1) {
            needed.push(part[..at].to_owned());
            needed.push(part[at..].to_owned());
        }
    }
    needed.sort();
    needed.dedup();
    needed
}

/// The readings a name may have, each `(family, given)` in kana (`family` is `None`
/// for a name read as one word), in this order: for a person written in two parts,
/// each surname reading of the first with each given-name reading of the second; in
/// one part, each split into a surname and a given name, the shorter surname first;
/// then the whole as one word (a place is read only so). Kana is its own reading; at
/// most [`NAME_READINGS_MAX`].
pub fn name_readings(src: &str, place: bool, dictionary: &NameReadings) -> Vec<(Option<String>, String)> {
    let mut out: Vec<(Option<String>, String)> = Vec::new();
    let pair = |family: &[&str], given: &[&str], out: &mut Vec<(Option<String>, String)>| {
        for family in family {
            for given in given {
                if out.len() < NAME_READINGS_MAX {
                    out.push((Some((*family).to_owned()), (*given).to_owned()));
                }
            }
        }
    };
    let parts = parts(src);
    if !place {
        match parts.as_slice() {
            [family, given] => {
                pair(&dictionary.readings(family, SURNAME), &dictionary.readings(given, GIVEN), &mut out);
            }
            [whole] => {
                for (at, _) in whole.char_indices().skip(1) {
                    let family = dictionary.readings(&whole[..at], SURNAME);
                    let given = dictionary.readings(&whole[at..], GIVEN);
                    pair(&family, &given, &mut out);
                }
            }
            _ => {}
        }
    }
    if let [whole] = parts.as_slice() {
        let wanted = if place { PLACE } else { SURNAME | GIVEN | PLACE };
        for reading in dictionary.readings(whole, wanted) {
            if out.len() < NAME_READINGS_MAX {
                out.push((None, reading.to_owned()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = "\u{3000}？？？ /ENAMDICT - Japanese Proper Name Dictionary File/
碇 [いかり] /(s) Ikari/
碇 [てい] /(s) Tei/
宮崎 [みやざき] /(p,s) Miyazaki/
駿 [はやお] /(m) Hayao/
駿 [しゅん] /(f) Shun/
東京 [とうきょう] /(p,s) Tokyo/
ソニー /(c) Sony/
壊れた行
";

    fn dictionary() -> NameReadings {
        let mut dictionary = NameReadings::default();
        for entry in LINES.lines().filter_map(parse_line) {
            dictionary.insert(&entry);
        }
        dictionary
    }

    #[test]
    fn lines_parse_into_headword_reading_and_tags() {
        assert_eq!(
            parse_line("宮崎 [みやざき] /(p,s) Miyazaki/"),
            Some(Entry { headword: "宮崎", reading: "みやざき", tags: vec!["p", "s"] })
        );
        assert_eq!(parse_line("ソニー /(c) Sony/").map(|e| (e.headword, e.reading)), Some(("ソニー", "ソニー")));
        for bad in
            ["", "壊れた行", "　？？？ /ENAMDICT - Japanese Proper Name Dictionary File/", "碇 [ikari] /(s) Ikari/"]
        {
            assert_eq!(parse_line(bad), None, "{bad:?}");
        }
        // A company is kept by no lookup.
        assert!(!dictionary().by_headword.contains_key("ソニー"));
    }

    #[test]
    fn a_name_written_together_is_split_into_surname_and_given_name() {
        let dictionary = dictionary();
        let readings = name_readings("宮崎駿", false, &dictionary);
        assert_eq!(
            readings,
            vec![
                (Some("みやざき".to_owned()), "はやお".to_owned()),
                (Some("みやざき".to_owned()), "しゅん".to_owned())
            ]
        );
        // A kanji surname and a katakana given name.
        let readings = name_readings("碇シンジ", false, &dictionary);
        assert_eq!(readings[0], (Some("いかり".to_owned()), "シンジ".to_owned()));
        assert_eq!(readings.len(), 2);
        // Written apart, the parts are read as they are.
        assert_eq!(name_readings("碇 シンジ", false, &dictionary).len(), 2);
        // A place is read as one word; a name the dictionary lacks has no reading.
        assert_eq!(name_readings("東京", true, &dictionary), vec![(None, "とうきょう".to_owned())]);
        assert!(name_readings("鈴木一郎", false, &dictionary).is_empty());
    }

    #[test]
    fn a_reading_from_the_text_serves_any_part_of_a_name() {
        let mut ruby = NameReadings::default();
        ruby.insert_reading("碇", "いかり");
        ruby.insert_reading("駿", "はやお");
        ruby.insert_reading("宮崎", "miyazaki");
        assert_eq!(name_readings("碇シンジ", false, &ruby), vec![(Some("いかり".to_owned()), "シンジ".to_owned())]);
        assert_eq!(name_readings("駿", true, &ruby), vec![(None, "はやお".to_owned())]);
        // A reading not in kana is not kept.
        assert!(name_readings("宮崎駿", false, &ruby).is_empty());
        // Over a dictionary, the text's reading of 駿 is the only one; 宮崎 is the
        // dictionary's.
        let both = dictionary().overridden_by(&ruby);
        assert_eq!(name_readings("宮崎駿", false, &both), vec![(Some("みやざき".to_owned()), "はやお".to_owned())]);
        let mut shun = NameReadings::default();
        shun.insert_reading("駿", "しゅん");
        let both = dictionary().overridden_by(&shun);
        assert_eq!(name_readings("宮崎駿", false, &both), vec![(Some("みやざき".to_owned()), "しゅん".to_owned())]);
    }

    #[test]
    fn the_headwords_a_name_needs_are_its_parts_prefixes_and_suffixes() {
        assert_eq!(needed_headwords("宮崎駿"), ["宮", "宮崎", "宮崎駿", "崎駿", "駿"]);
        assert_eq!(needed_headwords("碇・シンジ"), ["シ", "シン", "シンジ", "ジ", "ンジ", "碇"]);
    }

    proptest::proptest! {
        #[test]
        fn any_line_parses_or_is_refused_without_a_panic(line in "\\PC{0,60}") {
            if let Some(entry) = parse_line(&line) {
                proptest::prop_assert!(entry.reading.chars().all(is_kana));
            }
        }
    }
}
