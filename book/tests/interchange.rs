//! Import and export as book use cases: the identity rule (a re-import updates,
//! never duplicates), idempotence, atomic refusal of bad files and of `--strict`
//! losses, provenance of every event, the spoiler gate of exports, and the round
//! trips of every format (export → import into an empty book gives the same
//! snapshot ID; import → export → import appends nothing), and OmegaT's own glossaries
//! imported once and exported to what translate-toolkit reads.

use book::interchange::{Collision, KeyRole, Outcome};
use book::{Book, BookError, ImportOptions};
use formats::{Fields, Format};
use ledger_model::*;
use proptest::prelude::*;
use test_support::books::{import_options, zh_book};
use test_support::interchange;
use test_support::profiles::zh_profile;
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

// ----- entries that share keys -----

/// A SillyTavern world of `(uid, keys, comment)` entries, every other field left out
/// (SillyTavern's defaults).
fn world(entries: &[(u32, &[&str], &str)]) -> Vec<u8> {
    let entries: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .map(|(uid, keys, comment)| {
            (uid.to_string(), serde_json::json!({ "uid": uid, "key": keys, "comment": comment }))
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "entries": entries })).unwrap()
}

/// A collision as (key, at, as, with, with_as, outcome), in words.
type CollisionRow = (String, String, &'static str, String, &'static str, String);

/// A term as (id, src, sense, dst, alias surfaces).
type TermRow = (String, String, Option<String>, String, Vec<String>);

/// The collisions of a report, in words.
fn collisions(report: &book::ImportReport) -> Vec<CollisionRow> {
    report
        .collisions
        .iter()
        .map(|collision| {
            let outcome = match &collision.outcome {
                Outcome::Sense(sense) => format!("sense {sense}"),
                Outcome::Dropped => "dropped".into(),
                Outcome::Window(window) => format!("window {window}"),
            };
            (
                collision.key.clone(),
                collision.at.to_string(),
                collision.role.name(),
                collision.first.to_string(),
                collision.first_role.name(),
                outcome,
            )
        })
        .collect()
}

/// Every active term as (id, src, sense, dst, alias surfaces).
fn terms(book: &mut Book) -> Vec<TermRow> {
    let state = book.state(None).unwrap();
    state
        .active_terms(None)
        .iter()
        .map(|active| {
            let put = &active.term.put;
            let aliases = active.term.aliases.values().map(|alias| alias.surface.clone()).collect();
            (active.id.to_string(), put.src.clone(), put.sense.clone(), put.dst.clone(), aliases)
        })
        .collect()
}

fn c(key: &str, at: &str, role: &'static str, first: &str, first_role: &'static str, outcome: &str) -> CollisionRow {
    (key.into(), at.into(), role, first.into(), first_role, outcome.into())
}

fn t(id: &str, src: &str, sense: Option<&str>, dst: &str, aliases: &[&str]) -> TermRow {
    (
        id.into(),
        src.into(),
        sense.map(str::to_owned),
        dst.into(),
        aliases.iter().map(|alias| alias.to_string()).collect(),
    )
}

/// The world of the issue: three entries keyed 敌人, 战斗, 遭遇 (an index, an opening
/// and a closing tag), which SillyTavern activates together.
#[test]
fn entries_with_one_src_are_senses_named_by_their_rendering_with_all_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let file = world(&[
        (1, &["敌人", "战斗", "遭遇"], "敌人索引"),
        (2, &["战斗系统", "遭遇"], "Система боя"),
        (6, &["敌人", "战斗", "遭遇"], "<敌人>"),
        (7, &["敌人", "战斗", "遭遇"], "</敌人>"),
    ]);
    let report = book.import("world.json", &file, &import_options()).unwrap();
    assert!(report.written && report.skipped.is_empty(), "{report:?}");
    assert_eq!(
        collisions(&report),
        [
            c("遭遇", "uid 2", "alias", "uid 1", "alias", "dropped"),
            c("敌人", "uid 6", "src", "uid 1", "src", "sense <敌人>"),
            c("敌人", "uid 7", "src", "uid 1", "src", "sense </敌人>"),
        ]
    );
    assert_eq!(
        report.collisions[1].to_string(),
        "敌人 (src) is the src of uid 1: a record of its own with the sense \"<敌人>\""
    );
    assert_eq!(report.collisions[0].to_string(), "遭遇 (alias) is the alias of uid 1: left out of this entry");
    assert_eq!(
        terms(&mut book),
        [
            t("T-1", "敌人", None, "敌人索引", &["战斗", "遭遇"]),
            t("T-2", "战斗系统", None, "Система боя", &[]),
            t("T-3", "敌人", Some("<敌人>"), "<敌人>", &["战斗", "遭遇"]),
            t("T-4", "敌人", Some("</敌人>"), "</敌人>", &["战斗", "遭遇"]),
        ]
    );
    // Found again: the same file appends nothing, and neither does the book's own
    // export, which carries no sense but the rendering; into an empty book it gives
    // the same records.
    let again = book.import("world.json", &file, &import_options()).unwrap();
    assert!(!again.written);
    assert_eq!((again.unchanged.len(), again.collisions.len()), (4, 3));
    let export = book.export(&book::Reader::Full, Format::SillyTavern, None, None, None).unwrap();
    assert!(!book.import("export.json", &export.bytes, &import_options()).unwrap().written);
    let mut copy = zh_book(&dir.path().join("c.lorebank"), Vec::new());
    let copied = copy.import("export.json", &export.bytes, &import_options()).unwrap();
    assert_eq!(copied.snapshot, export.snapshot);
}

#[test]
fn an_entry_whose_src_is_an_earlier_alias_is_a_sense_and_keeps_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    // NovelAI's slice in small: Harbinger is an alias of the first entry and the src
    // of the second, whose alias Tempus is the first's src; 炎帝 is every key of the
    // third, an alias the first holds.
    let file = world(&[
        (0, &["Tempus", "Harbinger", "炎帝"], "Темпус"),
        (1, &["Harbinger", "Tempus", "Elijah Thril"], "Кольцо Темпуса"),
        (2, &["炎帝"], "Император Пламени"),
    ]);
    let report = book.import("world.json", &file, &import_options()).unwrap();
    assert_eq!(
        collisions(&report),
        [
            c("Harbinger", "uid 1", "src", "uid 0", "alias", "sense Кольцо Темпуса"),
            c("炎帝", "uid 2", "src", "uid 0", "alias", "sense Император Пламени"),
        ]
    );
    assert_eq!(
        terms(&mut book),
        [
            t("T-1", "Tempus", None, "Темпус", &["Harbinger", "炎帝"]),
            t("T-2", "Harbinger", Some("Кольцо Темпуса"), "Кольцо Темпуса", &["Elijah Thril", "Tempus"]),
            t("T-3", "炎帝", Some("Император Пламени"), "Император Пламени", &[]),
        ]
    );
    assert!(!book.import("world.json", &file, &import_options()).unwrap().written);
}

#[test]
fn a_rendering_already_held_by_the_surface_takes_a_number_and_an_edit_updates_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    // 蕭炎 folds to 萧炎: three entries for one name in three arcs, one rendering.
    let file = "萧炎\tСяо Янь\tпервая арка\n蕭炎\tСяо Янь\tвторая арка\n萧炎\tСяо Янь\tтретья арка\n";
    let report = book.import("g.txt", file.as_bytes(), &import_options()).unwrap();
    assert_eq!(
        collisions(&report),
        [
            c("蕭炎", "line 2", "src", "line 1", "src", "sense Сяо Янь #2"),
            c("萧炎", "line 3", "src", "line 1", "src", "sense Сяо Янь #3"),
        ]
    );
    let senses: Vec<Option<String>> = terms(&mut book).into_iter().map(|(_, _, sense, ..)| sense).collect();
    assert_eq!(senses, [None, Some("Сяо Янь #2".into()), Some("Сяо Янь #3".into())]);
    let edited = file.replace("вторая арка", "вторая арка, после изгнания");
    let report = book.import("g.txt", edited.as_bytes(), &import_options()).unwrap();
    let updated: Vec<(RecordId, Vec<&str>)> =
        report.updated.iter().map(|placed| (placed.id, placed.fields.clone())).collect();
    assert_eq!((updated, report.imported.len(), report.unchanged.len()), (vec![(term_id(2), vec!["note"])], 0, 2));
}

/// A book with two windowed versions of 萧炎 (chapters 1-10 and 11-), each with the
/// alias 炎子 in its own chapters.
fn versioned_book(path: &std::path::Path) -> Book {
    let early =
        TermPut { window: Window { since: 1, until: Some(10) }, ..TermPut::new(term_id(1), "萧炎", "Сяо Янь") };
    let late = TermPut {
        window: Window { since: 11, until: None },
        ..TermPut::new(term_id(2), "萧炎", "Император Пламени")
    };
    let alias = |number| {
        Body::AliasAdded(AliasAdded {
            id: term_id(number),
            surface: "炎子".into(),
            kind: AliasKind::Variant,
            window: None,
            release_to: None,
        })
    };
    zh_book(path, vec![Body::TermPut(early), Body::TermPut(late), alias(1), alias(2)])
}

#[test]
fn windowed_versions_of_one_name_keep_their_records_by_rendering_then_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = versioned_book(&dir.path().join("b.lorebank"));
    let before = terms(&mut book);
    // The whole book's export has both versions, in id order: found again, nothing
    // appended, both keys reported as kept in chapters of their own.
    let export = book.export(&book::Reader::Full, Format::SillyTavern, None, None, None).unwrap();
    let report = book.import("world.json", &export.bytes, &import_options()).unwrap();
    assert!(!report.written, "{report:?}");
    assert_eq!(
        collisions(&report),
        [
            c("萧炎", "uid 1", "src", "uid 0", "src", "window ch 11.."),
            c("炎子", "uid 1", "alias", "uid 0", "alias", "window ch 11.."),
        ]
    );
    // One entry is the version with its rendering; another rendering is skipped.
    let one = book.import("g.txt", "萧炎\tИмператор Пламени\tпосле арки\n".as_bytes(), &import_options()).unwrap();
    assert_eq!(one.updated.iter().map(|placed| placed.id).collect::<Vec<_>>(), [term_id(2)]);
    let other = book.import("g.txt", "萧炎\tДругой\n".as_bytes(), &import_options()).unwrap();
    assert_eq!(
        other.skipped[0].reason,
        "萧炎 matches several records (T-1, T-2) with different windows, and none of them by its rendering; edit them \
         in lorebank"
    );
    // A whole file with one rendering changed: the left-over entry is the left-over
    // version.
    let file = "萧炎\tСяо Янь-младший\n萧炎\tИмператор Пламени\tпосле арки\n";
    let report = book.import("g.txt", file.as_bytes(), &import_options()).unwrap();
    let updated: Vec<(RecordId, Vec<&str>)> =
        report.updated.iter().map(|placed| (placed.id, placed.fields.clone())).collect();
    assert_eq!(updated, [(term_id(1), vec!["dst"])]);
    assert_eq!(collisions(&report), [c("萧炎", "line 2", "src", "line 1", "src", "window ch 11..")]);
    // An entry beyond the versions is a sense of its own.
    let file = "萧炎\tСяо Янь-младший\n萧炎\tИмператор Пламени\tпосле арки\n萧炎\tДругой\n";
    let report = book.import("g.txt", file.as_bytes(), &import_options()).unwrap();
    assert_eq!(report.imported.iter().map(|placed| placed.id).collect::<Vec<_>>(), [term_id(3)]);
    assert_eq!(
        collisions(&report),
        [
            c("萧炎", "line 2", "src", "line 1", "src", "window ch 11.."),
            c("萧炎", "line 3", "src", "line 1", "src", "sense Другой"),
        ]
    );
    assert_eq!(before.len() + 1, terms(&mut book).len());
    // Two entries left for one version: neither can be told, both are skipped.
    let file = "萧炎\tИмператор Пламени\tпосле арки\n萧炎\tA\n萧炎\tB\n";
    let report = book.import("g.txt", file.as_bytes(), &import_options()).unwrap();
    let skipped: Vec<String> = report.skipped.iter().map(|skipped| skipped.at.to_string()).collect();
    assert_eq!((skipped, report.written), (vec!["line 2".to_owned(), "line 3".to_owned()], false));
}

/// Keys of generated files: few, so entries share them often; 蕭炎 folds to 萧炎.
const SHARED_KEYS: &[&str] = &["萧炎", "蕭炎", "炎帝", "药老", "魂殿", "云岚宗"];
/// Renderings of generated files: few, so senses take numbers.
const SHARED_RENDERINGS: &[&str] = &["Сяо Янь", "Яо Лао", "Император Пламени"];

/// Up to 11 terms whose src and aliases are drawn from [`SHARED_KEYS`].
fn sharing_terms() -> impl Strategy<Value = Vec<formats::Term>> {
    let term = (
        prop::sample::select(SHARED_KEYS),
        prop::sample::select(SHARED_RENDERINGS),
        prop::sample::subsequence(SHARED_KEYS, 0..4),
    );
    prop::collection::vec(term, 1..12).prop_map(|terms| {
        terms
            .into_iter()
            .map(|(src, dst, aliases)| {
                let aliases = aliases.into_iter().filter(|alias| *alias != src).map(interchange::alias).collect();
                formats::Term { aliases, ..formats::Term::new(src, dst) }
            })
            .collect()
    })
}

/// Imports `terms` written as `format` into an empty zh book, and checks that no key
/// is lost silently: every entry the reader returns is skipped with a reason or is a
/// new record with its src, under the sense its src collision names (none without
/// one), and with every alias but those a collision says were dropped because an
/// earlier entry's record holds them in that sense; and a re-import appends nothing.
fn shared_keys_import(format: Format, terms: Vec<formats::Term>) -> Result<(), TestCaseError> {
    let input = formats::ExportInput {
        source_lang: "zh".into(),
        target_lang: "ru".into(),
        chapter: None,
        terms: interchange::numbered(terms),
        summaries: Vec::new(),
    };
    let bytes = formats::write(format, &input).unwrap_or_else(|error| panic!("{format}: {error}")).bytes;
    let parsed = interchange::read_as("zh", format, &bytes);
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let name = format!("shared.{}", format.extension());
    let options = ImportOptions { format: Some(format), ..import_options() };
    let report = book.import(&name, &bytes, &options).map_err(|error| TestCaseError::fail(format!("{error}")))?;
    let fold = |text: &str| zh_profile().fold(text);
    let state = book.state(None).unwrap();
    let record_at = |at: &formats::At| report.imported.iter().find(|placed| &placed.at == at).map(|placed| placed.id);
    for entry in &parsed.entries {
        if report.skipped.iter().any(|skipped| skipped.at == entry.at) {
            continue;
        }
        let id = record_at(&entry.at);
        prop_assert!(id.is_some(), "{format}: the entry at {} is neither imported nor skipped", entry.at);
        let put = &state.terms()[&id.unwrap()].put;
        let here: Vec<&Collision> = report.collisions.iter().filter(|collision| collision.at == entry.at).collect();
        let sense = here.iter().find_map(|collision| match &collision.outcome {
            Outcome::Sense(sense) if collision.role == KeyRole::Src => Some(sense.clone()),
            _ => None,
        });
        prop_assert_eq!((&put.src, &put.sense), (&entry.term.src, &sense), "{}: the record of {}", format, entry.at);
        let record = &state.terms()[&id.unwrap()];
        for alias in &entry.term.aliases {
            let kept = record.aliases.contains_key(&alias.surface);
            let dropped = here.iter().find(|collision| {
                collision.key == alias.surface
                    && collision.role == KeyRole::Alias
                    && collision.outcome == Outcome::Dropped
            });
            prop_assert!(
                kept != dropped.is_some(),
                "{format}: alias {} of {}: kept {kept}, dropped {dropped:?}",
                alias.surface,
                entry.at
            );
            if let Some(dropped) = dropped {
                // The earlier entry really holds it, in this sense.
                let first = record_at(&dropped.first).map(|first| &state.terms()[&first]);
                let holds = first.is_some_and(|first| {
                    first.put.sense == put.sense
                        && std::iter::once(&first.put.src)
                            .chain(first.aliases.keys())
                            .any(|surface| fold(surface) == fold(&alias.surface))
                });
                prop_assert!(holds, "{format}: {} claims {} holds {}", entry.at, dropped.first, alias.surface);
            }
        }
        prop_assert_eq!(
            record.aliases.len(),
            entry.term.aliases.len() - here.iter().filter(|c| c.outcome == Outcome::Dropped).count()
        );
    }
    // Every collision is between two entries of the file, the earlier one first.
    let places: Vec<&formats::At> = parsed.entries.iter().map(|entry| &entry.at).collect();
    for collision in &report.collisions {
        let at = places.iter().position(|at| **at == collision.at);
        let first = places.iter().position(|at| **at == collision.first);
        prop_assert!(first.is_some() && first < at, "{format}: {collision:?}");
    }
    let head = book.state(None).unwrap().revision();
    let again = book.import(&name, &bytes, &options).unwrap();
    prop_assert!(!again.written, "{format}: a re-import wrote {:?}", again);
    prop_assert_eq!(&again.collisions, &report.collisions);
    prop_assert_eq!(book.state(None).unwrap().revision(), head);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn files_whose_entries_share_keys_import_every_key_or_report_it_and_reimport_to_nothing(
        format in prop::sample::select(&Format::ALL[..]),
        terms in sharing_terms(),
    ) {
        shared_keys_import(format, terms)?;
    }
}

#[test]
fn strict_refuses_a_shared_key_naming_the_first_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let strict = ImportOptions { strict: true, ..import_options() };
    let file = "萧炎\tСяо Янь\n药老\tЯо Лао\n蕭炎\tИмператор Пламени\n";
    let error = book.import("g.txt", file.as_bytes(), &strict).unwrap_err();
    assert_eq!(error.class(), book::ErrorClass::Invalid);
    assert_eq!(
        error.to_string(),
        "a strict import refuses any loss: 1 key shared (first: g.txt line 3: 蕭炎 (src) is the src of line 1: a record \
         of its own with the sense \"Император Пламени\"); nothing written"
    );
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
