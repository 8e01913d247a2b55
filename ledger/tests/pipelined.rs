//! `Ledger::scan_pipelined` (checks on a reading thread, decode and visit on the
//! caller's) sees what `Ledger::scan_batches` sees and fails as it fails: the same
//! events, batch ends and errors, with the damaged event named by its seq and every
//! event before it visited.

mod support;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ledger::{Ledger, ReadError, PIPELINE_BATCH_EVENTS, PIPELINE_MIN_EVENTS};
use ledger_model::{Event, Seq};
use support::term;
use test_support::damage::{flip_near, positions};

const N_EVENTS: u32 = 10_000;

fn marker(number: u32) -> String {
    format!("<m{number}>")
}

/// A book of `N_EVENTS` events in batches of 1,000 and one of 7.
fn book(dir: &tempfile::TempDir) -> PathBuf {
    let path = dir.path().join("book.lorebank");
    let ledger = Ledger::create(&path).unwrap();
    let events: Vec<_> = (1..=N_EVENTS).map(|number| term(number, &marker(number))).collect();
    let (head, tail) = events.split_at(7);
    ledger.append(head, None).unwrap();
    for batch in tail.chunks(1_000) {
        ledger.append(batch, None).unwrap();
    }
    path
}

/// The stored bytes of event `number`'s actor, its source's length and its source
/// (the marker). The actor starts the payload after the 9-byte varint of the time and
/// its own length byte, so the payload starts 10 bytes before these, and the record's
/// 80-byte header 90 bytes before.
fn stored_source(number: u32) -> Vec<u8> {
    let mut source = b"human:test".to_vec();
    source.push(marker(number).len() as u8);
    source.extend_from_slice(marker(number).as_bytes());
    source
}

/// Flips one bit `offset` bytes from every stored copy of `needle`, which is there.
fn flip(path: &Path, needle: &[u8], offset: isize) {
    assert!(flip_near(path, needle, offset, 0x10) > 0, "{needle:?} is not in the file");
}

type Seen = Vec<(Event, Option<bool>)>;

fn sequential(ledger: &Ledger, from: Seq, to: Seq) -> (Seen, Result<(), ReadError>) {
    let mut seen = Vec::new();
    let result = ledger.scan_batches(from, to, |event, end| {
        seen.push((event, end));
        ControlFlow::Continue(())
    });
    (seen, result)
}

fn pipelined(ledger: &Ledger, from: Seq, to: Seq) -> (Seen, Result<(), ReadError>) {
    let mut seen = Vec::new();
    let result = ledger.scan_pipelined(from, to, |event, end| {
        seen.push((event, end));
        ControlFlow::Continue(())
    });
    (seen, result)
}

#[test]
fn an_intact_log_reads_as_with_scan_batches() {
    const { assert!(N_EVENTS as u64 > PIPELINE_MIN_EVENTS + 2 * PIPELINE_BATCH_EVENTS as u64) };
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(&book(&dir)).unwrap();
    for (from, to) in
        [(Seq(1), Seq(u64::MAX)), (Seq(1_500), Seq(9_000)), (Seq(0), Seq(N_EVENTS.into())), (Seq(3), Seq(5))]
    {
        let (expected, result) = sequential(&ledger, from, to);
        result.unwrap();
        let (seen, result) = pipelined(&ledger, from, to);
        result.unwrap();
        assert_eq!(seen, expected, "{from}..={to}");
    }
    let (seen, _) = pipelined(&ledger, Seq(1), Seq(u64::MAX));
    assert_eq!(seen.len(), N_EVENTS as usize);
    let ends: Vec<u64> = seen.iter().filter(|(_, end)| *end == Some(true)).map(|(event, _)| event.seq.0).collect();
    assert_eq!(ends, (0..10).map(|k| 7 + 1_000 * k).chain([u64::from(N_EVENTS)]).collect::<Vec<_>>());
}

#[test]
fn a_flipped_payload_byte_is_named_by_its_seq_after_every_event_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    flip(&path, marker(7_777).as_bytes(), 2);
    let ledger = Ledger::open(&path).unwrap();
    let (expected, expected_result) = sequential(&ledger, Seq(1), Seq(u64::MAX));
    let (seen, result) = pipelined(&ledger, Seq(1), Seq(u64::MAX));
    let error = result.unwrap_err();
    assert!(matches!(error, ReadError::Corrupted { seq: Seq(7_777), .. }), "{error:?}");
    assert!(error.to_string().contains("payload hash mismatch"), "{error}");
    assert_eq!(error.to_string(), expected_result.unwrap_err().to_string());
    assert_eq!(seen.len(), 7_776);
    assert_eq!(seen, expected);
}

#[test]
fn a_broken_link_is_named_by_its_seq() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    // The prev hash is header bytes 16..48.
    flip(&path, &stored_source(5_000), -10 - 80 + 20);
    let ledger = Ledger::open(&path).unwrap();
    let (expected, expected_result) = sequential(&ledger, Seq(1), Seq(u64::MAX));
    let (seen, result) = pipelined(&ledger, Seq(1), Seq(u64::MAX));
    let error = result.unwrap_err();
    assert!(matches!(error, ReadError::Corrupted { seq: Seq(5_000), .. }), "{error:?}");
    assert!(error.to_string().contains("broken link"), "{error}");
    assert_eq!(error.to_string(), expected_result.unwrap_err().to_string());
    assert_eq!(seen, expected);
    assert_eq!(seen.len(), 4_999);
}

/// A record whose payload does not decode though its payload hash was rewritten to
/// match (so its chain hash changed, and the next event's link is broken): the
/// reading thread checks only hashes and links, the visiting thread decodes, and the
/// event that does not decode is named, not the broken link after it.
#[test]
fn a_payload_that_does_not_decode_is_named_before_the_broken_link_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let mut bytes = std::fs::read(&path).unwrap();
    let copies = positions(&bytes, &stored_source(5_000));
    assert!(!copies.is_empty());
    for at in copies {
        // The actor's first byte made invalid UTF-8 (payload length at header bytes
        // 4..8, payload hash at 48..80).
        bytes[at] = 0xFF;
        let (header, payload_start) = (at - 90, at - 10);
        let n_payload = u32::from_le_bytes(bytes[header + 4..header + 8].try_into().unwrap()) as usize;
        let hash = ledger_model::record::payload_hash(&bytes[payload_start..payload_start + n_payload]);
        bytes[header + 48..header + 80].copy_from_slice(&hash.0);
    }
    std::fs::write(&path, bytes).unwrap();
    let ledger = Ledger::open(&path).unwrap();
    let (expected, expected_result) = sequential(&ledger, Seq(1), Seq(u64::MAX));
    let (seen, result) = pipelined(&ledger, Seq(1), Seq(u64::MAX));
    let error = result.unwrap_err();
    assert!(matches!(error, ReadError::Corrupted { seq: Seq(5_000), .. }), "{error:?}");
    assert!(!error.to_string().contains("broken link"), "{error}");
    assert_eq!(error.to_string(), expected_result.unwrap_err().to_string());
    assert_eq!(seen, expected);
    assert_eq!(seen.len(), 4_999);
}

#[test]
fn a_visitor_that_stops_ends_the_scan_without_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    flip(&path, marker(9_999).as_bytes(), 2);
    let ledger = Ledger::open(&path).unwrap();
    let mut n_seen = 0u64;
    ledger
        .scan_pipelined(Seq(1), Seq(u64::MAX), |event, _| {
            n_seen += 1;
            assert_eq!(event.seq, Seq(n_seen));
            if n_seen == 100 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_eq!(n_seen, 100);
}
