//! The book-level decoders: arbitrary bytes given to the receipt decoder and to the
//! frozen projection loader, and arbitrary text given to the `apply` JSON form, never
//! panic. Whatever decodes is canonical: a receipt re-encodes to its bytes; a body
//! parsed from JSON survives the canonical codec and JSON again unchanged.
#![no_main]

use std::sync::OnceLock;

use ledger_model::validate::{validate_body, Rules};
use ledger_model::{codec, Body};
use libfuzzer_sys::fuzz_target;
use matcher::{Flavour, Profile, ProfileBuilder};
use projections::frozen::Frozen;
use projections::{SnapshotId, State};
use replay::receipt::Receipt;

fn profile() -> &'static (Profile, SnapshotId) {
    static FIXTURE: OnceLock<(Profile, SnapshotId)> = OnceLock::new();
    FIXTURE.get_or_init(|| (ProfileBuilder::new(Flavour::Plain).build().expect("plain profile"), State::new().snapshot_id()))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(receipt) = Receipt::decode(data) {
        assert_eq!(receipt.encode(), data, "decoded receipt is not canonical");
    }
    let (profile, snapshot) = profile();
    assert!(Frozen::load(data, profile, *snapshot).is_err(), "arbitrary bytes loaded as a frozen projection");
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(body) = serde_json::from_str::<Body>(text) {
            let _ = validate_body(&body, &Rules::default());
            let bytes = codec::encode(&body);
            if let Ok(bytes) = bytes {
                assert_eq!(codec::decode_strict::<Body>(&bytes).as_ref(), Ok(&body));
            }
            let json = serde_json::to_string(&body).unwrap();
            assert_eq!(serde_json::from_str::<Body>(&json).unwrap(), body);
        }
    }
});
