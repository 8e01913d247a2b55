//! The generated forms of common nouns and adjective + noun phrases against
//! pymorphy3 (tests/oracle.py), an independent morphological dictionary.
//!
//! Recall is the share of pymorphy3's forms the rules generate (a form the rules miss
//! turns a rendered term into a false `missing`); precision is the share of generated
//! forms pymorphy3 also gives (a wrong form can only match a word that is not the
//! term, which in practice never occurs, so it costs little). The rules know no
//! stress and no dictionary, and generate both spellings where the stress or a
//! fleeting vowel decides (`ножом`/`ножем`, `огня`/`огоня`): precision is low by
//! design, recall is what the check lives on. The test fails below 0.9 recall: the
//! seed's measurement of base-only matching is a false flag on about two thirds of
//! checks, and the rules must recover at least nine of ten forms to make the check
//! worth reading.

use std::io::Write;
use std::process::{Command, Stdio};

use ledger_model::Gender;
use postcheck::decline;

/// Glossary-like common nouns and phrases with their gender, written for the project.
const PHRASES: &[(&str, char)] = &[
    ("хранитель огня", 'm'),
    ("Ночная секта", 'f'),
    ("тёмное пламя", 'n'),
    ("Небесный дворец", 'm'),
    ("святой воин", 'm'),
    ("Великий мастер", 'm'),
    ("старейшина", 'm'),
    ("секта", 'f'),
    ("клан", 'm'),
    ("меч", 'm'),
    ("нож", 'm'),
    ("кинжал", 'm'),
    ("дракон", 'm'),
    ("феникс", 'm'),
    ("учитель", 'm'),
    ("ученик", 'm'),
    ("хранитель", 'm'),
    ("страж", 'm'),
    ("герой", 'm'),
    ("гений", 'm'),
    ("огонь", 'm'),
    ("камень", 'm'),
    ("дворец", 'm'),
    ("мудрец", 'm'),
    ("цветок", 'm'),
    ("замок", 'm'),
    ("пламя", 'n'),
    ("знамя", 'n'),
    ("зеркало", 'n'),
    ("озеро", 'n'),
    ("море", 'n'),
    ("солнце", 'n'),
    ("сердце", 'n'),
    ("искусство", 'n'),
    ("учение", 'n'),
    ("ночь", 'f'),
    ("тень", 'f'),
    ("печать", 'f'),
    ("гора", 'f'),
    ("башня", 'f'),
    ("долина", 'f'),
    ("река", 'f'),
    ("звезда", 'f'),
    ("душа", 'f'),
    ("армия", 'f'),
    ("империя", 'f'),
    ("техника", 'f'),
    ("пилюля", 'f'),
    ("Тёмная ночь", 'f'),
    ("Ледяная гора", 'f'),
    ("Красная луна", 'f'),
    ("Небесная печать", 'f'),
    ("Золотой дракон", 'm'),
    ("Белый тигр", 'm'),
    ("Синее море", 'n'),
    ("Глубокое озеро", 'n'),
    ("Древний клан", 'm'),
    ("Тихий лес", 'm'),
    ("Великая стена", 'f'),
    ("Горячая пилюля", 'f'),
    ("Железный меч", 'm'),
    ("Свежая кровь", 'f'),
    ("Небесное искусство", 'n'),
    ("Последний император", 'm'),
    ("Верховный жрец", 'm'),
    ("Большой зал", 'm'),
    ("Старший брат", 'm'),
    ("Младшая сестра", 'f'),
    ("Бессмертный владыка", 'm'),
    ("Нефритовый кулон", 'm'),
    ("Кровавый демон", 'm'),
    ("Духовное кольцо", 'n'),
    ("Лунный свет", 'm'),
    ("Пустой город", 'm'),
    ("Хрустальный шар", 'm'),
    ("Хорошая весть", 'f'),
    ("Чистая вода", 'f'),
    ("Вечная жизнь", 'f'),
    ("Ледяное сердце", 'n'),
    ("печать бессмертного", 'f'),
    ("меч тысячи звёзд", 'm'),
    ("долина теней", 'f'),
    ("Секта Ночного Фонаря", 'f'),
    ("Орден Серебряной луны", 'm'),
    // Words the rules are known to get wrong (irregular stems, fleeting vowels outside
    // -ец/-ок/-ень/-онь), kept in so the rate is not flattered.
    ("путь", 'm'),
    ("лев", 'm'),
    ("сон", 'm'),
    ("ветер", 'm'),
    ("орёл", 'm'),
    ("мать", 'f'),
    ("дочь", 'f'),
    ("ручей", 'm'),
    ("день", 'm'),
    ("князь", 'm'),
    ("господин", 'm'),
    ("Северный ветер", 'm'),
    ("Старый лев", 'm'),
];

fn fold(form: &str) -> String {
    form.to_lowercase().replace('ё', "е")
}

#[test]
fn generated_forms_agree_with_pymorphy3() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run python3 ({error}): run scripts/setup.sh"));
    let input: String = PHRASES.iter().map(|(phrase, gender)| format!("{phrase}\t{gender}\n")).collect();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the pymorphy3 oracle failed; run scripts/setup.sh to install pymorphy3 and its Russian dictionaries:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Vec<String>> =
        String::from_utf8(output.stdout).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines.len(), PHRASES.len());
    let (mut oracle_total, mut recalled, mut generated_total, mut confirmed, mut exact) = (0, 0, 0, 0, 0);
    let mut misses = Vec::new();
    for ((phrase, gender), oracle) in PHRASES.iter().zip(&lines) {
        let gender = match gender {
            'm' => Gender::Masculine,
            'f' => Gender::Feminine,
            _ => Gender::Neuter,
        };
        assert!(!oracle.is_empty(), "pymorphy3 does not know {phrase}");
        let ours: Vec<String> = decline(phrase, Some(gender), Some("object")).forms.iter().map(|f| fold(f)).collect();
        let theirs: Vec<String> = oracle.iter().map(|f| fold(f)).collect();
        let hit = theirs.iter().filter(|f| ours.contains(f)).count();
        oracle_total += theirs.len();
        recalled += hit;
        generated_total += ours.len();
        confirmed += ours.iter().filter(|f| theirs.contains(f)).count();
        if hit == theirs.len() {
            exact += 1;
        } else {
            misses.push(format!("{phrase}: pymorphy3 {theirs:?}, rules {ours:?}"));
        }
    }
    let recall = recalled as f64 / oracle_total as f64;
    let precision = confirmed as f64 / generated_total as f64;
    println!(
        "pymorphy3 oracle: {} phrases, {exact} with every form generated; recall {recalled}/{oracle_total} = {recall:.3}, \
         precision {confirmed}/{generated_total} = {precision:.3}",
        PHRASES.len()
    );
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(recall >= 0.9, "recall {recall:.3} below 0.9:\n{}", misses.join("\n"));
}
