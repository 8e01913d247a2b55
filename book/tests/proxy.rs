//! The translation proxy's rules as book use cases: a named chunk assembled and
//! recorded once per request, its system message rebuilt byte for byte from the
//! replayed context, and a request without source text left unplaced.

use book::check::CheckOptions;
use book::proxy::{system_message, template_hash, Answered, Hint, Placed, Usage, TEMPLATE_NAME};
use ledger_model::*;
use test_support::books::zh_book;
use test_support::records::put;

fn options() -> CheckOptions {
    CheckOptions { record: true, propose: false, actor: "tool:proxy".into(), recorded_at_ms: 0 }
}

fn answered(fingerprint: Hash32) -> Answered {
    Answered {
        fingerprint,
        upstream_request: Hash32([7; 32]),
        model: "stand-in-1".into(),
        usage: Some(Usage { prompt_tokens: Some(100), completion_tokens: Some(20), total_tokens: Some(120) }),
        translation: "Шэнь Чжао перешёл Мглистую реку.".into(),
        streamed: true,
    }
}

#[test]
fn a_named_chunk_is_recorded_once_and_its_system_message_replays_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(
        &dir.path().join("b.lorebank"),
        vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао")), Body::TermPut(put(2, "雾川", "Мглистая река"))],
    );
    let hint = Hint { chapter: Some(2), chunk: Some("0001".into()) };
    let prepared = book.proxy_prepare("沈照渡过雾川。", &hint, Some("You translate.")).unwrap().unwrap();
    let system = prepared.system.clone().unwrap();
    assert!(system.starts_with("You translate.\n\n"), "{system}");
    assert!(system.ends_with(&prepared.assembled.assembly.context), "{system}");

    let fingerprint = book::proxy::fingerprint("b", &[b"2", b"0001", b"{}"]);
    let recorded = book.proxy_record(&prepared, &answered(fingerprint), &options()).unwrap().unwrap();
    assert_eq!(recorded.receipt, prepared.assembled.id);
    assert!(book.proxy_record(&prepared, &answered(fingerprint), &options()).unwrap().is_none(), "a retry records");
    assert_eq!(book.checks_of(recorded.receipt).unwrap().len(), 1);
    let records = book.proxy_records(recorded.receipt).unwrap();
    assert_eq!(records.len(), 1);
    let (_, record) = &records[0];
    assert_eq!((record.template.as_str(), record.template_hash), (TEMPLATE_NAME, template_hash()));
    assert_eq!(record.model, "stand-in-1");
    assert_eq!(record.usage.as_ref().and_then(|usage| usage.total_tokens), Some(120));

    let replayed = book.proxy_replay(&recorded.receipt.to_hex()).unwrap();
    assert!(replayed.replayed.identical);
    assert_eq!(replayed.systems.len(), 1);
    assert_eq!(replayed.systems[0].1.as_deref(), Some(system.as_str()));
    assert!(replayed.systems[0].2, "the rebuilt system message hashes to the recorded one");

    // The next chunk of the chapter follows it; another request for the same chunk is
    // a second record of the same receipt.
    let next = Hint { chapter: Some(2), chunk: Some("0002".into()) };
    let second = book.proxy_prepare("沈照回头。", &next, None).unwrap().unwrap();
    assert_eq!(second.chunk.prev, Some(recorded.receipt));
    assert_eq!(second.system, Some(system_message(&second.assembled.assembly.context, None).unwrap()));
    let other = book::proxy::fingerprint("b", &[b"2", b"0001", b"{\"temperature\":0}"]);
    book.proxy_record(&prepared, &answered(other), &options()).unwrap().unwrap();
    assert_eq!(book.proxy_records(recorded.receipt).unwrap().len(), 2);
}

#[test]
fn without_a_named_chunk_or_source_text_a_request_is_unplaced() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао"))]);
    let placed = book.proxy_locate("Translate:\n沈照渡过雾川。", &Hint::default()).unwrap();
    assert!(matches!(placed, Placed::Unplaced(_)), "{placed:?}");
    let lonely = Hint { chapter: None, chunk: Some("0001".into()) };
    assert!(book.proxy_locate("沈照", &lonely).is_err());
}
