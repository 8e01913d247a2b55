//! The governance use cases of a book: every read path a party has (glossary,
//! export in every format, the profile export, assembly, receipts and replay) gives
//! it nothing that is not released to it (a property test over random releases,
//! checked against an oracle written from the rule in docs/governance.md); a receipt
//! names its party and replays for it; the coverage report of the bundled book with a
//! cast list that names one missing character; the levels of the profile check; the
//! import of a cast list; the review queue by owner; the compact profile export.

use std::collections::BTreeSet;
use std::path::Path;

use book::governance::PROFILE_HEADER;
use book::{Book, Labelled, Reader, WriteOptions};
use formats::Format;
use ledger::Ledger;
use ledger_model::*;
use proptest::prelude::*;
use test_support::books::{new_zh_book, write_as, zh_config};
use test_support::records::{event, term_id};

const PARTIES: [&str; 3] = ["human:editors", "tool:pipeline", "vendor:acme"];

/// Writes as the command line makes them: each body's own default source.
fn write() -> WriteOptions {
    write_as("human:editor")
}

fn config(render_format: u16) -> Body {
    zh_config(AssemblyConfig { render_format, ..AssemblyConfig::default() })
}

fn governance(defaults: Vec<RecordDefaults>) -> Body {
    Body::GovernanceSet(GovernanceSet {
        conflict_policy: ConflictPolicy::Flag,
        parties: PARTIES.iter().map(|party| party.to_string()).collect(),
        defaults,
    })
}

/// A zh book at `path` with `bodies` appended after its config, in one batch.
fn book_with(path: &Path, bodies: Vec<Body>) -> Book {
    let mut all = vec![config(2)];
    all.extend(bodies);
    new_zh_book(path, all.into_iter().map(|body| NewEvent { source: "test-fixture".into(), ..event(body) }).collect())
}

/// Surfaces of the random book's terms, one per term, and one alias each.
const SURFACES: [&str; 6] = ["沈照", "顾寒川", "雾川", "长明灯", "夜宗", "林晚"];
// No alias is a part of another surface or rendering, so a leak is a whole word.
const ALIASES: [&str; 6] = ["阿照", "白衣先生", "雾河", "灯儿", "夜门", "晚儿"];

/// How one random term is released: its own list, its note's, its alias's, its owner.
#[derive(Clone, Debug)]
struct Released {
    release: Option<Vec<usize>>,
    note_release: Option<Vec<usize>>,
    alias_release: Option<Vec<usize>>,
    owner: Option<usize>,
}

fn parties(list: &[usize]) -> Vec<String> {
    list.iter().map(|&idx| if idx == 3 { "*".to_owned() } else { PARTIES[idx].to_owned() }).collect()
}

fn list() -> impl Strategy<Value = Option<Vec<usize>>> {
    prop::option::of(prop::collection::btree_set(0usize..4, 0..3).prop_map(|set| set.into_iter().collect()))
}

fn released() -> impl Strategy<Value = Released> {
    (list(), list(), list(), prop::option::of(0usize..3)).prop_map(|(release, note_release, alias_release, owner)| {
        Released { release, note_release, alias_release, owner }
    })
}

/// The rule of docs/governance.md, written again from the prose: a list lets a party
/// read when it names the party or `*`, or the party owns the record; no list is
/// everyone's until the book restricts anything, then only the owner's.
struct Oracle<'a> {
    terms: &'a [Released],
    default_release: Option<Vec<usize>>,
}

impl Oracle<'_> {
    fn term_list(&self, term: &Released) -> Option<Vec<usize>> {
        term.release.clone().or_else(|| self.default_release.clone())
    }

    fn restricted(&self) -> bool {
        let restricts = |list: &Option<Vec<usize>>| list.as_ref().is_some_and(|list| !list.contains(&3));
        self.terms.iter().any(|term| {
            restricts(&self.term_list(term)) || restricts(&term.note_release) || restricts(&term.alias_release)
        })
    }

    fn lets(list: &[usize], party: usize, owner: Option<usize>) -> bool {
        list.contains(&3) || list.contains(&party) || owner == Some(party)
    }

    fn reads_term(&self, term: &Released, party: usize) -> bool {
        match self.term_list(term) {
            Some(list) => Oracle::lets(&list, party, term.owner),
            None => !self.restricted() || term.owner == Some(party),
        }
    }

    fn reads_part(&self, term: &Released, part: &Option<Vec<usize>>, party: usize) -> bool {
        self.reads_term(term, party) && part.as_ref().is_none_or(|list| Oracle::lets(list, party, term.owner))
    }
}

fn random_book(path: &Path, terms: &[Released], default_release: &Option<Vec<usize>>) -> Book {
    book_with(path, release_bodies(terms, default_release, false))
}

/// The bodies that release the random book's terms as `terms` and
/// `default_release` say: the governance, every term (with its note) and its alias.
/// With `again`, the terms exist already: each is put again and its alias removed and
/// added again, so only the releases (and owners) change.
fn release_bodies(terms: &[Released], default_release: &Option<Vec<usize>>, again: bool) -> Vec<Body> {
    let defaults = default_release
        .as_ref()
        .map(|list| RecordDefaults {
            records: "term".into(),
            owner: None,
            owner_role: None,
            release_to: Some(parties(list)),
        })
        .into_iter()
        .collect();
    let mut bodies = vec![governance(defaults)];
    for (idx, released) in terms.iter().enumerate() {
        let number = idx as u32 + 1;
        bodies.push(Body::TermPut(TermPut {
            note: Some(format!("заметка-{number}")),
            release_to: released.release.as_deref().map(parties),
            note_release_to: released.note_release.as_deref().map(parties),
            owner: released.owner.map(|owner| PARTIES[owner].to_owned()),
            ..TermPut::new(term_id(number), SURFACES[idx], format!("Имя-{number}"))
        }));
        if again {
            bodies.push(Body::AliasRemoved(AliasRemoved { id: term_id(number), surface: ALIASES[idx].into() }));
        }
        bodies.push(Body::AliasAdded(AliasAdded {
            id: term_id(number),
            surface: ALIASES[idx].into(),
            kind: AliasKind::Nickname,
            window: None,
            release_to: released.alias_release.as_deref().map(parties),
        }));
    }
    bodies
}

/// Appends `bodies` to `book` in one batch at its head.
fn append(book: &mut Book, bodies: Vec<Body>) {
    let batch: Vec<NewEvent> = bodies
        .into_iter()
        .map(|body| NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "test-fixture".into(), body })
        .collect();
    book.submit(&batch, None, Vec::new()).unwrap_or_else(|error| panic!("{error}"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_party_never_receives_a_record_alias_or_note_not_released_to_it(
        terms in prop::collection::vec(released(), 2..=6),
        default_release in list(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut book = random_book(&dir.path().join("b.lorebank"), &terms, &default_release);
        let oracle = Oracle { terms: &terms, default_release: default_release.clone() };
        // A chunk naming every term by its source surface and by its alias.
        let chunk: String = (0..terms.len()).map(|idx| format!("{}和{}。", SURFACES[idx], ALIASES[idx])).collect();
        for (party_idx, party) in PARTIES.iter().enumerate() {
            let reader = Reader::Party(party.to_string());
            let visible: BTreeSet<u32> = (0..terms.len())
                .filter(|&idx| oracle.reads_term(&terms[idx], party_idx))
                .map(|idx| idx as u32 + 1)
                .collect();
            // Glossary.
            let glossary = book.glossary(&reader, None, None).unwrap();
            let seen: BTreeSet<u32> = glossary.state.terms().keys().map(|id| id.number()).collect();
            prop_assert_eq!(&seen, &visible, "{} glossary", party);
            for (id, term) in glossary.state.terms() {
                let idx = id.number() as usize - 1;
                prop_assert_eq!(term.put.note.is_some(), oracle.reads_part(&terms[idx], &terms[idx].note_release, party_idx));
                prop_assert_eq!(
                    term.aliases.contains_key(ALIASES[idx]),
                    oracle.reads_part(&terms[idx], &terms[idx].alias_release, party_idx)
                );
            }
            // What must never reach the party, as text.
            let mut hidden: Vec<String> = Vec::new();
            for (idx, term) in terms.iter().enumerate() {
                let number = idx + 1;
                if !oracle.reads_term(term, party_idx) {
                    hidden.push(format!("Имя-{number}"));
                }
                if !oracle.reads_part(term, &term.note_release, party_idx) {
                    hidden.push(format!("заметка-{number}"));
                }
                if !oracle.reads_part(term, &term.alias_release, party_idx) {
                    hidden.push(ALIASES[idx].to_owned());
                }
            }
            let leaks = |what: &str, text: &str| -> Result<(), TestCaseError> {
                for secret in &hidden {
                    prop_assert!(!text.contains(secret.as_str()), "{} {}: {:?} leaked", party, what, secret);
                }
                Ok(())
            };
            for format in Format::ALL {
                if format.name().ends_with("xlsx") {
                    continue; // Zipped: the same writer input as the csv/json forms.
                }
                match book.export(&reader, format, None, None, None) {
                    Ok(export) => leaks(format.name(), &String::from_utf8_lossy(&export.bytes))?,
                    // TBX holds at least one concept: a party that sees no term gets none.
                    Err(error) => prop_assert!(visible.is_empty() && matches!(format, Format::Tbx | Format::Tbx2008), "{}", error),
                }
            }
            leaks("profile export", &book.export_profile(&reader, None).unwrap().text)?;
            // Assembly: only visible terms are hit, and an alias not released finds nothing.
            let assembled = book.assemble_chunk(&reader, 1, party, &chunk, None, true).unwrap();
            leaks("context", &assembled.assembly.context)?;
            for hit in &assembled.assembly.hits {
                prop_assert!(visible.contains(&hit.term), "{} hit T-{}", party, hit.term);
                prop_assert!(!hidden.contains(&hit.text), "{} hit by hidden alias {}", party, hit.text);
            }
            prop_assert_eq!(assembled.receipt.party.as_deref(), Some(*party));
            // The receipt replays for its party, byte for byte; another party cannot read it.
            let id = assembled.id.to_hex();
            prop_assert!(book.replay(&reader, &id).unwrap().identical);
            prop_assert!(book.replay(&Reader::Full, &id).unwrap().identical);
            let other = Reader::Party(PARTIES[(party_idx + 1) % 3].to_owned());
            prop_assert!(book.replay(&other, &id).is_err());
            prop_assert!(book.receipt_for(&other, &id).is_err());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The history rule of docs/governance.md: at a past revision a party reads only
    /// what was released to it then *and* is released to it at the head. The book
    /// releases its terms one way (`then`), records a receipt per party, then releases
    /// them another way (`now`); every read at the first revision is held to both
    /// oracles, and a party's receipt stays its own only while the head withdraws
    /// nothing it names.
    #[test]
    fn at_a_past_revision_a_party_receives_only_what_is_released_to_it_then_and_now(
        (then, now) in (2usize..=6).prop_flat_map(|n| {
            (prop::collection::vec(released(), n), prop::collection::vec(released(), n))
        }),
        then_default in list(),
        now_default in list(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut book = random_book(&dir.path().join("b.lorebank"), &then, &then_default);
        let past = book.ledger().head().unwrap().seq;
        let chunk: String = (0..then.len()).map(|idx| format!("{}和{}。", SURFACES[idx], ALIASES[idx])).collect();
        let receipts: Vec<String> = PARTIES
            .iter()
            .map(|party| {
                let reader = Reader::Party(party.to_string());
                book.assemble_chunk(&reader, 1, party, &chunk, None, true).unwrap().id.to_hex()
            })
            .collect();
        let snapshot = book.snapshot_info(None).unwrap().snapshot;
        append(&mut book, release_bodies(&now, &now_default, true));
        let old = Oracle { terms: &then, default_release: then_default.clone() };
        let new = Oracle { terms: &now, default_release: now_default.clone() };
        for (party_idx, party) in PARTIES.iter().enumerate() {
            let reader = Reader::Party(party.to_string());
            let term_read = |idx: usize| old.reads_term(&then[idx], party_idx) && new.reads_term(&now[idx], party_idx);
            let note_read = |idx: usize| {
                old.reads_part(&then[idx], &then[idx].note_release, party_idx)
                    && new.reads_part(&now[idx], &now[idx].note_release, party_idx)
            };
            let alias_read = |idx: usize| {
                old.reads_part(&then[idx], &then[idx].alias_release, party_idx)
                    && new.reads_part(&now[idx], &now[idx].alias_release, party_idx)
            };
            // The glossary at the past revision.
            let glossary = book.glossary(&reader, Some(past), None).unwrap();
            let seen: BTreeSet<u32> = glossary.state.terms().keys().map(|id| id.number()).collect();
            let visible: BTreeSet<u32> =
                (0..then.len()).filter(|&idx| term_read(idx)).map(|idx| idx as u32 + 1).collect();
            prop_assert_eq!(&seen, &visible, "{} glossary at {}", party, past);
            for (id, term) in glossary.state.terms() {
                let idx = id.number() as usize - 1;
                prop_assert_eq!(term.put.note.is_some(), note_read(idx), "{} note of {}", party, id);
                prop_assert_eq!(term.aliases.contains_key(ALIASES[idx]), alias_read(idx), "{} alias of {}", party, id);
            }
            // Nothing hidden then or now reaches the party as text, by any read at the past revision.
            let mut hidden: Vec<String> = Vec::new();
            for (idx, alias) in ALIASES.iter().enumerate().take(then.len()) {
                let number = idx + 1;
                if !term_read(idx) {
                    hidden.push(format!("Имя-{number}"));
                }
                if !note_read(idx) {
                    hidden.push(format!("заметка-{number}"));
                }
                if !alias_read(idx) {
                    hidden.push(alias.to_string());
                }
            }
            let leaks = |what: &str, text: &str| -> Result<(), TestCaseError> {
                for secret in &hidden {
                    prop_assert!(!text.contains(secret.as_str()), "{} {} at {}: {:?} leaked", party, what, past, secret);
                }
                Ok(())
            };
            for format in Format::ALL {
                if format.name().ends_with("xlsx") {
                    continue;
                }
                match book.export(&reader, format, None, Some(past), None) {
                    Ok(export) => leaks(format.name(), &String::from_utf8_lossy(&export.bytes))?,
                    Err(error) => prop_assert!(visible.is_empty() && matches!(format, Format::Tbx | Format::Tbx2008), "{}", error),
                }
            }
            leaks("profile export", &book.export_profile(&reader, Some(past)).unwrap().text)?;
            let assembly = book.assemble_at_snapshot(&reader, snapshot, 1, &chunk).unwrap();
            leaks("assembly at the past snapshot", &assembly.context)?;
            for hit in &assembly.hits {
                prop_assert!(visible.contains(&hit.term), "{} hit T-{} at the past snapshot", party, hit.term);
            }
            // The receipt of the past revision: the party's own while the head withdraws
            // nothing it named (every term then visible, with its note and alias), and
            // then it replays byte for byte; the full view always reads it.
            let withdrawn = (0..then.len()).any(|idx| {
                old.reads_term(&then[idx], party_idx)
                    && (!new.reads_term(&now[idx], party_idx)
                        || (old.reads_part(&then[idx], &then[idx].note_release, party_idx) && !note_read(idx))
                        || (old.reads_part(&then[idx], &then[idx].alias_release, party_idx) && !alias_read(idx)))
            });
            let id = &receipts[party_idx];
            match book.replay(&reader, id) {
                Ok(replayed) => {
                    prop_assert!(!withdrawn, "{} replayed a receipt naming a withdrawn record", party);
                    prop_assert!(replayed.identical);
                }
                Err(error) => prop_assert!(withdrawn, "{} refused its receipt: {}", party, error),
            }
            prop_assert_eq!(book.receipt_for(&reader, id).is_ok(), !withdrawn);
            prop_assert!(book.replay(&Reader::Full, id).unwrap().identical);
        }
    }
}

/// A party the head does not declare is refused at every revision, even one whose
/// governance declared it; one the head declares reads a revision that declared none.
#[test]
fn a_party_is_checked_against_the_head_at_every_revision() {
    let dir = tempfile::tempdir().unwrap();
    let declaring = |parties: &[&str]| {
        Body::GovernanceSet(GovernanceSet {
            conflict_policy: ConflictPolicy::Flag,
            parties: parties.iter().map(|party| party.to_string()).collect(),
            defaults: Vec::new(),
        })
    };
    let mut book = book_with(
        &dir.path().join("b.lorebank"),
        vec![
            declaring(&["human:editors", "vendor:acme"]),
            Body::TermPut(TermPut::new(term_id(1), "沈照", "Шэнь Чжао")),
        ],
    );
    let past = book.ledger().head().unwrap().seq;
    append(&mut book, vec![declaring(&["human:editors", "tool:pipeline"])]);
    let dropped = Reader::Party("vendor:acme".into());
    let error = book.glossary(&dropped, Some(past), None).unwrap_err().to_string();
    assert!(error.contains("\"vendor:acme\" is not one of the book's parties"), "{error}");
    assert!(book.export(&dropped, Format::GalTransl, None, Some(past), None).is_err());
    assert!(book.export_profile(&dropped, Some(past)).is_err());
    let snapshot = book.snapshot_info(Some(past)).unwrap().snapshot;
    assert!(book.assemble_at_snapshot(&dropped, snapshot, 1, "沈照").is_err());
    let added = Reader::Party("tool:pipeline".into());
    assert_eq!(book.glossary(&added, Some(past), None).unwrap().state.terms().len(), 1);
}

#[test]
fn an_undeclared_party_is_refused_and_a_book_without_governance_is_everyones() {
    let dir = tempfile::tempdir().unwrap();
    let mut plain = book_with(
        &dir.path().join("plain.lorebank"),
        vec![Body::TermPut(TermPut::new(term_id(1), "沈照", "Шэнь Чжао"))],
    );
    let anyone = Reader::Party("tool:anyone".into());
    assert_eq!(plain.glossary(&anyone, None, None).unwrap().state.terms().len(), 1);
    let mut governed = book_with(
        &dir.path().join("governed.lorebank"),
        vec![governance(Vec::new()), Body::TermPut(TermPut::new(term_id(1), "沈照", "Шэнь Чжао"))],
    );
    let error = governed.glossary(&anyone, None, None).unwrap_err().to_string();
    assert!(error.contains("\"tool:anyone\" is not one of the book's parties"), "{error}");
    assert!(governed.assemble_chunk(&anyone, 1, "1", "沈照", None, false).is_err());
}

#[test]
fn a_party_assembles_with_a_view_that_is_its_own_in_cache_and_receipts() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_with(
        &dir.path().join("b.lorebank"),
        vec![
            governance(Vec::new()),
            Body::TermPut(TermPut {
                release_to: Some(vec!["*".into()]),
                ..TermPut::new(term_id(1), "沈照", "Шэнь Чжао")
            }),
            Body::TermPut(TermPut {
                release_to: Some(vec![PARTIES[0].into()]),
                ..TermPut::new(term_id(2), "顾寒川", "Глава Ночной секты")
            }),
        ],
    );
    let text = "沈照看着顾寒川。";
    let editors = book.assemble_chunk(&Reader::Party(PARTIES[0].into()), 1, "1", text, None, true).unwrap();
    let pipeline = book.assemble_chunk(&Reader::Party(PARTIES[1].into()), 1, "1", text, None, true).unwrap();
    let full = book.assemble_chunk(&Reader::Full, 1, "1", text, None, true).unwrap();
    assert!(editors.assembly.context.contains("Глава Ночной секты"));
    assert!(!pipeline.assembly.context.contains("Глава Ночной секты"));
    assert_eq!(full.assembly.context, editors.assembly.context);
    // One snapshot, three receipts: each names whom it was assembled for.
    assert_eq!(editors.receipt.snapshot, pipeline.receipt.snapshot);
    assert_ne!(editors.id, pipeline.id);
    assert_eq!((full.receipt.party.as_deref(), full.receipt.format), (None, 2));
    // Replayed in a fresh book handle (caches refolded), each gives its own bytes.
    drop(book);
    let mut book = Book::open(&dir.path().join("b.lorebank")).unwrap();
    book.ledger().cache_clear().unwrap();
    for assembled in [&editors, &pipeline, &full] {
        let replayed = book.replay(&Reader::Full, &assembled.id.to_hex()).unwrap();
        assert!(replayed.identical);
        assert_eq!(replayed.context, assembled.assembly.context);
    }
    // A receipt of another party cannot feed the sticky set of this one.
    let prev = Some(editors.id);
    let error = book.assemble_chunk(&Reader::Party(PARTIES[1].into()), 1, "2", text, prev, false).unwrap_err();
    assert!(error.to_string().contains("was assembled for party human:editors"), "{error}");
}

/// The bundled example book at `path`: its glossary applied as `lorebank apply` does.
fn example_book(path: &Path) -> Book {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let glossary = std::fs::read_to_string(root.join("examples/wuchuan/glossary.jsonl")).unwrap();
    let mut bodies: Vec<Labelled> = glossary
        .lines()
        .enumerate()
        .map(|(idx, line)| Labelled {
            label: format!("glossary.jsonl line {}", idx + 1),
            default_source: format!("glossary.jsonl:{}", idx + 1),
            body: serde_json::from_str(line).unwrap(),
        })
        .collect();
    let blobs = book::service::fill_profiles(&mut bodies).unwrap();
    let mut book = Book::new(Ledger::create(path).unwrap());
    let write = WriteOptions { actor: "import:example".into(), source: None, expect_head: None, recorded_at_ms: 0 };
    book.submit_labelled(&write, bodies, blobs).unwrap();
    for chapter in 1..=5u32 {
        let text = std::fs::read_to_string(root.join(format!("examples/wuchuan/chapters/{chapter:02}.txt"))).unwrap();
        let mut prev = None;
        for (chunk_idx, chunk) in text.split("\n---\n").enumerate() {
            let key = (chunk_idx + 1).to_string();
            let assembled = book.assemble_chunk(&Reader::Full, chapter, &key, chunk, prev, true).unwrap();
            prev = Some(assembled.id);
        }
    }
    book
}

#[test]
fn the_coverage_report_of_the_bundled_book_names_the_character_the_cast_list_misses() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = example_book(&dir.path().join("wuchuan.lorebank"));
    // The publisher's cast list: three characters the glossary has, and 师姐 (the
    // senior sister of chapter 5), which it does not.
    let cast = "# cast list\n沈照\tcharacter\n顾寒川\tcharacter\n师姐\tcharacter\n白衣先生\n";
    let imported = book.expect_import("cast.txt", cast.as_bytes(), None, false, &write()).unwrap();
    assert_eq!(imported.added.len(), 4);
    assert_eq!(imported.added[2].at, "cast.txt:4");
    let coverage = book.coverage(None).unwrap();
    assert_eq!(coverage.n_expected, 4);
    let missing: Vec<&str> = coverage.missing.iter().map(|missing| missing.concept.surface.as_str()).collect();
    assert_eq!(missing, ["师姐"]);
    assert_eq!(coverage.missing[0].put_by.source, "cast.txt:4");
    // Where an expected surface occurs and nothing was injected for it: 师姐 in chapter
    // 5 (no record), and 白衣先生 after chapter 3 (its record's window ended).
    let uncovered: Vec<(u32, &str, &str, Option<String>)> = coverage
        .uncovered
        .iter()
        .map(|u| (u.chapter, u.chunk_key.as_str(), u.surface.as_str(), u.covered_by.map(|id| id.to_string())))
        .collect();
    assert!(uncovered.contains(&(5, "2", "师姐", None)), "{uncovered:?}");
    assert!(uncovered.iter().all(|(_, _, surface, _)| *surface != "沈照" && *surface != "顾寒川"), "{uncovered:?}");
    // The audit of chapter 5 carries the report of its chunks.
    let audit = book.audit(5).unwrap();
    assert!(audit.coverage.uncovered.iter().all(|u| u.chapter == 5));
    assert_eq!(audit.coverage.missing.len(), 1);
    // Importing the same list again registers nothing.
    let again = book.expect_import("cast.txt", cast.as_bytes(), None, false, &write()).unwrap();
    assert!(again.added.is_empty() && again.written.is_none());
    assert_eq!(again.unchanged.len(), 4);
}

#[test]
fn a_cast_list_is_read_from_plain_lines_or_a_glossary_format_and_bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_with(&dir.path().join("b.lorebank"), Vec::new());
    let head = |book: &Book| book.ledger().head().unwrap().seq;
    let before = head(&book);
    let dry = book.expect_import("cast.txt", "\u{feff}沈照\n".as_bytes(), None, true, &write()).unwrap();
    assert_eq!((dry.added.len(), head(&book)), (1, before));
    for (bytes, message) in [
        (&b"# only a comment\n\n"[..], "no concepts"),
        (&b"\xff\xfe"[..], "not UTF-8"),
        ("沈照\tnot a kind\n".as_bytes(), "kind"),
        ("沈照\n沈照\tplace\n".as_bytes(), "is also written, differently, by cast.txt:1"),
    ] {
        let error = book.expect_import("cast.txt", bytes, None, false, &write()).unwrap_err().to_string();
        assert!(error.contains(message), "{message}: {error}");
        assert_eq!(head(&book), before);
    }
    let galtransl = "沈照\tШэнь Чжао\n顾寒川\tГу Ханьчуань\t#character\n";
    let imported =
        book.expect_import("gpt.txt", galtransl.as_bytes(), Some(Format::GalTransl), false, &write()).unwrap();
    let surfaces: Vec<&str> = imported.added.iter().map(|entry| entry.concept.surface.as_str()).collect();
    assert_eq!(surfaces, ["沈照", "顾寒川"]);
    assert_eq!(imported.added[0].at, "gpt.txt:1");
}

fn requirement<'r>(report: &'r book::governance::ProfileReport, field: &str) -> &'r book::governance::Requirement {
    report.requirements.iter().find(|requirement| requirement.field == field).unwrap()
}

#[test]
fn the_profile_check_reports_each_level_and_names_the_records_that_fail() {
    let dir = tempfile::tempdir().unwrap();
    let shen = TermPut::new(term_id(1), "沈照", "Шэнь Чжао");
    let gu = TermPut::new(term_id(2), "顾寒川", "Гу Ханьчуань");
    let mut book = book_with(&dir.path().join("b.lorebank"), vec![Body::TermPut(shen.clone()), Body::TermPut(gu)]);
    // Level 1: ids and windows; no owner, no conflict policy.
    let report = book.profile_check().unwrap();
    assert_eq!(report.level, 1);
    assert_eq!(requirement(&report, "concept_owner").failing, [term_id(1), term_id(2)]);
    assert!(requirement(&report, "conflict_policy").failed_book);
    assert!(requirement(&report, "source").holds());
    // Owners by default and a declared policy: level 2, but a term re-put from the
    // command line without a source fails `source`.
    let owners = RecordDefaults {
        records: "*".into(),
        owner: Some(PARTIES[0].into()),
        owner_role: Some("chief editor".into()),
        release_to: None,
    };
    book.submit_labelled(&write(), Labelled::numbered(vec![governance(vec![owners.clone()])], "cli"), Vec::new())
        .unwrap();
    assert_eq!(book.profile_check().unwrap().level, 3, "nothing restricted: release_to is not asked");
    let cli = WriteOptions { source: None, ..write() };
    let renamed = TermPut { dst: "Шэнь Чжао!".into(), ..shen };
    book.submit_labelled(&cli, Labelled::numbered(vec![Body::TermPut(renamed)], "cli"), Vec::new()).unwrap();
    let report = book.profile_check().unwrap();
    assert_eq!((report.level, requirement(&report, "source").failing.clone()), (1, vec![term_id(1)]));
    // A rule that does not declare what it does not govern fails level 2.
    let rule = RulePut {
        id: RecordId::new(RecordKind::Rule, 1).unwrap(),
        text: "На «вы».".into(),
        applies_to: vec![Selector::Dialogue],
        does_not_apply_to: None,
        window: Window::default(),
        status: Status::Approved,
        priority: 0,
        owner: None,
        owner_role: None,
        release_to: None,
    };
    let fixed = TermPut { dst: "Шэнь Чжао".into(), ..TermPut::new(term_id(1), "沈照", "Шэнь Чжао") };
    book.submit_labelled(
        &write(),
        Labelled::numbered(vec![Body::TermPut(fixed), Body::RulePut(rule.clone())], "x"),
        Vec::new(),
    )
    .unwrap();
    let report = book.profile_check().unwrap();
    assert_eq!(report.level, 1);
    assert_eq!(requirement(&report, "does_not_apply_to").failing, [rule.id]);
    // Restricting a note asks every record for a release list: level 2 until the
    // default gives one.
    let rule = RulePut { does_not_apply_to: Some(Vec::new()), ..rule };
    let restricted = TermPut {
        note: Some("тайна".into()),
        note_release_to: Some(vec![PARTIES[0].into()]),
        ..TermPut::new(term_id(2), "顾寒川", "Гу Ханьчуань")
    };
    book.submit_labelled(
        &write(),
        Labelled::numbered(vec![Body::RulePut(rule.clone()), Body::TermPut(restricted)], "x"),
        Vec::new(),
    )
    .unwrap();
    let report = book.profile_check().unwrap();
    assert_eq!(report.level, 2);
    assert_eq!(requirement(&report, "release_to").failing, [term_id(1), term_id(2), rule.id]);
    let released = RecordDefaults { release_to: Some(vec!["*".into()]), ..owners };
    book.submit_labelled(&write(), Labelled::numbered(vec![governance(vec![released])], "x"), Vec::new()).unwrap();
    assert_eq!(book.profile_check().unwrap().level, 3);
}

#[test]
fn the_profile_export_is_one_line_per_record_in_the_fixed_field_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book_with(
        &dir.path().join("b.lorebank"),
        vec![
            governance(Vec::new()),
            Body::TermPut(TermPut {
                window: Window { since: 1, until: Some(3) },
                owner: Some(PARTIES[0].into()),
                owner_role: Some("names editor".into()),
                release_to: Some(vec!["*".into()]),
                ..TermPut::new(term_id(2), "顾寒川", "Гу Ханьчуань")
            }),
            Body::TermPut(TermPut {
                window: Window { since: 4, until: None },
                supersedes: Some(term_id(2)),
                sense: Some("master".into()),
                ..TermPut::new(term_id(4), "顾寒川", "Глава | Ночной секты")
            }),
        ],
    );
    let export = book.export_profile(&Reader::Full, None).unwrap();
    let lines: Vec<&str> = export.text.lines().collect();
    assert_eq!(
        lines,
        [
            PROFILE_HEADER,
            "T-2|1|3|test-fixture|human:editors|names editor||*|顾寒川 -> Гу Ханьчуань",
            "T-4|4||test-fixture|||T-2||顾寒川 (master) -> Глава \\| Ночной секты",
        ]
    );
    assert_eq!(export.n_records, 2);
}

#[test]
fn the_review_queue_says_whom_to_ask_and_filters_by_owner() {
    let dir = tempfile::tempdir().unwrap();
    let names = RecordDefaults {
        records: "term:character".into(),
        owner: Some(PARTIES[0].into()),
        owner_role: Some("names editor".into()),
        release_to: None,
    };
    let mut book = book_with(
        &dir.path().join("b.lorebank"),
        vec![
            governance(vec![names]),
            Body::TermPut(TermPut {
                kind: Some("character".into()),
                status: Status::Auto,
                ..TermPut::new(term_id(1), "沈照", "Шэнь Чжао")
            }),
            Body::TermPut(TermPut {
                owner: Some(PARTIES[2].into()),
                status: Status::Draft,
                ..TermPut::new(term_id(2), "雾川", "Мглистая река")
            }),
        ],
    );
    let all = book.review_list(None).unwrap();
    let owners: Vec<(String, Option<&str>)> = all.iter().map(|item| (item.id().to_string(), item.owner())).collect();
    assert_eq!(owners, [("T-1".to_owned(), Some(PARTIES[0])), ("T-2".to_owned(), Some(PARTIES[2]))]);
    let mine = book.review_list(Some(PARTIES[2])).unwrap();
    assert_eq!(mine.iter().map(|item| item.id()).collect::<Vec<_>>(), [term_id(2)]);
    assert!(book.review_list(Some(PARTIES[1])).unwrap().is_empty());
}
