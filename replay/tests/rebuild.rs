//! The snapshot index is derived data that the log alone can rebuild: batch ends are
//! recorded in the log (record format 2), so `Book::rebuild_index` restores every
//! batch-end snapshot with its first revision, and every one of them replays.

use std::path::Path;

use ledger::{Attachments, Ledger};
use ledger_model::*;
use matcher::{Flavour, ProfileBuilder};
use projections::SnapshotId;
use replay::Book;

fn event(body: Body) -> NewEvent {
    NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "test".into(), body }
}

fn term(number: u32, src: &str, dst: &str) -> Body {
    Body::TermPut(TermPut::new(RecordId::new(RecordKind::Term, number).unwrap(), src, dst))
}

/// Appends straight to the ledger, without snapshot attachments: the index stays
/// empty, as after its loss.
fn unindexed_book(path: &Path) {
    let ledger = Ledger::create(path).unwrap();
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let table = Hash32(profile.id().0);
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "zh".into(), table: Some(table) },
    });
    let blobs = vec![(table, profile.to_bytes())];
    ledger.append_with(&[event(config)], None, Attachments { blobs, snapshot: None, documents: Vec::new() }).unwrap();
    ledger.append(&[event(term(1, "沈照", "Шэнь Чжао")), event(term(2, "雾川", "Мглистая река"))], None).unwrap();
    ledger.append(&[event(term(2, "雾川", "Туманная река"))], None).unwrap();
    ledger.append(&[event(term(2, "雾川", "Мглистая река"))], None).unwrap();
}

#[test]
fn rebuild_restores_every_batch_end_snapshot_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    unindexed_book(&path);
    let mut book = Book::open(&path).unwrap();
    assert!(book.ledger().snapshot_index().unwrap().is_empty());
    assert_eq!(book.rebuild_index().unwrap(), 4);
    let mut expected = Vec::new();
    for revision in [1, 3, 4] {
        let state = book.state(Some(Seq(revision))).unwrap();
        expected.push((state.snapshot_id().0, Seq(revision)));
    }
    // Revision 5 has revision 3's snapshot again: its first revision stays 3.
    assert_eq!(book.state(None).unwrap().snapshot_id().0, expected[1].0);
    expected.sort();
    assert_eq!(book.ledger().snapshot_index().unwrap(), expected);
    for (id, revision) in &expected {
        let assembly = book.assemble_at_snapshot(SnapshotId(*id), 1, "沈照走过雾川。").unwrap();
        assert_eq!(assembly.context.contains("Туманная река"), *revision == Seq(4), "revision {revision}");
    }
    book.verify().unwrap();
}
