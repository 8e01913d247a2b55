//! Idempotency keys: a write made with a client's key appends once, however often it
//! is retried.
//!
//! A key names a [`Claim`] on one book: a marker id (the book and the key) and a
//! fingerprint of the request the key was first used with (whatever the caller
//! says makes two requests the same; a server hashes the method, path, query and
//! body). Before it writes, the caller asks [`Book::seen`] under the book's lock
//! whether the marker is stored; if not, it runs its write inside
//! [`Book::claimed`], and the first batch the write appends carries the marker
//! blob (the fingerprint and where the batch begins) in the same commit, so the
//! marker is in the book exactly when the batch is (and, in a replicated library,
//! in the stream exactly when the batch is). A retry then finds the marker: the
//! same request is answered from it, another request with the same key is refused.

use ledger_model::limits::IDEMPOTENCY_KEY_BYTES_MAX;
use ledger_model::{Hash32, Seq};

use crate::book::Book;
use crate::error::BookError;

/// blake3 `derive_key` context of the marker id and the fingerprint.
const CONTEXT: &str = "lorebank 2026 idempotency key v1";

/// Checks a key: 1 to [`IDEMPOTENCY_KEY_BYTES_MAX`] visible ASCII characters, no
/// space. The error says what a key must be.
pub fn check_key(key: &str) -> Result<(), String> {
    if !key.is_empty() && key.len() <= IDEMPOTENCY_KEY_BYTES_MAX && key.bytes().all(|byte| byte.is_ascii_graphic()) {
        return Ok(());
    }
    Err(format!("expected 1 to {IDEMPOTENCY_KEY_BYTES_MAX} visible ASCII characters without space"))
}

/// A key's claim on a book: its marker id and the fingerprint of the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    marker: Hash32,
    fingerprint: Hash32,
}

/// What a book says of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The key was not used on this book: write.
    New,
    /// The key was used with the same request, whose batch began at `first`:
    /// answer from the marker, write nothing.
    Same {
        /// The first revision of the batch the marker came with.
        first: Option<u64>,
    },
    /// The key was used with another request: refuse, write nothing.
    Other,
}

impl Claim {
    /// The claim of `key` (checked with [`check_key`]) on book `book` for the request
    /// made of `parts` (each part is hashed with its length, so no two lists of
    /// parts hash alike).
    pub fn new(book: &str, key: &str, parts: &[&[u8]]) -> Claim {
        let mut marker = blake3::Hasher::new_derive_key(CONTEXT);
        marker.update(b"marker\0").update(book.as_bytes()).update(b"\0").update(key.as_bytes());
        let mut fingerprint = blake3::Hasher::new_derive_key(CONTEXT);
        fingerprint.update(b"request\0").update(book.as_bytes()).update(b"\0");
        for part in parts {
            fingerprint.update(&(part.len() as u64).to_le_bytes()).update(part);
        }
        Claim { marker: Hash32(*marker.finalize().as_bytes()), fingerprint: Hash32(*fingerprint.finalize().as_bytes()) }
    }

    /// The id of the marker blob.
    pub fn marker(&self) -> Hash32 {
        self.marker
    }

    /// The fingerprint of the request.
    pub fn fingerprint(&self) -> Hash32 {
        self.fingerprint
    }

    /// The marker blob of a batch that begins at `first`: the fingerprint, then
    /// `first` (8 bytes, little-endian).
    pub(crate) fn blob(&self, first: Seq) -> (Hash32, Vec<u8>) {
        let mut bytes = self.fingerprint.0.to_vec();
        bytes.extend_from_slice(&first.0.to_le_bytes());
        (self.marker, bytes)
    }

    /// What a stored marker blob says of this claim.
    fn judge(&self, stored: &[u8]) -> Seen {
        if stored.get(..32) != Some(&self.fingerprint.0[..]) {
            return Seen::Other;
        }
        let first = stored.get(32..40).and_then(|bytes| bytes.try_into().ok()).map(u64::from_le_bytes);
        Seen::Same { first }
    }
}

impl Book {
    /// Whether the book holds the marker of `claim`, and for which request.
    pub fn seen(&self, claim: &Claim) -> Result<Seen, BookError> {
        Ok(match self.ledger().blob(claim.marker)? {
            Some(stored) => claim.judge(&stored),
            None => Seen::New,
        })
    }

    /// Runs `write` with `claim` pending: the first batch it appends (through
    /// [`Book::submit`], the one write path) carries the claim's marker in the same
    /// commit. A write that appends nothing (refused, or every event a no-op) stores
    /// no marker. Check [`Book::seen`] first, under the same lock.
    pub fn claimed<T, E>(
        &mut self,
        claim: Option<Claim>,
        write: impl FnOnce(&mut Book) -> Result<T, E>,
    ) -> Result<T, E> {
        self.set_claim(claim);
        let result = write(self);
        self.set_claim(None);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_visible_ascii_without_space_within_its_limit() {
        for good in ["a", "retry-7f3c", "~!#$%&'*+-.^_`|", &"k".repeat(IDEMPOTENCY_KEY_BYTES_MAX)] {
            assert!(check_key(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", " a", "a\tb", "键", "a\u{7f}", &"k".repeat(IDEMPOTENCY_KEY_BYTES_MAX + 1)] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_fingerprint_tells_requests_apart_and_the_marker_only_books_and_keys() {
        let claim = Claim::new("a", "k", &[b"POST /v1/books/a/events", b"", b"{}"]);
        assert_eq!(claim, Claim::new("a", "k", &[b"POST /v1/books/a/events", b"", b"{}"]));
        // Moving a byte from one part to the next is another request.
        let shifted = Claim::new("a", "k", &[b"POST /v1/books/a/events", b"{", b"}"]);
        assert_eq!(shifted.marker(), claim.marker());
        assert_ne!(shifted.fingerprint(), claim.fingerprint());
        assert_ne!(Claim::new("b", "k", &[]).marker(), Claim::new("a", "k", &[]).marker());
        assert_ne!(Claim::new("a", "k2", &[]).marker(), Claim::new("a", "k", &[]).marker());
        let (_, blob) = claim.blob(Seq(7));
        assert_eq!(claim.judge(&blob), Seen::Same { first: Some(7) });
        assert_eq!(shifted.judge(&blob), Seen::Other);
    }
}
