//! The reads behind the audit page, one Book call per page: a term's bi-temporal
//! timeline (versions, stretches of revisions with the window assembly applied,
//! supersession and retirement, aliases, verdicts, the chunks that hit it), a chapter
//! explained with its texts, hits, versions, staleness and replay status, a rollback
//! previewed without writing, the book at a glance, and the review queue with its
//! evidence cut out of the recorded chunks.

use book::assemble::{Disposition, Reason, Via};
use book::chunks::Staleness;
use book::queue::parse_sighting;
use book::review::ReviewItem;
use book::{Book, BookError, Chunk, WriteOptions};
use ledger_model::*;
use test_support::books::{new_zh_book, zh_config};
use test_support::records::{character, event, term_id};

fn write(actor: &str, source: &str) -> WriteOptions {
    WriteOptions { actor: actor.into(), source: Some(source.into()), expect_head: None, recorded_at_ms: 1_000 }
}

fn submit(book: &mut Book, actor: &str, source: &str, bodies: Vec<Body>) -> Seq {
    let labelled = book::Labelled::numbered(bodies, source);
    let written = book.submit_labelled(&write(actor, source), labelled, Vec::new()).unwrap();
    written.submitted.appended.unwrap().last
}

fn put(number: u32, src: &str, dst: &str, since: u32, until: Option<u32>) -> TermPut {
    TermPut { window: Window { since, until }, ..character(number, src, dst) }
}

/// A zh book assembling by `assembly`, its config written by `human:init`.
fn new_book(path: &std::path::Path, assembly: AssemblyConfig) -> Book {
    new_zh_book(
        path,
        vec![NewEvent { actor: "human:init".into(), source: "init".into(), ..event(zh_config(assembly)) }],
    )
}

/// A zh book with a small budget (so one chunk evicts), and four terms: 沈照 (T-1),
/// 顾寒川 as the mentor (T-2, chapters 1-3), 顾寒川 as the sect master (T-3, from
/// chapter 2, superseding T-2), and 夜宗 (T-4, unreviewed).
fn book(path: &std::path::Path) -> Book {
    let mut book = new_book(path, AssemblyConfig { sticky_chunks: 0, ..AssemblyConfig::default() });
    submit(&mut book, "import:example", "glossary.jsonl", vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао", 1, None))]);
    submit(
        &mut book,
        "import:example",
        "glossary.jsonl",
        vec![Body::TermPut(put(2, "顾寒川", "Гу Ханьчуань", 1, Some(3)))],
    );
    let sect = TermPut { status: Status::Auto, ..put(4, "夜宗", "Ночная секта", 1, None) };
    submit(&mut book, "import:example", "glossary.jsonl", vec![Body::TermPut(sect)]);
    book
}

const CHAPTER_1: &[&str] = &["沈照看见顾寒川。", "夜宗的人来了，沈照没有说话。"];

fn record_chapter(book: &mut Book, chapter: u32, texts: &[&str]) -> Vec<book::Assembled> {
    let chunks: Vec<Chunk> =
        texts.iter().enumerate().map(|(n, text)| Chunk { key: format!("{}", n + 1), text: (*text).into() }).collect();
    book.assembler().unwrap().assemble_chapter(chapter, &chunks, None, true).unwrap()
}

#[test]
fn a_timeline_has_a_stretch_per_change_of_how_the_term_applies() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    record_chapter(&mut book, 1, CHAPTER_1);
    let first = book.state(None).unwrap().revision();
    // The successor cuts T-2 to chapter 1, then the mentor is renamed, an alias
    // comes and goes, a verdict is written, and the successor is retired again.
    let master = TermPut { supersedes: Some(term_id(2)), ..put(3, "顾寒川", "Глава секты", 2, None) };
    let superseded_at = submit(&mut book, "human:editor", "review-1", vec![Body::TermPut(master)]);
    let renamed_at =
        submit(&mut book, "human:editor", "review-2", vec![Body::TermPut(put(2, "顾寒川", "Учитель Гу", 1, Some(3)))]);
    let alias = AliasAdded {
        id: term_id(2),
        surface: "白衣".into(),
        kind: AliasKind::Title,
        window: Some(Window { since: 1, until: Some(2) }),
        release_to: None,
    };
    let alias_at = submit(&mut book, "human:editor", "review-3", vec![Body::AliasAdded(alias)]);
    let removed = AliasRemoved { id: term_id(2), surface: "白衣".into() };
    let removed_at = submit(&mut book, "human:editor", "review-4", vec![Body::AliasRemoved(removed)]);
    let verdict =
        DispositionSet { target: term_id(2), verdict: Verdict::Accept, reason: "reviewed".into(), note: None };
    let verdict_at = submit(&mut book, "human:lead", "review-5", vec![Body::DispositionSet(verdict)]);
    record_chapter(&mut book, 2, &["顾寒川走了。"]);
    let retired_at = submit(
        &mut book,
        "human:lead",
        "review-6",
        vec![Body::TermRetired(TermRetired { id: term_id(3), reason: None })],
    );
    let head = book.state(None).unwrap().revision();

    let timeline = book.term_timeline(term_id(2)).unwrap();
    assert_eq!(timeline.head, head);
    // Its own events and the put that supersedes it; not the successor's retirement.
    let seqs: Vec<u64> = timeline.events.iter().map(|event| event.seq.0).collect();
    assert_eq!(seqs, [3, superseded_at.0, renamed_at.0, alias_at.0, removed_at.0, verdict_at.0]);
    assert_eq!(timeline.versions.len(), 2);
    assert_eq!(timeline.versions[0].by.seq, Seq(3));
    assert_eq!(timeline.versions[0].by.actor, "import:example");
    assert_eq!(timeline.versions[0].until, Some(renamed_at));
    assert!(timeline.versions[0].changed.is_empty());
    assert_eq!(timeline.versions[1].changed, ["dst"]);
    assert_eq!(timeline.versions[1].by.source, "review-2");
    assert_eq!(timeline.versions[1].until, None);

    let chapters = |since, until| Some(Window { since, until });
    let shape: Vec<_> = timeline
        .stretches
        .iter()
        .map(|s| {
            (s.from.0, s.until.map(|u| u.0), s.version.0, s.effective, s.superseded_by, s.verdict.as_ref().map(|v| v.0))
        })
        .collect();
    assert_eq!(
        shape,
        [
            (3, Some(superseded_at.0), 3, chapters(1, Some(3)), None, None),
            (superseded_at.0, Some(renamed_at.0), 3, chapters(1, Some(1)), Some(term_id(3)), None),
            // An alias changes no window: the stretch goes on.
            (renamed_at.0, Some(verdict_at.0), renamed_at.0, chapters(1, Some(1)), Some(term_id(3)), None),
            (
                verdict_at.0,
                Some(retired_at.0),
                renamed_at.0,
                chapters(1, Some(1)),
                Some(term_id(3)),
                Some(Verdict::Accept)
            ),
            // The successor retired: the whole declared window is back.
            (retired_at.0, None, renamed_at.0, chapters(1, Some(3)), None, Some(Verdict::Accept)),
        ]
    );
    assert!(timeline.stretches.iter().all(|s| s.declared == Window { since: 1, until: Some(3) } && !s.retired));

    assert_eq!(timeline.aliases.len(), 1);
    assert_eq!(timeline.aliases[0].alias.surface, "白衣");
    assert_eq!(timeline.aliases[0].added.seq, alias_at);
    assert_eq!(timeline.aliases[0].removed.as_ref().map(|p| p.seq), Some(removed_at));
    assert_eq!(timeline.verdicts.len(), 1);
    assert_eq!(timeline.verdicts[0].1.actor, "human:lead");

    // Chapter 1 chunk 1 injected the first version; chapter 2 hit the second where
    // the successor had cut the mentor's window to chapter 1.
    let marks: Vec<_> =
        timeline.marks.iter().map(|m| (m.chapter, m.chunk_key.as_str(), m.revision.0, m.hit, m.injected)).collect();
    assert_eq!(
        marks,
        [
            (1, "1", first.0, Some((Disposition::Confirmed, None)), Some(Via::Hit)),
            (2, "1", verdict_at.0, Some((Disposition::Rejected, Some(Reason::OutOfWindow))), None),
        ]
    );
    assert!(timeline.marks.iter().all(|m| m.latest));
    assert_eq!(timeline.marks[0].version, 3);

    // The successor's own timeline shows its retirement.
    let successor = book.term_timeline(term_id(3)).unwrap();
    assert!(successor.stretches.last().unwrap().retired);
    assert_eq!(successor.versions[0].until, Some(retired_at));
}

#[test]
fn a_timeline_of_an_unknown_term_or_a_summary_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let error = book.term_timeline(term_id(99)).unwrap_err();
    assert!(matches!(&error, BookError::NotFound { what } if what == "events about T-99"), "{error}");
    let summary = RecordId::new(RecordKind::Summary, 1).unwrap();
    let error = book.term_timeline(summary).unwrap_err();
    assert_eq!(error.to_string(), "S-1 is not a term: a timeline is drawn for T- records");
}

#[test]
fn a_chapter_audit_explains_every_hit_with_its_version_and_replays_every_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    // A spoiler: a later identity of 夜宗 that starts at chapter 5.
    submit(
        &mut book,
        "import:example",
        "glossary.jsonl",
        vec![Body::TermPut(put(5, "夜宗的人", "Люди Ночной секты", 5, None))],
    );
    let recorded = record_chapter(&mut book, 1, CHAPTER_1);
    let revised_at =
        submit(&mut book, "human:editor", "review-1", vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао (ред.)", 1, None))]);

    let audit = book.chapter_audit(1).unwrap();
    assert_eq!(audit.chapter, 1);
    assert_eq!(audit.head, revised_at);
    assert_eq!(audit.snapshot, book.snapshot_info(None).unwrap().snapshot);
    assert_eq!(audit.chapters, [1]);
    assert_eq!(audit.chunks.len(), 2);
    for (chunk, (assembled, text)) in audit.chunks.iter().zip(recorded.iter().zip(CHAPTER_1)) {
        assert_eq!(chunk.audited.id, assembled.id);
        assert_eq!(chunk.input, *text);
        assert_eq!(chunk.output, assembled.assembly.context);
        assert!(chunk.replay.identical && chunk.replay.first_difference.is_none());
        for hit in &chunk.hits {
            // A hit's span is its surface in the chunk's text.
            assert_eq!(&chunk.input[hit.hit.bytes.0 as usize..hit.hit.bytes.1 as usize], hit.hit.text);
        }
    }
    let hits: Vec<_> = audit.chunks[1]
        .hits
        .iter()
        .map(|h| {
            let version = h.version.as_ref();
            (
                h.hit.text.as_str(),
                h.hit.disposition,
                h.hit.reason,
                h.injected,
                version.map(|v| v.put.dst.as_str()),
                version.map(|v| v.by.source.as_str()),
                &h.stale,
            )
        })
        .collect();
    assert_eq!(
        hits,
        [
            // Leftmost-longest: the spoiler surface wins over 夜宗, and is blocked.
            (
                "夜宗的人",
                Disposition::Rejected,
                Some(Reason::SpoilerWindow),
                false,
                Some("Люди Ночной секты"),
                Some("glossary.jsonl"),
                &Staleness::Current
            ),
            (
                "沈照",
                Disposition::Confirmed,
                None,
                true,
                Some("Шэнь Чжао"),
                Some("glossary.jsonl"),
                &Staleness::Revised(revised_at.0)
            ),
        ]
    );
}

#[test]
fn a_chapter_audit_says_which_hits_the_budget_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let assembly = AssemblyConfig { token_budget: 20, sticky_chunks: 0, ..AssemblyConfig::default() };
    let mut book = new_book(&dir.path().join("b.lorebank"), assembly);
    submit(
        &mut book,
        "import:example",
        "g",
        vec![
            Body::TermPut(put(1, "沈照", "Шэнь Чжао", 1, None)),
            Body::TermPut(put(
                2,
                "顾寒川",
                "Гу Ханьчуань, добрый наставник в белом, который носит белые одежды",
                1,
                None,
            )),
        ],
    );
    record_chapter(&mut book, 1, &["沈照看见顾寒川。"]);
    let audit = book.chapter_audit(1).unwrap();
    let outcome: Vec<(&str, bool, bool)> =
        audit.chunks[0].hits.iter().map(|h| (h.hit.text.as_str(), h.injected, h.evicted)).collect();
    assert_eq!(outcome, [("沈照", true, false), ("顾寒川", false, true)], "{}", audit.chunks[0].output);
}

#[test]
fn a_rollback_preview_decides_the_plan_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let before = book.state(None).unwrap().revision();
    submit(&mut book, "human:editor", "review-1", vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао (ред.)", 1, None))]);
    submit(
        &mut book,
        "human:editor",
        "review-1",
        vec![Body::TermRetired(TermRetired { id: term_id(4), reason: None })],
    );
    let head = book.ledger().head().unwrap();

    let preview = book.rollback_preview(before).unwrap();
    assert_eq!(preview.plan.to, before);
    assert_eq!(preview.plan.head, head.seq);
    assert!(matches!(preview.plan.bodies.last(), Some(Body::RollbackMarker(marker)) if marker.to == before));
    assert_eq!(preview.plan.bodies.len(), 3, "{:?}", preview.plan.bodies);
    assert_ne!(preview.snapshot_head, preview.snapshot_target);
    assert_eq!(preview.snapshot_after, preview.snapshot_target);
    assert_eq!(preview.diff.old.revision(), head.seq);
    assert_eq!(preview.diff.new.revision(), before);
    let changes: Vec<String> = preview.diff.records.iter().map(|record| format!("{record:?}")).collect();
    assert_eq!(changes.len(), 2, "{changes:?}");
    // Nothing was written.
    assert_eq!(book.ledger().head().unwrap(), head);

    let error = book.rollback_preview(head.seq).unwrap_err();
    assert!(error.to_string().contains("is the head"), "{error}");
    let error = book.rollback_preview(Seq(head.seq.0 + 5)).unwrap_err();
    assert!(matches!(error, BookError::BeyondHead { .. }), "{error}");
}

#[test]
fn an_overview_counts_chapters_lists_recent_events_newest_first_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    record_chapter(&mut book, 1, CHAPTER_1);
    record_chapter(&mut book, 1, &CHAPTER_1[..1]);
    record_chapter(&mut book, 3, &["沈照。"]);
    let overview = book.overview(2).unwrap();
    assert_eq!(overview.head.seq, Seq(4));
    assert_eq!(overview.snapshot, book.snapshot_info(None).unwrap().snapshot);
    assert_eq!(overview.state.revision(), Seq(4));
    // Chapter 1: two chunks and two receipts (chunk 1 recorded twice alike is one
    // receipt); chapter 3: one of each.
    assert_eq!(overview.chapters, [(1, 2, 2), (3, 1, 1)]);
    let recent: Vec<u64> = overview.recent.iter().map(|event| event.seq.0).collect();
    assert_eq!(recent, [4, 3]);
    let report = overview.verify.as_ref().unwrap();
    assert_eq!(report.n_events, 4);
    // The counts the page and its JSON twin both show are made here, once.
    assert_eq!(
        overview.counts,
        book::overview::Counts {
            terms: 3,
            terms_retired: 0,
            aliases: 0,
            summaries: 0,
            candidates_open: 0,
            chapters: 2,
            chunks: 3,
            receipts: 3,
        }
    );
    assert!(book.overview(0).unwrap().recent.is_empty());
    assert_eq!(book.overview(500).unwrap_err().to_string(), "500 recent events asked for; the limit is 200");
}

#[test]
fn the_review_queue_cuts_evidence_out_of_the_recorded_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let seen = "沈照回头，空空道人笑道：“空空道人来也。”";
    let unseen = "空空道人又来了，空空道人笑道。";
    record_chapter(&mut book, 2, &[seen]);
    book.scan_names(2, "1", seen, false, &write("tool:names", "ch2/1")).unwrap();
    // Scanned but never recorded: the line, without context.
    book.scan_names(3, "9", unseen, false, &write("tool:names", "ch3/9")).unwrap();

    let queue = book.review_queue().unwrap();
    assert_eq!(queue.head, book.state(None).unwrap().revision());
    let daoist = queue
        .entries
        .iter()
        .find(|entry| matches!(&entry.item, ReviewItem::Candidate { proposed, .. } if proposed.surface == "空空道人"))
        .expect("the daoist is a candidate");
    let places: Vec<(u32, &str, bool)> =
        daoist.evidence.iter().map(|e| (e.chapter, e.chunk_key.as_str(), e.context.is_some())).collect();
    assert!(places.contains(&(2, "1", true)) && places.contains(&(3, "9", false)), "{places:?}");
    let shown = daoist.evidence.iter().find_map(|e| e.context.as_ref()).unwrap();
    assert_eq!(shown.span, "空空道人");
    assert_eq!((shown.before.as_str(), shown.after.as_str()), ("沈照回头，", "笑道：“空空道人来也。”"));

    // The unreviewed record (T-4, status auto) is shown where chunks hit it: nowhere.
    let sect = queue.entries.iter().find(|entry| entry.item.id() == term_id(4)).expect("T-4 is flagged");
    assert!(sect.evidence.is_empty());
    record_chapter(&mut book, 4, &["夜宗来了。"]);
    let queue = book.review_queue().unwrap();
    let sect = queue.entries.iter().find(|entry| entry.item.id() == term_id(4)).unwrap();
    assert_eq!(sect.evidence.len(), 1);
    assert_eq!(sect.evidence[0].cue, "ambiguous: unreviewed");
    let context = sect.evidence[0].context.as_ref().unwrap();
    assert_eq!((context.before.as_str(), context.span.as_str(), context.after.as_str()), ("", "夜宗", "来了。"));
}

#[test]
fn sighting_lines_parse_as_the_name_alarm_writes_them() {
    assert_eq!(parse_sighting("ch6/1@12-16 quoted"), Some((6, "1".into(), (12, 16), "quoted".into())));
    assert_eq!(
        parse_sighting("ch2/part@2@3-5 katakana (かな)"),
        Some((2, "part@2".into(), (3, 5), "katakana (かな)".into()))
    );
    for other in ["sightings: 3", "ch/1@1-2 x", "chx/1@1-2 x", "ch1/1@2-2 x", "ch1/1@2 x", "ch1/1", ""] {
        assert_eq!(parse_sighting(other), None, "{other:?}");
    }
}
