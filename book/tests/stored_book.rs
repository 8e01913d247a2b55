//! The committed book of ledger format 1 (`tests/testdata/books/v1-wuchuan.lorebank`,
//! never re-blessed): every later version opens it, verifies it, replays every
//! receipt byte for byte and finds its pinned snapshot IDs. And flipping any single
//! byte of it either changes no output or makes `verify` name the damage.

use std::path::{Path, PathBuf};

use book::Book;
use ledger::{Ledger, OpenError, VerifyError};
use ledger_model::{Hash32, Seq};

const SNAPSHOTS: &[(u64, &str)] = &[
    (1, "ee3d22b37d2847d9a5a88791f4d6b0bb83b0349e83b2830c9fdce6dd41294a96"),
    (15, "d78da758451855dc0fcc47231c1af5cdb8cba9c7b8a30d563fd240ce6f9332a0"),
    (16, "0eece7a099777d7ad3e4afbaf0aa05cba6c09fe53ff2f0200d8b224485fb5270"),
    (18, "d78da758451855dc0fcc47231c1af5cdb8cba9c7b8a30d563fd240ce6f9332a0"),
];

fn stored_book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/testdata/books/v1-wuchuan.lorebank")
}

fn copy_to(dir: &tempfile::TempDir, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join("book.lorebank");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Everything the read commands print, as one comparable value: the events (what
/// `show`, `log`, `term show` and `diff` render), the snapshot IDs and the index,
/// the chunk index (`audit`, `impact`) and every receipt's replay.
fn outputs(book: &mut Book) -> Result<String, String> {
    let mut out = String::new();
    let events = book.ledger().events(Seq(1), Seq(u64::MAX)).map_err(|e| e.to_string())?;
    out += &format!("{events:?}\n");
    for (revision, _) in SNAPSHOTS {
        let state = book.state(Some(Seq(*revision))).map_err(|e| e.to_string())?;
        out += &format!("{revision} {}\n", state.snapshot_id());
    }
    out += &format!("{:?}\n", book.ledger().snapshot_index().map_err(|e| e.to_string())?);
    let chunks = book.ledger().filed(None).map_err(|e| e.to_string())?;
    out += &format!("{chunks:?}\n");
    for (_, _, _, id) in chunks {
        let replayed = book.replay(&book::Reader::Full, &id.to_hex()).map_err(|e| e.to_string())?;
        out += &format!("{id} {} {}\n", replayed.identical, replayed.context);
    }
    Ok(out)
}

#[test]
fn the_v1_book_opens_verifies_and_replays_every_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_to(&dir, &std::fs::read(stored_book()).unwrap());
    let mut book = Book::open(&path).unwrap();
    let report = book.verify().unwrap();
    assert_eq!((report.n_events, report.head.seq, report.n_documents), (18, Seq(18), 5));
    for (revision, id) in SNAPSHOTS {
        let state = book.state(Some(Seq(*revision))).unwrap();
        assert_eq!(state.snapshot_id().to_string(), *id, "revision {revision}");
    }
    let index: Vec<(String, u64)> =
        book.ledger().snapshot_index().unwrap().into_iter().map(|(id, revision)| (id.to_hex(), revision.0)).collect();
    let mut expected: Vec<(String, u64)> = SNAPSHOTS[..3].iter().map(|(r, id)| (id.to_string(), *r)).collect();
    expected.sort();
    assert_eq!(index, expected);
    let chunks = book.ledger().filed(None).unwrap();
    assert_eq!(chunks.len(), 5);
    for (_, _, _, id) in chunks {
        let replayed = book.replay(&book::Reader::Full, &id.to_hex()).unwrap();
        assert!(replayed.identical, "receipt {id} no longer replays");
    }
}

#[test]
fn the_v1_book_reads_read_only_without_changing_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(stored_book()).unwrap();
    let path = copy_to(&dir, &original);
    let mut book = Book::new(Ledger::open_read_only(&path).unwrap());
    book.verify().unwrap();
    outputs(&mut book).unwrap();
    let text = "沈照提着长明灯走过雾川。";
    book.assemble_chunk(&book::Reader::Full, 1, "dry", text, None, false).unwrap();
    drop(book);
    assert!(std::fs::read(&path).unwrap() == original, "a read-only book changed");
}

/// Deterministic positions: an even stride over the whole file, plus a dense run
/// inside every copy of each receipt's bytes and around each event's actor.
fn positions(bytes: &[u8], receipts: &[Vec<u8>]) -> Vec<usize> {
    let mut out: Vec<usize> = (0..160).map(|i| i * bytes.len() / 160 + (i * 7919) % 97).collect();
    let mut targets: Vec<&[u8]> = receipts.iter().map(Vec::as_slice).collect();
    targets.extend([&b"import:example"[..], b"human:editor", b"chunk", b"\x01\x00\x01\x00"]);
    for target in targets {
        let found = bytes.windows(target.len()).enumerate().filter(|(_, w)| w == &target).map(|(i, _)| i);
        for at in found.take(3) {
            out.extend((0..6).map(|k| at + (k * 13) % target.len().max(1)));
            out.extend([at.saturating_sub(40), at.saturating_sub(80)]);
        }
    }
    out.retain(|at| *at < bytes.len());
    out.sort_unstable();
    out.dedup();
    out
}

#[test]
fn any_flipped_byte_changes_no_output_or_verify_names_the_damage() {
    let original = std::fs::read(stored_book()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (baseline, receipts) = {
        let path = copy_to(&dir, &original);
        let mut book = Book::new(Ledger::open_read_only(&path).unwrap());
        let chunks = book.ledger().filed(None).unwrap();
        let receipts: Vec<Vec<u8>> =
            chunks.iter().map(|(_, _, _, id)| book.ledger().document(*id).unwrap().unwrap()).collect();
        (outputs(&mut book).unwrap(), receipts)
    };
    let positions = positions(&original, &receipts);
    eprintln!("{} positions", positions.len());
    assert!(positions.len() >= 200, "only {} positions", positions.len());
    let (mut n_unchanged, mut n_detected) = (0, 0);
    for at in positions {
        let mut bytes = original.clone();
        bytes[at] ^= 0x5a;
        let path = copy_to(&dir, &bytes);
        let ledger = match Ledger::open(&path) {
            Ok(ledger) => ledger,
            Err(OpenError::Corrupted { .. } | OpenError::NotALedger { .. } | OpenError::UnsupportedFormat { .. }) => {
                n_detected += 1;
                continue;
            }
            Err(error) => panic!("byte {at}: open failed without naming damage: {error}"),
        };
        let mut book = Book::new(ledger);
        match book.verify() {
            Err(VerifyError::Corrupted { .. } | VerifyError::Damaged { .. }) => n_detected += 1,
            Err(error) => panic!("byte {at}: verify failed without naming damage: {error}"),
            Ok(_) => {
                let now = outputs(&mut book);
                assert_eq!(now.as_ref(), Ok(&baseline), "byte {at}: verify passed but an output changed");
                n_unchanged += 1;
            }
        }
    }
    eprintln!("{n_detected} flips detected, {n_unchanged} changed no output");
    assert!(n_detected > 0 && n_unchanged > 0, "{n_detected} detected, {n_unchanged} unchanged");
}

#[test]
fn a_hash_is_not_a_snapshot_of_this_book() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_to(&dir, &std::fs::read(stored_book()).unwrap());
    let book = Book::new(Ledger::open_read_only(&path).unwrap());
    assert_eq!(book.ledger().snapshot_revision(Hash32([0; 32])).unwrap(), None);
}
