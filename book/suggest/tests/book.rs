//! The embedding tier on real books with the committed tiny model: the model's
//! identity recorded as configuration outside the snapshot; vectors refreshed once per
//! term version, stale after a model change or an edit, dropped and recomputed when
//! they do not decode; suggestions and dedupe pairs scored and ordered as an oracle
//! computed from the model's formula says, proposed once, with low trust, and what
//! accepting each does; every bad model file refused precisely with nothing written.

mod common;

use std::ops::ControlFlow;

use book::review::{Acceptance, ReviewItem};
use book::{Book, Labelled, TermEdit};
use common::*;
use ledger_model::*;
use suggest::{Model, ModelFiles, SuggestError, SuggestOptions, VECTORS_SET};

/// T-1 萧炎, T-2 药老, T-3 林动 and T-4 薰儿: every character in the tiny vocabulary.
fn four_terms() -> Vec<Body> {
    vec![
        term("T-1", "萧炎", "Сяо Янь"),
        term("T-2", "药老", "Яо Лао"),
        term("T-3", "林动", "Линь Дун"),
        term("T-4", "薰儿", "Сюнь Эр"),
    ]
}

/// Quoted names (a strong cue of the name alarm) that no term covers: 炎龙 (near
/// 萧炎), 林月 four times (near 林动), 药心 (near 药老).
const CHUNK: &str = "萧炎看着天空。“炎龙”来了。“林月，你好。”萧炎说：“药心”。林月和林月和林月。";

/// A book of `bodies` with the tiny model set and refreshed.
fn refreshed(path: &std::path::Path, bodies: Vec<Body>) -> (Book, Model) {
    let mut book = zh_book(path, bodies);
    suggest::set_model(&mut book, &tiny(), &tiny_options(), &write()).unwrap();
    let mut model = Model::for_book(&mut book, &tiny()).unwrap();
    suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    (book, model)
}

fn head(book: &mut Book) -> Seq {
    book.state(None).unwrap().revision()
}

fn vector_keys(book: &Book) -> Vec<Vec<u8>> {
    book.ledger().derived_keys(VECTORS_SET).unwrap()
}

#[test]
fn the_model_identity_is_configuration_outside_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), four_terms());
    let snapshot = book.state(None).unwrap().snapshot_id();
    let set = suggest::set_model(&mut book, &tiny(), &tiny_options(), &write()).unwrap();
    assert!(set.written.is_some() && set.replaced.is_none());
    let model = Model::for_book(&mut book, &tiny()).unwrap();
    assert_eq!(model.id(), set.id, "the id the vectors are filed under is the embed identity id");
    assert_eq!(suggest::identity_of(&set.set), *model.identity());
    assert_eq!((set.set.dim, set.set.pooling, set.set.normalized), (32, EmbeddingPooling::Mean, true));
    assert_eq!(set.set.output.as_deref(), Some("last_hidden_state"));
    let state = book.state(None).unwrap();
    assert_eq!(state.embedding_model().unwrap().0, &set.set);
    assert_eq!(state.snapshot_id(), snapshot);
    // The same model again writes nothing.
    let again = suggest::set_model(&mut book, &tiny(), &tiny_options(), &write()).unwrap();
    assert!(again.written.is_none() && again.replaced.is_none());
    let status = suggest::status(&mut book).unwrap();
    assert_eq!((status.n_terms, status.n_fresh, status.n_missing, status.n_stale), (4, 0, 4, 0));
}

#[test]
fn refresh_embeds_each_term_version_once_and_an_edit_makes_only_that_term_stale() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), four_terms());
    suggest::set_model(&mut book, &tiny(), &tiny_options(), &write()).unwrap();
    let mut model = Model::for_book(&mut book, &tiny()).unwrap();
    let mut calls = Vec::new();
    let first = suggest::refresh(&mut book, &mut model, false, |done, total| calls.push((done, total))).unwrap();
    assert_eq!((first.n_terms, first.n_kept, first.n_embedded, first.n_texts, first.n_dropped), (4, 0, 4, 8, 0));
    assert_eq!(calls.first(), Some(&(0, 4)));
    assert_eq!(calls.last(), Some(&(4, 4)));
    let status = suggest::status(&mut book).unwrap();
    assert_eq!((status.n_fresh, status.n_missing, status.n_stale, status.n_entries), (4, 0, 0, 4));
    // 4 entries of 2 texts × 32 components: each 64 bytes of key, 32 of checksum,
    // 1 + 1 + 3 + 4 + 2 of header and 2 × (2 + 128) of rows, and the set name.
    assert_eq!(status.n_bytes, 4 * (VECTORS_SET.len() as u64 + 64 + 32 + 11 + 260));
    let again = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    assert_eq!((again.n_kept, again.n_embedded, again.n_dropped), (4, 0, 0));
    // A new gender changes no text: the vectors stay.
    let edit = TermEdit { gender: Some(Some(Gender::Masculine)), ..TermEdit::default() };
    book.term_edit(id("T-2"), &edit, &write()).unwrap();
    assert_eq!(suggest::status(&mut book).unwrap().n_fresh, 4);
    // A new rendering and a new alias each make their term stale.
    let edit = TermEdit { dst: Some("Старейшина Яо".into()), ..TermEdit::default() };
    book.term_edit(id("T-2"), &edit, &write()).unwrap();
    let alias =
        AliasAdded {
            id: id("T-1"), surface: "炎儿".into(), kind: AliasKind::Nickname, window: None, release_to: None
        };
    book.submit_labelled(&write(), Labelled::numbered(vec![Body::AliasAdded(alias)], "test"), Vec::new()).unwrap();
    let status = suggest::status(&mut book).unwrap();
    assert_eq!((status.n_fresh, status.n_missing, status.n_stale), (2, 2, 2));
    let third = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    assert_eq!((third.n_kept, third.n_embedded, third.n_texts, third.n_dropped), (2, 2, 5, 2));
    // A retired term's vectors go with the next refresh; `all` recomputes the rest.
    book.submit_labelled(
        &write(),
        Labelled::numbered(vec![Body::TermRetired(TermRetired { id: id("T-4"), reason: None })], "test"),
        Vec::new(),
    )
    .unwrap();
    let fourth = suggest::refresh(&mut book, &mut model, true, |_, _| {}).unwrap();
    assert_eq!((fourth.n_terms, fourth.n_kept, fourth.n_embedded, fourth.n_dropped), (3, 0, 3, 1));
    assert_eq!(vector_keys(&book).len(), 3);
}

#[test]
fn a_model_change_makes_every_vector_stale_until_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, mut old_model) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    let snapshot = book.state(None).unwrap().snapshot_id();
    let other = suggest::ModelOptions { normalize: false, ..tiny_options() };
    let set = suggest::set_model(&mut book, &tiny(), &other, &write()).unwrap();
    assert!(set.replaced.is_some(), "the model replaced another");
    assert_eq!(book.state(None).unwrap().snapshot_id(), snapshot);
    let status = suggest::status(&mut book).unwrap();
    assert_eq!((status.n_fresh, status.n_missing, status.n_stale), (0, 4, 4));
    // The model loaded before the change is not the book's model any more.
    let error = suggest::refresh(&mut book, &mut old_model, false, |_, _| {}).unwrap_err();
    assert!(matches!(error, SuggestError::NotTheBooksModel { .. }), "{error}");
    assert_eq!(suggest::status(&mut book).unwrap().n_stale, 4, "a refused refresh writes nothing");
    let mut model = Model::for_book(&mut book, &tiny()).unwrap();
    let error =
        suggest::suggest(&mut book, &mut model, 1, "1", CHUNK, &SuggestOptions::default(), &write()).unwrap_err();
    assert!(matches!(error, SuggestError::Stale { n_missing: 4, n_terms: 4, .. }), "{error}");
    assert!(error.to_string().contains("lorebank embed refresh"), "{error}");
    let refreshed = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    assert_eq!((refreshed.n_embedded, refreshed.n_dropped), (4, 4));
    assert_eq!(suggest::status(&mut book).unwrap().n_fresh, 4);
}

/// The oracle's nearest term of `span` among `terms` (source surfaces), ties to the
/// lower id, and its score.
fn oracle_nearest(span: &str, terms: &[(&str, &str)]) -> (RecordId, i64) {
    let mut best: Option<(RecordId, i64)> = None;
    for (term, src) in terms {
        let score = oracle_score(span, src);
        if best.is_none_or(|(_, best_score)| score > best_score) {
            best = Some((id(term), score));
        }
    }
    best.unwrap()
}

fn candidates_of(book: &mut Book) -> Vec<CandidateProposed> {
    book.state(None).unwrap().candidates().values().map(|candidate| candidate.proposed.clone()).collect()
}

#[test]
fn suggestions_follow_the_oracle_and_a_second_run_proposes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    let snapshot = book.state(None).unwrap().snapshot_id();
    let terms = [("T-1", "萧炎"), ("T-2", "药老"), ("T-3", "林动"), ("T-4", "薰儿")];
    // A dry run writes nothing and says what would be proposed.
    let head_before = head(&mut book);
    let dry = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(500_000), dry_run: true, ..SuggestOptions::default() },
        &write(),
    )
    .unwrap();
    assert_eq!(head(&mut book), head_before);
    assert!(dry.written.is_none());
    let surfaces: Vec<&str> = dry.spans.iter().map(|span| span.sighting.surface.as_str()).collect();
    assert_eq!(surfaces, ["炎龙", "林月", "药心", "林月", "林月", "林月"]);
    for span in &dry.spans {
        let (nearest, role, text, score) = span.nearest.clone().unwrap();
        let (expected, expected_score) = oracle_nearest(&span.sighting.surface, &terms);
        assert_eq!((nearest, role), (expected, suggest::Role::Src), "{}", span.sighting.surface);
        assert_eq!(text, terms.iter().find(|(term, _)| id(term) == expected).unwrap().1);
        assert!(
            (i64::from(score) - expected_score).abs() <= 2,
            "{}: {score} vs {expected_score}",
            span.sighting.surface
        );
    }
    // With the minimum over 炎龙's score (0.544) and under the others' (0.585, 0.594).
    let written = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(560_000), ..SuggestOptions::default() },
        &write(),
    )
    .unwrap();
    assert!(written.written.is_some());
    let proposed = &written.proposed;
    let summary: Vec<(RecordId, &str, Option<RecordId>)> =
        proposed.iter().map(|candidate| (candidate.id, candidate.surface.as_str(), candidate.related)).collect();
    assert_eq!(summary, [(id("C-1"), "林月", Some(id("T-3"))), (id("C-2"), "药心", Some(id("T-2")))]);
    for candidate in proposed {
        assert_eq!((candidate.origin, candidate.trust, candidate.duplicate), (Origin::Embedding, Trust::Low, None));
        let (_, expected) = oracle_nearest(&candidate.surface, &terms);
        assert!((i64::from(candidate.score.unwrap()) - expected).abs() <= 2);
    }
    let evidence = proposed[0].evidence.as_deref().unwrap();
    assert_eq!(evidence.lines().next(), Some("sightings: 4"), "{evidence}");
    assert!(evidence.lines().nth(1).unwrap().starts_with("ch1/1@15-17 near T-3 src 林动 0.594"), "{evidence}");
    assert!(evidence.contains("«“林月，你好。”»"), "{evidence}");
    let events = &written.written.as_ref().unwrap().submitted.decision.events;
    assert!(events.iter().all(|event| event.actor == "tool:embed" && event.source == "ch1/1"), "{events:?}");
    // Nothing of it reaches a snapshot; the same chunk again changes nothing.
    assert_eq!(book.state(None).unwrap().snapshot_id(), snapshot);
    let before = candidates_of(&mut book);
    let again = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(560_000), ..SuggestOptions::default() },
        &write(),
    )
    .unwrap();
    assert!(again.written.is_none() && again.proposed.is_empty());
    assert_eq!(
        again.spans.iter().filter_map(|span| span.candidate).collect::<Vec<_>>(),
        [id("C-1"), id("C-2"), id("C-1"), id("C-1"), id("C-1")]
    );
    assert_eq!(candidates_of(&mut book), before);
    // Another chunk with the same name adds a sighting to the same candidate.
    let other = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "2",
        "“林月”",
        &SuggestOptions { min_score: Some(560_000), ..SuggestOptions::default() },
        &write(),
    )
    .unwrap();
    assert_eq!(other.proposed.iter().map(|candidate| candidate.id).collect::<Vec<_>>(), [id("C-1")]);
    assert!(other.proposed[0].evidence.as_deref().unwrap().starts_with("sightings: 5"));
    // The queue shows them with their scores, below the candidates of normal trust.
    book.scan_names(1, "9", "空空道人笑道：“空空道人来也。”", false, &write()).unwrap();
    let items = book.review_list(None).unwrap();
    let trusts: Vec<(Trust, Option<i32>)> = items
        .iter()
        .filter_map(|item| match item {
            ReviewItem::Candidate { proposed, .. } => Some((proposed.trust, proposed.score)),
            _ => None,
        })
        .collect();
    assert_eq!(trusts.first().map(|(trust, _)| *trust), Some(Trust::Normal), "{trusts:?}");
    let low: Vec<i32> =
        trusts.iter().filter(|(trust, _)| *trust == Trust::Low).map(|(_, score)| score.unwrap()).collect();
    assert_eq!(low.len(), 2);
    assert!(low[0] >= low[1], "best score first: {low:?}");
}

#[test]
fn an_accepted_suggestion_is_an_alias_and_the_next_suggest_knows_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(560_000), ..SuggestOptions::default() },
        &write(),
    )
    .unwrap();
    book.review_accept(id("C-1"), &Acceptance::default(), &write()).unwrap();
    let state = book.state(None).unwrap();
    assert!(state.terms()[&id("T-3")].aliases.contains_key("林月"));
    // T-3 changed its texts: its vectors are stale until refreshed.
    let error = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(560_000), ..SuggestOptions::default() },
        &write(),
    )
    .unwrap_err();
    assert!(matches!(error, SuggestError::Stale { n_missing: 1, first, .. } if first == id("T-3")), "{error}");
    suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    let after = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(560_000), dry_run: true, ..SuggestOptions::default() },
        &write(),
    )
    .unwrap();
    let surfaces: Vec<&str> = after.spans.iter().map(|span| span.sighting.surface.as_str()).collect();
    assert_eq!(surfaces, ["炎龙", "药心"], "林月 now matches lexically");
}

#[test]
fn dedupe_pairs_terms_by_their_vectors_once_and_leaves_succession_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut bodies = four_terms();
    // 炎萧 has the characters of 萧炎 (the tiny model averages them: cosine 1) and the
    // same rendering; T-6 succeeds T-3 from chapter 5 under the same name.
    bodies.push(term("T-5", "炎萧", "Сяо Янь"));
    bodies.push(Body::TermPut(TermPut {
        window: Window { since: 5, until: None },
        supersedes: Some(id("T-3")),
        ..TermPut::new(id("T-6"), "林动", "Линь Дун")
    }));
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), bodies);
    let snapshot = book.state(None).unwrap().snapshot_id();
    let deduped = suggest::dedupe(&mut book, &mut model, None, false, &write()).unwrap();
    assert_eq!(deduped.n_terms, 6);
    let pairs: Vec<(RecordId, RecordId, i32)> =
        deduped.pairs.iter().map(|pair| (pair.first, pair.second, pair.score)).collect();
    assert_eq!(pairs, [(id("T-1"), id("T-5"), 1_000_000)], "T-3 and T-6 are one entity by design");
    let pair = &deduped.pairs[0];
    assert_eq!(pair.first_text, (suggest::Role::Src, "萧炎".to_owned()));
    assert_eq!(pair.second_text, (suggest::Role::Src, "炎萧".to_owned()));
    let [candidate] = deduped.proposed.as_slice() else { panic!("{:?}", deduped.proposed) };
    assert_eq!(
        (candidate.surface.as_str(), candidate.related, candidate.duplicate, candidate.trust, candidate.score),
        ("炎萧", Some(id("T-1")), Some(id("T-5")), Trust::Low, Some(1_000_000))
    );
    assert_eq!(candidate.evidence.as_deref(), Some("sightings: 1\nT-1 src 萧炎 ~ T-5 src 炎萧 1.000000"));
    assert_eq!(book.state(None).unwrap().snapshot_id(), snapshot);
    let again = suggest::dedupe(&mut book, &mut model, None, false, &write()).unwrap();
    assert!(again.proposed.is_empty() && again.written.is_none());
    assert_eq!(again.pairs[0].candidate, Some(candidate.id));
    // A lower minimum finds more pairs, best first, then by ids; a dry run writes nothing.
    let head_before = head(&mut book);
    let wide = suggest::dedupe(&mut book, &mut model, Some(-1_000_000), true, &write()).unwrap();
    assert_eq!(head(&mut book), head_before);
    assert!(wide.pairs.len() > 1);
    let keys: Vec<(std::cmp::Reverse<i32>, RecordId, RecordId)> =
        wide.pairs.iter().map(|pair| (std::cmp::Reverse(pair.score), pair.first, pair.second)).collect();
    assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
    assert!(wide.pairs.iter().all(|pair| pair.first < pair.second));
    assert!(!wide.pairs.iter().any(|pair| (pair.first, pair.second) == (id("T-3"), id("T-6"))));
    // Accepting the pair is the reviewer's finding: nothing merged, no snapshot moved.
    book.review_accept(candidate.id, &Acceptance::default(), &write()).unwrap();
    let state = book.state(None).unwrap();
    assert!(state.is_active(id("T-1")) && state.is_active(id("T-5")));
    assert_eq!(state.snapshot_id(), snapshot);
    let third = suggest::dedupe(&mut book, &mut model, None, false, &write()).unwrap();
    assert!(third.proposed.is_empty(), "a judged pair is not proposed again");
}

#[test]
fn dedupe_and_suggest_past_the_largest_candidate_number_are_an_invalid_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut bodies = four_terms();
    bodies.push(term("T-5", "炎萧", "Сяо Янь"));
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), bodies);
    // The pair T-1 ~ T-5 gets its candidate; then C-999999999, a valid id, is written.
    let deduped = suggest::dedupe(&mut book, &mut model, None, false, &write()).unwrap();
    assert_eq!(deduped.proposed.len(), 1);
    let last = Body::CandidateProposed(CandidateProposed {
        id: id("C-999999999"),
        surface: "灯宗".into(),
        suggested_dst: None,
        evidence: None,
        origin: Origin::Extractor,
        trust: Trust::Normal,
        score: None,
        related: None,
        duplicate: None,
    });
    book.submit_labelled(&write(), Labelled::numbered(vec![last], "test"), Vec::new()).unwrap();
    let before = head(&mut book);
    // A pair that has its candidate needs no new id.
    suggest::dedupe(&mut book, &mut model, None, false, &write()).unwrap();
    // New pairs and new suggestions do.
    let error = suggest::dedupe(&mut book, &mut model, Some(-1_000_000), false, &write()).unwrap_err();
    assert_eq!(error.class(), book::ErrorClass::Invalid, "{error}");
    assert!(error.to_string().starts_with("no free candidate id is left: the book uses C-999999999"), "{error}");
    let options = SuggestOptions { min_score: Some(500_000), ..SuggestOptions::default() };
    let error = suggest::suggest(&mut book, &mut model, 1, "1", CHUNK, &options, &write()).unwrap_err();
    assert!(error.to_string().contains("no free candidate id is left"), "{error}");
    assert_eq!(head(&mut book), before, "a refused use case wrote");
}

#[test]
fn dedupe_leaves_a_homonym_told_apart_by_its_sense_alone() {
    let dir = tempfile::tempdir().unwrap();
    // T-2 shares T-1's source under a sense T-1 does not name; T-3 has another source
    // (the same characters: cosine 1 under the tiny model) and T-2's sense.
    let sensed = |id_text: &str, src: &str, dst: &str| match term(id_text, src, dst) {
        Body::TermPut(put) => Body::TermPut(TermPut { sense: Some("title".into()), ..put }),
        body => body,
    };
    let bodies =
        vec![term("T-1", "萧炎", "Сяо Янь"), sensed("T-2", "萧炎", "Огненный"), sensed("T-3", "炎萧", "Огненный")];
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), bodies);
    let deduped = suggest::dedupe(&mut book, &mut model, Some(-1_000_000), true, &write()).unwrap();
    let pairs: Vec<(RecordId, RecordId)> = deduped.pairs.iter().map(|pair| (pair.first, pair.second)).collect();
    assert_eq!(pairs, [(id("T-1"), id("T-3")), (id("T-2"), id("T-3"))], "T-1 and T-2 are told apart by the sense");
}

#[test]
fn bad_model_files_are_refused_precisely_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, _) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    let head_before = head(&mut book);
    let keys = vector_keys(&book);
    let missing = ModelFiles { model: dir.path().join("nothing.onnx"), ..tiny() };
    let error = Model::for_book(&mut book, &missing).unwrap_err();
    assert!(error.to_string().contains("cannot read") && error.to_string().contains("nothing.onnx"), "{error}");
    let corrupt = dir.path().join("corrupt.onnx");
    std::fs::write(&corrupt, b"not an onnx graph").unwrap();
    let error = Model::for_book(&mut book, &ModelFiles { model: corrupt.clone(), ..tiny() }).unwrap_err();
    assert!(error.to_string().contains("corrupt.onnx") && error.to_string().contains("not a graph"), "{error}");
    let error = suggest::set_model(&mut book, &ModelFiles { model: corrupt, ..tiny() }, &tiny_options(), &write());
    assert!(matches!(error, Err(SuggestError::Embed(_))));
    // The same tokenizer written with other whitespace is another tokenizer.
    let tokenizer = dir.path().join("tokenizer.json");
    let json = std::fs::read_to_string(testdata("tiny-tokenizer.json")).unwrap();
    std::fs::write(&tokenizer, json.replace("\n", "\n ")).unwrap();
    let other = ModelFiles { tokenizer: Some(tokenizer), ..tiny() };
    let error = Model::for_book(&mut book, &other).unwrap_err();
    assert!(matches!(error, SuggestError::NotTheBooksModel { .. }), "{error}");
    assert!(error.to_string().contains("the tokenizer is"), "{error}");
    // A book whose model ran with an operator library the files do not name.
    let mut with_library = book.state(None).unwrap().embedding_model().unwrap().0.clone();
    with_library.operator_libraries_blake3 = vec![Hash32([7; 32])];
    let error = Model::load(&tiny(), &with_library).unwrap_err();
    assert!(matches!(error, SuggestError::NotTheBooksModel { .. }), "{error}");
    let expected =
        format!("the operator libraries given (none) have blake3 none, the book's model {}", "07".repeat(32));
    assert!(error.to_string().contains(&expected), "{error}");
    // A book whose model says another dimension than the graph declares.
    let mut wrong = book.state(None).unwrap().embedding_model().unwrap().0.clone();
    wrong.dim = 64;
    book.submit_labelled(&write(), Labelled::numbered(vec![Body::EmbeddingModelSet(wrong)], "test"), Vec::new())
        .unwrap();
    let error = Model::for_book(&mut book, &tiny()).unwrap_err();
    assert!(error.to_string().contains("dim 64") && error.to_string().contains("declares 32"), "{error}");
    // Scores out of range are refused before any file is read.
    let error = suggest::set_model(
        &mut book,
        &missing,
        &suggest::ModelOptions { suggest_min_score: 1_000_001, ..tiny_options() },
        &write(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("suggest_min_score"), "{error}");
    assert_eq!(head(&mut book), head_before.next(), "only the test's own model event was written");
    assert_eq!(vector_keys(&book), keys);
}

#[test]
fn a_vector_entry_that_does_not_decode_is_missing_and_refresh_rewrites_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    let keys = vector_keys(&book);
    // Right checksum, wrong bytes: derived data gone wrong, never trusted.
    book.ledger().derived_write(VECTORS_SET, &[(keys[0].clone(), vec![1, 2, 3])], &[]).unwrap();
    let status = suggest::status(&mut book).unwrap();
    assert_eq!(status.n_fresh, 4, "status reads keys only");
    let error = suggest::dedupe(&mut book, &mut model, None, true, &write()).unwrap_err();
    assert!(matches!(error, SuggestError::Stale { n_missing: 1, .. }), "{error}");
    let refreshed = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    assert_eq!((refreshed.n_embedded, refreshed.n_kept), (1, 3));
    let mut sizes = Vec::new();
    book.ledger()
        .derived_scan(VECTORS_SET, &[], |_, bytes| {
            sizes.push(bytes.len());
            ControlFlow::Continue(())
        })
        .unwrap();
    assert!(sizes.iter().all(|size| *size > 3), "{sizes:?}");
    suggest::dedupe(&mut book, &mut model, None, true, &write()).unwrap();
}

#[test]
fn a_book_without_a_model_or_a_language_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), four_terms());
    let error = Model::for_book(&mut book, &tiny()).unwrap_err();
    assert!(matches!(error, SuggestError::NoModel), "{error}");
    assert!(error.to_string().contains("lorebank embed set-model"));
    let status = suggest::status(&mut book).unwrap();
    assert_eq!((status.model.is_none(), status.n_missing), (true, 4));
}

#[test]
fn the_same_book_and_chunk_give_the_same_candidates_twice() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let (mut book, mut model) = refreshed(&dir.path().join(name), four_terms());
        let suggested = suggest::suggest(
            &mut book,
            &mut model,
            1,
            "1",
            CHUNK,
            &SuggestOptions { min_score: Some(0), ..SuggestOptions::default() },
            &write(),
        )
        .unwrap();
        let deduped = suggest::dedupe(&mut book, &mut model, Some(0), false, &write()).unwrap();
        (suggested.proposed, deduped.proposed, deduped.pairs)
    };
    let first = run("a.lorebank");
    assert!(!first.0.is_empty() && !first.1.is_empty());
    assert_eq!(first, run("b.lorebank"));
}

#[test]
fn another_graph_output_under_the_same_identity_makes_the_vectors_stale() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, _) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    let current = book.state(None).unwrap().embedding_model().unwrap().0.clone();
    // The graph's first output is the same last_hidden_state, so the identity is the
    // same; the vectors are filed under the output read too, and go stale.
    let first_output = EmbeddingModelSet { output: None, ..current.clone() };
    assert_eq!(suggest::model_id(&first_output), suggest::model_id(&current));
    assert_ne!(suggest::vectors::model_key(&first_output), suggest::vectors::model_key(&current));
    book.submit_labelled(&write(), Labelled::numbered(vec![Body::EmbeddingModelSet(first_output)], "test"), Vec::new())
        .unwrap();
    let status = suggest::status(&mut book).unwrap();
    assert_eq!((status.n_fresh, status.n_stale), (0, 4));
    let mut model = Model::for_book(&mut book, &tiny()).unwrap();
    let refreshed = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    assert_eq!((refreshed.n_embedded, refreshed.n_dropped), (4, 4));
}

#[test]
fn phrases_are_the_short_runs_of_letters_between_punctuation_and_hits() {
    let text = "萧炎看着天空。林中的动静";
    let hit = (0, "萧炎".len() as u32);
    let phrases = suggest::phrases_of(text, names::Lang::Zh, &[hit], &|surface| surface == "中的动");
    let surfaces: Vec<&str> = phrases.iter().map(|phrase| phrase.surface.as_str()).collect();
    assert_eq!(surfaces, ["看着天", "看着天空", "着天空", "林中的", "林中的动", "林中的动静", "中的动静", "的动静"]);
    for phrase in &phrases {
        let (start, end) = (phrase.bytes.0 as usize, phrase.bytes.1 as usize);
        assert_eq!(&text[start..end], phrase.surface);
        let chars: String =
            text.chars().skip(phrase.chars.0 as usize).take((phrase.chars.1 - phrase.chars.0) as usize).collect();
        assert_eq!(chars, phrase.surface);
    }
    // At most six characters; nothing across a comma, a space, a digit or Latin.
    let long = suggest::phrases_of("一二三四五六七，八 九十1百千ab万年时", names::Lang::Zh, &[], &|_| false);
    assert!(long.iter().all(|phrase| (3..=6).contains(&phrase.surface.chars().count())));
    assert_eq!(long.iter().filter(|phrase| phrase.surface.starts_with('一')).count(), 4);
    // Seven characters give 5 + 4 + 3 + 2 phrases; 八, 九十 and 百千 are too short.
    assert_eq!(long.len(), 15, "{long:?}");
    assert!(long[..14].iter().all(|phrase| phrase.chars.1 <= 7), "{long:?}");
    assert_eq!((long[14].surface.as_str(), long[14].chars), ("万年时", (17, 20)));
    // A Japanese ruby reading is no part of a phrase, and breaks one; kana are letters.
    let ja = suggest::phrases_of("灯守《ひもり》が来るぞ", names::Lang::Ja, &[], &|_| false);
    let surfaces: Vec<&str> = ja.iter().map(|phrase| phrase.surface.as_str()).collect();
    assert_eq!(surfaces, ["が来る", "が来るぞ", "来るぞ"]);
    // In Chinese, 《》 are book-title brackets: what they hold is text.
    let zh = suggest::phrases_of("《雾川志》", names::Lang::Zh, &[], &|_| false);
    assert_eq!(zh.iter().map(|phrase| phrase.surface.as_str()).collect::<Vec<_>>(), ["雾川志"]);
}

#[test]
fn phrases_near_a_term_the_chunk_does_not_name_follow_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, mut model) = refreshed(&dir.path().join("b.lorebank"), four_terms());
    let snapshot = book.state(None).unwrap().snapshot_id();
    // 萧炎 and 药老 are named; 林 and 动 stand apart (a description of 林动), as do
    // 薰 and 儿; no quote or surname cue makes them name-like.
    let chunk = "萧炎看着天空。药老说，林中的动静很大；薰香的女儿来了。";
    // 林中的动 scores 0.591 near 林动 and 薰香的女儿 0.552 near 薰儿; no other phrase
    // reaches 0.5.
    let min_score = 500_000;
    let options = SuggestOptions { min_score: Some(min_score), dry_run: true, ..SuggestOptions::default() };
    let without = suggest::suggest(&mut book, &mut model, 1, "1", chunk, &options, &write()).unwrap();
    assert!(without.phrases.is_empty() && without.n_phrases == 0, "phrases are asked for");
    let options = SuggestOptions { phrases: true, ..options };
    let dry = suggest::suggest(&mut book, &mut model, 1, "1", chunk, &options, &write()).unwrap();
    assert!(dry.written.is_none());
    // The oracle: every phrase's best score against the terms the chunk does not name.
    let unnamed = [("T-3", "林动"), ("T-4", "薰儿")];
    let hits: Vec<(u32, u32)> = ["萧炎", "药老"]
        .iter()
        .map(|surface| {
            let start = chunk.find(surface).unwrap() as u32;
            (start, start + surface.len() as u32)
        })
        .collect();
    let all = suggest::phrases_of(chunk, names::Lang::Zh, &hits, &|_| false);
    assert_eq!(dry.n_phrases, all.len(), "every phrase is distinct here");
    let oracle: Vec<(RecordId, i64)> = all.iter().map(|phrase| oracle_nearest(&phrase.surface, &unnamed)).collect();
    assert!(!dry.phrases.is_empty());
    for phrase in &dry.phrases {
        let index = all.iter().position(|other| other.chars == phrase.chars).unwrap();
        let (id, role, text, score) = &phrase.nearest;
        assert_eq!((*id, *role), (oracle[index].0, suggest::Role::Src), "{}", phrase.surface);
        assert_eq!(text, unnamed.iter().find(|(term, _)| self::id(term) == *id).unwrap().1);
        assert!((i64::from(*score) - oracle[index].1).abs() <= 2, "{}: {score} vs {:?}", phrase.surface, oracle[index]);
        assert!(*score >= min_score);
    }
    // Kept phrases never overlap, and every phrase at the minimum that is not kept
    // overlaps a kept one that scores at least as much.
    for (i, a) in dry.phrases.iter().enumerate() {
        for b in &dry.phrases[i + 1..] {
            assert!(a.chars.1 <= b.chars.0, "{a:?} overlaps {b:?}");
        }
    }
    for (phrase, (_, score)) in all.iter().zip(&oracle) {
        if *score < i64::from(min_score) + 2 || dry.phrases.iter().any(|kept| kept.chars == phrase.chars) {
            continue;
        }
        let beaten = dry.phrases.iter().any(|kept| {
            kept.chars.0 < phrase.chars.1 && phrase.chars.0 < kept.chars.1 && i64::from(kept.nearest.3) + 2 >= *score
        });
        assert!(beaten, "{} ({score}) is at the minimum, kept by nothing", phrase.surface);
    }
    // The best phrase of all is kept, near 林动 (the description of it is the best).
    let best = oracle.iter().map(|(_, score)| *score).max().unwrap();
    let kept_best = dry.phrases.iter().map(|phrase| i64::from(phrase.nearest.3)).max().unwrap();
    assert!((kept_best - best).abs() <= 2);
    let kept: Vec<(&str, RecordId)> =
        dry.phrases.iter().map(|phrase| (phrase.surface.as_str(), phrase.nearest.0)).collect();
    assert_eq!(kept, [("林中的动", id("T-3")), ("薰香的女儿", id("T-4"))]);

    // Written: one candidate per kept phrase, evidence saying `phrase near`; again:
    // nothing new; the snapshot never moves.
    let options = SuggestOptions { dry_run: false, ..options };
    let written = suggest::suggest(&mut book, &mut model, 1, "1", chunk, &options, &write()).unwrap();
    // Name-like spans are proposed beside the phrases (林 is a surname cue).
    assert_eq!(
        written.proposed.len(),
        dry.phrases.len() + dry.spans.iter().filter(|span| span.candidate.is_some()).count()
    );
    for phrase in &written.phrases {
        let candidate = written.proposed.iter().find(|candidate| Some(candidate.id) == phrase.candidate).unwrap();
        assert_eq!((candidate.surface.as_str(), candidate.related), (phrase.surface.as_str(), Some(phrase.nearest.0)));
        assert_eq!((candidate.origin, candidate.trust), (Origin::Embedding, Trust::Low));
        let evidence = candidate.evidence.as_deref().unwrap();
        let line = format!("ch1/1@{}-{} phrase near {} src ", phrase.chars.0, phrase.chars.1, phrase.nearest.0);
        assert!(evidence.lines().nth(1).unwrap().starts_with(&line), "{evidence}");
    }
    let again = suggest::suggest(&mut book, &mut model, 1, "1", chunk, &options, &write()).unwrap();
    assert!(again.proposed.is_empty() && again.written.is_none());
    assert_eq!(book.state(None).unwrap().snapshot_id(), snapshot);
}
