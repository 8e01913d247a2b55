//! TBX in languages other than the book's defaults: an English-to-Spanish TBX-Basic
//! termbase (`basic-dca-en-es.tbx`, written for the project) reads by the languages
//! it is read in (the book's, whatever they are), not by the Chinese or Japanese a
//! profile names; and an export in English and Spanish names them and reads back.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;

use formats::{read, write, Entry, ExportInput, Format, Languages, Parsed, Skipped, Term};
use ledger_model::Gender;
use test_support::interchange::{alias, lost, numbered, terms_of, uid};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tbx/basic-dca-en-es.tbx");

fn en_es() -> Languages {
    Languages { source: "en".into(), target: "es".into() }
}

fn fixture() -> Vec<u8> {
    std::fs::read(FIXTURE).unwrap()
}

fn astronomy(term: Term) -> Term {
    Term { kind: Some("astronomy".into()), ..term }
}

#[test]
fn an_english_spanish_termbase_reads_in_english_and_spanish() {
    let parsed = read(Format::Tbx, &fixture(), &en_es()).unwrap();
    let (one, two, three) = (uid("a1"), uid("a2"), uid("a3"));
    let expected = Parsed {
        entries: vec![
            Entry {
                at: one.clone(),
                term: astronomy(Term {
                    gender: Some(Gender::Masculine),
                    decl: vec!["planetas".into()],
                    ..Term::new("planet", "planeta")
                }),
            },
            Entry {
                at: two.clone(),
                term: astronomy(Term {
                    gender: Some(Gender::Masculine),
                    note: Some("The region between the orbits of Mars and Jupiter.".into()),
                    aliases: vec![alias("main belt")],
                    ..Term::new("asteroid belt", "cinturón de asteroides")
                }),
            },
            // `en-US` and `es-ES` are English and Spanish: the primary subtags decide.
            Entry {
                at: three.clone(),
                term: astronomy(Term { gender: Some(Gender::Feminine), ..Term::new("red dwarf", "enana roja") }),
            },
        ],
        summaries: vec![],
        skipped: vec![Skipped { at: uid("a4"), reason: "no dst".into() }],
        lost: vec![
            lost(&one, "definition", "A large body orbiting a star."),
            lost(&two, "termType", "shortForm"),
            lost(&three, "administrativeStatus", "preferredTerm-admn-sts"),
            lost(&three, "langSec", "fr: naine rouge"),
        ],
        notices: vec![],
    };
    assert_eq!(parsed, expected);
}

#[test]
fn read_in_the_languages_a_profile_names_it_has_no_source_term() {
    // What a `plain` book that declared no languages read it as before: undetermined
    // source, Russian renderings. Every concept is skipped, nothing is lost.
    for source in ["und", "zh", "ja"] {
        let parsed = read(Format::Tbx, &fixture(), &Languages { source: source.into(), target: "ru".into() }).unwrap();
        assert!(parsed.entries.is_empty(), "{source}");
        let reasons: Vec<&str> = parsed.skipped.iter().map(|skipped| skipped.reason.as_str()).collect();
        let expected = format!("no term in the source language {source}");
        assert_eq!(reasons, [expected.as_str(); 4], "{source}");
        assert!(parsed.lost.is_empty(), "{source}");
    }
    // English to Russian: the sources are found, the renderings are not.
    let parsed = read(Format::Tbx, &fixture(), &Languages { source: "en".into(), target: "ru".into() }).unwrap();
    assert!(parsed.entries.is_empty());
    assert!(parsed.skipped.iter().all(|skipped| skipped.reason == "no dst"));
}

#[test]
fn an_export_in_english_and_spanish_names_them_reads_back_and_passes_the_dca_rules() {
    let parsed = read(Format::Tbx, &fixture(), &en_es()).unwrap();
    let input = ExportInput {
        source_lang: "en".into(),
        target_lang: "es".into(),
        chapter: None,
        terms: numbered(terms_of(&parsed)),
        summaries: Vec::new(),
    };
    let exported = write(Format::Tbx, &input).unwrap();
    assert_eq!(exported.lost, vec![]);
    let text = String::from_utf8(exported.bytes.clone()).unwrap();
    assert!(text.contains("<tbx type=\"TBX-Basic\" style=\"dca\" xml:lang=\"en\" "), "{text}");
    assert_eq!(text.matches("<langSec xml:lang=\"en\">").count(), 3, "{text}");
    assert_eq!(text.matches("<langSec xml:lang=\"es\">").count(), 3, "{text}");
    let again = read(Format::Tbx, &exported.bytes, &en_es()).unwrap();
    assert_eq!(terms_of(&again), terms_of(&parsed));
    assert_eq!((again.skipped.len(), again.lost.len()), (0, 0));

    // The fixture and its export are TBX-Basic DCA (RELAX NG and the DCA rules, lxml).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tbx-languages");
    std::fs::create_dir_all(&dir).unwrap();
    let export = dir.join("export-en-es.tbx");
    std::fs::write(&export, &exported.bytes).unwrap();
    let check = Path::new(FIXTURE).with_file_name("check_tbx.py");
    let output = Command::new("python3")
        .arg(check)
        .arg(FIXTURE)
        .arg(&export)
        .output()
        .unwrap_or_else(|error| panic!("python3 is needed to check TBX files ({error}): run scripts/setup.sh"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("checked 2 files, 0 problems"), "{stdout}");
}
