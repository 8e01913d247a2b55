//! The golden list (tests/data/golden.tsv): names as published in Russian, run
//! through the crate. Standard entries must come out exactly; exceptions (Сунь Ятсен,
//! Токио) and limits (a reading or a morpheme boundary the crate cannot know) must
//! come out different, so that a lint reports them instead of accepting them.

use translit::{palladius_name, palladius_name_parts, palladius_word, polivanov_name, polivanov_word};

const GOLDEN: &str = include_str!("data/golden.tsv");

struct Entry {
    line: usize,
    language: &'static str,
    source: &'static str,
    split: Option<(&'static str, &'static str)>,
    expected: &'static str,
    kind: &'static str,
    provenance: &'static str,
}

fn entries() -> Vec<Entry> {
    GOLDEN
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.is_empty())
        .map(|(i, l)| {
            let cells: Vec<&str> = l.split('\t').collect();
            assert_eq!(cells.len(), 6, "line {}: {l}", i + 1);
            Entry {
                line: i + 1,
                language: cells[0],
                source: cells[1],
                split: cells[2].split_once('|'),
                expected: cells[3],
                kind: cells[4],
                provenance: cells[5],
            }
        })
        .collect()
}

/// What the crate writes for an entry, with the split the list gives.
fn transcribe(entry: &Entry) -> Result<String, translit::TranslitError> {
    match (entry.language, entry.split) {
        ("zh", Some((family, given))) => palladius_name_parts(family, given).map(|n| n.text()),
        ("zh", None) => palladius_word(entry.source).map(|w| w.text),
        ("ja", Some((family, given))) => polivanov_name(family, given).map(|n| n.text()),
        ("ja", None) => polivanov_word(entry.source).map(|w| w.text),
        (language, _) => panic!("line {}: unknown language {language}", entry.line),
    }
}

#[test]
fn the_list_is_large_enough_and_every_row_has_a_source() {
    let entries = entries();
    let zh = entries.iter().filter(|e| e.language == "zh").count();
    let ja = entries.iter().filter(|e| e.language == "ja").count();
    assert!(zh >= 100 && ja >= 100, "zh {zh}, ja {ja}");
    for e in &entries {
        assert!(e.provenance.chars().count() > 10, "line {}: provenance", e.line);
        assert!(["standard", "exception", "limit"].contains(&e.kind), "line {}: kind {}", e.line, e.kind);
        if let Some((family, given)) = e.split {
            assert_eq!(format!("{family}{given}"), e.source, "line {}: the split is of the source", e.line);
        }
    }
}

#[test]
fn standard_entries_come_out_exactly_and_the_others_differ() {
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for e in entries() {
        let got = transcribe(&e);
        let ok = match e.kind {
            "standard" => got.as_deref() == Ok(e.expected),
            _ => got.as_deref() != Ok(e.expected),
        };
        *counts.entry((e.language, e.kind, ok)).or_insert(0) += 1;
        if !ok {
            failures.push(format!(
                "line {} {} {} [{}]: expected {} got {:?}",
                e.line, e.language, e.source, e.kind, e.expected, got
            ));
        }
    }
    for ((language, kind, ok), n) in &counts {
        println!("{language} {kind}: {n} {}", if *ok { "as required" } else { "FAILED" });
    }
    assert!(failures.is_empty(), "{} golden entries fail:\n{}", failures.len(), failures.join("\n"));
}

/// The automatic split (no separator given) agrees with the published one for every
/// Chinese name whose family name is in the surname table.
#[test]
fn the_automatic_split_finds_the_published_surname() {
    let mut checked = 0;
    for e in entries().iter().filter(|e| e.language == "zh" && e.kind == "standard") {
        let Some((family, _)) = e.split else { continue };
        if translit::surname_reading(family).is_none() {
            continue;
        }
        checked += 1;
        assert_eq!(palladius_name(e.source).map(|n| n.text()).as_deref(), Ok(e.expected), "line {}", e.line);
    }
    println!("automatic split checked on {checked} names");
    assert!(checked >= 100, "{checked}");
}
