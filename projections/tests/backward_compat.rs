//! The backward-compatibility suite: stored ledgers of every released format are
//! read, folded and checked against their pinned snapshot IDs, forever. Fixtures in
//! `tests/testdata/ledgers/<name>/` are `events.bin` (each record as a `u32` LE length
//! and the sealed record bytes) and `snapshot.expected` (`revision snapshot-id` per
//! line). Old fixtures are never deleted or re-blessed; a new format adds a new one.
//! `LOREBANK_BLESS=1` writes a fixture that does not exist yet (the `v1-wuchuan`
//! fixture was written under schema 1, which this code reads and no longer writes).

use std::path::PathBuf;

use ledger_model::record::{self, SCHEMA_CURRENT};
use ledger_model::*;
use projections::State;

fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/ledgers").join(name)
}

/// The history the `v1-wuchuan` fixture was written from: the example book's
/// glossary, two revisions, a retirement, and a rollback.
fn v1_wuchuan_history() -> Vec<NewEvent> {
    let glossary = include_str!("../../examples/wuchuan/glossary.jsonl");
    let mut bodies: Vec<Body> = glossary.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    // The fold table is named by a fixed id: snapshot IDs then do not depend on the
    // OpenCC version that built a real table.
    for body in &mut bodies {
        if let Body::ConfigSet(config) = body {
            config.profile.table = Some(Hash32([0x5a; 32]));
        }
    }
    let revised: Body = serde_json::from_str(
        r#"{"term_put":{"id":"T-7","src":"雾川","dst":"Туманная река","kind":"place","gender":"f"}}"#,
    )
    .unwrap();
    bodies.push(revised);
    bodies.push(Body::TermRetired(TermRetired { id: "T-8".parse().unwrap(), reason: Some("дубль".into()) }));
    let mut restored: Body = serde_json::from_str(glossary.lines().nth(8).unwrap()).unwrap();
    if let Body::TermPut(put) = &mut restored {
        assert_eq!(put.id.to_string(), "T-7");
    }
    bodies.push(restored);
    bodies.push(serde_json::from_str(glossary.lines().nth(9).unwrap()).unwrap());
    bodies.push(Body::RollbackMarker(RollbackMarker { to: Seq(14), reason: Some("keep the published name".into()) }));
    bodies
        .into_iter()
        .enumerate()
        .map(|(idx, body)| NewEvent {
            recorded_at_ms: 1_764_000_000_000 + idx as u64 * 1_000,
            actor: if idx < 14 { "import:example".into() } else { "human:editor".into() },
            source: format!("glossary.jsonl:{}", idx + 1),
            body,
        })
        .collect()
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read and bless fixture files")]
fn v1_wuchuan_reads_and_folds_to_its_pinned_snapshots() {
    let dir = fixture_dir("v1-wuchuan");
    let events_path = dir.join("events.bin");
    let expected_path = dir.join("snapshot.expected");
    if !events_path.exists() {
        assert!(std::env::var_os("LOREBANK_BLESS").is_some(), "{} is missing", events_path.display());
        let mut bytes = Vec::new();
        let mut expected = String::new();
        let mut prev = Hash32::GENESIS;
        let mut state = State::new();
        for (idx, event) in v1_wuchuan_history().iter().enumerate() {
            let seq = Seq(idx as u64 + 1);
            let (record_bytes, hash) = record::seal(seq, prev, SCHEMA_CURRENT, &event.encode().unwrap());
            bytes.extend_from_slice(&(record_bytes.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&record_bytes);
            state.apply(&record::open(seq, &record_bytes).unwrap());
            expected.push_str(&format!("{} {}\n", seq, state.snapshot_id()));
            prev = hash;
        }
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&events_path, bytes).unwrap();
        std::fs::write(&expected_path, expected).unwrap();
    }
    let bytes = std::fs::read(&events_path).unwrap();
    let expected = std::fs::read_to_string(&expected_path).unwrap();
    let mut state = State::new();
    let mut prev = Hash32::GENESIS;
    let mut at = 0usize;
    let mut lines = expected.lines();
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let record_bytes = &bytes[at + 4..at + 4 + len];
        at += 4 + len;
        let seq = state.revision().next();
        let event = record::open(seq, record_bytes).unwrap_or_else(|error| panic!("event {seq}: {error}"));
        assert_eq!(event.prev, prev, "event {seq}: broken link");
        // Stored under schema 1 and upcast on read: nothing of schema 2 is set, and
        // its schema-1 form is the stored payload.
        assert_eq!(event.schema, record::SCHEMA_1, "event {seq}");
        assert_eq!(record::stored_payload(&event).unwrap(), record_bytes[record::HEADER_BYTES..], "event {seq}");
        prev = event.hash;
        state.apply(&event);
        let line = lines.next().unwrap_or_else(|| panic!("no expected snapshot for revision {seq}"));
        assert_eq!(line, format!("{} {}", seq, state.snapshot_id()), "revision {seq}");
    }
    assert!(lines.next().is_none(), "fewer events than expected snapshots");
    // The rollback at the end restored revision 14's snapshot.
    let all: Vec<&str> = expected.lines().collect();
    let snapshot_of = |revision: usize| all[revision - 1].split(' ').nth(1).unwrap();
    assert_eq!(snapshot_of(all.len()), snapshot_of(14));
    assert_ne!(snapshot_of(15), snapshot_of(14));
}
