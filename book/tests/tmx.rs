//! The translation memory as a book use case: a small book built here (chunks of two
//! chapters assembled and recorded, translations checked, one checked three times)
//! exports the golden `golden/tmx/small.tmx`, byte for byte and again after the book
//! is reopened; the document is valid against the TMX 1.4b DTD (lxml) and
//! translate-toolkit reads back exactly the pairs that were checked, each unit's
//! props leading back to a receipt that replays and a check the audit lists. Then
//! what "latest" means (a newer receipt without a check makes its chunk unchecked),
//! a chapter alone, a translation XML cannot hold, the bound on what an export
//! gathers, and a party, which gets only its own receipts, and not one the head no
//! longer releases to it. `UPDATE_EXPECT=1 cargo test -p book --test tmx` rewrites
//! the golden file; review the diff like code.

use std::path::{Path, PathBuf};

use book::check::CheckOptions;
use book::tmx::{ChunkRef, TmxOptions};
use book::{Book, BookError, ExportForm, Exported, Labelled, Reader, TmxExport};
use formats::tmx::{sentences, SentenceRule, Side};
use ledger_model::*;
use serde_json::Value;
use test_support::books::{new_zh_book, write_as, zh_book, zh_config};
use test_support::records::{event, put, term};

const CHUNK_1: &str = "沈照来了。\n他说：“走吧！”";
const CHUNK_2: &str = "雾川很长。沈照在看。";
const CHUNK_3: &str = "沈照睡了。";
const CHAPTER_2: &str = "沈照说：<&>\"' ]]>";

/// Translation A of chunk 1: two sentences, as the source.
const TRANSLATION_1A: &str = "Шэнь Чжао пришёл.\nОн сказал: «Идём!»";
const TRANSLATION_1B: &str = "Пришёл Шэнь Чжао и сказал: «Идём!»";
/// One sentence for two.
const TRANSLATION_2: &str = "Мглистая река длинна, и Шэнь Чжао смотрит на неё.";
const TRANSLATION_CHAPTER_2: &str = "Шэнь Чжао сказал: <&>\"' ]]>\r\n\tконец";

const T0: u64 = 1_700_000_000_000;

fn checking(actor: &str, recorded_at_ms: u64) -> CheckOptions {
    CheckOptions { record: true, propose: false, actor: actor.into(), recorded_at_ms }
}

/// A receipt's id, assembled and recorded for `reader`.
fn record(book: &mut Book, reader: &Reader, chapter: u32, key: &str, text: &str) -> String {
    book.assemble_chunk(reader, chapter, key, text, None, true).unwrap().id.to_hex()
}

/// The small book: chunks 1, 2, 3 of chapter 1 and chunk 1 of chapter 2 recorded;
/// chunk 1 checked with A, then B, then A again; chunk 3 not checked. The receipts
/// of chapter 1 in key order.
fn small_book(path: &Path) -> (Book, Vec<String>) {
    let mut book = zh_book(path, vec![term(1, "沈照", "Шэнь Чжао"), term(2, "雾川", "Мглистая река")]);
    let full = Reader::Full;
    let receipts: Vec<String> = [("1", CHUNK_1), ("2", CHUNK_2), ("3", CHUNK_3)]
        .map(|(key, text)| record(&mut book, &full, 1, key, text))
        .into();
    let chapter_2 = record(&mut book, &full, 2, "1", CHAPTER_2);
    book.check(&receipts[0], TRANSLATION_1A, &checking("human:anna", T0)).unwrap();
    book.check(&receipts[0], TRANSLATION_1B, &checking("human:boris", T0 + 60_000)).unwrap();
    book.check(&receipts[0], TRANSLATION_1A, &checking("tool:pipeline", T0 + 120_000)).unwrap();
    book.check(&receipts[1], TRANSLATION_2, &checking("human:anna", T0 + 300_000)).unwrap();
    book.check(&chapter_2, TRANSLATION_CHAPTER_2, &checking("human:anna", T0 + 400_000)).unwrap();
    (book, receipts)
}

fn export(book: &mut Book, reader: &Reader, chapter: Option<u32>) -> TmxExport {
    book.export_tmx(reader, &TmxOptions::new(chapter, None)).unwrap()
}

fn chunk(chapter: u32, key: &str, receipt: &str) -> ChunkRef {
    ChunkRef { chapter, chunk_key: key.into(), receipt: Hash32::from_hex(receipt).unwrap() }
}

/// The document checked by check_tmx.py: its JSON.
fn checked(name: &str, bytes: &[u8]) -> Value {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("book-tmx");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.tmx"));
    std::fs::write(&path, bytes).unwrap();
    let output = test_support::interchange::check_tmx("zh", "ru", &[path]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.trim()).unwrap()
}

fn pairs_read(result: &Value) -> Vec<(String, String)> {
    let units = result["units"].as_array().unwrap();
    units
        .iter()
        .map(|unit| (unit["source"].as_str().unwrap().into(), unit["target"].as_str().unwrap().into()))
        .collect()
}

fn prop<'a>(unit: &'a Value, kind: &str) -> &'a str {
    let props = unit["props"].as_array().unwrap();
    props.iter().find(|prop| prop[0] == kind).and_then(|prop| prop[1].as_str()).unwrap_or_else(|| panic!("{kind}"))
}

#[test]
fn a_small_book_exports_its_golden_memory_which_reads_back_to_what_was_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.lorebank");
    let (mut book, receipts) = small_book(&path);
    let exported = export(&mut book, &Reader::Full, None);
    expect_test::expect_file!["golden/tmx/small.tmx"].assert_eq(std::str::from_utf8(&exported.bytes).unwrap());
    assert_eq!((exported.n_chunks, exported.n_sentence_chunks, exported.n_units), (3, 1, 4));
    assert_eq!((exported.source_lang.as_str(), exported.target_lang.as_str()), ("zh", "ru"));
    assert_eq!(exported.unchecked.count, 1);
    assert_eq!(exported.unchecked.first, vec![chunk(1, "3", &receipts[2])]);
    assert_eq!((exported.withheld.count, exported.refused.count), (0, 0));
    // Same book, same bytes: again, and after the book is reopened.
    assert_eq!(export(&mut book, &Reader::Full, None).bytes, exported.bytes);
    drop(book);
    let mut book = Book::open(&path).unwrap();
    assert_eq!(export(&mut book, &Reader::Full, None).bytes, exported.bytes);

    // What translate-toolkit reads is what was checked: chunk 1 sentence by sentence
    // (each without the white space around it), the others whole.
    let result = checked("small", &exported.bytes);
    let split = |text, rule| sentences(text, rule).into_iter().map(str::trim).collect::<Vec<_>>();
    let mut expected: Vec<(String, String)> = split(CHUNK_1, SentenceRule::Cjk)
        .into_iter()
        .zip(split(TRANSLATION_1A, SentenceRule::Russian))
        .map(|(source, target)| (source.into(), target.into()))
        .collect();
    expected.push((CHUNK_2.into(), TRANSLATION_2.into()));
    expected.push((CHAPTER_2.into(), TRANSLATION_CHAPTER_2.into()));
    assert_eq!(expected.len(), 4);
    assert_eq!(pairs_read(&result), expected);
    assert_eq!(result["header"]["srclang"], "zh");
    assert_eq!(result["header"]["segtype"], "sentence");

    // Each unit leads back to its audit: the receipt replays, its snapshot is the
    // receipt's, and the audit of its chapter lists the check.
    for unit in result["units"].as_array().unwrap() {
        let receipt = prop(unit, "x-lorebank-receipt");
        let replayed = book.replay(&Reader::Full, receipt).unwrap();
        assert!(replayed.identical);
        assert_eq!(prop(unit, "x-lorebank-snapshot"), replayed.receipt.snapshot.to_hex());
        assert_eq!(prop(unit, "x-lorebank-chunk"), replayed.receipt.chunk_key);
        let chapter: u32 = prop(unit, "x-lorebank-chapter").parse().unwrap();
        assert_eq!(chapter, replayed.receipt.chapter);
        let audit = book.audit(chapter).unwrap();
        let audited = audit.chunks.iter().find(|audited| audited.id.to_hex() == receipt).unwrap();
        assert!(audited.checks.iter().any(|(id, _)| id.to_hex() == prop(unit, "x-lorebank-check")));
    }
    // Chunk 1 was checked with A, B, then A again: A is its latest, created when it
    // was first checked and changed when it was checked last.
    let first = &result["units"][0]["attributes"];
    assert_eq!(first["creationid"], "human:anna");
    assert_eq!(first["creationdate"], "20231114T221320Z");
    assert_eq!(first["changeid"], "tool:pipeline");
    assert_eq!(first["changedate"], "20231114T221520Z");
}

#[test]
fn a_newer_receipt_without_a_check_leaves_its_chunk_out_as_unchecked() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, receipts) = small_book(&dir.path().join("b.lorebank"));
    // A new term makes a new snapshot, so chunk 2 recorded again is a new receipt,
    // its latest, which has no check: the translation of the older one is not used.
    book.submit_labelled(
        &write_as("human:editor"),
        Labelled::numbered(vec![term(3, "长明灯", "Негасимая лампада")], "x"),
        Vec::new(),
    )
    .unwrap();
    let newer = record(&mut book, &Reader::Full, 1, "2", CHUNK_2);
    assert_ne!(newer, receipts[1]);
    let exported = export(&mut book, &Reader::Full, None);
    assert_eq!(exported.n_chunks, 2);
    assert_eq!(exported.unchecked.first, vec![chunk(1, "2", &newer), chunk(1, "3", &receipts[2])]);
    assert!(!String::from_utf8(exported.bytes.clone()).unwrap().contains(TRANSLATION_2));
    // Checked, it is back, from its newer receipt.
    book.check(&newer, TRANSLATION_2, &checking("human:anna", T0)).unwrap();
    let exported = export(&mut book, &Reader::Full, None);
    assert_eq!(exported.n_chunks, 3);
    assert!(String::from_utf8(exported.bytes).unwrap().contains(&newer));
    // One chapter alone.
    let chapter_2 = export(&mut book, &Reader::Full, Some(2));
    assert_eq!((chapter_2.n_chunks, chapter_2.unchecked.count, chapter_2.chapter), (1, 0, Some(2)));
    let result = checked("chapter-2", &chapter_2.bytes);
    assert_eq!(pairs_read(&result), vec![(CHAPTER_2.to_owned(), TRANSLATION_CHAPTER_2.to_owned())]);
    assert_eq!(result["header"]["segtype"], "paragraph");
    let none = export(&mut book, &Reader::Full, Some(9));
    assert_eq!((none.n_chunks, none.n_units, none.unchecked.count), (0, 0, 0));
    checked("empty", &none.bytes);
}

#[test]
fn a_translation_xml_cannot_hold_is_refused_by_name_and_the_rest_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, _) = small_book(&dir.path().join("b.lorebank"));
    let chapter_2 = book.latest_receipts(Some(2)).unwrap()[0].0.to_hex();
    book.check(&chapter_2, "Шэнь Чжао\u{1b}[31m сказал", &checking("human:anna", T0)).unwrap();
    let exported = export(&mut book, &Reader::Full, None);
    assert_eq!(exported.refused.count, 1);
    let refused = &exported.refused.first[0];
    assert_eq!((refused.chunk.chapter, refused.side, refused.character), (2, Side::Target, '\u{1b}'));
    assert_eq!((exported.n_chunks, exported.n_units), (2, 3));
    let result = checked("refused", &exported.bytes);
    assert_eq!(result["units"].as_array().unwrap().len(), 3);
}

#[test]
fn an_export_past_its_bound_is_refused_and_the_adapters_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, _) = small_book(&dir.path().join("b.lorebank"));
    let text_bytes = [CHUNK_1, TRANSLATION_1A, CHUNK_2, TRANSLATION_2, CHAPTER_2, TRANSLATION_CHAPTER_2]
        .iter()
        .map(|text| text.len())
        .sum::<usize>();
    let at_bound = TmxOptions { text_bytes_max: text_bytes, ..TmxOptions::new(None, None) };
    assert_eq!(book.export_tmx(&Reader::Full, &at_bound).unwrap().n_chunks, 3);
    let past = TmxOptions { text_bytes_max: text_bytes - 1, ..at_bound };
    let error = book.export_tmx(&Reader::Full, &past).unwrap_err();
    assert!(matches!(&error, BookError::InvalidField { field: "chapter", .. }), "{error}");
    assert!(error.to_string().contains("TMX_TEXT_BYTES_MAX") && error.to_string().contains("chapter 2"), "{error}");
    // The translation memory has no revision, and its language goes into the XML.
    let error = book.export_as(&Reader::Full, ExportForm::Tmx, None, Some(Seq(2)), None).unwrap_err();
    assert!(matches!(error, BookError::InvalidField { field: "as_of", .. }), "{error}");
    for lang in ["", "r\"u", "ru ru", "1ru", &"x".repeat(36)] {
        let error = book.export_as(&Reader::Full, ExportForm::Tmx, None, None, Some(lang)).unwrap_err();
        assert!(matches!(error, BookError::InvalidField { field: "target_lang", .. }), "{lang:?}: {error}");
    }
    let Exported::Tmx(exported) = book.export_as(&Reader::Full, ExportForm::Tmx, Some(1), None, Some("uk")).unwrap()
    else {
        panic!("not a translation memory")
    };
    // No rule for Ukrainian: chunk 1 is one unit.
    assert_eq!((exported.target_lang.as_str(), exported.n_units, exported.n_sentence_chunks), ("uk", 2, 0));
    assert_eq!(ExportForm::from_name("tmx"), Some(ExportForm::Tmx));
}

#[test]
fn a_party_gets_only_its_own_receipts_and_not_one_the_head_no_longer_releases_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let governance = Body::GovernanceSet(GovernanceSet {
        conflict_policy: ConflictPolicy::Flag,
        parties: vec!["tool:pipeline".into(), "vendor:acme".into()],
        defaults: Vec::new(),
    });
    let shen = TermPut { release_to: Some(vec!["*".into()]), ..put(1, "沈照", "Шэнь Чжао") };
    let river = TermPut { release_to: Some(vec!["*".into()]), ..put(2, "雾川", "Мглистая река") };
    let bodies = [zh_config(AssemblyConfig::default()), governance, Body::TermPut(shen.clone()), Body::TermPut(river)];
    let mut book = new_zh_book(&dir.path().join("b.lorebank"), bodies.into_iter().map(event).collect());
    let pipeline = Reader::Party("tool:pipeline".into());
    let acme = Reader::Party("vendor:acme".into());
    // Chunk 1: the pipeline's receipt, then the full view's. Chunk 2: acme's.
    let own = record(&mut book, &pipeline, 1, "1", CHUNK_1);
    let full = record(&mut book, &Reader::Full, 1, "1", "沈照走了。");
    let other = record(&mut book, &acme, 1, "2", CHUNK_2);
    book.check(&own, TRANSLATION_1A, &checking("tool:pipeline", T0)).unwrap();
    book.check(&full, "Шэнь Чжао ушёл.", &checking("human:anna", T0)).unwrap();
    book.check(&other, TRANSLATION_2, &checking("tool:acme", T0)).unwrap();

    let mine = export(&mut book, &pipeline, None);
    assert_eq!((mine.n_chunks, mine.unchecked.count, mine.withheld.count), (1, 0, 0));
    let text = String::from_utf8(mine.bytes.clone()).unwrap();
    assert!(text.contains(&own) && !text.contains(&full) && !text.contains(&other), "{text}");
    assert_eq!(pairs_read(&checked("party", &mine.bytes)).len(), 2);
    let everything = export(&mut book, &Reader::Full, None);
    let text = String::from_utf8(everything.bytes).unwrap();
    assert!(!text.contains(&own) && text.contains(&full) && text.contains(&other), "{text}");
    // 沈照 no longer released to the pipeline: its receipt names it, so it is withheld.
    let withdrawn = TermPut { release_to: Some(vec!["vendor:acme".into()]), ..shen };
    book.submit_labelled(
        &write_as("human:editor"),
        Labelled::numbered(vec![Body::TermPut(withdrawn)], "x"),
        Vec::new(),
    )
    .unwrap();
    let mine = export(&mut book, &pipeline, None);
    assert_eq!((mine.n_chunks, mine.withheld.count), (0, 1));
    assert_eq!(mine.withheld.first, vec![chunk(1, "1", &own)]);
    // A party the book does not declare is refused, as in every other export.
    assert!(book.export_tmx(&Reader::Party("human:nobody".into()), &TmxOptions::new(None, None)).is_err());
}
