//! The translation proxy's rules as book use cases: a named chunk assembled and
//! recorded once per request, its system message rebuilt byte for byte from the
//! replayed context, a chunk found in the source text through a tool's wrapper and
//! assembled over its span only, and a request without source text left unplaced.

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

/// Three chapters of the book's source text, written for the project.
const CHAPTERS: [&str; 3] = [
    "第一回\n灯宗的长老在山门前等了三天，雪落满了他的肩头。\n他说沈照迟早会回来，众弟子都不信。\n",
    "第二回\n沈照背着剑，一个人走到雾川边，天色已经暗了。\n河上没有船，只有风吹着芦苇沙沙作响。\n他坐在石头上，等对岸的灯火一盏一盏亮起来。\n",
    "第三回\n天亮的时候，沈照终于看见一条小船从雾里划出来。\n船上的老人问他要去哪里，他说要回山上去。\n",
];

/// What a GalTransl-like tool sends for `lines`: its instructions, its own glossary
/// (with a name the chunk does not hold) and the lines.
fn galtransl(lines: &[&str]) -> String {
    format!(
        "参考以下术语表（可为空，格式为src->dst #备注）：\n灯宗->Секта Фонаря\n沈照->Шэнь Чжао\n\
         将下面的文本从中文翻译成俄文：\n{}",
        lines.join("\n")
    )
}

#[test]
fn a_chunk_is_found_in_the_source_text_through_the_tools_wrapper_and_assembled_over_its_span_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(
        &dir.path().join("b.lorebank"),
        vec![
            Body::TermPut(put(1, "沈照", "Шэнь Чжао")),
            Body::TermPut(put(2, "雾川", "Мглистая река")),
            Body::TermPut(put(3, "灯宗", "Секта Фонаря")),
        ],
    );
    let write = test_support::books::write_as("human:editor");
    for (number, text) in CHAPTERS.iter().enumerate() {
        book.source_add(number as u32 + 1, None, text.as_bytes(), &write).unwrap();
    }
    let lines: Vec<&str> = CHAPTERS[1].lines().collect();
    let request = galtransl(&lines[1..3]);
    let Placed::Chunk(chunk) = book.proxy_locate(&request, &Hint::default()).unwrap() else {
        panic!("not found");
    };
    assert_eq!(chunk.chapter, 2);
    let span = chunk.source.clone().unwrap();
    assert_eq!(chunk.text, &CHAPTERS[1][span.clone()]);
    assert!(chunk.text.starts_with("沈照背着剑") && chunk.text.ends_with("沙沙作响。"), "{:?}", chunk.text);
    assert_eq!(chunk.chunk_key, format!("src-{:08}-{:08}", span.start, span.end));
    assert!(request[chunk.request.clone().unwrap()].starts_with("沈照背着剑"));

    // The context is the chunk's: its names, never the glossary block's 灯宗.
    let prepared = book.proxy_prepare(&request, &Hint::default(), None).unwrap().unwrap();
    let context = &prepared.assembled.assembly.context;
    assert!(context.contains("Шэнь Чжао") && context.contains("Мглистая река"), "{context}");
    assert!(!context.contains("Секта Фонаря"), "the tool's own glossary activated an entry: {context}");

    // Recorded, it is the `prev` of the next chunk of the chapter; a chapter named
    // elsewhere finds nothing.
    let fingerprint = book::proxy::fingerprint("b", &[request.as_bytes()]);
    let recorded = book.proxy_record(&prepared, &answered(fingerprint), &options()).unwrap().unwrap();
    let next = galtransl(&lines[3..4]);
    let Placed::Chunk(following) = book.proxy_locate(&next, &Hint::default()).unwrap() else { panic!("not found") };
    assert_eq!((following.chapter, following.prev), (2, Some(recorded.receipt)));
    let elsewhere = Hint { chapter: Some(3), chunk: None };
    assert!(matches!(book.proxy_locate(&request, &elsewhere).unwrap(), Placed::Unplaced(_)));
}

#[test]
fn a_book_template_is_used_recorded_by_name_and_replays_after_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(
        &dir.path().join("b.lorebank"),
        vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао")), Body::TermPut(put(2, "雾川", "Мглистая река"))],
    );
    let snapshot = |book: &mut book::Book| {
        let state = book.state(None).unwrap();
        book.snapshot_id(&state)
    };
    let set = |book: &mut book::Book, template: Option<&str>| {
        let body = Body::ProxyTemplateSet(ProxyTemplateSet { template: template.map(Into::into) });
        book.submit(&[test_support::records::event(body)], None, Vec::new()).unwrap_or_else(|error| panic!("{error}"));
        book.state(None).unwrap().revision()
    };
    let without = snapshot(&mut book);
    let first = "Глоссарий книги (переводи по нему):\n{context}\nКонец глоссария.";
    let first_seq = set(&mut book, Some(first));
    let with_first = snapshot(&mut book);
    assert_ne!(with_first, without, "the template is in the snapshot");

    // The book's template makes the system message, and the record names it.
    let hint = Hint { chapter: Some(2), chunk: Some("0001".into()) };
    let prepared = book.proxy_prepare("沈照渡过雾川。", &hint, Some("You translate.")).unwrap().unwrap();
    let context = prepared.assembled.assembly.context.clone();
    assert!(!context.is_empty());
    let expected = format!("You translate.\n\n{}", first.replace("{context}", &context));
    assert_eq!(prepared.system.as_deref(), Some(expected.as_str()));
    assert_eq!(prepared.assembled.receipt.snapshot, with_first.0);
    let fingerprint = book::proxy::fingerprint("b", &[b"2", b"0001", b"{}"]);
    let recorded = book.proxy_record(&prepared, &answered(fingerprint), &options()).unwrap().unwrap();
    let records = book.proxy_records(recorded.receipt).unwrap();
    let (_, record) = &records[0];
    assert_eq!(record.template, format!("book@{}", first_seq.0));
    assert_eq!(record.template_hash, Hash32(*blake3::hash(first.as_bytes()).as_bytes()));

    // A later template: the old receipt still replays byte for byte with the old one,
    // and a new request uses the new one.
    let second = "{context}\n\nTranslate with the glossary above.";
    let second_seq = set(&mut book, Some(second));
    let with_second = snapshot(&mut book);
    assert!(with_second != with_first && with_second != without);
    let replayed = book.proxy_replay(&recorded.receipt.to_hex()).unwrap();
    assert!(replayed.replayed.identical);
    assert_eq!(replayed.systems[0].1.as_deref(), Some(expected.as_str()));
    assert!(replayed.systems[0].2, "the old receipt's system message replays byte for byte");
    let next = Hint { chapter: Some(2), chunk: Some("0002".into()) };
    let later = book.proxy_prepare("沈照渡过雾川。", &next, None).unwrap().unwrap();
    let later_context = &later.assembled.assembly.context;
    assert_eq!(later.system.as_deref(), Some(second.replace("{context}", later_context).as_str()));
    assert_eq!(later.template.name, format!("book@{}", second_seq.0));

    // Cleared, the built-in template is back, and so is the snapshot ID of before.
    set(&mut book, None);
    assert_eq!(snapshot(&mut book), without);
    let cleared = book.proxy_prepare("沈照回头。", &next, None).unwrap().unwrap();
    assert_eq!(cleared.template.name, TEMPLATE_NAME);
    assert_eq!(cleared.system, system_message(&cleared.assembled.assembly.context, None));
    // The same template twice appends nothing.
    let head = book.state(None).unwrap().revision();
    assert_eq!(set(&mut book, None), head);
    // And the first receipt still replays.
    assert!(book.proxy_replay(&recorded.receipt.to_hex()).unwrap().systems[0].2);
}

#[test]
fn a_record_whose_check_cannot_be_filed_writes_nothing_and_a_retry_records_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), vec![Body::TermPut(put(1, "沈照", "Шэнь Чжао"))]);
    let hint = Hint { chapter: Some(1), chunk: Some("0001".into()) };
    let prepared = book.proxy_prepare("沈照渡过雾川。", &hint, None).unwrap().unwrap();
    let fingerprint = book::proxy::fingerprint("b", &[b"1", b"0001", b"{}"]);
    // A translation whose check is over the stored document limit: refused before the
    // receipt, the proxy record or the marker is written.
    let huge = Answered { translation: "Шэнь Чжао. ".repeat(1 << 20), ..answered(fingerprint) };
    assert!(book.proxy_record(&prepared, &huge, &options()).is_err());
    assert!(!book.proxy_recorded(fingerprint).unwrap());
    assert!(book.receipt(&prepared.assembled.id.to_hex()).is_err(), "the receipt was filed without its check");
    assert!(book.proxy_records(prepared.assembled.id).unwrap().is_empty());
    // The retry (the upstream's next answer) records receipt, record and check at once.
    let recorded = book.proxy_record(&prepared, &answered(fingerprint), &options()).unwrap().unwrap();
    assert_eq!(book.checks_of(recorded.receipt).unwrap().len(), 1);
    assert_eq!(book.proxy_records(recorded.receipt).unwrap().len(), 1);
}
