//! Normalization profiles, each built once per test binary (building a zh or ja one
//! reads OpenCC's dictionaries).

use std::sync::OnceLock;

use matcher::{Flavour, Profile, ProfileBuilder};

/// The profile of `flavour` (zh, ja or plain).
pub fn profile(flavour: Flavour) -> &'static Profile {
    static ZH: OnceLock<Profile> = OnceLock::new();
    static JA: OnceLock<Profile> = OnceLock::new();
    static PLAIN: OnceLock<Profile> = OnceLock::new();
    let cell = match flavour {
        Flavour::Zh => &ZH,
        Flavour::Ja => &JA,
        _ => &PLAIN,
    };
    cell.get_or_init(|| {
        ProfileBuilder::new(flavour)
            .build()
            .unwrap_or_else(|error| panic!("building the {flavour:?} profile failed: {error}; run scripts/setup.sh"))
    })
}

/// The zh profile.
pub fn zh_profile() -> &'static Profile {
    profile(Flavour::Zh)
}

/// The profile that only applies NFKC.
pub fn nfkc_profile() -> &'static Profile {
    static NFKC: OnceLock<Profile> = OnceLock::new();
    NFKC.get_or_init(|| ProfileBuilder::nfkc_only().build().expect("nfkc profile"))
}
