//! A book's languages as use cases: set at `init` (a tag that is not BCP 47 in
//! canonical case is refused naming the field, with nothing written), read by every
//! import and export of a format with language sections (an English-to-Spanish
//! TBX-Basic termbase into a `plain` book, which without them skips every concept),
//! overridden for one file, changed later by a `languages_set`, restored by a
//! rollback, shown by `diff`, and kept out of the snapshot ID; the translation memory
//! is written in them too.

use std::path::Path;

use book::check::CheckOptions;
use book::tmx::TmxOptions;
use book::{Book, BookError, ImportOptions, Labelled, Reader, WriteOptions};
use formats::Format;
use ledger_model::*;
use test_support::books::import_options;

const EN_ES: &str = "basic-dca-en-es.tbx";

fn termbase() -> Vec<u8> {
    let path = format!("{}/../formats/tests/fixtures/tbx/{EN_ES}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn write() -> WriteOptions {
    WriteOptions { actor: "human:test".into(), source: None, expect_head: None, recorded_at_ms: 0 }
}

fn languages(source: Option<&str>, target: Option<&str>) -> LanguagesSet {
    LanguagesSet { source: source.map(Into::into), target: target.map(Into::into) }
}

/// A new book at `path` with `profile` in `languages`, opened.
fn book_in(path: &Path, profile: &str, languages: &LanguagesSet) -> Book {
    Book::init_in(path, profile, languages, &write()).unwrap_or_else(|error| panic!("{error}"));
    Book::open(path).unwrap()
}

fn in_force(book: &mut Book) -> (String, String) {
    let languages = book.languages(None).unwrap();
    (languages.source, languages.target)
}

fn pair(source: &str, target: &str) -> (String, String) {
    (source.to_owned(), target.to_owned())
}

fn head(book: &mut Book) -> Seq {
    book.state(None).unwrap().revision()
}

#[test]
fn an_english_spanish_tbx_basic_termbase_imports_into_a_plain_book_created_in_en_and_es() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("astronomy.lorebank");
    let initialized = Book::init_in(&path, "plain", &languages(Some("en"), Some("es")), &write()).unwrap();
    assert_eq!((initialized.source_lang.as_str(), initialized.target_lang.as_str()), ("en", "es"));
    let mut book = Book::open(&path).unwrap();
    assert_eq!(in_force(&mut book), pair("en", "es"));
    // The languages are declared in the first batch, after the config.
    let mut kinds = Vec::new();
    book.events(Seq(1), None, |event| {
        kinds.push(event.content.body.kind_name());
        true
    })
    .unwrap();
    assert_eq!(kinds, ["config_set", "languages_set"]);

    let report = book.import(EN_ES, &termbase(), &import_options()).unwrap();
    assert_eq!(report.format, Format::Tbx);
    let imported: Vec<(String, String)> =
        report.imported.iter().map(|placed| (placed.id.to_string(), placed.src.clone())).collect();
    assert_eq!(
        imported,
        [pair("T-1", "planet"), pair("T-2", "asteroid belt"), pair("T-3", "red dwarf")],
        "skipped: {:?}",
        report.skipped
    );
    let skipped: Vec<String> =
        report.skipped.iter().map(|skipped| format!("{} {}", skipped.at, skipped.reason)).collect();
    assert_eq!(skipped, ["uid a4 no dst"]);
    let lost: Vec<&str> = report.lost.iter().map(|group| group.what.as_str()).collect();
    assert_eq!(lost, ["definition", "termType", "administrativeStatus", "langSec"]);
    let state = book.state(None).unwrap();
    let belt = &state.terms()[&"T-2".parse().unwrap()];
    assert_eq!(belt.put.dst, "cinturón de asteroides");
    assert_eq!(belt.put.gender, Some(Gender::Masculine));
    assert!(belt.aliases.contains_key("main belt"));
    assert_eq!(state.terms()[&"T-3".parse().unwrap()].put.gender, Some(Gender::Feminine));
    // Importing it again appends nothing.
    let again = book.import(EN_ES, &termbase(), &import_options()).unwrap();
    assert_eq!((again.n_events, again.written, again.unchanged.len()), (0, false, 3));

    // The export names the book's languages, and an English-Spanish book reads it back
    // to the same snapshot.
    let export = book.export(&Reader::Full, Format::Tbx, None, None, None).unwrap();
    let text = String::from_utf8(export.bytes.clone()).unwrap();
    assert!(text.contains("style=\"dca\" xml:lang=\"en\""), "{text}");
    assert_eq!(text.matches("<langSec xml:lang=\"es\">").count(), 3, "{text}");
    let mut other = book_in(&dir.path().join("other.lorebank"), "plain", &languages(Some("en"), Some("es")));
    other.import("export.tbx", &export.bytes, &import_options()).unwrap();
    assert_eq!(other.snapshot_info(None).unwrap().snapshot, export.snapshot);
    // An export may name another target language for its one file.
    let mexican = book.export(&Reader::Full, Format::Tbx, None, None, Some("es-MX")).unwrap();
    let text = String::from_utf8(mexican.bytes).unwrap();
    assert_eq!(text.matches("<langSec xml:lang=\"es-MX\">").count(), 3, "{text}");
}

#[test]
fn a_plain_book_that_names_no_languages_skips_every_concept_unless_the_import_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_in(&dir.path().join("b.lorebank"), "plain", &LanguagesSet::default());
    assert_eq!(in_force(&mut book), pair("und", "ru"));
    // What every plain book did before it could name its languages.
    let report = book.import(EN_ES, &termbase(), &import_options()).unwrap();
    assert!(report.imported.is_empty() && !report.written);
    assert!(report.skipped.iter().all(|skipped| skipped.reason == "no term in the source language und"));
    assert_eq!(report.skipped.len(), 4);
    // Named for one file, the languages read it; the book's stay as they were.
    let options = ImportOptions { source_lang: Some("en".into()), target_lang: Some("es".into()), ..import_options() };
    let report = book.import(EN_ES, &termbase(), &options).unwrap();
    assert_eq!(report.imported.len(), 3);
    assert_eq!(in_force(&mut book), pair("und", "ru"));
    // A zh book reads Chinese by default, whatever it is told for one file.
    let mut zh = book_in(&dir.path().join("zh.lorebank"), "zh", &LanguagesSet::default());
    assert_eq!(in_force(&mut zh), pair("zh", "ru"));
    let mut ja = book_in(&dir.path().join("ja.lorebank"), "ja", &languages(None, Some("en")));
    assert_eq!(in_force(&mut ja), pair("ja", "en"));
}

#[test]
fn languages_changed_by_an_event_stay_out_of_the_snapshot_show_in_diff_and_come_back_with_a_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_in(&dir.path().join("b.lorebank"), "zh", &LanguagesSet::default());
    book.append(
        &write(),
        Labelled::appended(vec![Body::TermPut(TermPut::new("T-1".parse().unwrap(), "萧炎", "Сяо Янь"))]),
        false,
    )
    .unwrap();
    let before = book.snapshot_info(None).unwrap();
    let set = Body::LanguagesSet(languages(Some("zh-Hant"), Some("en")));
    let written = book.append(&write(), Labelled::appended(vec![set]), false).unwrap();
    assert_eq!(written.submitted.snapshot, before.snapshot, "no render format injects a language");
    assert_eq!(in_force(&mut book), pair("zh-Hant", "en"));
    let now = head(&mut book);
    let diff = book.diff(before.revision, now).unwrap();
    assert!(diff.records.is_empty());
    let fields: Vec<&str> = diff.config.iter().map(|change| change.field).collect();
    assert_eq!(fields, ["languages"]);
    // The same languages again append nothing.
    let again = book
        .append(&write(), Labelled::appended(vec![Body::LanguagesSet(languages(Some("zh-Hant"), Some("en")))]), false)
        .unwrap();
    assert!(again.submitted.appended.is_none());

    // A rollback to before them brings the defaults back, with the same snapshot.
    let rolled = book.rollback(before.revision, Some("test".into()), &write()).unwrap();
    assert_eq!(rolled.submitted.snapshot, before.snapshot);
    assert_eq!(in_force(&mut book), pair("zh", "ru"));
    let plan_kinds: Vec<&str> = rolled.submitted.decision.events.iter().map(|event| event.body.kind_name()).collect();
    assert_eq!(plan_kinds, ["languages_set", "rollback_marker"]);
    // And a rollback to them brings them back.
    let with_them = Seq(before.revision.0 + 1);
    book.rollback(with_them, None, &write()).unwrap();
    assert_eq!(in_force(&mut book), pair("zh-Hant", "en"));
    assert_eq!(book.languages(Some(before.revision)).unwrap().source, "zh");
}

#[test]
fn bad_tags_are_refused_naming_the_field_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.lorebank");
    let field_of = |error: BookError| match error {
        BookError::InvalidField { field, message } => (field, message),
        other => panic!("not a field error: {other}"),
    };
    let (field, message) =
        field_of(Book::init_in(&path, "plain", &languages(Some("en_US"), None), &write()).unwrap_err());
    assert_eq!(field, "source_lang");
    assert!(message.starts_with("source_lang: \"en_US\" is not a BCP 47 language tag"), "{message}");
    let (field, message) = field_of(Book::init_in(&path, "plain", &languages(None, Some("ES")), &write()).unwrap_err());
    assert_eq!(
        (field, message.as_str()),
        ("target_lang", "target_lang: \"ES\" is not in the canonical case of BCP 47 tags: write \"es\"")
    );
    assert!(!path.exists(), "a refused init leaves no book");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nor a temporary file");

    let mut book = book_in(&path, "plain", &languages(Some("en"), Some("es")));
    let at = head(&mut book);
    let options = ImportOptions { source_lang: Some("en-".into()), ..import_options() };
    let (field, _) = field_of(book.import(EN_ES, &termbase(), &options).unwrap_err());
    assert_eq!(field, "source_lang");
    let options = ImportOptions { target_lang: Some("es-Spain-ES".into()), dry_run: true, ..import_options() };
    let (field, message) = field_of(book.import(EN_ES, &termbase(), &options).unwrap_err());
    assert_eq!(field, "target_lang");
    assert!(message.ends_with("\"ES\" cannot follow \"Spain\" there"), "{message}");
    let (field, _) = field_of(book.export(&Reader::Full, Format::Tbx, None, None, Some("es_ES")).unwrap_err());
    assert_eq!(field, "target_lang");
    // Written by hand, a bad tag is refused by the event's own validation.
    let bad = Body::LanguagesSet(languages(Some("EN"), None));
    let error = book.append(&write(), Labelled::appended(vec![bad]), false).unwrap_err();
    assert!(error.to_string().contains("languages_set.source"), "{error}");
    assert_eq!(head(&mut book), at);
    assert_eq!(in_force(&mut book), pair("en", "es"));
}

#[test]
fn the_translation_memory_is_written_in_the_book_s_languages() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_in(&dir.path().join("b.lorebank"), "zh", &languages(Some("zh-Hant"), Some("uk")));
    let put = Body::TermPut(TermPut::new("T-1".parse().unwrap(), "沈照", "Шень Чжао"));
    book.append(&write(), Labelled::appended(vec![put]), false).unwrap();
    let receipt = book.assemble_chunk(&Reader::Full, 1, "1", "沈照来了。", None, true).unwrap().id.to_hex();
    let checking = CheckOptions { record: true, propose: false, actor: "human:test".into(), recorded_at_ms: 1 };
    book.check(&receipt, "Шень Чжао прийшов.", &checking).unwrap();
    let exported = book.export_tmx(&Reader::Full, &TmxOptions::new(None, None)).unwrap();
    assert_eq!((exported.source_lang.as_str(), exported.target_lang.as_str(), exported.n_units), ("zh-Hant", "uk", 1));
    let text = String::from_utf8(exported.bytes).unwrap();
    assert!(text.contains("srclang=\"zh-Hant\"") && text.contains("xml:lang=\"uk\""), "{text}");
    // Named for one file, another target language; refused when not canonical.
    let named = book.export_tmx(&Reader::Full, &TmxOptions::new(None, Some("be".into()))).unwrap();
    assert_eq!(named.target_lang, "be");
    let error = book.export_tmx(&Reader::Full, &TmxOptions::new(None, Some("UK".into()))).unwrap_err();
    assert!(matches!(error, BookError::InvalidField { field: "target_lang", .. }), "{error}");
}
