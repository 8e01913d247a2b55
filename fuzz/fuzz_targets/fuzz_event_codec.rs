//! Arbitrary bytes fed to the event decoders never panic, and whatever decodes is
//! canonical: re-encoding gives back exactly the input (decode ∘ encode = identity).
//! The same bytes are also tried as a sealed record (header ‖ payload).
#![no_main]

use ledger_model::codec;
use ledger_model::record;
use ledger_model::{Body, NewEvent, Seq};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(event) = codec::decode_strict::<NewEvent>(bytes) {
        assert_eq!(event.encode().unwrap(), bytes, "decoded event is not canonical");
    }
    if let Ok(body) = codec::decode_strict::<Body>(bytes) {
        assert_eq!(codec::encode(&body).unwrap(), bytes, "decoded body is not canonical");
    }
    if let Ok(event) = record::open(Seq(1), bytes) {
        let payload = event.content.encode().unwrap();
        let (sealed, hash) = record::seal(event.seq, event.prev, event.schema, &payload);
        assert_eq!(sealed, bytes, "opened record does not reseal to itself");
        assert_eq!(hash, event.hash);
    }
});
