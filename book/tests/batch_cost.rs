//! A write, a rebuild of the snapshot index and a verify of a book whose one batch
//! added many aliases to one term cost what the batch does: each is run on a book of
//! n and of 2n aliases, and the bytes allocated are compared (a global allocator
//! counts them, one test at a time, so counts, not times). The snapshot ID used to
//! re-encode the term once per event of the batch, with every alias it had so far.
//! An import of a file whose entries all share keys costs what the file does too:
//! settling which record each entry is never compares two entries.

use book::Book;
use ledger_model::*;
use test_support::books::import_options;
use test_support::books::init_book;
use test_support::counting::{allocated, alone, names};
use test_support::records::{alias, event, term};

test_support::count_allocations!();

/// A book with T-1 萧炎, and the batch of `n` aliases of it.
fn book(dir: &std::path::Path, n: usize) -> (Book, Vec<NewEvent>) {
    let mut book = init_book(&dir.join("book.lorebank"), "zh");
    book.submit(&[event(term("T-1", "萧炎", "Сяо Янь"))], None, vec![]).unwrap();
    let aliases = names(n).iter().map(|surface| event(Body::AliasAdded(alias("T-1", surface)))).collect();
    (book, aliases)
}

/// Bytes allocated by a write of n aliases of one term, by a rebuild of the snapshot
/// index after it, and by a verify.
fn costs(n: usize) -> [u64; 3] {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, batch) = book(dir.path(), n);
    // The checkpoint the write files runs on a thread of its own; it is waited for
    // inside the measure, so its allocations never fall into the next one.
    let (submitted, submit) = allocated(|| {
        let submitted = book.submit(&batch, None, vec![]).unwrap();
        book.wait_for_checkpoint();
        submitted
    });
    assert_eq!(submitted.decision.events.len(), n);
    let (ends, rebuild) = allocated(|| book.rebuild_index().unwrap());
    assert!(ends >= 2);
    let (_, verify) = allocated(|| book.verify().unwrap());
    [submit, rebuild, verify]
}

#[test]
fn a_batch_of_aliases_of_one_term_costs_what_the_batch_does() {
    let _alone = alone();
    // Below the ledger's pipelined scan (4,096 events), so both read on one thread.
    let n = 2_000;
    let single = costs(n);
    let doubled = costs(2 * n);
    for ((what, single), doubled) in ["submit", "rebuild_index", "verify"].iter().zip(single).zip(doubled) {
        let ratio = doubled as f64 / single as f64;
        assert!(
            ratio <= 2.5,
            "{what}: {n} aliases allocated {single} bytes, {} allocated {doubled} ({ratio:.2}x): more than linear",
            2 * n
        );
    }
}

/// A SillyTavern world of `n` entries keyed 敌人, 战斗, 遭遇 with one title (each a
/// sense of 敌人, numbered), and `n` entries with names of their own and the alias
/// 遭遇, which the first entry keeps.
fn sharing_world(n: usize) -> Vec<u8> {
    let mut entries = serde_json::Map::new();
    for (uid, name) in names(n).iter().enumerate() {
        let shared = serde_json::json!({ "uid": 2 * uid, "key": ["敌人", "战斗", "遭遇"], "comment": "Враг" });
        let own = serde_json::json!({ "uid": 2 * uid + 1, "key": [name, "遭遇"], "comment": "Имя" });
        entries.insert((2 * uid).to_string(), shared);
        entries.insert((2 * uid + 1).to_string(), own);
    }
    serde_json::to_vec(&serde_json::json!({ "entries": entries })).unwrap()
}

/// Bytes allocated by the import of [`sharing_world`] of `n` into a new book.
fn import_cost(n: usize) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("book.lorebank"), "zh");
    let world = sharing_world(n);
    let (report, bytes) = allocated(|| {
        let report = book.import("world.json", &world, &import_options()).unwrap();
        book.wait_for_checkpoint();
        report
    });
    assert_eq!((report.imported.len(), report.collisions.len()), (2 * n, 2 * n - 1));
    bytes
}

#[test]
fn an_import_whose_entries_all_share_keys_costs_what_the_file_does() {
    let _alone = alone();
    let n = 1_500;
    let single = import_cost(n);
    let doubled = import_cost(2 * n);
    let ratio = doubled as f64 / single as f64;
    assert!(
        ratio <= 2.5,
        "import: {} entries allocated {single} bytes, {} allocated {doubled} ({ratio:.2}x): more than linear",
        2 * n,
        4 * n
    );
}
