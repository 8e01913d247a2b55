//! The bodies of the fuzz targets: each takes the raw fuzzer input and panics when a
//! property breaks. `fuzz_targets/*.rs` hand them to libFuzzer. The main workspace's
//! `tests/fuzz_corpus.rs` includes this file and runs every body over its seed corpus
//! (`fuzz/corpus/<target>/`), so `cargo test` exercises every target without libFuzzer.
//!
//! Inputs that would stop at a hash check are also resealed with a valid hash, so the
//! parsers behind the checks see fuzzed bytes: an event payload is sealed into a record,
//! a mutated automaton body gets its hash recomputed, and mutated frozen-projection
//! sections are sealed with `projections::frozen::seal`.

use std::sync::OnceLock;

use book::assemble::{assemble, Previous};
use book::receipt::Receipt;
use ledger_model::validate::{validate_body, Rules};
use ledger_model::*;
use matcher::{
    Flavour, Matcher, MatcherBuilder, NormalizedText, Profile, ToolchainUnicode, AUTOMATON_ID_CONTEXT,
    FORMAT_1_CHAR_UNICODE,
};
use projections::frozen::{freeze, seal, sections, Frozen};
use projections::{SnapshotId, State};
use test_support::interchange::as_export;
use test_support::matching::AhoCorasickEngine;
use test_support::profiles::{nfkc_profile, profile};
use test_support::records::{alias, applied, character, event, id, summary, verdict};

/// Length of the frozen matcher header; its hash is at 8..40 and covers the rest.
const MATCHER_HEADER_LEN: usize = 48;

fn plain() -> &'static Profile {
    profile(Flavour::Plain)
}

/// Zh, Ja, Plain and NFKC-only profiles.
fn profiles() -> [&'static Profile; 4] {
    [profile(Flavour::Zh), profile(Flavour::Ja), plain(), nfkc_profile()]
}

/// `bytes` with `mask` XOR-ed onto its start.
fn xor(bytes: &[u8], mask: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for (byte, m) in out.iter_mut().zip(mask) {
        *byte ^= m;
    }
    out
}

/// Frozen matcher bytes with the body hash recomputed.
fn reseal_matcher(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= MATCHER_HEADER_LEN {
        let hash = blake3::derive_key(AUTOMATON_ID_CONTEXT, &bytes[MATCHER_HEADER_LEN..]);
        bytes[8..40].copy_from_slice(&hash);
    }
    bytes
}

/// Every hit names a pattern of the matcher that is exactly the folded text it spans.
fn check_hits_are_real(matcher: &Matcher, text: &NormalizedText<'_>) {
    for hit in matcher.find(text) {
        let norm = &text.as_str()[hit.norm.start.as_usize()..hit.norm.end.as_usize()];
        assert_eq!(norm, matcher.pattern(hit.pattern), "a hit on text that is not its pattern");
        let _ = matcher.values(hit.pattern);
    }
}

/// `fuzz_event_codec`: arbitrary bytes never panic the event decoders, and whatever
/// decodes is canonical. The bytes are tried as an encoded event, a body and a sealed
/// record, and are also sealed as the payload of a record, which passes the payload
/// hash and reaches the payload decoder.
pub fn event_codec(bytes: &[u8]) {
    if let Ok(event) = codec::decode_strict::<NewEvent>(bytes) {
        assert_eq!(event.encode().unwrap(), bytes, "decoded event is not canonical");
    }
    if let Ok(body) = codec::decode_strict::<Body>(bytes) {
        assert_eq!(codec::encode(&body).unwrap(), bytes, "decoded body is not canonical");
    }
    if let Ok((event, batch_end)) = record::open_in_batch(Seq(1), bytes) {
        let payload = record::stored_payload(&event).unwrap();
        // Resealed in the record's own format: 2 with its batch-end flag, or 1.
        let (sealed, hash) = match batch_end {
            Some(end) => record::seal_in_batch(event.seq, event.prev, event.schema, &payload, end),
            None => record::seal(event.seq, event.prev, event.schema, &payload),
        };
        assert_eq!(sealed, bytes, "opened record does not reseal to itself");
        assert_eq!(hash, event.hash);
    }
    if bytes.len() > limits::EVENT_BYTES_MAX {
        return;
    }
    let (sealed, hash) = record::seal(Seq(1), Hash32::GENESIS, record::SCHEMA_CURRENT, bytes);
    match record::open(Seq(1), &sealed) {
        Ok(event) => {
            assert_eq!(event.hash, hash);
            assert_eq!(event.content.encode().unwrap(), bytes, "payload behind a valid hash is not canonical");
        }
        Err(_) => assert!(codec::decode_strict::<NewEvent>(bytes).is_err(), "a canonical payload failed to open"),
    }
    // The same bytes as a schema-1 payload: what opens is canonical in schema 1 and
    // upcast (every field schema 2 added absent).
    let (sealed, _) = record::seal(Seq(1), Hash32::GENESIS, record::SCHEMA_1, bytes);
    match record::open(Seq(1), &sealed) {
        Ok(event) => {
            assert_eq!(record::stored_payload(&event).unwrap(), bytes, "schema-1 payload is not canonical");
            assert!(event.content.body.to_schema1().is_some(), "a schema-1 payload upcast to a schema-2-only body");
        }
        Err(_) => assert!(
            codec::decode_strict::<ledger_model::schema1::NewEvent>(bytes).is_err(),
            "a canonical schema-1 payload failed to open"
        ),
    }
}

/// `fuzz_normalize`: for arbitrary text and each profile, the fold is idempotent,
/// `normalize` agrees with `fold` when no markup is enabled, the offset map's segments
/// tile the folded text with increasing source spans on char boundaries, and ruby spans
/// stay in range.
pub fn normalize(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    if rest.len() > 4096 {
        return;
    }
    let text = String::from_utf8_lossy(rest);
    let profile = profiles()[selector as usize % profiles().len()];
    let once = profile.fold(&text);
    assert_eq!(profile.fold(&once), once, "fold not idempotent on {text:?}");
    let normalized = profile.normalize(&text).expect("normalize");
    let norm = normalized.as_str();
    let options = profile.options();
    if !options.aozora_ruby && !options.html_ruby {
        assert_eq!(norm, once);
    }
    let (mut norm_pos, mut src_pos) = (0usize, 0usize);
    for (norm_span, src_span) in normalized.segments() {
        assert_eq!(norm_span.start.as_usize(), norm_pos);
        assert!(norm_span.end > norm_span.start && norm.is_char_boundary(norm_span.end.as_usize()));
        assert!(src_span.start.as_usize() >= src_pos && src_span.end > src_span.start);
        assert!(src_span.end.as_usize() <= text.len());
        assert!(text.is_char_boundary(src_span.start.as_usize()));
        assert!(text.is_char_boundary(src_span.end.as_usize()));
        assert_eq!(text[src_span.bytes()].chars().count(), src_span.chars().len());
        norm_pos = norm_span.end.as_usize();
        src_pos = src_span.end.as_usize();
    }
    assert_eq!(norm_pos, norm.len());
    for ruby in normalized.rubies() {
        assert!(ruby.base.start < ruby.base.end && ruby.base.end <= ruby.reading.start);
        assert!(ruby.reading.end.as_usize() <= text.len());
        assert!(text.is_char_boundary(ruby.reading.start.as_usize()));
        assert!(text.is_char_boundary(ruby.reading.end.as_usize()));
    }
}

/// `fuzz_matcher`: arbitrary keys (the first lines of the input) over an arbitrary text
/// (the rest): daachorse (`Matcher::find`), aho-corasick (`Matcher::find_with`), the
/// naive leftmost-longest scanner (`Matcher::find_naive`) and a frozen-and-loaded copy
/// return identical hits, and every hit keeps the span contract:
/// `fold(original[span]) == pattern`, increasing, non-overlapping, on char boundaries.
pub fn matcher(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    if rest.len() > 2048 {
        return;
    }
    let input = String::from_utf8_lossy(rest);
    let mut parts = input.splitn(9, '\n');
    let mut keys: Vec<&str> = Vec::new();
    let mut text = "";
    for _ in 0..8 {
        match parts.next() {
            Some(part) if part.starts_with('\u{1}') => text = part,
            Some(part) => keys.push(part),
            None => break,
        }
    }
    if let Some(last) = parts.next() {
        text = last;
    }
    let profiles = &profiles()[..3];
    let profile = profiles[selector as usize % profiles.len()];
    let Ok(matcher) = MatcherBuilder::new(profile)
        .word_boundaries(selector & 0x80 != 0)
        .build(keys.iter().enumerate().map(|(i, k)| (*k, i as u32)))
    else {
        return;
    };
    let normalized = profile.normalize(text).expect("normalize");
    let hits = matcher.find(&normalized);
    assert_eq!(hits, matcher.find_naive(&normalized), "daachorse vs naive");
    assert_eq!(hits, matcher.find_with(&AhoCorasickEngine::new(&matcher), &normalized), "daachorse vs aho-corasick");
    let loaded = Matcher::from_bytes(&matcher.to_bytes(), profile).expect("load");
    assert_eq!(hits, loaded.find(&normalized), "frozen copy");
    let mut prev_end = 0usize;
    for hit in &hits {
        let span = hit.src.bytes();
        assert!(span.start >= prev_end && span.start < span.end && span.end <= text.len());
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        prev_end = span.end;
        let refolded = profile.normalize(&text[span]).expect("normalize span");
        assert_eq!(refolded.as_str(), matcher.pattern(hit.pattern));
    }
}

/// A valid two-entry profile (A→a, B→b) for this build's Unicode versions.
fn tiny_profile() -> Vec<u8> {
    let running = ToolchainUnicode::RUNNING;
    let (format, char_field) = if running.char_properties == FORMAT_1_CHAR_UNICODE {
        (1u16, [0; 3])
    } else {
        (2, [running.char_properties.0, running.char_properties.1, running.char_properties.2])
    };
    let normalization = running.normalization;
    let mut out = matcher::PROFILE_MAGIC.to_vec();
    out.extend_from_slice(&format.to_le_bytes());
    out.extend_from_slice(&[0, 0, normalization.0, normalization.1, normalization.2, 0]);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&char_field);
    out.push(0);
    for (key, n_out) in [(0x41u32, 1u32), (0x42, 1)] {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&n_out.to_le_bytes());
    }
    for output in [0x61u32, 0x62] {
        out.extend_from_slice(&output.to_le_bytes());
    }
    out
}

/// `fuzz_frozen_load`: arbitrary bytes given to `Matcher::from_bytes` are refused. The
/// same bytes XOR-ed onto a valid frozen matcher are refused unless they change nothing;
/// with the hash recomputed they reach the parser, which refuses them or gives a
/// matcher that finds only real patterns, never panicking. Arbitrary bytes, and the
/// bytes XOR-ed onto a valid profile, given to `Profile::from_bytes` never panic, and any
/// profile that loads folds idempotently.
pub fn frozen_load(data: &[u8]) {
    static VALID: OnceLock<Vec<u8>> = OnceLock::new();
    let profile = plain();
    let valid = VALID.get_or_init(|| {
        let keys = [("Lin", 1), ("林", 2), ("かたかな", 3), ("ёлка", 4), ("Lin Dong", 5)];
        MatcherBuilder::new(profile).build(keys).expect("build").to_bytes()
    });
    assert!(Matcher::from_bytes(data, profile).is_err(), "arbitrary bytes loaded");
    let patched = xor(valid, data);
    if patched != *valid {
        assert!(Matcher::from_bytes(&patched, profile).is_err(), "patched matcher loaded");
    }
    if let Ok(loaded) = Matcher::from_bytes(&reseal_matcher(patched), profile) {
        let text = profile.normalize("Lin Dong, 林 and かたかな under the ёлка; LinLin").expect("normalize");
        check_hits_are_real(&loaded, &text);
    }
    for bytes in [data.to_vec(), xor(&tiny_profile(), data)] {
        if let Ok(loaded) = Profile::from_bytes(&bytes) {
            let text = String::from_utf8_lossy(data);
            let once = loaded.fold(&text);
            assert_eq!(loaded.fold(&once), once);
            let _ = loaded.normalize(&text);
        }
    }
}

/// `fuzz_receipt_and_apply`: arbitrary bytes never panic the receipt decoder, and
/// whatever decodes is canonical; arbitrary bytes never load as a frozen projection;
/// any text that parses as an `apply` JSON body survives the canonical codec and JSON
/// unchanged.
pub fn receipt_and_apply(data: &[u8]) {
    if let Ok(receipt) = Receipt::decode(data) {
        assert_eq!(receipt.encode(), data, "decoded receipt is not canonical");
    }
    let snapshot = State::new().snapshot_id();
    assert!(Frozen::load(data, plain(), snapshot).is_err(), "arbitrary bytes loaded as a frozen projection");
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(body) = serde_json::from_str::<Body>(text) {
            let _ = validate_body(&body, &Rules::default());
            if let Ok(bytes) = codec::encode(&body) {
                assert_eq!(codec::decode_strict::<Body>(&bytes).as_ref(), Ok(&body));
            }
            let json = serde_json::to_string(&body).unwrap();
            assert_eq!(serde_json::from_str::<Body>(&json).unwrap(), body);
        }
    }
}

fn term(id_text: &str, src: &str, dst: &str) -> TermPut {
    TermPut { gender: Some(Gender::Masculine), decl: vec!["Линь Дуна".into()], ..character(id_text, src, dst) }
}

/// A small glossary that reaches every branch of assembly, frozen with the plain
/// profile.
fn projection() -> &'static (SnapshotId, Vec<u8>) {
    static PROJECTION: OnceLock<(SnapshotId, Vec<u8>)> = OnceLock::new();
    PROJECTION.get_or_init(|| {
        let bodies = vec![
            Body::TermPut(term("T-1", "Lin Dong", "Линь Дун")),
            Body::AliasAdded(AliasAdded {
                kind: AliasKind::Nickname,
                window: Some(Window { since: 2, until: None }),
                ..alias("T-1", "Dong")
            }),
            Body::TermPut(TermPut { window: Window { since: 3, until: Some(5) }, ..term("T-2", "Yan", "Янь") }),
            Body::TermPut(TermPut { constant: true, priority: 5, ..term("T-3", "Sect", "Секта") }),
            Body::TermPut(TermPut {
                sense: Some("river".into()),
                secondary: Some(SecondaryKeys { logic: KeyLogic::NotAll, keys: vec!["water".into()] }),
                status: Status::Auto,
                ..term("T-4", "Long", "Лун")
            }),
            Body::TermPut(TermPut { sense: Some("dragon".into()), ..term("T-5", "Long", "Дракон") }),
            Body::DispositionSet(verdict("T-5", Verdict::Reject, "wrong")),
            Body::SummaryPut(summary("S-1", Scope::Book, "A book.")),
            Body::SummaryPut(SummaryPut {
                visible_from: Some(1),
                ..summary("S-2", Scope::Arc { from: 1, to: 4 }, "An arc.")
            }),
            Body::SummaryPut(summary("S-3", Scope::Chapter(2), "Chapter two.")),
        ];
        let state = applied(bodies.into_iter().map(|body| NewEvent {
            recorded_at_ms: 1,
            actor: "human:fuzz".into(),
            source: "fuzz".into(),
            ..event(body)
        }));
        (state.snapshot_id(), freeze(&state, plain()).expect("freeze"))
    })
}

const CHUNK: &str = "Lin Dong met Yan by the water. Long, Long! Dong of the Sect.";

/// `fuzz_frozen_projection`: the sections of a valid frozen projection altered behind
/// valid hashes (what anyone who can write the cache can produce). The first byte picks
/// the section: 0 XORs the rest onto the record table, 1 XORs it onto the matcher body
/// (its hash recomputed), 2 replaces the table with the rest. Sealed with valid hashes,
/// loading refuses the bytes or gives a projection that assembles without panicking;
/// an all-zero mask changes nothing and assembles as the original does.
pub fn frozen_projection(data: &[u8]) {
    let Some((&mode, mask)) = data.split_first() else { return };
    let (snapshot, honest) = projection();
    let (table, matcher) = sections(honest).expect("sections");
    let (table, matcher) = match mode % 3 {
        0 => (xor(table, mask), matcher.to_vec()),
        1 => (table.to_vec(), reseal_matcher(xor(matcher, mask))),
        _ => (mask.to_vec(), matcher.to_vec()),
    };
    let bytes = seal(*snapshot, plain().id(), &table, &matcher);
    let unchanged = bytes == *honest;
    let Ok(frozen) = Frozen::load(&bytes, plain(), *snapshot) else {
        assert!(!unchanged, "the honest projection failed to load");
        return;
    };
    for chapter in [1, 2, 3, 6] {
        let Ok(first) = assemble(&frozen, chapter, CHUNK, None) else { continue };
        let second = assemble(&frozen, chapter, CHUNK, Some(Previous { chapter, recent: &first.recent }));
        if unchanged {
            let original = Frozen::load(honest, plain(), *snapshot).expect("honest projection");
            assert_eq!(Ok(first), assemble(&original, chapter, CHUNK, None));
            assert!(second.is_ok());
        }
    }
}

/// Every glossary reader on arbitrary bytes (the first byte picks the format; the
/// rest is the file): never a panic, an error names a place; and what a reader
/// accepts, exported and imported once, is a fixed point of export then import
/// (the second export reads back to the same terms and summaries).
pub fn import(data: &[u8]) {
    use formats::{Format, Languages, Parsed};
    let Some((&pick, file)) = data.split_first() else { return };
    let format = Format::ALL[usize::from(pick) % Format::ALL.len()];
    let _ = formats::detect(&format!("fuzz.{}", format.extension()), file);
    let languages = Languages { source: "zh".into(), target: "ru".into() };
    let Ok(parsed) = formats::read(format, file, &languages) else { return };
    let export = |parsed: &Parsed| as_export(parsed, "zh");
    // A format may refuse to write what it read (an empty TBX body): then there is
    // nothing to compare.
    let Ok(first) = formats::write(format, &export(&parsed)) else { return };
    let second = formats::read(format, &first.bytes, &languages)
        .unwrap_or_else(|error| panic!("{format}: its own export does not read back: {error}"));
    let Ok(again) = formats::write(format, &export(&second)) else { return };
    let third = formats::read(format, &again.bytes, &languages)
        .unwrap_or_else(|error| panic!("{format}: its second export does not read back: {error}"));
    let terms = |parsed: &Parsed| parsed.entries.iter().map(|entry| entry.term.clone()).collect::<Vec<_>>();
    assert_eq!(terms(&second), terms(&third), "{format}: export then import is not a fixed point");
    let summaries = |parsed: &Parsed| parsed.summaries.iter().map(|summary| summary.put.clone()).collect::<Vec<_>>();
    assert_eq!(summaries(&second), summaries(&third), "{format}: summaries are not a fixed point");
}

/// The post-check and the name alarm on arbitrary text, and the check decoder and
/// the decoder of a check's filing on arbitrary bytes: never a panic; every span lies
/// on char boundaries inside the text; a decoded check or filing is canonical (it
/// encodes back to exactly the input). And what the translation memory does with the
/// text: split into sentences by either rule, the pieces join back into the text, and
/// written as a pair, it is refused exactly when XML 1.0 cannot hold a character of it.
pub fn loop_checks(data: &[u8]) {
    use ledger_model::Gender;
    if let Ok(check) = postcheck::Check::from_bytes(data) {
        assert_eq!(check.to_bytes(), data, "a decoded check is not canonical");
    }
    if let Ok(filing) = book::check::CheckFiling::from_bytes(data) {
        let bytes = filing.to_bytes().unwrap_or_else(|error| panic!("a decoded check filing does not encode: {error}"));
        assert_eq!(bytes, data, "a decoded check filing is not canonical");
    }
    let text = String::from_utf8_lossy(data);
    let rendering = |term: u32, dst: &str, gender: Option<Gender>, kind: Option<&str>| postcheck::Rendering {
        term,
        dst: dst.to_owned(),
        decl: Vec::new(),
        gender,
        kind: kind.map(str::to_owned),
        source_count: 2,
        review: false,
    };
    let renderings = [
        rendering(1, "Сяо Янь", Some(Gender::Masculine), Some("character")),
        rendering(2, "Ночная секта", Some(Gender::Feminine), Some("organization")),
        rendering(3, "хранитель огня", Some(Gender::Masculine), None),
    ];
    let check = postcheck::check(&text, &renderings);
    for item in &check.items {
        let spans = item.found.iter().map(|found| found.bytes).chain(item.agreement.iter().map(|flag| flag.bytes));
        for (start, end) in spans {
            let (start, end) = (start as usize, end as usize);
            assert!(start <= end && end <= text.len(), "span {start}..{end} outside the text");
            assert!(text.is_char_boundary(start) && text.is_char_boundary(end), "span {start}..{end} splits a char");
        }
    }
    assert_eq!(postcheck::Check::from_bytes(&check.to_bytes()).as_ref(), Ok(&check));
    for lang in [names::Lang::Zh, names::Lang::Ja] {
        for sighting in names::Scanner::new(lang).scan(&text, &[], &|_| false) {
            let (start, end) = (sighting.bytes.0 as usize, sighting.bytes.1 as usize);
            assert!(start < end && end <= text.len(), "sighting {start}..{end} outside the text");
            assert_eq!(&text[start..end], sighting.surface, "a sighting's span is not its surface");
        }
    }
    memory_of(&text);
}

/// `text` split by each sentence rule, and written as both sides of a pair of a
/// translation memory.
fn memory_of(text: &str) {
    use formats::tmx::{sentences, Origin, Pair, SentenceRule, TmxInput, Written};
    for rule in [SentenceRule::Cjk, SentenceRule::Russian] {
        assert_eq!(sentences(text, rule).concat(), text, "{rule:?}: the sentences do not join back into the text");
    }
    let hash = ledger_model::Hash32([7; 32]);
    let pair = Pair {
        source: text.to_owned(),
        target: text.to_owned(),
        created: None,
        changed: None,
        origin: Origin { chapter: 1, chunk_key: "1".into(), receipt: hash, snapshot: hash, check: hash },
    };
    let input =
        TmxInput { tool_version: "0".into(), source_lang: "zh".into(), target_lang: "ru".into(), pairs: vec![pair] };
    let written = formats::tmx::write(&input);
    let refused = formats::tmx::unrepresentable(text).is_some();
    assert_eq!(written.written[0] == Written::Refused, refused, "refused {:?}", written.refused);
    assert!(std::str::from_utf8(&written.bytes).is_ok(), "the memory is not UTF-8");
}

/// Bytes of an archive's end frame: tag, length, five counts, head hash, checksum.
const ARCHIVE_END_FRAME: usize = 5 + 8 * 5 + 32 + 32;

/// `fuzz_archive`: arbitrary bytes never panic the archive reader (`docs/archive.md`),
/// and what it accepts is a whole chain: every record opens at its seq and links to
/// the one before, and the head is the last record's. Inputs ending in something
/// shaped like an end frame are also tried with the checksum recomputed, so mutated
/// frames get past it to the record, blob and document checks.
pub fn archive(data: &[u8]) {
    check_archive(data);
    if data.len() >= ledger::ARCHIVE_MAGIC.len() + ARCHIVE_END_FRAME {
        let start = data.len() - ARCHIVE_END_FRAME;
        if data[start] == b'Z' {
            let mut hasher = blake3::Hasher::new_derive_key(ledger::ARCHIVE_CHECKSUM_CONTEXT);
            hasher.update(&data[..start]);
            let mut resealed = data.to_vec();
            resealed[data.len() - 32..].copy_from_slice(hasher.finalize().as_bytes());
            check_archive(&resealed);
        }
    }
}

fn check_archive(bytes: &[u8]) {
    let Ok(archive) = ledger::read_archive("fuzz", bytes) else { return };
    let mut prev = Hash32::GENESIS;
    for (index, stored) in archive.records.iter().enumerate() {
        let seq = Seq(index as u64 + 1);
        let event = record::open(seq, stored).unwrap_or_else(|error| panic!("accepted event {seq}: {error}"));
        assert_eq!(event.prev, prev, "accepted event {seq} does not link to the one before");
        prev = event.hash;
    }
    assert_eq!(archive.head.map_or(Hash32::GENESIS, |(_, hash)| hash), prev, "the head is not the last record's");
    assert_eq!(archive.head.map_or(0, |(seq, _)| seq.0), archive.records.len() as u64);
}

/// Splits fuzz input into messages: each is a `u16` LE length and that many bytes.
fn messages(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while rest.len() >= 2 {
        let len = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        let end = (2 + len).min(rest.len());
        out.push(&rest[2..end]);
        rest = &rest[end..];
    }
    out
}

/// `fuzz_replica`: a log of arbitrary messages (each a `u16` LE length and its bytes)
/// never panics a replica's follower (`ledger::replica`, docs/scale.md), and what it
/// hands out is a chain: every group it calls ready starts at its head, its records
/// open at their seqs and link, and a refused message leaves it as it was. Each
/// message is also tried as a group's byte form with its checksum recomputed, so
/// mutated groups reach the record checks; a group that decodes encodes back to the
/// same bytes.
pub fn replica(data: &[u8]) {
    use ledger::replica::{Follower, Group, Offered};
    let mut follower = Follower::at(ledger::Head::EMPTY, 0);
    for (index, message) in messages(data).into_iter().enumerate() {
        let position = index as u64 + 1;
        let before = (follower.head(), follower.position());
        match follower.offer(position, message) {
            Ok(Offered::Ready(group)) => {
                assert_eq!(group.before(), before.0, "a ready group that does not start at the head");
                let mut head = group.before();
                for (offset, stored) in group.group().records.iter().enumerate() {
                    let seq = Seq(head.seq.0 + 1);
                    let event = record::open(seq, stored)
                        .unwrap_or_else(|error| panic!("record {offset} of a ready group: {error}"));
                    assert_eq!(event.prev, head.hash, "record {offset} of a ready group does not link");
                    head = ledger::Head { seq, hash: event.hash };
                }
                assert_eq!(head, group.end());
                follower.applied(position, &group);
            }
            Ok(_) => assert_eq!(follower.head(), before.0, "a skipped or pending message moved the head"),
            Err(_) => {
                assert_eq!((follower.head(), follower.position()), before, "a refused message moved the follower")
            }
        }
        for bytes in [message.to_vec(), resealed_group(message)] {
            if let Ok(group) = Group::decode(&bytes) {
                assert_eq!(group.encode(), bytes, "a group that decodes must encode to the same bytes");
                let _ = group.check();
            }
        }
    }
}

/// `bytes` with its last 32 bytes replaced by the group checksum of the rest.
fn resealed_group(bytes: &[u8]) -> Vec<u8> {
    let Some(body) = bytes.len().checked_sub(32).map(|end| &bytes[..end]) else { return bytes.to_vec() };
    let checksum = blake3::Hasher::new_derive_key(ledger::replica::GROUP_CHECKSUM_CONTEXT).update(body).finalize();
    let mut out = body.to_vec();
    out.extend_from_slice(checksum.as_bytes());
    out
}

/// `fuzz_derived`: the decoders of derived data a book keeps beside its log (a
/// checkpoint, the vectors of a term version, an embedding model's identity) never
/// panic on arbitrary bytes. The first byte picks the decoder; for vectors the next
/// two pick the dimension (1 to 16) and the number of texts (0 to 8). What a strict
/// decoder (vectors, identity) accepts encodes to exactly the input; what the
/// checkpoint decoder accepts is a fixed point (encoded again, it decodes to the same
/// state and snapshot ID), and its state can be read.
pub fn derived(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    match pick % 3 {
        0 => {
            if let Ok((state, snapshot)) = projections::checkpoint::decode(rest) {
                let again = projections::checkpoint::encode(&state, snapshot);
                let (decoded, decoded_snapshot) =
                    projections::checkpoint::decode(&again).expect("an encoded checkpoint decodes");
                assert_eq!((&decoded, decoded_snapshot), (&state, snapshot), "a checkpoint that is no fixed point");
                let _ = state.snapshot_id();
                let _ = state.active_terms(None);
            }
        }
        1 => {
            let [dim, n_texts, vectors @ ..] = rest else { return };
            let (dim, n_texts) = (u32::from(dim % 16) + 1, usize::from(n_texts % 9));
            if let Some(decoded) = suggest::vectors::decode(vectors, dim, n_texts) {
                assert_eq!(
                    suggest::vectors::encode(&decoded, dim),
                    vectors,
                    "vectors that decode must encode to the same bytes"
                );
            }
        }
        _ => {
            if let Ok(identity) = embed::ModelIdentity::from_bytes(rest) {
                assert_eq!(identity.to_bytes(), rest, "an identity that decodes must encode to the same bytes");
                let _ = identity.id();
            }
        }
    }
}

/// A surface picked by `arg`: two characters of an alphabet whose letters fold
/// together in twos and fours (萧/蕭, a/A/ａ/Ａ), so many events name one key.
fn batch_surface(arg: u8) -> String {
    const ALPHABET: [char; 10] = ['萧', '蕭', '炎', 'A', 'a', 'ａ', 'Ａ', '火', 'z', 'Z'];
    let arg = usize::from(arg);
    [ALPHABET[arg % 10], ALPHABET[arg / 10 % 10]].into_iter().collect()
}

/// `fuzz_batch`: a batch of many events about one record (T-1 萧炎, decoded from the
/// input two bytes an event: aliases added and removed, puts, a retirement, verdicts,
/// a term of another source with the same rendering, a successor) is decided against a
/// small book. Deciding in place gives what deciding on a copy gives, a refusal leaves
/// the book as it was, the events accepted fold to the state decided, the snapshot
/// tracker touched once per record gives the state's own ID, and the answer is
/// bounded by the batch: no more events than it had, and at most one warning per
/// record it wrote, each naming at most `SAME_DST_TERMS_LISTED_MAX` terms.
pub fn batch(data: &[u8]) {
    use projections::{decide, decide_in_place, Environment, SnapshotTracker, Touched, Touches, Warning};

    let fold = |text: &str| plain().fold(text);
    let has_table = |_: Hash32| true;
    let source_text = |_: Hash32| None;
    let snapshot_at = |_: Seq| None;
    let env = Environment {
        fold: &fold,
        render_formats: &[1, 2],
        token_estimators: &[1],
        has_table: &has_table,
        source_text: &source_text,
        snapshot_at: &snapshot_at,
    };
    let event =
        |body: Body| NewEvent { recorded_at_ms: 1_000, actor: "human:fuzz".into(), source: "fuzz".into(), body };
    let alias = |term: &str, arg: u8| AliasAdded {
        id: id(term),
        surface: batch_surface(arg),
        kind: AliasKind::default(),
        window: (arg >= 128).then_some(Window { since: u32::from(arg % 4) + 1, until: None }),
        release_to: None,
    };
    let book = [
        Body::TermPut(TermPut::new(id("T-1"), "萧炎", "Сяо Янь")),
        Body::TermPut(TermPut::new(id("T-2"), "药老", "Яо Лао")),
        Body::AliasAdded(AliasAdded { surface: "炎子".into(), ..alias("T-1", 0) }),
    ];
    let base = decide(&State::new(), &env, &book.map(event)).expect("the book is valid").state;
    const DSTS: [&str; 3] = ["Сяо Янь", "сяо янь", "Сяо Ёнь"];
    let batch: Vec<NewEvent> = data
        .chunks_exact(2)
        .map(|pair| {
            let (op, arg) = (pair[0], pair[1]);
            let dst = DSTS[usize::from(arg) % 3];
            event(match op % 8 {
                0 => Body::AliasAdded(alias("T-1", arg)),
                1 => Body::AliasRemoved(AliasRemoved { id: id("T-1"), surface: batch_surface(arg) }),
                2 => Body::TermPut(TermPut {
                    window: Window { since: u32::from(arg % 3) + 1, until: None },
                    ..TermPut::new(id("T-1"), "萧炎", dst)
                }),
                3 => Body::TermPut(TermPut::new(id(&format!("T-{}", 3 + arg % 3)), batch_surface(arg), dst)),
                4 => Body::TermRetired(TermRetired { id: id("T-1"), reason: None }),
                5 => Body::DispositionSet(DispositionSet {
                    target: id("T-1"),
                    verdict: [Verdict::Accept, Verdict::Verify, Verdict::Reject, Verdict::Withdraw]
                        [usize::from(arg % 4)],
                    reason: "fuzz".into(),
                    note: None,
                }),
                6 => Body::AliasAdded(alias("T-2", arg)),
                _ => Body::TermPut(TermPut {
                    window: Window { since: u32::from(arg % 5) + 1, until: None },
                    supersedes: Some(id("T-1")),
                    ..TermPut::new(id("T-6"), "萧炎帝", dst)
                }),
            })
        })
        .collect();
    let decided = decide(&base, &env, &batch);
    let mut in_place = base.clone();
    let in_place_decided = decide_in_place(&mut in_place, &env, &batch);
    let decision = match (decided, in_place_decided) {
        (Err(refused), Err(in_place_refused)) => {
            assert_eq!(refused, in_place_refused, "deciding in place refuses differently");
            assert_eq!(in_place, base, "a refused batch changed the book");
            return;
        }
        (Ok(decision), Ok(in_place_decided)) => {
            assert_eq!(
                (&in_place_decided.events, &in_place_decided.dropped, &in_place_decided.warnings),
                (&decision.events, &decision.dropped, &decision.warnings)
            );
            assert_eq!(in_place, decision.state, "deciding in place leads elsewhere");
            decision
        }
        (decided, in_place_decided) => panic!("decide: {decided:?}; in place: {in_place_decided:?}"),
    };
    assert!(decision.events.len() + decision.dropped.len() <= batch.len());
    let mut state = base.clone();
    let mut tracker = SnapshotTracker::of(&base);
    let mut touches = Touches::default();
    for new_event in &decision.events {
        let seq = state.revision().next();
        touches.add(Touched::of(&new_event.body));
        state.apply(&Event {
            seq,
            prev: Hash32::GENESIS,
            hash: Hash32::GENESIS,
            schema: record::SCHEMA_CURRENT,
            content: new_event.clone(),
        });
    }
    assert_eq!(state, decision.state, "the accepted events fold elsewhere");
    tracker.touch_all(&state, &mut touches);
    assert_eq!(tracker.id(&state), state.snapshot_id(), "the tracker touched once per record differs");
    let written: std::collections::BTreeSet<RecordId> =
        decision.events.iter().filter_map(|new_event| new_event.body.record()).collect();
    assert!(decision.warnings.len() <= written.len() + 1, "more warnings than records written");
    for warning in &decision.warnings {
        let Warning::SameDst { terms, n_terms, .. } = warning;
        assert!(terms.len() <= limits::SAME_DST_TERMS_LISTED_MAX && terms.len() <= *n_terms && *n_terms >= 2);
    }
}

/// Length of the header of a locate index's byte form; its hash is at 40..72 and
/// covers the rest.
const LOCATE_HEADER_LEN: usize = 72;

/// A small locate index (two chapters, the plain profile) and its bytes.
fn locate_index() -> &'static (locate::Index, Vec<u8>) {
    static INDEX: OnceLock<(locate::Index, Vec<u8>)> = OnceLock::new();
    INDEX.get_or_init(|| {
        let chapters = [
            (1, "第一回\r\n\r\n    诗曰：\r\n\r\n    混沌未分天地乱茫茫渺渺无人见。\r\n\r\n    自从盘古破鸿蒙开辟从兹清浊辨。\r\n"),
            (2, "「どうも御退屈様、もう帰りましょう」と茶を注《つ》ぎ易《か》えて迷亭の前へ出す。\n「ええ」\n"),
        ];
        let index = locate::Index::build(plain(), chapters).expect("a small index");
        let bytes = index.to_bytes();
        (index, bytes)
    })
}

/// Locate index bytes with the body hash recomputed.
fn reseal_locate(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= LOCATE_HEADER_LEN {
        let hash = blake3::derive_key(locate::INDEX_HASH_CONTEXT, &bytes[LOCATE_HEADER_LEN..]);
        bytes[40..72].copy_from_slice(&hash);
    }
    bytes
}

/// Every span of a locate answer lies on char boundaries of the request and of its
/// chapter's text.
fn check_located(index: &locate::Index, request: &str) {
    let outcome = index.locate(request).expect("a request under the limit");
    let spans = match outcome {
        locate::Outcome::Found { chunk, .. } => vec![chunk],
        locate::Outcome::Ambiguous { candidates, .. } => candidates,
        locate::Outcome::NotFound { nearest, .. } => nearest.into_iter().collect(),
    };
    for span in spans {
        assert!(request.get(span.request.clone()).is_some(), "a request span off its char boundaries");
        let text = index.chapter_text(span.chapter).expect("a located chapter is registered");
        assert!(text.get(span.source.clone()).is_some(), "a source span off its char boundaries");
    }
}

/// `fuzz_locate`: the first byte picks. 0: the rest, as bytes of a locate index
/// (`locate::Index::from_bytes`), never panics the decoder, and what decodes encodes
/// to exactly them and locates without a panic. 1: the rest XOR-ed onto a valid
/// index's bytes, with the hash recomputed, reaches the checks behind the hash: refused,
/// or decoded to an index that encodes to the same bytes and answers a request with
/// spans on char boundaries. 2: the rest, as a request to the valid index, gives spans
/// on char boundaries.
pub fn locate(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    let (index, valid) = locate_index();
    let request = "Translate:\n混沌未分天地乱茫茫渺渺无人见。\n「どうも御退屈様、もう帰りましょう」";
    match pick % 3 {
        0 => {
            if let Ok(decoded) = locate::Index::from_bytes(rest, plain()) {
                assert_eq!(decoded.to_bytes(), rest, "an index that decodes must encode to the same bytes");
                check_located(&decoded, request);
            }
        }
        1 => {
            let bytes = reseal_locate(xor(valid, rest));
            if let Ok(decoded) = locate::Index::from_bytes(&bytes, plain()) {
                assert_eq!(decoded.to_bytes(), bytes, "an index that decodes must encode to the same bytes");
                check_located(&decoded, request);
            }
        }
        _ => check_located(index, &String::from_utf8_lossy(rest)),
    }
}

/// What a chat model may answer the book's batch jobs, and the stored exchange bytes:
/// the first byte picks the parser, the rest is the input. No input panics; an
/// extraction's accepted names are within the schema's bounds; an adjudication's
/// verdicts name only the request's conflicts and their terms, once each; a stored
/// exchange that decodes encodes to the same bytes.
pub fn model_answers(data: &[u8]) {
    use book::adjudicate::{Conflict, ConflictKind, ConflictTerm};
    let Some((&pick, rest)) = data.split_first() else { return };
    // The input as a chat completion's message text, and as a whole body.
    let text = String::from_utf8_lossy(rest);
    let wrapped = serde_json::json!({ "choices": [{ "message": { "content": text } }] }).to_string();
    let body = if pick & 0x80 == 0 { wrapped.as_bytes() } else { rest };
    match pick % 4 {
        0 => {
            if let Ok(names) = book::extract::parse_answer(body) {
                assert!(names.len() <= book::extract::NAMES_PER_ANSWER_MAX);
                for name in names {
                    let chars = name.surface.trim().chars().count();
                    assert!((1..=book::extract::SURFACE_CHARS_MAX).contains(&chars), "{:?}", name.surface);
                }
            }
        }
        1 => {
            let term = |id: &str| ConflictTerm {
                id: id.into(),
                src: "白衣".into(),
                dst: "x".into(),
                sense: None,
                gender: None,
                note: None,
            };
            let conflicts = [Conflict {
                conflict: "c1".into(),
                kind: ConflictKind::SenseCollision,
                surface: "白衣".into(),
                terms: vec![term("T-1"), term("T-2")],
                excerpt: String::new(),
            }];
            if let Ok(verdicts) = book::adjudicate::parse_verdicts(body, &conflicts) {
                assert!(verdicts.len() <= 1, "one verdict a conflict");
                for verdict in verdicts {
                    assert_eq!(verdict.conflict, "c1");
                    assert!(verdict.term == "T-1" || verdict.term == "T-2");
                }
            }
        }
        2 => {
            let _ = book::eval::translation_of(body);
            let _ = book::eval::Requirement::parse(&text);
        }
        _ => {
            if let Ok(exchange) = book::exchange::StoredExchange::decode(rest) {
                assert_eq!(exchange.encode().unwrap(), rest, "an exchange that decodes must encode to the same bytes");
            }
        }
    }
}

/// `fuzz_enamdict`: any text, read as lines of a name dictionary, never panics; an
/// entry parsed has a plain headword and a kana reading; the readings of any headword
/// kept are kana pairs, at most `NAME_READINGS_MAX`, and the headwords a name needs
/// include each of its parts. As a dictionary file (UTF-8 or EUC-JP), the bytes give
/// `book::standard::dictionary_readings` what decoding them whole and parsing every
/// line gives, and nothing when they are neither.
pub fn enamdict(data: &[u8]) {
    use translit::enamdict::{is_kana, name_readings, needed_headwords, parse_line, NameReadings, NAME_READINGS_MAX};
    if data.len() > 4096 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let mut dictionary = NameReadings::default();
    let mut headwords = Vec::new();
    for line in text.lines() {
        if let Some(entry) = parse_line(line) {
            assert!(!entry.headword.is_empty() && !entry.headword.contains(char::is_whitespace), "{line:?}");
            assert!(!entry.reading.is_empty() && entry.reading.chars().all(is_kana), "{line:?}");
            assert!(!entry.tags.is_empty(), "{line:?}");
            dictionary.insert(&entry);
            headwords.push(entry.headword.to_owned());
        }
        let needed = needed_headwords(line);
        for part in line.split([' ', '\u{3000}', '・']).filter(|part| !part.is_empty()) {
            assert!(needed.iter().any(|headword| headword == part), "{part:?} of {line:?}");
        }
    }
    for headword in headwords.iter().chain(text.lines().map(str::to_owned).collect::<Vec<_>>().iter()) {
        for place in [false, true] {
            let readings = name_readings(headword, place, &dictionary);
            assert!(readings.len() <= NAME_READINGS_MAX);
            for (family, given) in &readings {
                assert!(family.iter().chain(std::iter::once(given)).all(|kana| kana.chars().all(is_kana)));
            }
        }
    }
    // The same bytes as a dictionary file, UTF-8 or EUC-JP: reading only the lines of
    // the needed headwords gives what decoding it whole and parsing every line does.
    let as_file = |text: &str| {
        let mut readings = NameReadings::default();
        let needed: std::collections::BTreeSet<String> =
            text.lines().filter_map(|line| line.split(' ').next()).map(str::to_owned).collect();
        for entry in text.lines().filter_map(parse_line) {
            if needed.contains(entry.headword) {
                readings.insert(&entry);
            }
        }
        (needed, readings)
    };
    let decoded = match std::str::from_utf8(data) {
        Ok(text) => Some(std::borrow::Cow::Borrowed(text)),
        Err(_) => {
            let (text, had_errors) = encoding_rs::EUC_JP.decode_without_bom_handling(data);
            (!had_errors).then_some(text)
        }
    };
    match decoded {
        Some(text) => {
            let (needed, expected) = as_file(&text);
            assert_eq!(book::standard::dictionary_readings(data, &needed), Some(expected), "{text:?}");
        }
        None => {
            let needed = headwords.iter().cloned().collect();
            assert_eq!(book::standard::dictionary_readings(data, &needed), None);
        }
    }
}
