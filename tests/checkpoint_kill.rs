//! SIGKILL while checkpoints are being written leaves a book that opens, verifies and
//! assembles exactly as before. `lorebank rebuild` drops every checkpoint and writes
//! new ones while it refolds (and a writer writes one after its answer); killing it
//! at spread-out moments, the book must afterwards verify, keep its snapshot ID, and
//! give the same context for the same chunk.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const N_TERMS: u32 = 3_000;
const KILLS: u64 = 12;
const CHUNK: &str = "沈照提着长明灯走过雾川，见到了词条17号与词条29号。";

fn lorebank(book: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(book)
        .args(args)
        .env_remove("LOREBANK_BOOK")
        .env("LOREBANK_ACTOR", "human:test")
        .output()
        .unwrap()
}

fn ok(book: &Path, args: &[&str]) -> String {
    let output = lorebank(book, args);
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn sigkill_while_checkpoints_are_written_leaves_the_book_whole() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("book.lorebank");
    ok(&book, &["init", "--profile", "plain"]);
    // A glossary large enough that writing its checkpoints takes a while.
    let glossary: String = (1..=N_TERMS)
        .map(|number| {
            let src = format!("词条{number}号");
            format!("{{\"term_put\":{{\"id\":\"T-{number}\",\"src\":\"{src}\",\"dst\":\"Термин {number}\"}}}}\n")
        })
        .collect();
    let glossary_path = dir.path().join("glossary.jsonl");
    std::fs::write(&glossary_path, glossary).unwrap();
    ok(&book, &["apply", glossary_path.to_str().unwrap()]);
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, CHUNK).unwrap();
    let assemble = ["assemble", "--chapter", "3", "--chunk", "c1", "--text", chunk.to_str().unwrap(), "--dry-run"];
    let snapshot = ok(&book, &["snapshot"]);
    let context = ok(&book, &assemble);
    assert!(context.contains("Термин 17"), "{context}");

    // How long a whole rebuild takes here, so the kills land inside one.
    let started = std::time::Instant::now();
    ok(&book, &["rebuild"]);
    let rebuild = started.elapsed();
    let mut n_killed_running = 0;
    for kill in 0..KILLS {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(&book)
            .arg("rebuild")
            .env_remove("LOREBANK_BOOK")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Spread over the rebuild: from right away to its last checkpoint write.
        std::thread::sleep(rebuild.mul_f64(kill as f64 / KILLS as f64));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        n_killed_running += usize::from(!status.success());
        let verified = ok(&book, &["verify"]);
        assert!(verified.starts_with("ok:"), "kill {kill}: {verified}");
        assert_eq!(ok(&book, &["snapshot"]), snapshot, "kill {kill}");
        assert_eq!(ok(&book, &assemble), context, "kill {kill}");
    }
    // The kills must have hit running rebuilds, not only finished ones.
    assert!(n_killed_running >= KILLS as usize / 2, "only {n_killed_running} kills hit a running rebuild");
    // And the book still takes writes, with checkpoints again.
    ok(&book, &["term", "put", "--id", "T-1", "--src", "词条1号", "--dst", "Термин один"]);
    let verified = ok(&book, &["verify"]);
    assert!(verified.contains("checkpoints match the log"), "{verified}");
}
