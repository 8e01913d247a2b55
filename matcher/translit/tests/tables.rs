//! The tables in full: sorted for binary search, complete against the vendored list
//! of Mandarin syllables, and every key reachable through the normaliser.

use translit::{normalize_pinyin, palladius_syllable, polivanov_kana, KANA, PALLADIUS, SURNAMES};

const SYLLABLES: &str = include_str!("data/mandarin_syllables.txt");

fn syllables() -> Vec<&'static str> {
    SYLLABLES.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect()
}

fn strictly_sorted(keys: &[&str]) -> bool {
    keys.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes())
}

#[test]
fn tables_are_sorted_by_bytes_without_duplicates() {
    assert!(strictly_sorted(&PALLADIUS.iter().map(|r| r.0).collect::<Vec<_>>()), "PALLADIUS");
    assert!(strictly_sorted(&SURNAMES.iter().map(|r| r.0).collect::<Vec<_>>()), "SURNAMES");
    assert!(strictly_sorted(&KANA.iter().map(|r| r.0).collect::<Vec<_>>()), "KANA");
}

#[test]
fn palladius_has_every_mandarin_syllable_and_nothing_else() {
    let list = syllables();
    assert!(list.len() > 400, "the vendored list has {} syllables", list.len());
    let missing: Vec<_> = list.iter().filter(|s| palladius_syllable(s).is_none()).collect();
    assert!(missing.is_empty(), "no Palladius row for {missing:?}");
    let keys: Vec<&str> = PALLADIUS.iter().map(|r| r.0).collect();
    assert_eq!(keys, list, "the table's keys are exactly the list");
}

#[test]
fn every_palladius_key_round_trips_through_the_normaliser() {
    for (pinyin, russian) in PALLADIUS {
        assert_eq!(normalize_pinyin(pinyin).as_deref(), Some(*pinyin), "{pinyin}");
        assert_eq!(palladius_syllable(pinyin), Some(*russian));
        // The same syllable with a tone number and in capitals finds the same row.
        assert_eq!(palladius_syllable(&format!("{}3", pinyin.to_uppercase())), Some(*russian), "{pinyin}3");
        // ü written as v (and as u: where the standard spelling keeps the dots).
        if pinyin.contains('ü') {
            assert_eq!(palladius_syllable(&pinyin.replace('ü', "v")), Some(*russian));
            assert_eq!(palladius_syllable(&pinyin.replace('ü', "u:")), Some(*russian));
        }
    }
}

#[test]
fn palladius_forms_are_lower_case_cyrillic() {
    for (pinyin, russian) in PALLADIUS {
        assert!(!russian.is_empty() && russian.chars().all(|c| ('а'..='я').contains(&c) || c == 'ё'), "{pinyin}");
    }
}

#[test]
fn the_syllables_the_issue_names() {
    let expected = [
        ("er", "эр"),
        ("e", "э"),
        ("zi", "цзы"),
        ("ci", "цы"),
        ("si", "сы"),
        ("zhi", "чжи"),
        ("chi", "чи"),
        ("shi", "ши"),
        ("ri", "жи"),
        ("yuan", "юань"),
        ("yue", "юэ"),
        ("yun", "юнь"),
        ("xu", "сюй"),
        ("qu", "цюй"),
        ("ju", "цзюй"),
        ("nü", "нюй"),
        ("lüe", "люэ"),
        ("hui", "хуэй"),
        ("gui", "гуй"),
        ("guo", "го"),
        ("yi", "и"),
        ("ye", "е"),
        ("jiong", "цзюн"),
    ];
    for (pinyin, russian) in expected {
        assert_eq!(palladius_syllable(pinyin), Some(russian), "{pinyin}");
    }
}

#[test]
fn every_surname_reading_is_in_the_palladius_table() {
    for (hanzi, reading) in SURNAMES {
        assert_eq!(hanzi.chars().count(), reading.split(' ').count(), "{hanzi}: one syllable a character");
        for syllable in reading.split(' ') {
            assert!(palladius_syllable(syllable).is_some(), "{hanzi} {syllable}");
        }
    }
}

#[test]
fn every_kana_row_reads_and_katakana_reads_the_same() {
    for (kana, form) in KANA {
        let alone = polivanov_kana(kana).unwrap_or_else(|e| panic!("{kana}: {e}"));
        // ん alone is н, whatever it becomes before other kana.
        assert_eq!(alone, *form, "{kana}");
        let katakana: String = kana
            .chars()
            .map(|c| if ('ぁ'..='ゖ').contains(&c) { char::from_u32(c as u32 + 0x60).unwrap_or(c) } else { c })
            .collect();
        assert_eq!(polivanov_kana(&katakana).as_deref(), Ok(*form), "{katakana}");
    }
}

#[test]
fn the_kana_table_is_complete() {
    // Every hiragana of the basic and voiced rows (U+3041..U+3096 less the
    // iteration marks) has a row of its own, except っ, which only works in context.
    let missing: Vec<char> = ('\u{3041}'..='\u{3096}')
        .filter(|&c| c != 'っ')
        .filter(|c| KANA.binary_search_by(|r| r.0.cmp(c.to_string().as_str())).is_err())
        .collect();
    assert!(missing.is_empty(), "no row for {missing:?}");
    // Every i-row kana with small ya/yu/yo.
    for row in ["き", "ぎ", "し", "じ", "ち", "ぢ", "に", "ひ", "び", "ぴ", "み", "り"] {
        for small in ["ゃ", "ゅ", "ょ"] {
            let key = format!("{row}{small}");
            assert!(KANA.binary_search_by(|r| r.0.cmp(key.as_str())).is_ok(), "{key}");
        }
    }
}
