//! Reads at the head share the head state instead of copying it: on a book of a few
//! thousand terms, each read use case that returns no records of its own allocates a
//! small fraction of the state's size (a global allocator counts the bytes, one test
//! at a time). A copy of the head for every read cost the state's size each time; a
//! write after a read copies nothing either, since the read let go of the head.

use book::{Book, Labelled, Reader, WriteOptions};
use ledger_model::*;
use projections::State;
use test_support::books::init_book;
use test_support::counting::{allocated, alone, names};

test_support::count_allocations!();

fn write() -> WriteOptions {
    WriteOptions { actor: "human:test".into(), source: Some("test".into()), expect_head: None, recorded_at_ms: 0 }
}

fn term(number: u32) -> RecordId {
    RecordId::new(RecordKind::Term, number).unwrap()
}

/// A book of `n` terms with a note each, written in one batch.
fn book(dir: &std::path::Path, n: usize) -> Book {
    let mut book = init_book(&dir.join("book.lorebank"), "zh");
    let bodies = names(n)
        .into_iter()
        .enumerate()
        .map(|(idx, surface)| {
            let put = TermPut::new(term(idx as u32 + 1), surface, format!("Имя {idx}"));
            Body::TermPut(TermPut {
                note: Some(format!("заметка о персонаже номер {idx}")), ..put
            })
        })
        .collect();
    book.submit_labelled(&write(), Labelled::numbered(bodies, "test"), Vec::new()).unwrap();
    // A book held open indexes its head's keys at its second write (a one-shot
    // command writes once and never does); that write is made here, so what follows
    // measures writes to an open book.
    let warm = vec![Body::TermPut(TermPut::new(term(n as u32 + 100), "热身之词", "Разминка"))];
    book.submit_labelled(&write(), Labelled::numbered(warm, "test"), Vec::new()).unwrap();
    // The checkpoint those writes started is written on a thread of its own.
    book.wait_for_checkpoint();
    book
}

#[test]
fn reads_at_the_head_copy_no_state() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(dir.path(), 4_000);
    // What a copy of the head costs.
    let copy_bytes = {
        let head = book.state(None).unwrap();
        let head: &State = &head;
        let (copied, copy_bytes) = allocated(|| head.clone());
        assert_eq!(copied.terms().len(), 4_001, "4,000 terms and the warm-up one");
        copy_bytes
    };
    let reads: Vec<(&str, u64)> = vec![
        ("state(None)", allocated(|| book.state(None).unwrap().revision()).1),
        ("snapshot_info(None)", allocated(|| book.snapshot_info(None).unwrap().revision).1),
        ("read_at(Full, None)", allocated(|| book.read_at(&Reader::Full, None).unwrap().snapshot).1),
        ("glossary(Full, None)", allocated(|| book.glossary(&Reader::Full, None, None).unwrap().snapshot).1),
        ("current_term", allocated(|| book.current_term(term(7)).unwrap().1).1),
        ("review_list", allocated(|| book.review_list(None).unwrap().len()).1),
    ];
    let one_put = vec![Body::TermPut(TermPut::new(term(4_001), "白云", "Бай Юнь"))];
    let (_, submit_bytes) =
        allocated(|| book.submit_labelled(&write(), Labelled::numbered(one_put, "test"), Vec::new()).unwrap());
    eprintln!("bytes allocated at the head of 4,000 terms (a copy of the state: {copy_bytes}):");
    for (what, bytes) in &reads {
        eprintln!("  {what}: {bytes}");
    }
    eprintln!("  submit of one put after them: {submit_bytes}");
    for (what, bytes) in reads {
        assert!(bytes < copy_bytes / 100, "{what} allocated {bytes} bytes: a copy of the head is {copy_bytes}");
    }
    // A tenth: the write to an open book looks its keys up in the head's index.
    assert!(
        submit_bytes < copy_bytes / 10,
        "a write after reads allocated {submit_bytes} bytes, a copy is {copy_bytes}"
    );
}

/// The write use cases that read the head first let go of it before they write, so
/// the write changes the head in place: each costs less than a copy of the state, and
/// all but the scan less than a tenth of one (what they allocate is what they read and write; UNIQUE looks up the groups the
/// write touches in the head's index instead of folding every surface again).
#[test]
fn writes_that_read_the_head_first_copy_no_state() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(dir.path(), 4_000);
    let copy_bytes = {
        let head = book.state(None).unwrap();
        let head: &State = &head;
        allocated(|| head.clone()).1
    };
    let mut writes: Vec<(&str, u64)> = Vec::new();
    let edit = book::TermEdit { dst: Some("Шэнь".into()), ..book::TermEdit::default() };
    writes.push(("term_edit", allocated(|| book.term_edit(term(7), &edit, &write()).unwrap()).1));
    let cast = "赵无极\tcharacter\n".as_bytes();
    writes
        .push(("expect_import", allocated(|| book.expect_import("cast.txt", cast, None, false, &write()).unwrap()).1));
    // The frozen projection of the head is built before, so the scan measures itself.
    book.assembler().unwrap();
    let text = "「赵无极」走进了大殿，钱长老点了点头。";
    let (scanned, scan_bytes) = allocated(|| book.scan_names(1, "c1", text, false, &write()).unwrap());
    writes.push(("scan_names", scan_bytes));
    let candidate = scanned.proposed.first().expect("the scan proposes a candidate").id;
    let acceptance = book::review::Acceptance { dst: Some("Чжао Уцзи".into()), ..Default::default() };
    writes.push(("review_accept", allocated(|| book.review_accept(candidate, &acceptance, &write()).unwrap()).1));
    eprintln!("bytes allocated by writes at the head of 4,000 terms (a copy of the state: {copy_bytes}):");
    for (what, bytes) in &writes {
        eprintln!("  {what}: {bytes}");
    }
    for (what, bytes) in writes {
        // The scan reads the chunk against the head's frozen projection too.
        let bound = if what == "scan_names" { copy_bytes } else { copy_bytes / 10 };
        assert!(bytes < bound, "{what} allocated {bytes} bytes: a copy of the head is {copy_bytes}");
    }
}

/// Reads of ascending revisions below the head (an audit, a term's timeline) fold
/// each one on from the one before in place: a step of one event copies no state (it
/// costs the ledger's read of the event, about half a megabyte of buffers).
#[test]
fn ascending_reads_fold_on_in_place() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(dir.path(), 4_000);
    let first = book.state(None).unwrap().revision();
    for number in 4_001..4_011 {
        let put = vec![Body::TermPut(TermPut::new(term(number), format!("白云{number}"), "Бай Юнь"))];
        book.submit_labelled(&write(), Labelled::numbered(put, "test"), Vec::new()).unwrap();
    }
    book.wait_for_checkpoint();
    let copy_bytes = {
        let head = book.state(None).unwrap();
        let head: &State = &head;
        allocated(|| head.clone()).1
    };
    book.state(Some(Seq(first.0 + 1))).unwrap();
    let steps: Vec<u64> = (first.0 + 2..first.0 + 10)
        .map(|revision| allocated(|| book.state(Some(Seq(revision))).unwrap().revision()).1)
        .collect();
    eprintln!("bytes allocated by reads of ascending revisions, one event apart (a copy: {copy_bytes}): {steps:?}");
    for bytes in steps {
        assert!(bytes < copy_bytes / 4, "a step allocated {bytes} bytes, a copy is {copy_bytes}");
    }
}
