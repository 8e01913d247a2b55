//! Backup, restore and the portable archive, end to end through the binary, on
//! copies of the stored v1 book (`tests/testdata/books/v1-wuchuan.lorebank`, which
//! has receipts) with new batches and receipts of the current record format on top:
//! a backup taken while 4 writer processes append verifies and ends at a batch end
//! a writer was told about; a restore on another path keeps every snapshot ID and
//! every receipt replays; a flipped byte in a backup is refused by restore; an
//! archive round trip keeps the head, the snapshot IDs and every receipt; corrupt
//! archives (a flipped byte, a truncated file, reordered records) create nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ledger::Ledger;
use serde_json::Value;

const TEXT: &str = "沈照提着长明灯走过雾川，顾寒川在灯宗等他。\n";

struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    /// A directory holding `book.lorebank`: the stored v1 book plus one batch and one
    /// receipt written by this build.
    fn with_book() -> Dir {
        let dir = Dir { dir: tempfile::tempdir().unwrap() };
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/books/v1-wuchuan.lorebank");
        std::fs::copy(source, dir.path("book.lorebank")).unwrap();
        std::fs::write(dir.path("chunk.txt"), TEXT).unwrap();
        let text = dir.arg("chunk.txt");
        dir.ok("book.lorebank", &["term", "put", "--id", "T-90", "--src", "灯塔", "--dst", "Маяк"]);
        dir.ok("book.lorebank", &["assemble", "--chapter", "1", "--chunk", "new-1", "--text", &text]);
        dir
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn arg(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    fn run(&self, book: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(self.path(book))
            .args(args)
            .env_remove("LOREBANK_SERVER")
            .env_remove("LOREBANK_BOOK")
            .output()
            .unwrap()
    }

    fn exits(&self, book: &str, args: &[&str], code: i32) -> (String, String) {
        let output = self.run(book, args);
        let (out, err) = (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        );
        assert_eq!(output.status.code(), Some(code), "{args:?} on {book}\nstdout: {out}\nstderr: {err}");
        (out, err)
    }

    fn ok(&self, book: &str, args: &[&str]) -> String {
        self.exits(book, args, 0).0
    }

    fn json(&self, book: &str, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        serde_json::from_str(&self.ok(book, &args)).unwrap()
    }

    /// The snapshot ID at every revision of the book.
    fn snapshots(&self, book: &str) -> Vec<String> {
        let head = self.json(book, &["snapshot"])["revision"].as_u64().unwrap();
        (1..=head)
            .map(|revision| {
                self.json(book, &["snapshot", "--as-of", &revision.to_string()])["snapshot"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    /// Replays every filed receipt of the book; returns how many.
    fn replay_all(&self, book: &str) -> usize {
        let receipts = Ledger::open_read_only(&self.path(book)).unwrap().filed(None).unwrap();
        for (_, _, _, id) in &receipts {
            let replayed = self.json(book, &["replay", &id.to_hex()]);
            assert_eq!(replayed["identical"], Value::Bool(true), "receipt {id} of {book}: {replayed}");
        }
        receipts.len()
    }

    /// Names in the directory (no partial files may be left behind).
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

#[test]
fn a_restore_on_another_path_keeps_every_snapshot_id_and_every_receipt_replays() {
    let dir = Dir::with_book();
    let backup = dir.json("book.lorebank", &["backup", &dir.arg("backup.lorebank")]);
    assert_eq!(backup["head"], dir.json("book.lorebank", &["snapshot"])["revision"]);
    std::fs::create_dir(dir.path("elsewhere")).unwrap();
    let restored = dir.json("elsewhere/moved.lorebank", &["restore", &dir.arg("backup.lorebank")]);
    assert_eq!(restored["snapshot"], backup["snapshot"]);
    assert_eq!(restored["hash"], backup["hash"]);
    assert_eq!(dir.snapshots("elsewhere/moved.lorebank"), dir.snapshots("book.lorebank"));
    assert_eq!(dir.replay_all("elsewhere/moved.lorebank"), 6);
    dir.ok("elsewhere/moved.lorebank", &["verify"]);
    // The restored book is a book: it takes writes.
    dir.ok("elsewhere/moved.lorebank", &["term", "put", "--id", "T-91", "--src", "雾灯", "--dst", "Туманный фонарь"]);
}

#[test]
fn existing_targets_are_refused_unless_forced() {
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["backup", &dir.arg("backup.lorebank")]);
    let (_, err) = dir.exits("book.lorebank", &["backup", &dir.arg("backup.lorebank")], 2);
    assert!(err.contains("already exists, and replacing it was not asked for (pass --force to replace it)"), "{err}");
    dir.ok("book.lorebank", &["backup", &dir.arg("backup.lorebank"), "--force"]);
    let (_, err) = dir.exits("book.lorebank", &["restore", &dir.arg("backup.lorebank")], 2);
    assert!(err.contains("already exists"), "{err}");
    // A forced restore over the live book, after a later write: the write is gone.
    let before = dir.json("book.lorebank", &["snapshot"]);
    dir.ok("book.lorebank", &["term", "put", "--id", "T-92", "--src", "川灯", "--dst", "Речной фонарь"]);
    dir.ok("book.lorebank", &["restore", &dir.arg("backup.lorebank"), "--force"]);
    assert_eq!(dir.json("book.lorebank", &["snapshot"]), before);
    dir.ok("book.lorebank", &["export-archive", &dir.arg("book.archive")]);
    dir.exits("book.lorebank", &["export-archive", &dir.arg("book.archive")], 2);
    dir.exits("book.lorebank", &["import-archive", &dir.arg("book.archive")], 2);
    let (_, err) = dir.exits("book.lorebank", &["--server", "http://127.0.0.1:9", "backup", "x"], 2);
    assert!(err.contains("not with --server"), "{err}");
}

#[test]
fn a_flipped_byte_in_a_backup_is_refused_by_restore_and_nothing_is_installed() {
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["backup", &dir.arg("backup.lorebank")]);
    let clean = std::fs::read(dir.path("backup.lorebank")).unwrap();
    // The payload hash of event 10 is stored once: in that event's header.
    let event = Ledger::open_read_only(&dir.path("backup.lorebank")).unwrap().get(ledger_model::Seq(10)).unwrap();
    let needle = ledger_model::record::payload_hash(&ledger_model::record::stored_payload(&event).unwrap()).0;
    let found: Vec<usize> =
        clean.windows(32).enumerate().filter(|(_, window)| *window == needle).map(|(at, _)| at).collect();
    assert_eq!(found.len(), 1, "the payload hash of event 10 is stored once");
    let at = found[0] + 7;
    let mut damaged = clean.clone();
    damaged[at] ^= 0x01;
    std::fs::write(dir.path("damaged.lorebank"), &damaged).unwrap();
    let before = dir.names();
    let (_, err) = dir.exits("restored.lorebank", &["restore", &dir.arg("damaged.lorebank")], 3);
    assert!(err.contains("damaged.lorebank") && err.contains("corrupted"), "{err}");
    assert_eq!(dir.names(), before, "a refused restore left a file");
    // Not even over an existing book with --force.
    let book = std::fs::read(dir.path("book.lorebank")).unwrap();
    dir.exits("book.lorebank", &["restore", &dir.arg("damaged.lorebank"), "--force"], 3);
    assert!(std::fs::read(dir.path("book.lorebank")).unwrap() == book, "a refused restore changed the book");
}

#[test]
fn an_archive_round_trip_keeps_the_head_the_snapshot_ids_and_every_receipt() {
    let dir = Dir::with_book();
    let exported = dir.json("book.lorebank", &["export-archive", &dir.arg("book.archive")]);
    assert!(std::fs::read(dir.path("book.archive")).unwrap().starts_with(b"lorebank-archive 1\n"));
    let imported = dir.json("moved.lorebank", &["import-archive", &dir.arg("book.archive")]);
    for field in ["head", "hash", "snapshot", "n_events", "n_blobs", "n_documents"] {
        assert_eq!(imported[field], exported[field], "{field}");
    }
    assert_eq!(dir.snapshots("moved.lorebank"), dir.snapshots("book.lorebank"));
    assert_eq!(dir.replay_all("moved.lorebank"), 6);
    let log = |book: &str| dir.ok(book, &["log", "--json"]);
    assert_eq!(log("moved.lorebank"), log("book.lorebank"));
    // The same book exports the same archive, byte for byte.
    dir.ok("moved.lorebank", &["export-archive", &dir.arg("again.archive")]);
    assert!(std::fs::read(dir.path("again.archive")).unwrap() == std::fs::read(dir.path("book.archive")).unwrap());
}

/// Frames of an archive: (offset, length with its 5-byte frame head), after the header.
fn frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut at = ledger::ARCHIVE_MAGIC.len();
    let mut out = Vec::new();
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        out.push((at, 5 + len));
        at += 5 + len;
    }
    out
}

#[test]
fn corrupt_archives_are_refused_with_the_place_named_and_nothing_created() {
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["export-archive", &dir.arg("book.archive")]);
    let clean = std::fs::read(dir.path("book.archive")).unwrap();
    let spans = frames(&clean);
    let (event_2, event_3) = (spans[1], spans[2]);
    let mut flipped = clean.clone();
    flipped[event_2.0 + 5 + 40 + 90] ^= 0x20;
    let mut reordered = clean[..event_2.0].to_vec();
    reordered.extend_from_slice(&clean[event_3.0..event_3.0 + event_3.1]);
    reordered.extend_from_slice(&clean[event_2.0..event_2.0 + event_2.1]);
    reordered.extend_from_slice(&clean[event_3.0 + event_3.1..]);
    assert_eq!(reordered.len(), clean.len());
    let mut checksum = clean.clone();
    let last = checksum.len() - 1;
    checksum[last] ^= 0x01;
    let mut trailing = clean.clone();
    trailing.push(0);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("flipped", flipped, "event 2"),
        ("truncated", clean[..clean.len() - 10].to_vec(), "only"),
        ("headless", clean[..ledger::ARCHIVE_MAGIC.len() + 3].to_vec(), "ends before its end frame"),
        ("reordered", reordered, "holds event 3, expected event 2"),
        ("checksum", checksum, "checksum"),
        ("trailing", trailing, "follow the end frame"),
        ("version", [b"lorebank-archive 9\n".as_slice(), &clean[19..]].concat(), "version \"9\""),
        ("empty", Vec::new(), "not a lorebank archive"),
    ];
    for (name, bytes, says) in cases {
        let archive = format!("{name}.archive");
        std::fs::write(dir.path(&archive), bytes).unwrap();
        let before = dir.names();
        let (_, err) = dir.exits("new.lorebank", &["import-archive", &dir.arg(&archive)], 3);
        assert!(err.contains(&archive) && err.contains("byte") && err.contains(says), "{name}: {err}");
        assert_eq!(dir.names(), before, "{name}: a refused import left a file");
    }
}

#[test]
fn a_backup_taken_while_four_writer_processes_append_verifies_and_ends_at_an_acknowledged_batch() {
    let dir = Dir::with_book();
    let start = dir.json("book.lorebank", &["snapshot"])["revision"].as_u64().unwrap();
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let path = dir.path("book.lorebank");
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                for n in 0..6 {
                    let id = format!("T-{}", 200 + writer * 10 + n);
                    let src = format!("词{writer}条{n}");
                    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
                        .arg("--book")
                        .arg(&path)
                        .args(["--json", "term", "put", "--id", &id, "--src", &src, "--dst", "перевод"])
                        .env_remove("LOREBANK_SERVER")
                        .output()
                        .unwrap();
                    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
                    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
                    acknowledged.push(answer["last"].as_u64().unwrap());
                }
                acknowledged
            })
        })
        .collect();
    let mut backups = Vec::new();
    for n in 0..4 {
        let name = format!("backup-{n}.lorebank");
        backups.push((dir.json("book.lorebank", &["backup", &dir.arg(&name)])["head"].as_u64().unwrap(), name));
    }
    let mut acknowledged: Vec<u64> = writers.into_iter().flat_map(|writer| writer.join().unwrap()).collect();
    acknowledged.push(start);
    let full_log = dir.ok("book.lorebank", &["log", "--json"]);
    let full: Vec<&str> = full_log.lines().collect();
    assert_eq!(full.len() as u64, start + 24);
    for (head, name) in backups {
        assert!(acknowledged.contains(&head), "{name} ends at {head}, which no writer was told about");
        dir.ok(&name, &["verify"]);
        let log = dir.ok(&name, &["log", "--json"]);
        let copied: Vec<&str> = log.lines().collect();
        assert_eq!(copied[..], full[..head as usize], "{name} is not a prefix of the book");
    }
}

#[test]
fn a_forced_restore_waits_for_the_writer_turn_and_replaces_nothing_without_it() {
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["backup", &dir.arg("backup.lorebank")]);
    dir.ok("book.lorebank", &["term", "put", "--id", "T-93", "--src", "灯川", "--dst", "Ламповая река"]);
    {
        // This process is the book's writer: the restore may not get in.
        let _writer =
            Ledger::open_in_turn(&dir.path("book.lorebank"), &mut ledger::Patience::new(std::time::Duration::ZERO))
                .unwrap();
        let (_, err) =
            dir.exits("book.lorebank", &["--wait", "0.2", "restore", &dir.arg("backup.lorebank"), "--force"], 1);
        assert!(err.contains("in use by another process"), "{err}");
    }
    // The book in use was not replaced: the write after the backup is still there.
    dir.ok("book.lorebank", &["term", "show", "T-93"]);
    dir.ok("book.lorebank", &["restore", &dir.arg("backup.lorebank"), "--force"]);
    dir.exits("book.lorebank", &["term", "show", "T-93"], 2);
}

#[test]
fn an_archive_whose_checksums_hold_but_whose_receipt_is_filed_under_another_id_creates_nothing() {
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["export-archive", &dir.arg("book.archive")]);
    let mut bytes = std::fs::read(dir.path("book.archive")).unwrap();
    let spans = frames(&bytes);
    let (document, _) = *spans.iter().find(|(at, _)| bytes[*at] == b'D').unwrap();
    // The document's bytes and checksum hold; only its id (not a hash the ledger can
    // check) is changed, and the archive checksum is recomputed.
    bytes[document + 5] ^= 0x01;
    let (end, _) = *spans.last().unwrap();
    let mut hasher = blake3::Hasher::new_derive_key(ledger::ARCHIVE_CHECKSUM_CONTEXT);
    hasher.update(&bytes[..end]);
    let at = bytes.len() - 32;
    bytes[at..].copy_from_slice(hasher.finalize().as_bytes());
    assert!(ledger::read_archive("resealed", &bytes).is_ok(), "the ledger's checks alone accept it");
    std::fs::write(dir.path("resealed.archive"), &bytes).unwrap();
    let before = dir.names();
    let (_, err) = dir.exits("new.lorebank", &["import-archive", &dir.arg("resealed.archive")], 3);
    assert!(err.contains("resealed.archive") && err.contains("receipt"), "{err}");
    assert_eq!(dir.names(), before, "a refused import left a file");
}

/// Runs `args` on `book` with `--json` and `RUST_BACKTRACE=1` (a panic would print a
/// backtrace), and checks that stderr is empty on success and otherwise exactly one
/// JSON error object whose exit code is the process's; returns the exit code and
/// the message.
fn one_json_error(dir: &Dir, book: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--json")
        .arg("--book")
        .arg(dir.path(book))
        .args(args)
        .env_remove("LOREBANK_SERVER")
        .env_remove("LOREBANK_BOOK")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let code = output.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if code == 0 {
        assert_eq!(stderr, "", "{args:?} on {book} succeeded but said something on stderr");
        return (0, String::new());
    }
    assert_eq!(stderr.lines().count(), 1, "{args:?} on {book}: stderr is not one line:\n{stderr}");
    let error: Value = serde_json::from_str(&stderr)
        .unwrap_or_else(|error| panic!("{args:?} on {book}: stderr is not one JSON object ({error}):\n{stderr}"));
    assert_eq!(error["error"]["exit_code"], code, "{args:?} on {book}: {stderr}");
    (code, error["error"]["message"].as_str().unwrap_or_default().to_owned())
}

#[test]
fn a_damaged_backup_is_exit_3_for_restore_and_verify_with_one_json_object_on_stderr() {
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["backup", &dir.arg("backup.lorebank")]);
    let clean = std::fs::read(dir.path("backup.lorebank")).unwrap();
    assert!(clean.len() > 16 * 4096, "the backup has {} bytes", clean.len());
    // A flipped byte at the start of a page (its type: redb panics on many of them
    // while opening) and inside one; a truncation anywhere.
    let mut damage: Vec<(String, Vec<u8>)> = Vec::new();
    for at in (1..=16).map(|page| page * 4096).chain([4096 + 300, 9 * 4096 + 1000, clean.len() / 2 + 7]) {
        let mut bytes = clean.clone();
        bytes[at] ^= 0xff;
        damage.push((format!("flipped at {at}"), bytes));
    }
    let truncated =
        [0, 100, 4096, 3 * 4096 + 17, clean.len() / 4, clean.len() / 2, clean.len() - 4096, clean.len() - 1];
    for len in truncated {
        damage.push((format!("truncated to {len}"), clean[..len].to_vec()));
    }
    let (mut n_refused, mut n_storage) = (0, 0);
    for (what, bytes) in &damage {
        let is_truncated = what.starts_with("truncated");
        std::fs::write(dir.path("damaged.lorebank"), bytes).unwrap();
        let (restore, message) = one_json_error(&dir, "restored.lorebank", &["restore", &dir.arg("damaged.lorebank")]);
        if restore == 0 {
            std::fs::remove_file(dir.path("restored.lorebank")).unwrap();
        }
        assert!(!dir.path("restored.lorebank").exists(), "{what}: a refused restore installed the backup");
        // `verify` may recover a file in place: it gets a copy of its own.
        std::fs::write(dir.path("damaged.lorebank"), bytes).unwrap();
        let (verify, _) = one_json_error(&dir, "damaged.lorebank", &["verify"]);
        if is_truncated {
            assert_eq!((restore, verify), (3, 3), "{what}: restore exits {restore} ({message}), verify {verify}");
        } else {
            // A byte redb never reads (a free page) changes nothing.
            assert!(restore == 0 || restore == 3, "{what}: restore exits {restore}: {message}");
            assert!(verify == 0 || verify == 3, "{what}: verify exits {verify}");
        }
        n_refused += usize::from(restore == 3);
        n_storage += usize::from(message.contains("storage structure is damaged"));
    }
    assert!(n_refused >= 16, "only {n_refused} of {} damaged backups were refused", damage.len());
    assert!(n_storage > 0, "no damage reached a panic of the storage layer, which this test is about");
    // Without --json, the one line too.
    std::fs::write(dir.path("damaged.lorebank"), &clean[..clean.len() / 2]).unwrap();
    let (_, err) = dir.exits("restored.lorebank", &["restore", &dir.arg("damaged.lorebank")], 3);
    assert!(err.starts_with("error: ") && err.lines().count() == 1 && err.contains("truncated"), "{err}");
}

/// What a path is, to check that a refused command left it as it was.
fn kind_of(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Err(_) => "absent".into(),
        Ok(found) if found.file_type().is_symlink() => {
            format!("link to {}", std::fs::read_link(path).unwrap().display())
        }
        Ok(found) if found.is_file() => format!("file of {} bytes", found.len()),
        Ok(found) if found.is_dir() => "directory".into(),
        Ok(found) => {
            use std::os::unix::fs::FileTypeExt;
            let kind = found.file_type();
            if kind.is_char_device() {
                "CharDevice".into()
            } else if kind.is_socket() {
                "socket".into()
            } else {
                "other".into()
            }
        }
    }
}

#[test]
fn copies_are_never_written_over_a_device_a_link_a_directory_the_book_or_its_lock_files() {
    use std::os::unix::fs::symlink;
    let dir = Dir::with_book();
    dir.ok("book.lorebank", &["backup", &dir.arg("backup.lorebank")]);
    dir.ok("book.lorebank", &["export-archive", &dir.arg("book.archive")]);
    let _socket = std::os::unix::net::UnixListener::bind(dir.path("socket")).unwrap();
    std::fs::create_dir(dir.path("folder")).unwrap();
    symlink("/dev/null", dir.path("null-link")).unwrap();
    symlink(dir.path("book.lorebank"), dir.path("book-link")).unwrap();
    symlink(dir.path("nowhere"), dir.path("dangling")).unwrap();
    symlink(dir.dir.path(), dir.path("here")).unwrap();
    std::fs::hard_link(dir.path("book.lorebank"), dir.path("hard.lorebank")).unwrap();
    let (book, lock) = (dir.arg("book.lorebank"), dir.arg("book.lorebank.lock"));
    let through_link = dir.path("here").join("book.lorebank").display().to_string();
    let (socket, folder, null_link, book_link, dangling, hard) = (
        dir.arg("socket"),
        dir.arg("folder"),
        dir.arg("null-link"),
        dir.arg("book-link"),
        dir.arg("dangling"),
        dir.arg("hard.lorebank"),
    );
    let backup = dir.arg("backup.lorebank");
    let archive = dir.arg("book.archive");
    let export = |out: &str| vec!["export".to_owned(), "--format".into(), "galtransl".into(), "-o".into(), out.into()];
    let owned = |args: &[&str]| args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
    // (book, command, the path it must leave alone, what the refusal says)
    let cases: Vec<(&str, Vec<String>, String, &str)> = vec![
        ("book.lorebank", owned(&["backup", &socket, "--force"]), socket.clone(), "is a socket, not a regular file"),
        ("book.lorebank", owned(&["backup", &folder, "--force"]), folder.clone(), "is a directory"),
        (
            "book.lorebank",
            owned(&["backup", &null_link, "--force"]),
            null_link.clone(),
            "is a symbolic link to /dev/null",
        ),
        ("book.lorebank", owned(&["backup", &book, "--force"]), book.clone(), "book.lorebank itself"),
        ("book.lorebank", owned(&["backup", &book]), book.clone(), "book.lorebank itself"),
        ("book.lorebank", owned(&["backup", &book_link, "--force"]), book_link.clone(), "symbolic link"),
        ("book.lorebank", owned(&["backup", &through_link, "--force"]), book.clone(), "itself"),
        ("book.lorebank", owned(&["backup", &hard, "--force"]), hard.clone(), "itself"),
        ("book.lorebank", owned(&["backup", &lock, "--force"]), lock.clone(), "a lock file of"),
        ("book.lorebank", owned(&["export-archive", &book, "--force"]), book.clone(), "itself"),
        ("book.lorebank", owned(&["export-archive", &socket, "--force"]), socket.clone(), "socket"),
        ("book.lorebank", owned(&["export-archive", &null_link, "--force"]), null_link.clone(), "symbolic link"),
        ("book.lorebank", export(&book), book.clone(), "itself"),
        ("book.lorebank", export(&lock), lock.clone(), "a lock file of"),
        ("book.lorebank", export(&socket), socket.clone(), "socket"),
        ("book.lorebank", export(&null_link), null_link.clone(), "symbolic link"),
        ("book.lorebank", export(&folder), folder.clone(), "directory"),
        ("socket", owned(&["restore", &backup, "--force"]), socket.clone(), "socket"),
        ("null-link", owned(&["restore", &backup, "--force"]), null_link.clone(), "symbolic link"),
        ("book-link", owned(&["restore", &backup, "--force"]), book_link.clone(), "symbolic link"),
        ("backup.lorebank", owned(&["restore", &backup, "--force"]), backup.clone(), "itself"),
        ("dangling", owned(&["import-archive", &archive]), dangling.clone(), "symbolic link"),
    ];
    for (on, args, keep, says) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (before, book_before) = (kind_of(Path::new(&keep)), std::fs::read(dir.path("book.lorebank")).unwrap());
        let names = dir.names();
        let (code, message) = one_json_error(&dir, on, &args);
        assert_eq!(code, 2, "{args:?} on {on}: {message}");
        assert!(message.contains(says) && message.contains("refusing"), "{args:?} on {on}: {message}");
        assert_eq!(kind_of(Path::new(&keep)), before, "{args:?} on {on} changed {keep}");
        assert!(std::fs::read(dir.path("book.lorebank")).unwrap() == book_before, "{args:?} on {on} changed the book");
        assert_eq!(dir.names(), names, "{args:?} on {on} left a file");
    }
    assert_eq!(kind_of(Path::new("/dev/null")), "CharDevice", "/dev/null");
    // A regular file is still replaced when asked, through any of these commands.
    dir.ok("book.lorebank", &["backup", &backup, "--force"]);
    dir.ok("book.lorebank", &["export-archive", &archive, "--force"]);
    dir.ok("book.lorebank", &["export", "--format", "galtransl", "-o", &dir.arg("glossary.json")]);
    dir.ok("book.lorebank", &["export", "--format", "galtransl", "-o", &dir.arg("glossary.json")]);
    dir.ok("book.lorebank", &["restore", &backup, "--force"]);
}
