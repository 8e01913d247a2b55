//! Offset units: byte and char positions in the original text and in the folded text.
//!
//! Each unit is its own newtype so an offset into the folded (normalized) text can never
//! be used to slice the original, and a byte offset can never be mistaken for a char
//! offset. All are `u32`: texts are bounded by [`crate::TEXT_BYTES_MAX`].

use std::fmt;

macro_rules! offset_newtype {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The offset as a `usize`, for indexing.
            #[inline]
            pub fn as_usize(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

offset_newtype!(
    /// A byte offset into the original (source) text.
    SrcByte
);
offset_newtype!(
    /// A char (Unicode scalar value) offset into the original (source) text.
    SrcChar
);
offset_newtype!(
    /// A byte offset into the folded (normalized) text.
    NormByte
);

/// A half-open span `start..end` of the original text, in bytes and in chars.
///
/// Both ends are on char boundaries of the original text, and
/// `text[bytes_start..bytes_end]` contains exactly `chars_end - chars_start` chars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SrcSpan {
    /// First byte of the span.
    pub start: SrcByte,
    /// One past the last byte of the span.
    pub end: SrcByte,
    /// First char of the span.
    pub start_char: SrcChar,
    /// One past the last char of the span.
    pub end_char: SrcChar,
}

impl SrcSpan {
    /// The byte range, for slicing the original text.
    #[inline]
    pub fn bytes(&self) -> std::ops::Range<usize> {
        self.start.as_usize()..self.end.as_usize()
    }

    /// The char range.
    #[inline]
    pub fn chars(&self) -> std::ops::Range<usize> {
        self.start_char.as_usize()..self.end_char.as_usize()
    }
}

/// A half-open span `start..end` of the folded text, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NormSpan {
    /// First byte of the span.
    pub start: NormByte,
    /// One past the last byte of the span.
    pub end: NormByte,
}

impl NormSpan {
    /// The byte range, for slicing the folded text.
    #[inline]
    pub fn bytes(&self) -> std::ops::Range<usize> {
        self.start.as_usize()..self.end.as_usize()
    }
}
