//! End-to-end tests of the application service behind the CLI: closed pipes, atomic
//! `init`, rollback against one head, exit codes, JSON forms and `term edit`.

mod common;

use common::Book;

const XIAO_YAN: &[&str] =
    &["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--gender", "m", "--decl", "Сяо Яня,Сяо Яню"];

#[test]
fn a_closed_stdout_never_fails_a_committed_write_or_a_read() {
    let book = Book::new();
    let (code, stderr) = book.run_closed_stdout(XIAO_YAN);
    assert_eq!(code, Some(0), "term put | true: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(book.head(), 2, "the write was committed");
    for args in [&["show"][..], &["log"], &["--json", "log"], &["audit", "--chapter", "1"], &["verify"], &["snapshot"]]
    {
        let (code, stderr) = book.run_closed_stdout(args);
        assert_eq!(code, Some(0), "{args:?} | true: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn log_with_from_after_to_is_invalid() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    let error = book.fails(&["log", "--from", "2", "--to", "1"], 2);
    assert!(error.contains("--from 2 is after --to 1"), "{error}");
    assert_eq!(book.ok(&["log", "--from", "2", "--to", "2"]).lines().count(), 1);
}
