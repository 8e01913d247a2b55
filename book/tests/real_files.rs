//! The real glossary files of the tools, as their users have them
//! (`tests/data/formats/real/`, each folder under its tool's licence, provenance in its
//! README.md): each is detected as its format and imports into a new book with the
//! report docs/formats.md promises (records, skipped entries, shared keys, lost
//! fields and notices, line by line), a re-import appends nothing, and the book's
//! export in the file's own format reads back to the file's entries as the book holds
//! them (a shared alias left out of the later entry, aliases in surface order) and
//! appends nothing when imported again.

use std::path::Path;

use book::interchange::Outcome;
use book::{Book, ImportOptions, ImportReport};
use formats::{Format, Term};
use ledger_model::Body;
use test_support::books::{import_options, init_book, zh_book};
use test_support::interchange::{read_as, real_file, terms_of};
use test_support::records::event;

/// A report as lines, in the words of the text form: records, skipped entries, shared
/// keys, lost fields with their count, notices (their first six words) with theirs.
fn lines(report: &ImportReport) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(report.imported.iter().map(|placed| format!("new {} {} ({})", placed.id, placed.src, placed.at)));
    lines.extend(report.skipped.iter().map(|skipped| format!("skipped {}: {}", skipped.at, skipped.reason)));
    lines.extend(report.collisions.iter().map(|collision| format!("shared {}: {collision}", collision.at)));
    lines.extend(report.lost.iter().map(|group| format!("lost {} ×{}", group.what, group.at.len())));
    lines.extend(report.notices.iter().map(|notice| {
        let start: Vec<&str> = notice.what.split(' ').take(6).collect();
        format!("note {}… ×{}", start.join(" "), notice.at.len())
    }));
    lines
}

/// A book with the `profile` (`zh` or `ja`) whose keys may be one character long, as
/// a book of names like 周 and 恵 needs.
fn book_with_short_keys(path: &Path, profile: &str) -> Book {
    let mut book = init_book(path, profile);
    let config: Body = serde_json::from_str(r#"{"config_set":{"assembly":{"min_key_chars":1}}}"#).unwrap();
    book.submit(&[event(config)], None, vec![]).unwrap();
    book
}

/// Imports the real file `path` into `book` (whose source language is `source`) and
/// checks that it is detected as `format`, that its report is `expected`, that a
/// re-import appends nothing, and that the book's export in `format` reads back to
/// the file's entries as imported and appends nothing when imported. Returns the
/// report.
fn imports(book: &mut Book, source: &str, path: &str, format: Format, expected: &[&str]) -> ImportReport {
    let bytes = real_file(path);
    let name = path.rsplit('/').next().unwrap();
    let report = book.import(name, &bytes, &import_options()).unwrap_or_else(|error| panic!("{path}: {error}"));
    assert_eq!((report.format, report.detected), (format, true), "{path}");
    assert_eq!(lines(&report), expected, "{path}");
    let head = book.state(None).unwrap().revision();
    let again = book.import(name, &bytes, &import_options()).unwrap();
    assert!(!again.written, "{path}: a re-import wrote {again:?}");
    assert_eq!(again.unchanged.len(), report.imported.len(), "{path}");

    // The entries the book holds: those imported, each without the aliases a shared
    // key left to an earlier entry.
    let read = read_as(source, format, &bytes);
    let held: Vec<Term> = read
        .entries
        .iter()
        .filter(|entry| report.imported.iter().any(|placed| placed.at == entry.at))
        .map(|entry| {
            let mut term = entry.term.clone();
            term.aliases.retain(|alias| {
                !report.collisions.iter().any(|collision| {
                    collision.at == entry.at && collision.key == alias.surface && collision.outcome == Outcome::Dropped
                })
            });
            term
        })
        .collect();
    let export = book.export(&book::Reader::Full, format, None, None, None).unwrap();
    let exported = read_as(source, format, &export.bytes);
    // A record's aliases are a set: the export writes them in surface order.
    let by_surface = |mut terms: Vec<Term>| {
        for term in &mut terms {
            term.aliases.sort_by(|a, b| a.surface.cmp(&b.surface));
        }
        terms
    };
    assert_eq!(
        by_surface(terms_of(&exported)),
        by_surface(held),
        "{path}: the export in its own format reads back otherwise"
    );
    let from_export = book.import(&format!("export.{}", format.extension()), &export.bytes, &import_options());
    assert!(!from_export.unwrap().written, "{path}: importing the book's export wrote");
    assert_eq!(book.state(None).unwrap().revision(), head, "{path}");
    report
}

const NOVELAI_ACTIVATION: &str = "note NovelAI activates an entry when a… ×0";
const SILLYTAVERN_ACTIVATION: &str = "note SillyTavern activates an entry when a… ×0";
const GALTRANSL_ACTIVATION: &str = "note GalTransl injects an entry whenever its… ×0";
const SAKURA_ACTIVATION: &str = "note Sakura clients inject every entry whose… ×0";

/// The shared-keys world: 20 entries of one story, Vera, Lockwood Estate, Harbinger,
/// Tempus, ExoBacter and time machine keys of several entries each.
#[test]
fn novelai_a_lorebook_whose_entries_share_keys_imports_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let uid = |prefix: &str| {
        let ids = [
            "fac5d34b-ff5c-4eab-be08-45af5f8dc2e1",
            "890bb8da-395f-43d8-8c64-329fa24982d3",
            "a03be5d9-8146-4118-b9ec-d42191362f40",
            "34dbd87c-134e-42cf-88d1-e0d662d2d815",
            "2861d6bf-9468-4d1b-9bb8-901e7e8bf782",
            "545085a6-3826-416a-a22f-615912452053",
            "6fea5235-84e2-4e6a-a308-a369d33be557",
            "23777b2d-644c-412a-9cbf-6670900341c3",
            "6c12f034-6eb0-4e84-a710-b7ea7d7e57e9",
            "c8ba3f16-7e81-4290-8dc4-161bdd28305a",
        ];
        let id = ids.iter().find(|id| id.starts_with(prefix)).unwrap();
        format!("uid {id}")
    };
    let (vera, hugo, estate, sigmund) = (uid("fac5"), uid("890b"), uid("a03b"), uid("34db"));
    let (sect, harbinger, hannibus, ring, dining, elijah) =
        (uid("2861"), uid("5450"), uid("6fea"), uid("2377"), uid("6c12"), uid("c8ba"));
    let report = imports(
        &mut book,
        "zh",
        "novelai/lorebook_example.slice.lorebook",
        Format::NovelAi,
        &[
            &format!("new T-1 Vera ({vera})"),
            "new T-2 Aston (uid d9a93cc0-7dd8-4bd4-8f71-a202cd6b1ef4)",
            &format!("new T-3 Vera ({hugo})"),
            &format!("new T-4 Lockwood Estate ({estate})"),
            &format!("new T-5 Sigmund ({sigmund})"),
            "new T-6 Miles Sampson (uid 755dd699-b82c-4ab3-b654-004257d146cc)",
            "new T-7 Edward Cass (uid d8fc82f0-96c8-41b8-ab6c-da4c0cc38679)",
            "new T-8 Lillian (uid 0ccdc169-8d8d-407a-8d0d-609882d00466)",
            "new T-9 Christopher (uid e723abb0-3f6c-4008-86af-51e22b73b5e9)",
            "new T-10 Aurora (uid 3d522339-dd92-42fa-abb1-43fab0933310)",
            &format!("new T-11 ExoBacter ({sect})"),
            &format!("new T-12 Tempus ({harbinger})"),
            &format!("new T-13 ExoBacter ({hannibus})"),
            &format!("new T-14 Harbinger ({ring})"),
            &format!("new T-15 dining room ({dining})"),
            &format!("new T-16 Elijah ({elijah})"),
            "new T-17 moriarty (uid cec50f25-334f-4cb0-b123-9646c8d25438)",
            "skipped uid d8cd7578-3a53-4c15-bec8-977e30cc8e95: no key (a keyless entry is a term only when its \
             displayName marks a lorebank summary)",
            "skipped uid 985949a2-19fc-41c1-9eb5-5758f2c4d8d9: no key (a keyless entry is a term only when its \
             displayName marks a lorebank summary)",
            "skipped uid 2a4aee8a-1953-48bc-b088-9674e9a169a3: no key (a keyless entry is a term only when its \
             displayName marks a lorebank summary)",
            &format!(
                "shared {hugo}: Vera (src) is the src of {vera}: a record of its own with the sense \"Hugo Lockwood\""
            ),
            &format!("shared {sigmund}: Lockwood Estate (alias) is the src of {estate}: left out of this entry"),
            &format!(
                "shared {hannibus}: ExoBacter (src) is the src of {sect}: a record of its own with the sense \
                 \"Hannibus Fismalyry\""
            ),
            &format!(
                "shared {ring}: Harbinger (src) is the alias of {harbinger}: a record of its own with the sense \"The \
                 Tempus Ring\""
            ),
            &format!("shared {dining}: Lockwood Estate (alias) is the src of {estate}: left out of this entry"),
            &format!("shared {dining}: Harbinger (alias) is the alias of {harbinger}: left out of this entry"),
            // A case variant: the profile lower-cases, as NovelAI matches.
            &format!("shared {elijah}: Exobacter (alias) is the src of {sect}: left out of this entry"),
            &format!("shared {elijah}: time machine (alias) is the alias of {harbinger}: left out of this entry"),
            "lost categories ×1",
            "lost category ×19",
            "lost searchRange ×10",
            "lost keyRelative ×4",
            "lost contextConfig.tokenBudget ×1",
            "lost nonStoryActivatable ×7",
            "lost contextConfig.insertionType ×2",
            "lost contextConfig.suffix ×1",
            NOVELAI_ACTIVATION,
        ],
    );
    // The sensed records keep every key they have: Harbinger's entry keeps Tempus, the
    // src of an earlier entry, in its own sense.
    let state = book.state(None).unwrap();
    let ring = &state.terms()[&report.imported[13].id];
    assert_eq!(ring.put.sense.as_deref(), Some("The Tempus Ring"));
    let surfaces: Vec<&str> = ring.aliases.keys().map(String::as_str).collect();
    assert_eq!(surfaces, ["2080", "Elijah Thril", "Nu York", "Tempus", "mercenaries"]);
}

#[test]
fn novelai_a_one_entry_export_and_a_fresh_default_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    imports(
        &mut book,
        "zh",
        "novelai/Ripple (Mon Oct 17 2022).lorebook",
        Format::NovelAi,
        &["new T-1 Rome (uid 642723d1-a4a1-47a3-a63f-d36aee33de1b)", NOVELAI_ACTIVATION],
    );
    let mut fresh = zh_book(&dir.path().join("fresh.lorebank"), Vec::new());
    imports(
        &mut fresh,
        "zh",
        "novelai/starter.lorebook",
        Format::NovelAi,
        &["skipped uid bd90161f-4ff6-44a0-8522-0f25ad26aae3: no key (a keyless entry is a term only when its \
           displayName marks a lorebank summary)"],
    );
}

/// SillyTavern's own world as its staging branch shipped it: 31 fields an entry, no
/// `selectiveLogic` (the default, AND ANY, applies), `role: null`; SillyTavern writes
/// `addMemo: true` and `sticky`, `cooldown`, `delay` 0 where its template has false
/// and null, each lost.
#[test]
fn sillytavern_eldoria_without_selective_logic_imports_its_four_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    imports(
        &mut book,
        "zh",
        "sillytavern/Eldoria.staging-2024-10-18.json",
        Format::SillyTavern,
        &[
            "new T-1 eldoria (uid 0)",
            "new T-2 shadowfang (uid 1)",
            "new T-3 glade (uid 2)",
            "new T-4 power (uid 3)",
            "lost addMemo ×4",
            "lost sticky ×4",
            "lost cooldown ×4",
            "lost delay ×4",
            SILLYTAVERN_ACTIVATION,
        ],
    );
    let state = book.state(None).unwrap();
    let shadowfang = &state.terms()[&test_support::records::term_id(2)];
    assert_eq!((shadowfang.put.dst.as_str(), shadowfang.put.secondary.as_ref()), ("shadowfang", None));
    let aliases: Vec<&str> = shadowfang.aliases.keys().map(String::as_str).collect();
    assert_eq!(aliases, ["beast", "beasts", "monster", "monsters"]);
}

/// The same world in the legacy 10-field shape, every `comment` empty and no
/// rendering line in the content: no entry has a rendering.
#[test]
fn sillytavern_eldoria_in_the_legacy_shape_has_no_rendering_to_import() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let report = imports(
        &mut book,
        "zh",
        "sillytavern/Eldoria.release-2024-09-28.json",
        Format::SillyTavern,
        &["skipped uid 0: no dst", "skipped uid 1: no dst", "skipped uid 2: no dst", "skipped uid 3: no dst"],
    );
    assert!(!report.written);
}

#[test]
fn galtransl_project_dictionaries_import_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("ja.lorebank"), "ja");
    imports(
        &mut book,
        "ja",
        "galtransl/GalTransl__mtbench__项目GPT字典.txt",
        Format::GalTransl,
        &[
            "new T-1 ナオミン (line 3)",
            "new T-2 ヒナミ (line 4)",
            "new T-3 まーくん (line 5)",
            "new T-4 マサオミ (line 6)",
            "new T-5 レナ (line 7)",
            "new T-6 ムラサメ (line 8)",
            "new T-7 ジュリア (line 9)",
            GALTRANSL_ACTIVATION,
        ],
    );
    let mut sample = init_book(&dir.path().join("sample.lorebank"), "ja");
    imports(
        &mut sample,
        "ja",
        "galtransl/GalTransl__sampleProject__项目GPT字典.txt",
        Format::GalTransl,
        &["new T-1 大家さん (line 2)", GALTRANSL_ACTIVATION],
    );
    // A post-dictionary read as a GPT dictionary: four lines keyed pre_jp, each a
    // sense of its own, named by its second column.
    let mut post = init_book(&dir.path().join("post.lorebank"), "ja");
    imports(
        &mut post,
        "ja",
        "galtransl/GalTransl__Dict__00通用字典_译后.txt",
        Format::GalTransl,
        &[
            "new T-1 女佣 (line 1)",
            "new T-2 pre_jp (line 3)",
            "new T-3 pre_jp (line 4)",
            "new T-4 pre_jp (line 5)",
            "new T-5 pre_jp (line 6)",
            "shared line 4: pre_jp (src) is the src of line 3: a record of its own with the sense \"(同上)\"",
            "shared line 5: pre_jp (src) is the src of line 3: a record of its own with the sense \"実家\"",
            "shared line 6: pre_jp (src) is the src of line 3: a record of its own with the sense \"!サタン\"",
            "lost column 4 ×4",
            "lost column 5 ×3",
            GALTRANSL_ACTIVATION,
        ],
    );
}

/// manga-image-translator's GalTransl glossary (Chinese to English): four-space
/// separators, two trailing spaces on every line, `\\` section lines, which
/// GalTransl reads as no entry (no tab).
#[test]
fn galtransl_manga_image_translators_glossary_trims_and_skips_its_section_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), Vec::new());
    let mut expected: Vec<String> = [
        (5, "热血"),
        (6, "魔法少女"),
        (7, "校园"),
        (8, "恋爱喜剧"),
        (11, "角色扮演"),
        (12, "视觉小说"),
        (13, "抽卡"),
        (14, "养成游戏"),
        (17, "异世界"),
        (18, "学园都市"),
        (19, "未来世界"),
        (20, "魔法王国"),
        (23, "青梅竹马"),
        (24, "后宫"),
        (25, "双马尾"),
        (26, "制服"),
    ]
    .iter()
    .enumerate()
    .map(|(index, (line, src))| format!("new T-{} {src} (line {line})", index + 1))
    .collect();
    for line in [1, 2, 4, 10, 16, 22] {
        expected.push(format!("skipped line {line}: no tab, four spaces or `->`: not an entry"));
    }
    expected.push("note whitespace around a field trimmed (GalTransl… ×16".into());
    expected.push(GALTRANSL_ACTIVATION.into());
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    imports(&mut book, "zh", "galtransl/manga-image-translator__galtransl_dict.txt", Format::GalTransl, &expected);
}

/// SakuraLLM's one gpt_dict (two one- and two-character names) and the prompt text
/// it renders to: both import to the same records, in a book that allows
/// one-character keys; a book that does not refuses the file naming the entry.
#[test]
fn sakura_the_json_gpt_dict_and_its_rendering_import_to_the_same_book() {
    let dir = tempfile::tempdir().unwrap();
    let mut strict_keys = init_book(&dir.path().join("default.lorebank"), "ja");
    let bytes = real_file("sakura/SakuraLLM__example_openai.gpt_dict.json");
    let error = strict_keys.import("gpt_dict.json", &bytes, &import_options()).unwrap_err();
    assert!(
        error.to_string().starts_with(
            "gpt_dict.json entry 1: field `term_put.src`: key \"周\" is 1 character(s), shorter than min_key_chars 2"
        ),
        "{error}"
    );
    let mut json = book_with_short_keys(&dir.path().join("json.lorebank"), "ja");
    let from_json = imports(
        &mut json,
        "ja",
        "sakura/SakuraLLM__example_openai.gpt_dict.json",
        Format::Sakura,
        &["new T-1 周 (entry 1)", "new T-2 真昼 (entry 2)", SAKURA_ACTIVATION],
    );
    let mut text = book_with_short_keys(&dir.path().join("text.lorebank"), "ja");
    let from_text = imports(
        &mut text,
        "ja",
        "sakura/SakuraLLM__example_openai.gpt_dict.rendered.txt",
        Format::SakuraText,
        &["new T-1 周 (line 1)", "new T-2 真昼 (line 2)", SAKURA_ACTIVATION],
    );
    assert_eq!(from_json.snapshot, from_text.snapshot);
}

/// manga-image-translator's Sakura dictionary: a `//` and a `\\` comment line first
/// (detected as Sakura text all the same), names that overlap as substrings.
#[test]
fn sakura_manga_image_translators_dictionary_skips_its_comment_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_with_short_keys(&dir.path().join("b.lorebank"), "ja");
    let options = ImportOptions { strict: true, ..import_options() };
    let bytes = real_file("sakura/manga-image-translator__sakura_dict.txt");
    // Nothing skipped, shared or lost: a strict import takes it.
    book.import("sakura_dict.txt", &bytes, &ImportOptions { dry_run: true, ..options }).unwrap();
    imports(
        &mut book,
        "ja",
        "sakura/manga-image-translator__sakura_dict.txt",
        Format::SakuraText,
        &[
            "new T-1 安芸倫也 (line 3)",
            "new T-2 倫也 (line 4)",
            "new T-3 安芸 (line 5)",
            "new T-4 加藤恵 (line 7)",
            "new T-5 恵 (line 8)",
            "new T-6 加藤 (line 9)",
            "new T-7 澤村・スペンサー・英梨々 (line 11)",
            "new T-8 英梨々 (line 12)",
            "new T-9 澤村 (line 13)",
            "note a line starting with `//` or… ×2",
            SAKURA_ACTIVATION,
        ],
    );
}
