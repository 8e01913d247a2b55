//! A book whose fold table was built with other Unicode data than this build links
//! cannot be assembled or replayed here: the error names the component and both
//! versions, instead of the build silently producing other bytes.

use book::Book;
use ledger::{Attachments, Ledger};
use ledger_model::*;
use matcher::{ProfileBuilder, PROFILE_ID_CONTEXT};

#[test]
fn a_fold_table_built_with_another_unicode_fails_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    // The table a build linked with Unicode 15 NFKC data would have written.
    let mut bytes = ProfileBuilder::nfkc_only().build().unwrap().to_bytes();
    bytes[8..11].copy_from_slice(&[15, 0, 0]);
    let table = Hash32(blake3::derive_key(PROFILE_ID_CONTEXT, &bytes));
    let ledger = Ledger::create(&dir.path().join("book.lorebank")).unwrap();
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "plain".into(), table: Some(table) },
    });
    let event = NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "test".into(), body: config };
    let attachments = Attachments { blobs: vec![(table, bytes)], ..Attachments::default() };
    ledger.append_with(&[event], Some(Seq(0)), attachments).unwrap();

    let mut book = Book::new(ledger);
    let error = book.assemble_chunk(&book::Reader::Full, 1, "1-1", "some text", None, false).unwrap_err().to_string();
    let running = matcher::ToolchainUnicode::RUNNING.normalization;
    let expected = format!(
        "the fold table was built with Unicode 15.0.0 of unicode-normalization, this build has Unicode {}.{}.{}",
        running.0, running.1, running.2
    );
    assert!(error.contains(&expected), "{error}");
}
