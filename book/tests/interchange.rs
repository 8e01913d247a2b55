//! Import and export as book use cases: the identity rule (a re-import updates,
//! never duplicates), idempotence, atomic refusal of bad files and of `--strict`
//! losses, provenance of every event, the spoiler gate of exports, and the round
//! trips of every format (export → import into an empty book gives the same
//! snapshot ID; import → export → import appends nothing), and OmegaT's own glossaries
//! imported once and exported to what translate-toolkit reads.

use book::{Book, BookError, ImportOptions};
use formats::{Fields, Format};
use ledger_model::*;
use proptest::prelude::*;
use test_support::books::{import_options, zh_book};
use test_support::records::term_id;

fn head(book: &mut Book) -> Seq {
    book.state(None).unwrap().revision()
}

const GLOSSARY: &str =
    "萧炎\tСяо Янь\t主角\n药老\tЯо Лао\n//не запись\n纳兰嫣然->Налань Яньжань #未婚妻\n魂殿    Зал Душ\n";

#[test]
fn an_import_is_one_batch_with_the_tool_as_actor_and_the_line_as_source() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let report = book.import("dict/项目GPT字典.txt", GLOSSARY.as_bytes(), &import_options()).unwrap();
    assert_eq!(report.format, Format::GalTransl);
    assert!(report.detected && report.written);
    let imported: Vec<(String, String, String)> = report
        .imported
        .iter()
        .map(|placed| (placed.at.to_string(), placed.id.to_string(), placed.src.clone()))
        .collect();
    assert_eq!(
        imported,
        [
            ("line 1".into(), "T-1".into(), "萧炎".into()),
            ("line 2".into(), "T-2".into(), "药老".into()),
            ("line 4".into(), "T-3".into(), "纳兰嫣然".into()),
            ("line 5".into(), "T-4".into(), "魂殿".into()),
        ]
    );
    assert_eq!(report.n_events, 4);
    let mut events = Vec::new();
    book.events(Seq(2), None, |event| {
        events.push(event);
        true
    })
    .unwrap();
    let envelopes: Vec<(&str, &str)> =
        events.iter().map(|event| (event.content.actor.as_str(), event.content.source.as_str())).collect();
    assert_eq!(
        envelopes,
        [
            ("import:galtransl", "项目GPT字典.txt:1"),
            ("import:galtransl", "项目GPT字典.txt:2"),
            ("import:galtransl", "项目GPT字典.txt:4"),
            ("import:galtransl", "项目GPT字典.txt:5"),
        ]
    );
    // One batch: every event ends at the same batch end.
    assert_eq!(report.revision, Seq(5));
    let Body::TermPut(put) = &events[2].content.body else { panic!("not a put: {:?}", events[2]) };
    assert_eq!((put.dst.as_str(), put.note.as_deref()), ("Налань Яньжань", Some("未婚妻")));
}

#[test]
fn importing_the_same_file_twice_appends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let first = book.import("g.txt", GLOSSARY.as_bytes(), &import_options()).unwrap();
    let second = book.import("g.txt", GLOSSARY.as_bytes(), &import_options()).unwrap();
    assert!(!second.written);
    assert_eq!((second.imported.len(), second.updated.len(), second.unchanged.len()), (0, 0, 4));
    assert_eq!((second.revision, second.snapshot), (first.revision, first.snapshot));
    assert_eq!(head(&mut book), first.revision);
}

#[test]
fn a_reimport_of_an_edited_file_updates_the_record_and_keeps_the_fields_the_format_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let mut put = TermPut::new(term_id(7), "蕭炎", "Сяо Янь");
    put.gender = Some(Gender::Masculine);
    put.window = Window { since: 1, until: Some(900) };
    let alias = Body::AliasAdded(AliasAdded {
        id: term_id(7),
        surface: "炎帝".into(),
        kind: AliasKind::Title,
        window: None,
        release_to: None,
    });
    let mut book = zh_book(&dir.path().join("b.lorebank"), vec![Body::TermPut(put.clone()), alias]);
    // 萧炎 folds to the record's 蕭炎 (zh profile); 炎帝 is its alias.
    let edited = "萧炎\tСяо Янь\tглавный герой\n炎帝\tСяо Янь\n新人\tНовичок\n";
    let report = book.import("g.txt", edited.as_bytes(), &import_options()).unwrap();
    assert_eq!(report.updated.len(), 1);
    assert_eq!((report.updated[0].id, report.updated[0].fields.clone()), (term_id(7), vec!["note"]));
    assert_eq!(report.unchanged.iter().map(|placed| placed.id).collect::<Vec<_>>(), [term_id(7)]);
    assert_eq!(report.imported.iter().map(|placed| placed.id).collect::<Vec<_>>(), [term_id(8)]);
    let state = book.state(None).unwrap();
    let now = &state.terms()[&term_id(7)].put;
    assert_eq!(now.note.as_deref(), Some("главный герой"));
    assert_eq!((now.src.as_str(), now.gender, now.window), ("蕭炎", Some(Gender::Masculine), put.window));
    assert_eq!(state.terms().len(), 2);
}

#[test]
fn an_alias_line_with_another_rendering_is_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let alias = Body::AliasAdded(AliasAdded {
        id: term_id(1),
        surface: "炎帝".into(),
        kind: AliasKind::Title,
        window: None,
        release_to: None,
    });
    let mut book = zh_book(
        &dir.path().join("b.lorebank"),
        vec![Body::TermPut(TermPut::new(term_id(1), "萧炎", "Сяо Янь")), alias],
    );
    let before = head(&mut book);
    let report = book.import("g.txt", "炎帝\tИмператор Пламени\n".as_bytes(), &import_options()).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(
        report.skipped[0].reason,
        "炎帝 is an alias of T-1 (萧炎), whose dst differ; a record has one rendering: edit T-1 in lorebank"
    );
    assert_eq!(head(&mut book), before);
}

#[test]
fn strict_refuses_any_loss_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let file = "萧炎\tСяо Янь\t\tлишняя колонка\n药老\t\n";
    let strict = ImportOptions { strict: true, ..import_options() };
    let error = book.import("g.txt", file.as_bytes(), &strict).unwrap_err();
    assert!(matches!(error, BookError::Invalid(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "a strict import refuses any loss: 1 entry skipped (first: g.txt line 2: no dst), 1 field lost (first: column 4 at g.txt line 1); \
         nothing written"
    );
    assert_eq!(head(&mut book), Seq(1));
    // Without --strict the same file imports, and the report says what was lost.
    let report = book.import("g.txt", file.as_bytes(), &import_options()).unwrap();
    assert_eq!((report.imported.len(), report.skipped.len(), report.n_lost()), (1, 1, 1));
    assert_eq!(report.lost[0].what, "column 4");
    assert_eq!(report.lost[0].values, ["лишняя колонка"]);
}

#[test]
fn a_dry_run_writes_nothing_and_predicts_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let dry = book.import("g.txt", GLOSSARY.as_bytes(), &ImportOptions { dry_run: true, ..import_options() }).unwrap();
    assert!(!dry.written);
    assert_eq!(head(&mut book), Seq(1));
    let real = book.import("g.txt", GLOSSARY.as_bytes(), &import_options()).unwrap();
    assert_eq!((dry.n_events, dry.snapshot), (real.n_events, real.snapshot));
}

/// Bad files: the error names the file, the place and the field, and the book is
/// untouched.
#[test]
fn bad_files_are_refused_naming_file_place_and_field() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("g.txt", b"\xc3\x28\tx\n", "g.txt: line 1: not UTF-8 (invalid byte at offset 0); save the file as UTF-8"),
        ("g.txt", "\tСяо Янь\n".as_bytes(), "g.txt: line 1: field src: empty source term"),
        (
            "g.txt",
            "萧炎\tСяо Янь\n蕭炎\tСяо Янь 2\n".as_bytes(),
            "g.txt line 2: field src: 蕭炎 folds to the same surface as the entry at line 1; a book holds one record \
             per surface and sense (merge the two entries, or give them senses)",
        ),
        ("d.json", b"[{\"src\": 5, \"dst\": \"x\"}]", "d.json: entry 1: field src: must be a string, not 5"),
        (
            "d.json",
            b"[{\"src\": \"a\"",
            "d.json: line 1: malformed JSON: EOF while parsing an object at line 1 column 12",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    for (name, bytes, expected) in cases {
        let error = book.import(name, bytes, &import_options()).unwrap_err();
        assert_eq!(error.to_string(), *expected, "{name}: {:?}", String::from_utf8_lossy(bytes));
        assert_eq!(error.class(), book::ErrorClass::Invalid);
    }
    // Keys the book's rules refuse are named by the file's line.
    let error = book.import("g.txt", "萧炎\tСяо Янь\n《》\tкавычки\n".as_bytes(), &import_options()).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("g.txt line 2: "), "{message}");
    assert!(message.contains("《》"), "{message}");
    assert_eq!(head(&mut book), Seq(1));
}

#[test]
fn a_file_over_the_batch_limit_is_refused_whole_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let n = limits::BATCH_EVENTS_MAX + 1;
    let file: String = (0..n).map(|line| format!("词{line}\tПеревод {line}\n")).collect();
    let error = book.import("huge.txt", file.as_bytes(), &import_options()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "huge.txt: {n} entries make {n} events, over the {} one atomic batch may hold; split the file and \
             import the parts one after another (a re-import of a part appends nothing)",
            limits::BATCH_EVENTS_MAX
        )
    );
    assert_eq!(head(&mut book), Seq(1));
}

/// A book with records, aliases and summaries that start at chapter 40 and later.
fn gated_book(path: &std::path::Path) -> Book {
    let early = TermPut::new(term_id(1), "萧炎", "Сяо Янь");
    let late = TermPut {
        window: Window { since: 41, until: None },
        ..TermPut::new(term_id(2), "魂天帝", "Хунь Тяньди")
    };
    let ended = TermPut {
        window: Window { since: 1, until: Some(39) },
        ..TermPut::new(term_id(3), "云岚宗", "Секта Юньлань")
    };
    let late_alias = AliasAdded {
        id: term_id(1),
        surface: "炎帝".into(),
        kind: AliasKind::Title,
        window: Some(Window { since: 41, until: None }),
        release_to: None,
    };
    let early_alias = AliasAdded {
        id: term_id(1),
        surface: "炎子".into(),
        kind: AliasKind::Nickname,
        window: None,
        release_to: None,
    };
    let summary = |number: u32, scope: Scope, text: &str, visible_from: Option<u32>| {
        Body::SummaryPut(SummaryPut {
            id: RecordId::new(RecordKind::Summary, number).unwrap(),
            scope,
            text: text.into(),
            visible_from,
            owner: None,
            owner_role: None,
            release_to: None,
        })
    };
    zh_book(
        path,
        vec![
            Body::TermPut(early),
            Body::TermPut(late),
            Body::TermPut(ended),
            Body::AliasAdded(late_alias),
            Body::AliasAdded(early_alias),
            summary(1, Scope::Book, "Сяо Янь ищет Пламя.", None),
            summary(2, Scope::Chapter(39), "Глава 39: испытание.", None),
            summary(3, Scope::Chapter(40), "Глава 40: предательство.", None),
        ],
    )
}

/// What an exported file holds, read back: every surface and summary text.
fn surfaces(format: Format, bytes: &[u8]) -> Vec<String> {
    let languages = formats::Languages { source: "zh".into(), target: "ru".into() };
    let parsed = formats::read(format, bytes, &languages).unwrap_or_else(|error| panic!("{format}: {error}"));
    let mut found = Vec::new();
    for entry in parsed.entries {
        found.push(entry.term.src.clone());
        found.extend(entry.term.aliases.iter().map(|alias| alias.surface.clone()));
        found.extend(entry.term.note.clone());
    }
    found.extend(parsed.summaries.iter().map(|summary| summary.put.text.clone()));
    found
}

#[test]
fn every_export_at_chapter_40_holds_nothing_that_starts_later() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = gated_book(&dir.path().join("b.lorebank"));
    for format in Format::ALL {
        let export = book.export(&book::Reader::Full, format, Some(40), None, None).unwrap();
        let found = surfaces(format, &export.bytes);
        for late in ["魂天帝", "炎帝", "Глава 40: предательство."] {
            assert!(!found.iter().any(|text| text.contains(late)), "{format}: {late} is in the export: {found:?}");
        }
        // Ended records are not shown either; early ones are.
        assert!(!found.iter().any(|text| text.contains("云岚宗")), "{format}: {found:?}");
        assert!(found.contains(&"萧炎".to_owned()), "{format}: {found:?}");
        if format.fields().contains(Fields::ALIASES) {
            assert!(found.contains(&"炎子".to_owned()), "{format}: {found:?}");
        }
        if format.has_summaries() {
            assert!(found.contains(&"Глава 39: испытание.".to_owned()), "{format}: {found:?}");
        }
        // At chapter 41 the late term is there.
        let later = surfaces(format, &book.export(&book::Reader::Full, format, Some(41), None, None).unwrap().bytes);
        assert!(later.contains(&"魂天帝".to_owned()), "{format}: {later:?}");
    }
}

#[test]
fn an_export_at_a_past_revision_is_the_glossary_of_that_revision() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = gated_book(&dir.path().join("b.lorebank"));
    let revision = head(&mut book);
    book.import("g.txt", "萧炎\tСяо Янь-2\n".as_bytes(), &import_options()).unwrap();
    let past = book.export(&book::Reader::Full, Format::SakuraText, Some(1), Some(revision), None).unwrap();
    let now = book.export(&book::Reader::Full, Format::SakuraText, Some(1), None, None).unwrap();
    assert_eq!(String::from_utf8(past.bytes).unwrap(), "萧炎->Сяо Янь\n炎子->Сяо Янь\n云岚宗->Секта Юньлань\n");
    assert_eq!(String::from_utf8(now.bytes).unwrap(), "萧炎->Сяо Янь-2\n炎子->Сяо Янь-2\n云岚宗->Секта Юньлань\n");
    assert_eq!(past.revision, revision);
}

#[test]
fn rejected_terms_are_withheld_from_exports_and_lost_fields_reported() {
    let dir = tempfile::tempdir().unwrap();
    let rejected = Body::DispositionSet(DispositionSet {
        target: term_id(2),
        verdict: Verdict::Reject,
        reason: "spoiler".into(),
        note: None,
    });
    let gendered = TermPut { gender: Some(Gender::Feminine), ..TermPut::new(term_id(1), "美杜莎", "Медуза") };
    let mut book = zh_book(
        &dir.path().join("b.lorebank"),
        vec![Body::TermPut(gendered), Body::TermPut(TermPut::new(term_id(2), "魂天帝", "Хунь Тяньди")), rejected],
    );
    let export = book.export(&book::Reader::Full, Format::GalTransl, None, None, None).unwrap();
    assert_eq!(String::from_utf8(export.bytes).unwrap(), "美杜莎\tМедуза\n");
    assert_eq!(export.rejected, [term_id(2)]);
    assert_eq!(export.lost.len(), 1);
    assert_eq!((export.lost[0].what.as_str(), export.lost[0].at.len()), ("gender", 1));
}

// ----- round trips -----

/// Characters that fold to themselves under the zh profile.
const HAN: &[char] = &[
    '萧', '炎', '药', '老', '纳', '兰', '嫣', '然', '魂', '殿', '云', '岚', '宗', '海', '波', '东', '林', '动', '青',
    '檀',
];
const CYRILLIC: &[char] =
    &['а', 'б', 'в', 'Г', 'д', 'Е', 'ж', 'з', 'и', 'к', 'Л', 'м', 'н', 'о', 'п', 'р', 'с', 'т', 'у', 'я'];

fn word(alphabet: &'static [char], len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(alphabet), len).prop_map(|chars| chars.into_iter().collect())
}

fn rendering() -> impl Strategy<Value = String> {
    (word(CYRILLIC, 1..=8), prop::option::of(word(CYRILLIC, 1..=8))).prop_map(|(first, second)| match second {
        Some(second) => format!("{first} {second}"),
        None => first,
    })
}

/// One generated term: a put and its alias surfaces, restricted to what `fields` carries.
fn term(fields: Fields) -> impl Strategy<Value = (String, TermPut, Vec<String>)> {
    (
        word(HAN, 2..=4),
        rendering(),
        prop::option::of(rendering()),
        prop::option::of(prop::sample::select(&["character", "place", "technique"][..])),
        prop::option::of(prop::sample::select(&[Gender::Masculine, Gender::Feminine, Gender::Neuter][..])),
        prop::collection::vec(rendering(), 0..3),
        prop::collection::vec(word(HAN, 2..=4), 0..3),
        (prop::bool::ANY, -5..5i32, prop::bool::ANY),
    )
        .prop_map(move |(src, dst, note, kind, gender, decl, aliases, (draft, priority, constant))| {
            let mut put = TermPut::new(term_id(1), src.clone(), dst);
            let has = |field| fields.contains(field);
            put.note = note.filter(|_| has(Fields::NOTE));
            put.kind = kind.filter(|_| has(Fields::KIND)).map(str::to_owned);
            put.gender = gender.filter(|_| has(Fields::GENDER));
            put.decl = if has(Fields::DECL) { decl } else { Vec::new() };
            put.status = if has(Fields::STATUS) && draft { Status::Draft } else { Status::Approved };
            put.priority = if has(Fields::PRIORITY) { priority } else { 0 };
            put.constant = has(Fields::CONSTANT) && constant;
            let aliases = if has(Fields::ALIASES) { aliases } else { Vec::new() };
            (src, put, aliases)
        })
}

/// A book's worth of terms with dense ids and distinct surfaces.
fn bodies(fields: Fields) -> impl Strategy<Value = Vec<Body>> {
    prop::collection::vec(term(fields), 1..8).prop_map(|terms| {
        let mut seen = std::collections::BTreeSet::new();
        let mut bodies = Vec::new();
        let mut number = 0;
        for (src, mut put, aliases) in terms {
            if !seen.insert(src) {
                continue;
            }
            let aliases: Vec<String> = aliases.into_iter().filter(|alias| seen.insert(alias.clone())).collect();
            number += 1;
            put.id = term_id(number);
            bodies.push(Body::TermPut(put));
            for surface in aliases {
                bodies.push(Body::AliasAdded(AliasAdded {
                    id: term_id(number),
                    surface,
                    kind: AliasKind::Variant,
                    window: None,
                    release_to: None,
                }));
            }
        }
        bodies
    })
}

fn round_trip(format: Format, bodies: Vec<Body>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let mut original = zh_book(&dir.path().join("a.lorebank"), bodies);
    let export = original.export(&book::Reader::Full, format, None, None, None).unwrap();
    prop_assert!(export.lost.is_empty(), "{format}: lost {:?}", export.lost);
    let mut copy = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let name = format!("glossary.{}", format.extension());
    let options = ImportOptions { format: Some(format), ..import_options() };
    let report = copy.import(&name, &export.bytes, &options).unwrap();
    prop_assert!(
        report.skipped.is_empty() && report.lost.is_empty(),
        "{format}: {:?} {:?}",
        report.skipped,
        report.lost
    );
    prop_assert_eq!(report.snapshot, export.snapshot, "{}: the imported book differs", format);
    // Import → export → import: the second export is the same file, and importing it
    // again appends nothing.
    let again = copy.export(&book::Reader::Full, format, None, None, None).unwrap();
    prop_assert_eq!(&again.bytes, &export.bytes);
    let head = copy.state(None).unwrap().revision();
    let report = copy.import(&name, &again.bytes, &options).unwrap();
    prop_assert!(!report.written);
    prop_assert_eq!(copy.state(None).unwrap().revision(), head);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn every_format_round_trips_what_it_carries(
        (format, bodies) in prop::sample::select(&Format::ALL[..]).prop_flat_map(|format| (Just(format), bodies(format.fields())))
    ) {
        round_trip(format, bodies)?;
    }
}

/// Each format gets its own cases too, so a format is never left out by chance.
#[test]
fn each_format_round_trips_a_fixed_book() {
    for format in Format::ALL {
        let fields = format.fields();
        let mut put = TermPut::new(term_id(1), "萧炎", "Сяо Янь");
        if fields.contains(Fields::NOTE) {
            put.note = Some("главный герой".into());
        }
        if fields.contains(Fields::GENDER) {
            put.gender = Some(Gender::Masculine);
        }
        if fields.contains(Fields::DECL) {
            put.decl = vec!["Сяо Яня".into(), "Сяо Яню".into()];
        }
        if fields.contains(Fields::KIND) {
            put.kind = Some("character".into());
        }
        let mut bodies = vec![Body::TermPut(put), Body::TermPut(TermPut::new(term_id(2), "药老", "Яо Лао"))];
        if fields.contains(Fields::ALIASES) {
            bodies.push(Body::AliasAdded(AliasAdded {
                id: term_id(1),
                surface: "炎子".into(),
                kind: AliasKind::Variant,
                window: None,
                release_to: None,
            }));
        }
        round_trip(format, bodies).unwrap_or_else(|error| panic!("{format}: {error}"));
    }
}

/// OmegaT's own test glossaries (`formats/tests/fixtures/real/omegat/`, GPL, with their
/// provenance): the format detected from each name and content, and the entries
/// OmegaT's tests assert, as (src, dst, note).
/// Entries of a glossary as (src, dst, note).
type Entries = &'static [(&'static str, &'static str, &'static str)];

const OMEGAT_REAL: &[(&str, Format, Entries)] = &[
    (
        "test.tab",
        Format::OmegaT,
        &[
            ("kde", "koo moo", ""),
            ("question", "qqqqq", ""),
            ("地球システム", "System Terre", "https://fr.wikipedia.org/wiki/Science_du_syst%C3%A8me_Terre"),
            ("손가락", "Korean Term", ""),
        ],
    ),
    (
        "testUTF16LE.txt",
        Format::OmegaT,
        &[("UTF", "Unicode Transformation Format", "Comment #1"), ("LE", "Little Endian", "Comment #2")],
    ),
    (
        "test.csv",
        Format::OmegaTCsv,
        &[
            ("kde", "csv kde", ""),
            ("question", "csv q", ""),
            ("kde; question", "comma", ""),
            ("kde, qu", "comma dot", ""),
            ("\"kde\",\"q\"", "cdk", ""),
            ("\"\"k", "k", ""),
            ("zz\"zz", "zz", ""),
        ],
    ),
    ("test-magiccomment.tab", Format::OmegaT, &[]),
    ("test-magiccomment-bom.tab", Format::OmegaT, &[]),
    ("project__glossary.txt", Format::OmegaT, &[("Introduction", "紹介", ""), ("Error", "エラー", "")]),
    ("project_CN_JP__glossary.txt", Format::OmegaT, &[]),
];

/// Imports each of OmegaT's own glossaries into an empty book (the report as the docs
/// promise it), imports it again (nothing appended), exports it with `--format omegat`
/// (translate-toolkit reads exactly the book's entries from it) and imports that into
/// another empty book (the same snapshot ID).
#[test]
fn omegats_own_glossaries_import_once_and_export_to_what_translate_toolkit_reads() {
    use test_support::interchange::{fixture, translate_toolkit, ToolkitStore};
    let dir = tempfile::tempdir().unwrap();
    for (number, (file, format, entries)) in OMEGAT_REAL.iter().enumerate() {
        let bytes = fixture(&format!("real/omegat/{file}"));
        let mut book = zh_book(&dir.path().join(format!("{number}.lorebank")), Vec::new());
        let report = book.import(file, &bytes, &import_options()).unwrap_or_else(|error| panic!("{file}: {error}"));
        assert_eq!((report.format, report.detected, report.actor.as_str()), (*format, true, "import:omegat"), "{file}");
        let imported: Vec<&str> = report.imported.iter().map(|placed| placed.src.as_str()).collect();
        let sources: Vec<&str> = entries.iter().map(|(src, _, _)| *src).collect();
        assert_eq!(imported, sources, "{file}");
        assert!(report.lost.is_empty() && report.updated.is_empty(), "{file}: {:?}", report.lost);
        let skipped: Vec<String> =
            report.skipped.iter().map(|skipped| format!("{}: {}", skipped.at, skipped.reason)).collect();
        if *file == "project_CN_JP__glossary.txt" {
            // Six spaces where OmegaT needs a tab: OmegaT reads nothing from these lines.
            assert_eq!(skipped, ["line 2: no tab: fewer than 2 columns", "line 3: no tab: fewer than 2 columns"]);
        } else {
            assert!(skipped.is_empty(), "{file}: {skipped:?}");
        }
        // The one notice of a file with entries says how OmegaT's matching differs.
        let activation = report.notices.iter().any(|notice| notice.what.starts_with("OmegaT shows a glossary entry"));
        assert_eq!(activation, !entries.is_empty(), "{file}: {:?}", report.notices);
        assert_eq!(report.written, !entries.is_empty(), "{file}");

        let again = book.import(file, &bytes, &import_options()).unwrap();
        assert!(!again.written, "{file}: a second import wrote");
        assert_eq!((again.unchanged.len(), again.snapshot), (entries.len(), report.snapshot), "{file}");

        let export = book.export(&book::Reader::Full, Format::OmegaT, None, None, None).unwrap();
        assert!(export.lost.is_empty(), "{file}: {:?}", export.lost);
        let read: Vec<(String, String, String)> = translate_toolkit(ToolkitStore::OmegaT, &export.bytes)
            .into_iter()
            .map(|unit| (unit.source.unwrap(), unit.target.unwrap(), unit.notes.unwrap_or_default()))
            .collect();
        let expected: Vec<(String, String, String)> =
            entries.iter().map(|(src, dst, note)| (src.to_string(), dst.to_string(), note.to_string())).collect();
        assert_eq!(read, expected, "{file}: translate-toolkit");

        let mut copy = zh_book(&dir.path().join(format!("{number}-copy.lorebank")), Vec::new());
        let back = copy.import("glossary.utf8", &export.bytes, &import_options()).unwrap();
        assert_eq!(back.format, Format::OmegaT, "{file}: the export named .utf8 is detected");
        assert_eq!(back.snapshot, export.snapshot, "{file}: the export imported into an empty book differs");
    }
}
