//! The post-check of a translation: Russian case forms of renderings, and whether a
//! Russian output renders each hit of its receipt.
//!
//! This crate owns the declension rule set ([`decline`], versioned by
//! [`RULES_VERSION`]), the decl-aware match of renderings in a translation
//! ([`check`]), the gender-agreement flag, and the canonical byte form of a
//! [`Check`]. It only reports: it never rewrites the translation.
//!
//! It is pure: no I/O, no clock, no randomness, and no hash-map iteration in anything
//! rendered or hashed. The same translation and renderings always give the same
//! `Check`, byte for byte. docs/postcheck.md describes the rules.

mod decline;
mod matching;

pub use decline::{
    decline, Forms, BASE_ONLY, INDECLINABLE, NAME_A, NAME_CONSONANT_M, NAME_SOFT_M, NAME_TITLE, NOUN_A, NOUN_F_SOFT,
    NOUN_M, NOUN_MYA, NOUN_M_SOFT, NOUN_N, RULES, UNKNOWN_PATTERN,
};
use ledger_model::codec::{self, CodecError};
use ledger_model::Gender;
use serde::{Deserialize, Serialize};

/// The version of the declension rule set; bumped on any change of generated forms.
pub const RULES_VERSION: u16 = 1;

/// One hit of a receipt, as the check sees it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Rendering {
    /// The record's term number.
    pub term: u32,
    /// The rendering.
    pub dst: String,
    /// Declared case forms of `dst`.
    pub decl: Vec<String>,
    /// Grammatical gender of `dst`.
    pub gender: Option<Gender>,
    /// The record's kind (`character`, `place`, ...).
    pub kind: Option<String>,
    /// How often the term occurs in the source chunk.
    pub source_count: u32,
    /// The hit was ambiguous or unreviewed at assembly: always flagged for review.
    pub review: bool,
}

/// The result of a post-check: one item per rendering, in the order given.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// [`RULES_VERSION`] of the rules that generated the forms.
    pub rules_version: u16,
    /// One item per rendering.
    pub items: Vec<Item>,
}

/// What the check found for one rendering.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The record's term number.
    pub term: u32,
    /// The verdict.
    pub verdict: Verdict,
    /// How often the term occurs in the source chunk.
    pub source_count: u32,
    /// How often a form of the rendering occurs in the translation.
    pub found_count: u32,
    /// Each occurrence.
    pub found: Vec<Found>,
    /// Occurrences of other renderings that explain a `wrong_rendering`.
    pub wrong: Vec<Wrong>,
    /// Words after an occurrence whose ending marks the other gender.
    pub agreement: Vec<Agreement>,
    /// Flagged for review whatever the verdict (ambiguous or unreviewed hit).
    pub review: bool,
    /// What was generated and by which rule, so a check replays.
    pub generated: Forms,
}

/// Whether the translation renders a hit.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Found at least once.
    Rendered,
    /// Not found, though the check could have found it.
    Missing,
    /// Not found, and another rendering of the check occurs more often than its own
    /// source count accounts for.
    WrongRendering,
    /// Not found, with no declared forms and nothing generated: not cried wolf.
    Unverifiable,
}

/// One occurrence of a rendering.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The form that matched, as declared or generated.
    pub form: String,
    /// Byte span in the translation.
    pub bytes: (u32, u32),
    /// The form is `dst` or one of `decl`, not a generated one.
    pub declared: bool,
}

/// An occurrence of another rendering where this one was expected.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Wrong {
    /// The other record, whose rendering appears.
    pub term: u32,
    /// Byte span in the translation.
    pub bytes: (u32, u32),
}

/// A word after an occurrence whose ending marks the other gender.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// The word, as written.
    pub word: String,
    /// Byte span in the translation.
    pub bytes: (u32, u32),
    /// The rendering's gender.
    pub expected: Gender,
    /// The gender the word's ending marks.
    pub found: Gender,
}

impl Verdict {
    /// The verdict's name, as in the JSON form (`rendered`, `missing`,
    /// `wrong_rendering`, `unverifiable`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Rendered => "rendered",
            Verdict::Missing => "missing",
            Verdict::WrongRendering => "wrong_rendering",
            Verdict::Unverifiable => "unverifiable",
        }
    }
}

impl Check {
    /// The canonical bytes of the check (the project's bincode configuration).
    pub fn to_bytes(&self) -> Vec<u8> {
        codec::encode_large(self).expect("checks always encode")
    }

    /// Reads bytes written by [`Check::to_bytes`], refusing any that are not the
    /// canonical encoding of the check they decode to, or that name an unknown rule.
    pub fn from_bytes(bytes: &[u8]) -> Result<Check, CodecError> {
        codec::decode_large_strict(bytes)
    }

    /// Whether any item needs a reviewer: a verdict other than `rendered`, fewer
    /// occurrences than in the source, a gender-agreement flag, or a review hit.
    pub fn needs_review(&self) -> bool {
        self.items.iter().any(Item::needs_review)
    }
}

impl Item {
    /// Whether this item needs a reviewer (see [`Check::needs_review`]).
    pub fn needs_review(&self) -> bool {
        self.review
            || self.verdict != Verdict::Rendered
            || self.found_count < self.source_count
            || !self.agreement.is_empty()
    }
}

/// Checks `translation` against `renderings` (the hits of its receipt).
///
/// Forms are matched case-insensitively with ё folded to е, on word boundaries, with
/// any run of whitespace between the words of a form; occurrences do not overlap,
/// the longest form wins at a position, and a rendering's declared forms win over its
/// generated ones. See docs/postcheck.md for the verdict rules.
pub fn check(translation: &str, renderings: &[Rendering]) -> Check {
    let generated = renderings.iter().map(|r| decline(&r.dst, r.gender, r.kind.as_deref())).collect();
    check_with(translation, renderings, generated)
}

/// The check with nothing generated: only `dst` and the declared `decl` forms are
/// matched, and every item's rule is [`BASE_ONLY`]. This is the baseline the
/// false-flag measurement of docs/postcheck.md compares [`check`] with; a stored
/// check is always made by [`check`].
pub fn check_base_only(translation: &str, renderings: &[Rendering]) -> Check {
    let generated = renderings.iter().map(|_| Forms { forms: Vec::new(), rule: BASE_ONLY }).collect();
    check_with(translation, renderings, generated)
}

fn check_with(translation: &str, renderings: &[Rendering], generated: Vec<Forms>) -> Check {
    let occurrences = matching::occurrences(translation, renderings, &generated);
    let counts: Vec<u32> = occurrences.iter().map(|found| saturate(found.len())).collect();
    let mut items = Vec::with_capacity(renderings.len());
    for (index, ((rendering, forms), found)) in renderings.iter().zip(generated).zip(&occurrences).enumerate() {
        let mut wrong = Vec::new();
        if found.is_empty() {
            for (other_index, (other_rendering, other_found)) in renderings.iter().zip(&occurrences).enumerate() {
                if other_index != index
                    && other_rendering.term != rendering.term
                    && counts[other_index] > other_rendering.source_count
                {
                    wrong.extend(other_found.iter().map(|f| Wrong { term: other_rendering.term, bytes: f.bytes }));
                }
            }
        }
        let verdict = if !found.is_empty() {
            Verdict::Rendered
        } else if !wrong.is_empty() {
            Verdict::WrongRendering
        } else if !rendering.decl.is_empty() || !forms.forms.is_empty() {
            Verdict::Missing
        } else {
            Verdict::Unverifiable
        };
        let agreement = match rendering.gender {
            Some(gender @ (Gender::Masculine | Gender::Feminine)) => {
                found.iter().filter_map(|f| matching::disagreement(translation, f.bytes.1, gender)).collect()
            }
            _ => Vec::new(),
        };
        items.push(Item {
            term: rendering.term,
            verdict,
            source_count: rendering.source_count,
            found_count: counts[index],
            found: found.clone(),
            wrong,
            agreement,
            review: rendering.review,
            generated: forms,
        });
    }
    Check { rules_version: RULES_VERSION, items }
}

fn saturate(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}
