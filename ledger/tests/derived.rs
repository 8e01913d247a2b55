//! Derived sets on real redb files: entries read back by key and by key prefix, in key
//! order, set by set; writes replace and remove in one commit and never touch the
//! log; a flipped byte in an entry makes it absent (dropped on a writable handle,
//! counted by `verify`, never damage); a read-only handle writes nothing; a book
//! written before the table existed has no sets; backups keep the sets; limits on
//! names, keys and sizes are refused with the limit.

mod support;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ledger::{AppendError, Ledger, DERIVED_KEY_BYTES_MAX, DERIVED_SET_BYTES_MAX};
use ledger_model::Seq;
use support::term;
use test_support::damage::flip_near;

fn book(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("book.lorebank")
}

fn entry(key: &str, value: &str) -> (Vec<u8>, Vec<u8>) {
    (key.as_bytes().to_vec(), value.as_bytes().to_vec())
}

fn scan(ledger: &Ledger, set: &str, prefix: &str) -> (Vec<(String, String)>, u64) {
    let mut seen = Vec::new();
    let n_bad = ledger
        .derived_scan(set, prefix.as_bytes(), |key, value| {
            seen.push((String::from_utf8(key.to_vec()).unwrap(), String::from_utf8(value.to_vec()).unwrap()));
            ControlFlow::Continue(())
        })
        .unwrap();
    (seen, n_bad)
}

#[test]
fn entries_read_back_by_key_and_prefix_in_key_order_per_set() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    ledger.append(&[term(1, "one")], Some(Seq(0))).unwrap();
    let head = ledger.head().unwrap();
    ledger
        .derived_write("vectors", &[entry("m1/b", "B"), entry("m1/a", "A"), entry("m2/a", "other model")], &[])
        .unwrap();
    ledger.derived_write("other", &[entry("m1/a", "another set")], &[]).unwrap();
    assert_eq!(ledger.derived_get("vectors", b"m1/a").unwrap().as_deref(), Some(&b"A"[..]));
    assert_eq!(ledger.derived_get("other", b"m1/a").unwrap().as_deref(), Some(&b"another set"[..]));
    assert_eq!(ledger.derived_get("vectors", b"m3").unwrap(), None);
    assert_eq!(ledger.derived_get("absent", b"m1/a").unwrap(), None);
    let (seen, n_bad) = scan(&ledger, "vectors", "m1/");
    assert_eq!(seen, [("m1/a".into(), "A".into()), ("m1/b".into(), "B".into())]);
    assert_eq!(n_bad, 0);
    assert_eq!(scan(&ledger, "vectors", "").0.len(), 3);
    assert_eq!(ledger.derived_keys("vectors").unwrap(), [b"m1/a".to_vec(), b"m1/b".to_vec(), b"m2/a".to_vec()]);
    // Replace one, remove one, in one commit.
    ledger.derived_write("vectors", &[entry("m1/a", "A2")], &[b"m2/a".to_vec()]).unwrap();
    assert_eq!(scan(&ledger, "vectors", "").0, [("m1/a".into(), "A2".into()), ("m1/b".into(), "B".into())]);
    let sets = ledger.derived_sets().unwrap();
    assert_eq!(
        sets.iter().map(|set| (set.name.as_str(), set.n_entries)).collect::<Vec<_>>(),
        [("other", 1), ("vectors", 2)]
    );
    // 32 bytes of checksum per entry, plus the set name, key and value.
    assert_eq!(sets[1].n_bytes, 2 * (7 + 4 + 32) + 2 + 1);
    // The log is not touched.
    assert_eq!(ledger.head().unwrap(), head);
    assert_eq!(ledger.derived_clear(Some("vectors")).unwrap(), 2);
    assert!(ledger.derived_keys("vectors").unwrap().is_empty());
    assert_eq!(ledger.derived_clear(None).unwrap(), 1);
    assert!(ledger.derived_sets().unwrap().is_empty());
    assert_eq!(ledger.verify().unwrap().n_derived, 0);
}

#[test]
fn a_damaged_entry_is_absent_dropped_and_counted_never_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    {
        let ledger = Ledger::create(&path).unwrap();
        ledger.append(&[term(1, "one")], Some(Seq(0))).unwrap();
        ledger
            .derived_write(
                "vectors",
                &[entry("k1", "derived-marker-one"), entry("k2", "derived-marker-two"), entry("k3", "fine")],
                &[],
            )
            .unwrap();
    }
    assert_eq!(flip_near(&path, b"derived-marker-one", 3, 0x10), 1);
    assert_eq!(flip_near(&path, b"derived-marker-two", 3, 0x10), 1);
    // Read-only: the damaged entries are counted and skipped, and stay in the file.
    {
        let ledger = Ledger::open_read_only(&path).unwrap();
        let report = ledger.verify().unwrap();
        assert_eq!((report.n_derived, report.n_derived_dropped), (1, 2));
        assert_eq!(ledger.derived_get("vectors", b"k1").unwrap(), None);
        assert_eq!(scan(&ledger, "vectors", ""), (vec![("k3".into(), "fine".into())], 2));
    }
    // Writable: a read drops what it skips, and verify the rest.
    let ledger = Ledger::open(&path).unwrap();
    assert_eq!(ledger.derived_get("vectors", b"k1").unwrap(), None);
    assert_eq!(ledger.derived_keys("vectors").unwrap(), [b"k2".to_vec(), b"k3".to_vec()]);
    let report = ledger.verify().unwrap();
    assert_eq!((report.n_derived, report.n_derived_dropped), (1, 1));
    assert_eq!(ledger.derived_keys("vectors").unwrap(), [b"k3".to_vec()]);
    assert_eq!(ledger.verify().unwrap().n_derived_dropped, 0);
    // The book itself is fine: appends go on.
    ledger.append(&[term(2, "two")], Some(Seq(1))).unwrap();
}

#[test]
fn a_read_only_handle_writes_nothing_and_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    {
        let ledger = Ledger::create(&path).unwrap();
        let too_long_key = vec![b'k'; DERIVED_KEY_BYTES_MAX + 1];
        let error = ledger.derived_write("vectors", &[(too_long_key, b"x".to_vec())], &[]).unwrap_err();
        assert!(matches!(&error, AppendError::DerivedEntry { .. }), "{error}");
        assert!(error.to_string().contains(&DERIVED_KEY_BYTES_MAX.to_string()), "{error}");
        for bad in [String::new(), "s".repeat(DERIVED_SET_BYTES_MAX + 1), "a\nb".into()] {
            let error = ledger.derived_write(&bad, &[entry("k", "v")], &[]).unwrap_err();
            assert!(matches!(error, AppendError::DerivedEntry { .. }), "{bad:?}: {error}");
        }
        assert!(ledger.derived_sets().unwrap().is_empty(), "a refused write writes nothing");
        ledger.derived_write("vectors", &[entry("k", "v")], &[]).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let ledger = Ledger::open_read_only(&path).unwrap();
    assert!(ledger.derived_write("vectors", &[entry("k2", "v")], &[]).is_err());
    assert!(ledger.derived_clear(None).is_err());
    drop(ledger);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
#[allow(clippy::disallowed_methods, reason = "the test copies a committed book")]
fn a_book_from_before_the_table_has_no_sets_and_gets_one_on_the_first_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let stored = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/testdata/books/v1-wuchuan.lorebank");
    std::fs::copy(&stored, &path).unwrap();
    {
        let ledger = Ledger::open_read_only(&path).unwrap();
        assert!(ledger.derived_sets().unwrap().is_empty());
        assert_eq!(ledger.derived_get("vectors", b"k").unwrap(), None);
        assert_eq!(scan(&ledger, "vectors", ""), (Vec::new(), 0));
        assert_eq!(ledger.verify().unwrap().n_derived, 0);
    }
    let ledger = Ledger::open(&path).unwrap();
    ledger.derived_write("vectors", &[entry("k", "v")], &[]).unwrap();
    assert_eq!(ledger.verify().unwrap().n_derived, 1);
}

#[test]
fn a_backup_keeps_the_sets() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    ledger.append(&[term(1, "one")], Some(Seq(0))).unwrap();
    ledger.derived_write("vectors", &[entry("k", "v")], &[]).unwrap();
    let copy = dir.path().join("copy.lorebank");
    ledger.backup_to(&copy, false).unwrap();
    let copied = Ledger::open_read_only(&copy).unwrap();
    assert_eq!(copied.derived_get("vectors", b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
