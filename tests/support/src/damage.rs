//! Damage done to a file on disk, as the corruption tests do it: a bit flipped near
//! every stored copy of a marker, so a test hits the object that holds it however
//! many copies the storage engine keeps.

use std::path::Path;

/// Flips the bits `mask` of the byte `offset` bytes from the start of every copy of
/// `needle` in the file at `path`, and returns how many copies it found (the caller
/// says how many it expects).
pub fn flip_near(path: &Path, needle: &[u8], offset: isize, mask: u8) -> usize {
    let mut bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let positions = positions(&bytes, needle);
    for position in &positions {
        let at = position.checked_add_signed(offset).expect("an offset inside the file");
        bytes[at] ^= mask;
    }
    std::fs::write(path, bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    positions.len()
}

/// Where every copy of `needle` starts in `bytes`, for damage more precise than a
/// flipped bit.
pub fn positions(bytes: &[u8], needle: &[u8]) -> Vec<usize> {
    bytes.windows(needle.len()).enumerate().filter(|(_, window)| *window == needle).map(|(at, _)| at).collect()
}
