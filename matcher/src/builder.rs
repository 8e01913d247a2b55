//! Building a normalization profile from Unicode data and (feature `opencc`) the
//! system OpenCC library. This is the only code in the crate that calls OpenCC; it runs
//! when a book is created or its profile changes, never per chunk.

use std::collections::BTreeMap;

use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

use crate::profile::FOLD_CHARS_MAX;
use crate::profile::{encode_profile, Entry, Flavour, LoadError, Profile, ProfileOptions, ToolchainUnicode};

/// How many times a char's fold is re-applied looking for a fixed point.
const CLOSURE_ROUNDS_MAX: usize = 16;

/// Why a profile could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileBuildError {
    /// OpenCC failed to load a config or convert.
    #[error("opencc config {config}: {message}")]
    Opencc {
        /// The config file.
        config: String,
        /// OpenCC's message.
        message: String,
    },
    /// The flavour needs OpenCC but the crate was built without the `opencc` feature.
    #[error("flavour {flavour:?} needs the opencc feature, which this build lacks")]
    OpenccUnavailable {
        /// The flavour asked for.
        flavour: Flavour,
    },
    /// Folding a char did not reach a fixed point (a cycle in the variant data).
    #[error("fold of {char:?} (U+{code:04X}) does not reach a fixed point after {rounds} rounds")]
    NotClosed {
        /// The char.
        char: char,
        /// Its code point.
        code: u32,
        /// Rounds tried.
        rounds: usize,
    },
    /// A char folds to more than [`FOLD_CHARS_MAX`] chars.
    #[error("fold of U+{code:04X} has {n_chars} chars, limit {limit}")]
    FoldTooLong {
        /// The char.
        code: u32,
        /// Length of its fold.
        n_chars: usize,
        /// The limit.
        limit: u32,
    },
    /// The built table failed validation (a bug in the builder).
    #[error("built profile is invalid: {0}")]
    Invalid(#[from] LoadError),
}

/// Builds a [`Profile`]. Each knob states its default; call sites that care about
/// determinism should set every knob explicitly.
///
/// ```
/// use matcher::{Flavour, ProfileBuilder};
///
/// // NFKC + case + kana + width + whitespace, no OpenCC (works without the feature).
/// let profile = ProfileBuilder::new(Flavour::Plain).build().unwrap();
/// assert_eq!(profile.fold("ＬＩＮ　Ёлка カタカナ"), "lin елка かたかな");
/// ```
#[derive(Clone, Debug)]
pub struct ProfileBuilder {
    flavour: Flavour,
    kana: bool,
    lowercase: bool,
    yo: bool,
    whitespace: bool,
    ignorables: bool,
    options: ProfileOptions,
    opencc_dir: String,
}

impl ProfileBuilder {
    /// A builder with the defaults of `flavour`: every fold on; Aozora ruby on for
    /// [`Flavour::Ja`] only (in Chinese `《》` are book-title brackets); HTML ruby on.
    pub fn new(flavour: Flavour) -> ProfileBuilder {
        ProfileBuilder {
            flavour,
            kana: true,
            lowercase: true,
            yo: true,
            whitespace: true,
            ignorables: true,
            options: ProfileOptions { aozora_ruby: flavour == Flavour::Ja, html_ruby: true, collapse_whitespace: true },
            opencc_dir: "/usr/share/opencc".to_string(),
        }
    }

    /// Exactly Unicode NFKC, nothing else: no folds, no markup, no whitespace collapse.
    /// Used to check the segment-wise NFKC against Unicode's conformance tests.
    pub fn nfkc_only() -> ProfileBuilder {
        ProfileBuilder {
            flavour: Flavour::Plain,
            kana: false,
            lowercase: false,
            yo: false,
            whitespace: false,
            ignorables: false,
            options: ProfileOptions { aozora_ruby: false, html_ruby: false, collapse_whitespace: false },
            opencc_dir: String::new(),
        }
    }

    /// Katakana → hiragana (`カ`→`か`, `ヴ`→`ゔ`, `ヽ`→`ゝ`). Default on. Off keeps the
    /// scripts apart (a katakana name will not match its hiragana spelling).
    pub fn kana(&mut self, on: bool) -> &mut Self {
        self.kana = on;
        self
    }

    /// Lowercase (Latin, Cyrillic, Greek, …; Unicode full lowercase). Default on.
    pub fn lowercase(&mut self, on: bool) -> &mut Self {
        self.lowercase = on;
        self
    }

    /// `ё`→`е` (and `Ё`). Default on: Russian text often omits the diaeresis.
    pub fn yo(&mut self, on: bool) -> &mut Self {
        self.yo = on;
        self
    }

    /// Every whitespace char → U+0020. Default on. See also
    /// [`ProfileBuilder::collapse_whitespace`].
    pub fn whitespace(&mut self, on: bool) -> &mut Self {
        self.whitespace = on;
        self
    }

    /// Collapse runs of U+0020 to one. Default on.
    pub fn collapse_whitespace(&mut self, on: bool) -> &mut Self {
        self.options.collapse_whitespace = on;
        self
    }

    /// Delete default-ignorable chars (zero-width space and joiners, soft hyphen, BOM,
    /// variation selectors). Default on: they are invisible and break matches.
    pub fn ignorables(&mut self, on: bool) -> &mut Self {
        self.ignorables = on;
        self
    }

    /// Strip Aozora Bunko markup and capture its ruby. Default: on for `Ja` only.
    pub fn aozora_ruby(&mut self, on: bool) -> &mut Self {
        self.options.aozora_ruby = on;
        self
    }

    /// Strip HTML ruby tags and capture the ruby. Default on.
    pub fn html_ruby(&mut self, on: bool) -> &mut Self {
        self.options.html_ruby = on;
        self
    }

    /// Directory holding OpenCC's `*.json` configs. Default `/usr/share/opencc`
    /// (Debian `opencc`/`libopencc-dev`).
    pub fn opencc_dir(&mut self, dir: &str) -> &mut Self {
        self.opencc_dir = dir.to_string();
        self
    }

    /// Build the table. For `Zh` and `Ja` this calls OpenCC once per CJK char (about
    /// 100k chars; a second or two).
    pub fn build(&self) -> Result<Profile, ProfileBuildError> {
        let variants = self.variant_map()?;
        let mut entries = Vec::new();
        for code in 0..=0x10_FFFFu32 {
            let Some(c) = char::from_u32(code) else { continue };
            if self.is_trivially_fixed(c, &variants) {
                continue;
            }
            let out = self.closure(c, &variants)?;
            if out.len() > FOLD_CHARS_MAX as usize {
                return Err(ProfileBuildError::FoldTooLong { code, n_chars: out.len(), limit: FOLD_CHARS_MAX });
            }
            if out.len() != 1 || out[0] != c {
                entries.push(Entry { key: c, out });
            }
        }
        let bytes = encode_profile(self.flavour, self.options, ToolchainUnicode::RUNNING, &entries);
        Ok(Profile::from_bytes(&bytes)?)
    }

    /// True when no step of the fold can change `c` (the common case, skipped quickly).
    fn is_trivially_fixed(&self, c: char, variants: &BTreeMap<char, char>) -> bool {
        is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
            && !(self.whitespace && c.is_whitespace())
            && !(self.ignorables && is_default_ignorable(c))
            && !(self.lowercase && c.to_lowercase().ne(std::iter::once(c)))
            && !(self.yo && c == '\u{451}')
            && !(self.kana && kana_fold(c).is_some())
            && !variants.contains_key(&c)
    }

    /// Apply one round of the per-char fold to a string.
    fn step(&self, s: &[char], variants: &BTreeMap<char, char>) -> Vec<char> {
        let mut out = Vec::with_capacity(s.len());
        for d in s.iter().copied().nfkc() {
            if self.ignorables && is_default_ignorable(d) {
                continue;
            }
            if self.whitespace && d.is_whitespace() {
                out.push(' ');
                continue;
            }
            let d = variants.get(&d).copied().unwrap_or(d);
            let mut kana_buf = [d, '\0'];
            let kana: &[char] = match (self.kana, kana_fold(d)) {
                (true, Some((a, b))) => {
                    kana_buf = [a, b.unwrap_or('\0')];
                    if b.is_some() {
                        &kana_buf[..]
                    } else {
                        &kana_buf[..1]
                    }
                }
                _ => &kana_buf[..1],
            };
            for &k in kana {
                if self.lowercase {
                    for l in k.to_lowercase() {
                        out.push(if self.yo && l == '\u{451}' { '\u{435}' } else { l });
                    }
                } else {
                    out.push(if self.yo && k == '\u{451}' { '\u{435}' } else { k });
                }
            }
        }
        out
    }

    /// The fixed point of `step` starting from `c`.
    fn closure(&self, c: char, variants: &BTreeMap<char, char>) -> Result<Vec<char>, ProfileBuildError> {
        let mut current = vec![c];
        for _ in 0..CLOSURE_ROUNDS_MAX {
            let next = self.step(&current, variants);
            if next == current {
                return Ok(current);
            }
            current = next;
        }
        Err(ProfileBuildError::NotClosed { char: c, code: c as u32, rounds: CLOSURE_ROUNDS_MAX })
    }

    #[cfg(not(feature = "opencc"))]
    fn variant_map(&self) -> Result<BTreeMap<char, char>, ProfileBuildError> {
        match self.flavour {
            Flavour::Plain => Ok(BTreeMap::new()),
            flavour => Err(ProfileBuildError::OpenccUnavailable { flavour }),
        }
    }

    #[cfg(feature = "opencc")]
    fn variant_map(&self) -> Result<BTreeMap<char, char>, ProfileBuildError> {
        match self.flavour {
            Flavour::Plain => Ok(BTreeMap::new()),
            Flavour::Zh => {
                let mut map = BTreeMap::new();
                // Regional variants first, so 臺→台 (tw) and 着 stay consistent; then
                // the general traditional→simplified table.
                for config in ["t2s.json", "tw2s.json", "hk2s.json"] {
                    let converted = opencc_per_char(&self.opencc_dir, config)?;
                    for (from, to) in converted {
                        map.entry(from).or_insert(to);
                    }
                }
                Ok(map)
            }
            Flavour::Ja => {
                let mut map: BTreeMap<char, char> =
                    opencc_per_char(&self.opencc_dir, "t2jp.json")?.into_iter().collect();
                // The inverse of shinjitai→kyūjitai, where t2jp says nothing about the
                // kyūjitai form.
                for (shin, kyu) in opencc_per_char(&self.opencc_dir, "jp2t.json")? {
                    map.entry(kyu).or_insert(shin);
                }
                Ok(map)
            }
        }
    }
}

/// Code points OpenCC is asked about: CJK, kana and compatibility blocks.
#[cfg(feature = "opencc")]
const OPENCC_RANGES: [(u32, u32); 11] = [
    (0x2E80, 0x2FDF),
    (0x3000, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2EBEF),
    (0x2F800, 0x2FA1F),
    (0x30000, 0x3134F),
];

/// Convert every char of `OPENCC_RANGES` alone with one OpenCC config; return the
/// chars that map to exactly one different char. Chars are sent in batches separated by
/// newlines (OpenCC's segmentation never joins across a newline, and no dictionary
/// entry contains one); a batch whose line count changes is redone char by char.
#[cfg(feature = "opencc")]
fn opencc_per_char(dir: &str, config: &str) -> Result<Vec<(char, char)>, ProfileBuildError> {
    let path = format!("{dir}/{config}");
    let err = |message: String| ProfileBuildError::Opencc { config: path.clone(), message };
    let opencc = opencc_rust::OpenCC::new(&path).map_err(|e| err(e.to_string()))?;
    let chars: Vec<char> = OPENCC_RANGES
        .iter()
        .flat_map(|&(lo, hi)| (lo..=hi).filter_map(char::from_u32))
        .filter(|&c| c != '\n' && c != '\r' && !c.is_whitespace())
        .collect();
    let mut out = Vec::new();
    let record = |from: char, converted: &str, out: &mut Vec<(char, char)>| {
        let mut it = converted.chars();
        if let (Some(to), None) = (it.next(), it.next()) {
            if to != from {
                out.push((from, to));
            }
        }
    };
    for batch in chars.chunks(2048) {
        let input: String = batch.iter().flat_map(|&c| [c, '\n']).collect();
        let converted = opencc.convert(&input).map_err(|e| err(e.to_string()))?;
        let lines: Vec<&str> = converted.split('\n').collect();
        if lines.len() == batch.len() + 1 {
            for (&from, line) in batch.iter().zip(&lines) {
                record(from, line, &mut out);
            }
        } else {
            for &from in batch {
                let one = opencc.convert(from.to_string()).map_err(|e| err(e.to_string()))?;
                record(from, &one, &mut out);
            }
        }
    }
    Ok(out)
}

/// Katakana → hiragana for one char: one or two chars (`ヷ` → `わ` + U+3099).
fn kana_fold(c: char) -> Option<(char, Option<char>)> {
    let code = c as u32;
    match code {
        // ァ..ヶ (including ヴ ヵ ヶ) → ぁ..ゖ
        0x30A1..=0x30F6 => char::from_u32(code - 0x60).map(|h| (h, None)),
        // ヽ ヾ → ゝ ゞ
        0x30FD | 0x30FE => char::from_u32(code - 0x60).map(|h| (h, None)),
        // ヷ ヸ ヹ ヺ: no precomposed hiragana; base + combining voiced mark.
        0x30F7..=0x30FA => {
            let base = match code {
                0x30F7 => '\u{308F}',
                0x30F8 => '\u{3090}',
                0x30F9 => '\u{3091}',
                _ => '\u{3092}',
            };
            Some((base, Some('\u{3099}')))
        }
        _ => None,
    }
}

/// Unicode Default_Ignorable_Code_Point, minus the Hangul fillers NFKC already handles.
fn is_default_ignorable(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5
        | 0x180B..=0x180F | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F
        | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}
