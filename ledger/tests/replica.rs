//! The ledger's side of replication (`docs/scale.md`): a commit gate sees every group
//! before its durable commit and can stop it (nothing written, the handle still
//! appends), a node's copy of a replicated book refuses writes that do not come
//! through a gate, and groups applied to a copy give byte-identical records, blobs,
//! documents and indexes.

use std::sync::{Arc, Mutex};

use ledger::replica::{Follower, Group, Offered};
use ledger::{
    AppendError, Attachments, CommitGate, Document, GateRefusal, GateRefusalKind, Head, Ledger, ReplicaPosition,
};
use ledger_model::{Body, Hash32, NewEvent, Seq, TermRetired};

fn event(n: u32) -> NewEvent {
    NewEvent {
        recorded_at_ms: 1_000 + u64::from(n),
        actor: "human:test".into(),
        source: format!("test#{n}"),
        body: Body::TermRetired(TermRetired { id: format!("T-{n}").parse().unwrap(), reason: None }),
    }
}

/// A gate that keeps every group it admits, as a log would, or refuses them all.
#[derive(Default)]
struct Recorder {
    groups: Mutex<Vec<Vec<u8>>>,
    refuse: Mutex<Option<GateRefusalKind>>,
}

impl CommitGate for Recorder {
    fn admit(&self, group: &Group) -> Result<ReplicaPosition, GateRefusal> {
        if let Some(kind) = *self.refuse.lock().unwrap() {
            return Err(GateRefusal { kind, detail: "refused by the test".into() });
        }
        let bytes = group.encode();
        let mut groups = self.groups.lock().unwrap();
        groups.push(bytes.clone());
        Ok(ReplicaPosition { position: groups.len() as u64, group: Group::id_of(&bytes).unwrap() })
    }
}

/// The book's stored records, blobs, documents and index, through the archive.
fn archive(ledger: &Ledger) -> ledger::Archive {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.archive");
    ledger.export_archive(&out, false).unwrap();
    ledger::read_archive("a", &std::fs::read(&out).unwrap()).unwrap()
}

#[test]
fn the_gate_sees_every_group_and_its_copy_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Ledger::create_replica(&dir.path().join("a.lorebank")).unwrap();
    let gate = Arc::new(Recorder::default());
    writer.set_gate(Some(gate.clone()));
    writer.append_with(&[event(1), event(2)], Some(Seq(0)), Attachments::default()).unwrap();
    let blob = (Hash32([7; 32]), b"a fold table".to_vec());
    let attachments = Attachments { blobs: vec![blob.clone()], snapshot: Some(Hash32([5; 32])), documents: vec![] };
    writer.append_with(&[event(3)], Some(Seq(2)), attachments).unwrap();
    let document = Document { id: Hash32([9; 32]), bytes: b"a receipt".to_vec(), group: 1, key: "c1".into() };
    writer.file_documents(vec![document.clone()], vec![(Hash32([8; 32]), b"its text".to_vec())]).unwrap();
    // The same document again is not new: nothing is shown to the gate.
    writer.file_documents(vec![document], vec![]).unwrap();
    let groups = gate.groups.lock().unwrap().clone();
    assert_eq!(groups.len(), 3);
    assert_eq!(
        writer.replica().unwrap(),
        Some(ReplicaPosition { position: 3, group: Group::id_of(&groups[2]).unwrap() })
    );

    // A copy applies the groups as a follower hands them out.
    let copy = Ledger::create_replica(&dir.path().join("b.lorebank")).unwrap();
    let mut follower = Follower::at(Head::EMPTY, 0);
    for (index, bytes) in groups.iter().enumerate() {
        let position = index as u64 + 1;
        let part = ledger::replica::split(bytes, 1 << 20).unwrap().remove(0);
        let Offered::Ready(group) = follower.offer(position, &part).unwrap() else { panic!("group {index}") };
        let at = ReplicaPosition { position, group: Group::id_of(bytes).unwrap() };
        follower.applied(position, &group);
        copy.apply_replica(vec![group], at).unwrap();
    }
    assert_eq!(copy.head().unwrap(), writer.head().unwrap());
    assert_eq!(copy.replica().unwrap(), writer.replica().unwrap());
    assert_eq!(archive(&copy), archive(&writer));
    assert_eq!(copy.snapshot_revision(Hash32([5; 32])).unwrap(), Some(Seq(3)));
    assert_eq!(copy.blob(blob.0).unwrap(), Some(blob.1));
    copy.verify().unwrap();
}

#[test]
fn a_refused_group_writes_nothing_and_the_handle_still_appends() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create_replica(&dir.path().join("a.lorebank")).unwrap();
    let gate = Arc::new(Recorder::default());
    ledger.set_gate(Some(gate.clone()));
    ledger.append(&[event(1)], Some(Seq(0))).unwrap();
    for kind in [GateRefusalKind::Stale, GateRefusalKind::Unavailable, GateRefusalKind::Refused] {
        *gate.refuse.lock().unwrap() = Some(kind);
        let error = ledger.append(&[event(2)], Some(Seq(1))).unwrap_err();
        assert!(matches!(&error, AppendError::Gate(refusal) if refusal.kind == kind), "{error}");
        let error = ledger
            .file_documents(vec![Document { id: Hash32([1; 32]), bytes: vec![1], group: 1, key: "k".into() }], vec![])
            .unwrap_err();
        assert!(matches!(error, AppendError::Gate(_)));
        assert_eq!(ledger.head().unwrap().seq, Seq(1));
        assert_eq!(ledger.document(Hash32([1; 32])).unwrap(), None);
    }
    *gate.refuse.lock().unwrap() = None;
    // A stale expected head through a gate is the book moving on, not the caller's conflict.
    let error = ledger.append(&[event(2)], Some(Seq(0))).unwrap_err();
    assert!(matches!(&error, AppendError::Gate(refusal) if refusal.kind == GateRefusalKind::Stale), "{error}");
    ledger.append(&[event(2)], Some(Seq(1))).unwrap();
    assert_eq!(gate.groups.lock().unwrap().len(), 2);
    ledger.verify().unwrap();
}

#[test]
fn a_copy_without_a_gate_refuses_writes_and_applies_only_at_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.lorebank");
    let writer = Ledger::create_replica(&path).unwrap();
    let gate = Arc::new(Recorder::default());
    writer.set_gate(Some(gate.clone()));
    writer.append(&[event(1)], None).unwrap();
    writer.append(&[event(2)], None).unwrap();
    writer.set_gate(None);
    let error = writer.append(&[event(3)], None).unwrap_err();
    assert!(matches!(error, AppendError::Replica { position: 2, .. }), "{error}");
    assert!(error.to_string().contains("write through a node of its library"), "{error}");
    let error = writer.file_documents(vec![], vec![(Hash32([1; 32]), vec![1])]).unwrap_err();
    assert!(matches!(error, AppendError::Replica { .. }));
    drop(writer);
    // Reopened by hand (a `lorebank` command on the file), it is still a copy.
    let reopened = Ledger::open(&path).unwrap();
    assert!(matches!(reopened.append(&[event(3)], None), Err(AppendError::Replica { .. })));

    let copy = Ledger::create_replica(&dir.path().join("b.lorebank")).unwrap();
    let groups = gate.groups.lock().unwrap().clone();
    let checked = |bytes: &[u8]| Group::decode(bytes).unwrap().check().unwrap();
    let at = |position: u64, bytes: &[u8]| ReplicaPosition { position, group: Group::id_of(bytes).unwrap() };
    // The second group first: it does not start at the empty book.
    let error = copy.apply_replica(vec![checked(&groups[1])], at(2, &groups[1])).unwrap_err();
    assert!(matches!(error, AppendError::NotAtHead { .. }), "{error}");
    assert_eq!(copy.head().unwrap(), Head::EMPTY);
    // Both in one transaction.
    let head = copy.apply_replica(vec![checked(&groups[0]), checked(&groups[1])], at(2, &groups[1])).unwrap();
    assert_eq!(head, reopened.head().unwrap());
    // Out of order within one call: nothing is written.
    let error = copy.apply_replica(vec![checked(&groups[0])], at(3, &groups[0])).unwrap_err();
    assert!(matches!(error, AppendError::NotAtHead { .. }));
    assert_eq!(copy.replica().unwrap(), Some(at(2, &groups[1])));
    copy.verify().unwrap();
}

#[test]
fn a_book_of_its_own_is_no_replica() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&dir.path().join("a.lorebank")).unwrap();
    assert_eq!(ledger.replica().unwrap(), None);
    ledger.append(&[event(1)], None).unwrap();
    assert_eq!(ledger.replica().unwrap(), None);
}
