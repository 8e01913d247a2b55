//! The one error type: every refusal names what was refused and where.

use std::fmt;

/// Why an input has no Russian form. Positions count `char`s from 0 in the string
/// the caller passed (for a name given in parts, in that part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TranslitError {
    /// The input (or a part the name needs) is empty or only separators.
    Empty,
    /// A character this transcription does not read (a Latin letter in hanzi, a
    /// kanji in kana, punctuation).
    UnknownCharacter {
        /// The character.
        ch: char,
        /// Its position.
        position: usize,
    },
    /// A character whose reading is not a syllable of the Palladius table (no
    /// standard syllable has that pinyin).
    UnknownSyllable {
        /// The character.
        ch: char,
        /// The pinyin reading that was not found.
        pinyin: String,
        /// Its position.
        position: usize,
    },
    /// More than one separator between family and given name.
    TooManyParts {
        /// Position of the extra separator.
        position: usize,
    },
}

impl fmt::Display for TranslitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TranslitError::Empty => write!(f, "empty name"),
            TranslitError::UnknownCharacter { ch, position } => {
                write!(f, "character {ch:?} (U+{:04X}) at position {position} has no reading", u32::from(*ch))
            }
            TranslitError::UnknownSyllable { ch, pinyin, position } => {
                write!(f, "character {ch:?} at position {position} reads {pinyin:?}, not a Palladius syllable")
            }
            TranslitError::TooManyParts { position } => {
                write!(f, "a second separator at position {position}: a name has a family and a given part")
            }
        }
    }
}

impl std::error::Error for TranslitError {}
