//! The golden list of generated forms (rule set 1), and the canonical bytes of a
//! check. A change to any generated form is a new `RULES_VERSION`; the bytes of
//! `testdata/check_v1.hex` are rewritten only with `LOREBANK_BLESS=1` for a
//! deliberate, versioned format change.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use ledger_model::codec::CodecError;
use ledger_model::Gender::{self, Feminine, Masculine, Neuter, Plural};
use postcheck::{check, decline, Check, Rendering, RULES_VERSION};

/// (dst, gender, kind, rule, forms), written by hand.
type Row = (&'static str, Option<Gender>, Option<&'static str>, &'static str, &'static [&'static str]);

const NAMES: &[Row] = &[
    ("Сяо Янь", Some(Masculine), Some("character"), "name_soft_m", &["Сяо Яня", "Сяо Яню", "Сяо Янем", "Сяо Яне"]),
    ("Сяо Янь", None, None, "name_soft_m", &["Сяо Яня", "Сяо Яню", "Сяо Янем", "Сяо Яне"]),
    ("Лу Цзюй", Some(Masculine), None, "name_soft_m", &["Лу Цзюя", "Лу Цзюю", "Лу Цзюем", "Лу Цзюе"]),
    ("Линь Дун", Some(Masculine), None, "name_consonant_m", &["Линь Дуна", "Линь Дуну", "Линь Дуном", "Линь Дуне"]),
    ("Чжан", Some(Masculine), Some("character"), "name_consonant_m", &["Чжана", "Чжану", "Чжаном", "Чжане"]),
    ("Хань Ли", Some(Masculine), None, "indeclinable", &[]),
    ("Яо Лао", Some(Masculine), None, "indeclinable", &[]),
    ("Сюнь Эр", Some(Feminine), None, "indeclinable", &[]),
    ("Мэй Лин", Some(Feminine), Some("character"), "indeclinable", &[]),
    ("Сиина Махиру", Some(Feminine), None, "indeclinable", &[]),
    ("Юки", Some(Feminine), None, "indeclinable", &[]),
    ("Сакура", Some(Feminine), None, "name_a", &["Сакуры", "Сакуре", "Сакуру", "Сакурой"]),
    ("Гу Юэна", Some(Feminine), None, "name_a", &["Гу Юэны", "Гу Юэне", "Гу Юэну", "Гу Юэной"]),
    ("Цин Ся", Some(Feminine), None, "name_a", &["Цин Си", "Цин Се", "Цин Сю", "Цин Сей"]),
    ("Мики", None, None, "indeclinable", &[]),
    ("Мария", Some(Feminine), None, "name_a", &["Марии", "Марию", "Марией"]),
    ("Сима", Some(Masculine), None, "name_a", &["Симы", "Симе", "Симу", "Симой"]),
    ("Кагуя", Some(Feminine), None, "name_a", &["Кагуи", "Кагуе", "Кагую", "Кагуей"]),
    ("Такэси", Some(Masculine), None, "indeclinable", &[]),
    ("Синдзи", Some(Masculine), None, "indeclinable", &[]),
    ("Мэн Ча", Some(Feminine), None, "name_a", &["Мэн Чи", "Мэн Че", "Мэн Чу", "Мэн Чой", "Мэн Чей"]),
    ("Ся Ли Эр", Some(Neuter), None, "indeclinable", &[]),
    (
        "Старейшина Гу",
        Some(Masculine),
        Some("character"),
        "name_title",
        &["Старейшины Гу", "Старейшине Гу", "Старейшину Гу", "Старейшиной Гу"],
    ),
    (
        "мастер Линь Дун",
        Some(Masculine),
        None,
        "name_title",
        &["мастера Линь Дуна", "мастеру Линь Дуну", "мастером Линь Дуном", "мастере Линь Дуне"],
    ),
    (
        "Госпожа Мэй",
        Some(Feminine),
        None,
        "name_title",
        &["Госпожи Мэй", "Госпоже Мэй", "Госпожу Мэй", "Госпожой Мэй", "Госпожей Мэй"],
    ),
    // A title alone, or before a word that is not a name, is not this rule.
    ("Мастер", Some(Masculine), None, "name_consonant_m", &["Мастера", "Мастеру", "Мастером", "Мастере"]),
    ("Близнецы", Some(Plural), None, "unknown_pattern", &[]),
    ("Xiao Yan", Some(Masculine), None, "unknown_pattern", &[]),
    ("", None, None, "unknown_pattern", &[]),
];

/// Common nouns and phrases: adjective + noun agreement, a genitive tail that stays.
const PHRASES: &[Row] = &[
    (
        "хранитель огня",
        Some(Masculine),
        Some("title"),
        "noun_m_soft",
        &["хранителя огня", "хранителю огня", "хранителем огня", "хранителе огня"],
    ),
    (
        "Ночная секта",
        Some(Feminine),
        Some("faction"),
        "noun_a",
        &["Ночной секты", "Ночной секте", "Ночную секту", "Ночной сектой"],
    ),
    (
        "Секта Ночного Фонаря",
        None,
        None,
        "noun_a",
        &["Секты Ночного Фонаря", "Секте Ночного Фонаря", "Секту Ночного Фонаря", "Сектой Ночного Фонаря"],
    ),
    (
        "тёмное пламя",
        None,
        None,
        "noun_mya",
        &["тёмного пламени", "тёмному пламени", "тёмным пламенем", "тёмном пламени"],
    ),
    ("Тёмная ночь", Some(Feminine), None, "noun_f_soft", &["Тёмной ночи", "Тёмную ночь", "Тёмной ночью"]),
    (
        "Великий мастер",
        None,
        None,
        "noun_m",
        &["Великого мастера", "Великому мастеру", "Великим мастером", "Великом мастере"],
    ),
    ("зеркало", None, Some("artifact"), "noun_n", &["зеркала", "зеркалу", "зеркалом", "зеркале"]),
    ("Синее море", None, Some("place"), "noun_n", &["Синего моря", "Синему морю", "Синим морем", "Синем море"]),
];

fn table(rows: &[Row]) {
    let mut failures = Vec::new();
    for (dst, gender, kind, rule, forms) in rows {
        let got = decline(dst, *gender, *kind);
        if got.rule != *rule || got.forms != *forms {
            failures.push(format!(
                "{dst} ({gender:?}, {kind:?}): expected {rule} {forms:?}, got {} {:?}",
                got.rule, got.forms
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn transliterated_names_decline_by_the_golden_list() {
    table(NAMES);
}

#[test]
fn common_nouns_and_phrases_decline_by_the_golden_list() {
    table(PHRASES);
}

#[test]
fn fleeting_vowels_give_both_spellings() {
    let forms = decline("огонь", Some(Masculine), Some("element")).forms;
    assert!(forms.contains(&"огня".to_owned()) && forms.contains(&"огоня".to_owned()), "{forms:?}");
    let forms = decline("Небесный дворец", None, Some("place")).forms;
    assert!(forms.contains(&"Небесного дворца".to_owned()), "{forms:?}");
    assert!(forms.contains(&"Небесным дворцом".to_owned()), "{forms:?}");
}

fn sample() -> Check {
    let renderings = [
        Rendering {
            term: 1,
            dst: "Сяо Янь".to_owned(),
            decl: vec!["Сяо Яня".to_owned()],
            gender: Some(Masculine),
            kind: Some("character".to_owned()),
            source_count: 3,
            review: false,
        },
        Rendering {
            term: 2,
            dst: "Мэй Лин".to_owned(),
            decl: Vec::new(),
            gender: Some(Feminine),
            kind: None,
            source_count: 1,
            review: true,
        },
        Rendering {
            term: 3,
            dst: "Ночная секта".to_owned(),
            decl: Vec::new(),
            gender: Some(Feminine),
            kind: Some("faction".to_owned()),
            source_count: 1,
            review: false,
        },
    ];
    check("Сяо Янь сказала: Ночной секты нет. Сяо Яню не ответили.", &renderings)
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read and bless golden files")]
fn check_bytes_are_golden() {
    let value = sample();
    assert_eq!(value.rules_version, RULES_VERSION);
    let bytes = value.to_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/check_v1.hex");
    if std::env::var_os("LOREBANK_BLESS").is_some() && !path.exists() {
        std::fs::write(&path, format!("{hex}\n")).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}; run with LOREBANK_BLESS=1 to create", path.display()));
    assert_eq!(expected.trim(), hex, "the bytes of a check changed: a new format needs a new version and fixture");
    assert_eq!(Check::from_bytes(&bytes), Ok(value));
}

#[test]
fn non_canonical_or_unknown_bytes_are_refused() {
    let bytes = sample().to_bytes();
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert_eq!(Check::from_bytes(&trailing), Err(CodecError::Trailing { trailing: 1 }));
    // rules_version 1 spelled as an overlong varint (251, then a u16).
    let mut overlong = vec![251, 1, 0];
    overlong.extend_from_slice(&bytes[1..]);
    assert_eq!(Check::from_bytes(&overlong), Err(CodecError::NonCanonical));
    assert!(matches!(Check::from_bytes(&bytes[..bytes.len() - 1]), Err(CodecError::Decode(_))));
    // A rule name this rule set does not know.
    let known = b"name_soft_m";
    let at = bytes.windows(known.len()).position(|w| w == known).unwrap();
    let mut renamed = bytes.clone();
    renamed[at..at + known.len()].copy_from_slice(b"name_soft_x");
    match Check::from_bytes(&renamed) {
        Err(CodecError::Decode(message)) => assert!(message.contains("unknown declension rule"), "{message}"),
        other => panic!("{other:?}"),
    }
}
