//! Properties: no input panics, and the output of valid input is plain Cyrillic words.

use proptest::prelude::*;
use translit::{
    palladius_name, palladius_syllable, palladius_word, polivanov_kana, polivanov_name, KANA, PALLADIUS, SURNAMES,
};

/// Only Cyrillic letters (ъ included) and single spaces: no apostrophe, no hyphen.
fn plain_cyrillic(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
        && text
            .chars()
            .all(|c| c == ' ' || ('а'..='я').contains(&c.to_lowercase().next().unwrap_or(c)) || c == 'ё' || c == 'Ё')
}

proptest! {
    #[test]
    fn any_string_gets_a_value_or_an_error(s in any::<String>()) {
        let _ = palladius_name(&s);
        let _ = palladius_word(&s);
        let _ = palladius_syllable(&s);
        let _ = polivanov_kana(&s);
        let _ = polivanov_name(&s, &s);
    }

    #[test]
    fn strings_of_cjk_and_kana_never_panic(s in "[\\u{3000}-\\u{30FF}\\u{4E00}-\\u{4E80} ·]{0,12}") {
        let _ = palladius_name(&s);
        let _ = polivanov_kana(&s);
    }

    #[test]
    fn surname_and_given_hanzi_give_plain_cyrillic(
        surname in 0..SURNAMES.len(),
        given in proptest::collection::vec(0x4E00u32..0x9FA5, 1..4),
    ) {
        let given: String = given.into_iter().filter_map(char::from_u32).collect();
        let name = format!("{}·{}", SURNAMES[surname].0, given);
        if let Ok(russian) = palladius_name(&name) {
            prop_assert!(plain_cyrillic(&russian.text()), "{name} -> {}", russian.text());
            prop_assert_eq!(russian.text().split(' ').count(), 2);
        }
    }

    #[test]
    fn kana_sequences_give_plain_cyrillic(rows in proptest::collection::vec(0..KANA.len(), 1..8), gem in any::<bool>()) {
        let mut kana: String = rows.iter().map(|&i| KANA[i].0).collect();
        if gem { kana = format!("あっ{kana}"); }
        let russian = polivanov_kana(&kana);
        prop_assert!(russian.is_ok(), "{kana}: {russian:?}");
        let name = polivanov_name(&kana, &kana).map(|n| n.text()).unwrap_or_default();
        prop_assert!(plain_cyrillic(&name), "{kana} -> {name}");
    }

    #[test]
    fn palladius_rows_joined_stay_plain_cyrillic(rows in proptest::collection::vec(0..PALLADIUS.len(), 1..5)) {
        for &i in &rows {
            let form = palladius_syllable(PALLADIUS[i].0);
            prop_assert!(form.is_some_and(plain_cyrillic));
        }
    }
}
