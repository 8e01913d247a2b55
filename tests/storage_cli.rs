//! Storage integrity through the binary, on copies of the stored v1 book
//! (`tests/testdata/books/v1-wuchuan.lorebank`): `verify` names a damaged blob by its
//! role; read commands and `assemble --dry-run` work on a read-only file and write
//! nothing; chunk keys over their limits exit 2; `rebuild` keeps every snapshot
//! replayable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ledger::Ledger;
use test_support::damage::flip_near;

const SNAPSHOTS: &[(u64, &str)] = &[
    (1, "ee3d22b37d2847d9a5a88791f4d6b0bb83b0349e83b2830c9fdce6dd41294a96"),
    (15, "d78da758451855dc0fcc47231c1af5cdb8cba9c7b8a30d563fd240ce6f9332a0"),
    (16, "0eece7a099777d7ad3e4afbaf0aa05cba6c09fe53ff2f0200d8b224485fb5270"),
];
const TEXT: &str = "沈照提着长明灯走过雾川，顾寒川在灯宗等他。\n";

struct StoredBook {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl StoredBook {
    fn new() -> StoredBook {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.lorebank");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/books/v1-wuchuan.lorebank");
        std::fs::copy(source, &path).unwrap();
        std::fs::write(dir.path().join("chunk.txt"), TEXT).unwrap();
        StoredBook { dir, path }
    }

    fn text(&self) -> String {
        self.dir.path().join("chunk.txt").display().to_string()
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(&self.path)
            .args(args)
            .env_remove("LOREBANK_BOOK")
            .env("LOREBANK_ACTOR", "human:test")
            .output()
            .unwrap()
    }

    fn exits(&self, args: &[&str], code: i32) -> (String, String) {
        let output = self.run(args);
        let (out, err) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(code), "{args:?}: {err}");
        (out.into_owned(), err.into_owned())
    }
}

/// Flips a byte in the middle of every stored copy of `bytes`.
fn flip_inside(path: &Path, bytes: &[u8]) {
    let middle = bytes.len() / 2;
    assert!(flip_near(path, &bytes[middle..middle + 64], 10, 0x01) > 0);
}

#[test]
fn verify_names_a_damaged_fold_table_and_reads_do_not_blame_an_event() {
    let book = StoredBook::new();
    book.exits(&["verify"], 0);
    let table = "241cb521039ee079208da67cb9f75eb25070890fd6ad7f5320f455779951e9b5";
    let bytes = {
        let ledger = Ledger::open_read_only(&book.path).unwrap();
        ledger.blob(ledger_model::Hash32::from_hex(table).unwrap()).unwrap().unwrap()
    };
    flip_inside(&book.path, &bytes);
    let (_, err) = book.exits(&["verify"], 3);
    assert!(err.contains(&format!("blob {table} (fold table of config at event 1) is corrupted")), "{err}");
    let (_, err) = book.exits(&["assemble", "--chapter", "1", "--chunk", "x", "--text", &book.text()], 3);
    assert!(err.contains(&format!("blob {table}")) && !err.contains("event 0"), "{err}");
}

#[test]
fn a_damaged_event_leaves_every_revision_before_it_readable_and_the_error_says_so() {
    let book = StoredBook::new();
    // Event 16 is the last one, the only event that holds this declension form.
    assert!(flip_near(&book.path, "Туманную реку".as_bytes(), 3, 0x01) > 0);
    let (_, err) = book.exits(&["show"], 3);
    assert!(err.contains("event 16 is corrupted"), "{err}");
    assert!(err.contains("revisions before 16 still read (`--as-of 15`"), "{err}");
    let (out, _) = book.exits(&["snapshot", "--as-of", "15"], 0);
    assert!(out.contains(SNAPSHOTS[1].1), "{out}");
    let (out, _) = book.exits(&["export", "--format", "galtransl", "--as-of", "15"], 0);
    assert!(out.contains("雾川\tМглистая река"), "{out}");
}

#[test]
fn read_commands_and_a_dry_run_work_on_a_read_only_file_and_write_nothing() {
    let book = StoredBook::new();
    let mut permissions = std::fs::metadata(&book.path).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&book.path, permissions).unwrap();
    let before = std::fs::read(&book.path).unwrap();
    let modified = std::fs::metadata(&book.path).unwrap().modified().unwrap();
    let receipt = {
        let ledger = Ledger::open_read_only(&book.path).unwrap();
        ledger.filed(None).unwrap()[0].3.to_hex()
    };
    let text = book.text();
    let commands: &[&[&str]] = &[
        &["verify"],
        &["show"],
        &["snapshot", "--as-of", "15"],
        &["diff", "15", "16"],
        &["term", "show", "T-7"],
        &["log"],
        &["audit", "--chapter", "1"],
        &["impact"],
        &["replay", &receipt],
        &["replay", "--snapshot", SNAPSHOTS[2].1, "--chapter", "1", "--text", &text],
        &["assemble", "--chapter", "1", "--chunk", "9", "--text", &text, "--dry-run"],
    ];
    for args in commands {
        book.exits(args, 0);
    }
    assert!(std::fs::read(&book.path).unwrap() == before, "a read command changed the book");
    assert_eq!(std::fs::metadata(&book.path).unwrap().modified().unwrap(), modified);
}

#[test]
fn chunk_keys_over_their_limits_exit_2() {
    let book = StoredBook::new();
    let text = book.text();
    let long = "k".repeat(ledger_model::limits::DOCUMENT_KEY_CHARS_MAX + 1);
    for key in ["", "a\nb", long.as_str()] {
        let (_, err) = book.exits(&["assemble", "--chapter", "1", "--chunk", key, "--text", &text], 2);
        assert!(err.contains("chunk key"), "{err}");
    }
    book.exits(&["assemble", "--chapter", "1", "--chunk", "ok", "--text", &text], 0);
}

#[test]
fn rebuild_keeps_every_snapshot_replayable_and_its_first_revision() {
    let book = StoredBook::new();
    book.exits(&["rebuild"], 0);
    let (out, _) = book.exits(&["--json", "snapshot", "--as-of", "18"], 0);
    assert!(out.contains("\"first_revision\":15"), "{out}");
    for (revision, snapshot) in SNAPSHOTS {
        let (out, _) = book.exits(&["--json", "snapshot", "--as-of", &revision.to_string()], 0);
        assert!(out.contains(&format!("\"first_revision\":{revision}")), "{out}");
        book.exits(&["replay", "--snapshot", snapshot, "--chapter", "1", "--text", &book.text()], 0);
    }
    book.exits(&["verify"], 0);
}
