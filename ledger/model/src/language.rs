//! Language tags: the one check of a BCP 47 tag ([RFC 5646]) every path that takes a
//! book's language goes through (a `languages_set`, `init`, an import's or export's
//! override), and the languages of a book that names none.
//!
//! The check is syntactic and strict: a tag must be well-formed by RFC 5646's ABNF
//! (§2.1: `language[-extlang][-script][-region]*(-variant)*(-extension)[-privateuse]`,
//! or a private-use tag `x-…`), with no variant or extension singleton twice (§2.2.5,
//! §2.2.6), at most [`LANGUAGE_TAG_CHARS_MAX`] characters, and in canonical case
//! (§2.1.1: lowercase, but a region of two letters uppercase and a script titlecase
//! before any singleton: `zh-Hant-TW`, `en-US`, `sr-Latn`). Whether a subtag is
//! registered in the IANA registry is not checked (the registry changes, and a
//! well-formed unregistered tag still names the same language to every tool that
//! knows it). The irregular grandfathered tags (`i-klingon`, `en-GB-oed`), which the
//! registry deprecates in favour of well-formed ones, are refused.
//!
//! [RFC 5646]: https://www.rfc-editor.org/rfc/rfc5646

use crate::limits::LANGUAGE_TAG_CHARS_MAX;

/// The language of the renderings of a book that names none (`languages_set`
/// without a `target`).
pub const TARGET_LANG_DEFAULT: &str = "ru";

/// The language of the source text of a book that names none (`languages_set`
/// without a `source`): its normalization profile's, `zh` or `ja`, and `und`
/// (undetermined, RFC 5646 §4.1) for a profile that names no language (`plain`).
pub fn profile_language(profile: &str) -> &'static str {
    match profile {
        "zh" => "zh",
        "ja" => "ja",
        _ => "und",
    }
}

/// Why `tag` is not a well-formed BCP 47 language tag in canonical case, if it is not.
/// The message names the tag and, where it can, the subtag at fault, and for a tag
/// that is well-formed but not in canonical case, the canonical spelling.
pub fn language_tag(tag: &str) -> Result<(), String> {
    if tag.is_empty() {
        return Err("must not be empty: a BCP 47 language tag like `en`, `zh-Hant` or `pt-BR`".into());
    }
    let n_chars = tag.chars().count();
    if n_chars > LANGUAGE_TAG_CHARS_MAX {
        return Err(format!("is {n_chars} characters, more than the limit of {LANGUAGE_TAG_CHARS_MAX}"));
    }
    let subtags: Vec<&str> = tag.split('-').collect();
    if let Some(bad) = subtags.iter().find(|subtag| subtag.is_empty() || subtag.len() > 8 || !is_alphanumeric(subtag)) {
        let why = if bad.is_empty() {
            "has an empty subtag (subtags are separated by one `-`)".to_owned()
        } else if !is_alphanumeric(bad) {
            format!("has the subtag {bad:?}: subtags hold only ASCII letters and digits, separated by `-`")
        } else {
            format!("has the subtag {bad:?}, longer than 8 characters")
        };
        return Err(format!("{tag:?} is not a BCP 47 language tag: it {why}"));
    }
    if let Some(why) = unparsed(&subtags) {
        return Err(format!("{tag:?} is not a well-formed BCP 47 language tag (RFC 5646): {why}"));
    }
    let canonical = canonical_case(&subtags);
    if canonical != tag {
        return Err(format!("{tag:?} is not in the canonical case of BCP 47 tags: write {canonical:?}"));
    }
    Ok(())
}

fn is_alphanumeric(subtag: &str) -> bool {
    subtag.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

fn is_alpha(subtag: &str, lengths: std::ops::RangeInclusive<usize>) -> bool {
    lengths.contains(&subtag.len()) && subtag.bytes().all(|byte| byte.is_ascii_alphabetic())
}

fn is_singleton(subtag: &str) -> bool {
    subtag.len() == 1 && !subtag.eq_ignore_ascii_case("x")
}

/// Why the grammar does not accept the tag, naming the first subtag at fault, or
/// `None` when the whole tag is well-formed. Every subtag is 1 to 8 ASCII letters or
/// digits already.
fn unparsed(subtags: &[&str]) -> Option<String> {
    let n = subtags.len();
    let misplaced = |at: usize| match at {
        0 => format!(
            "a language subtag of 2 to 8 letters (or `x` for a private-use tag) must come first, not {:?}",
            subtags[0]
        ),
        at => format!("{:?} cannot follow {:?} there", subtags[at], subtags[at - 1]),
    };
    let private_use = |at: usize| subtags[at].eq_ignore_ascii_case("x");
    let needs_private_subtag = |at: usize| format!("{:?} needs a private-use subtag after it", subtags[at]);
    // privateuse = "x" 1*("-" (1*8alphanum)), alone or at the end of a langtag.
    if private_use(0) {
        return (n < 2).then(|| needs_private_subtag(0));
    }
    // language = 2*3ALPHA ["-" extlang] / 4ALPHA / 5*8ALPHA; extlang = 3ALPHA *2("-" 3ALPHA)
    if !is_alpha(subtags[0], 2..=8) {
        return Some(misplaced(0));
    }
    let mut at = 1;
    if subtags[0].len() <= 3 {
        let mut n_extlangs = 0;
        while at < n && n_extlangs < 3 && is_alpha(subtags[at], 3..=3) {
            at += 1;
            n_extlangs += 1;
        }
    }
    // script = 4ALPHA
    if at < n && is_alpha(subtags[at], 4..=4) {
        at += 1;
    }
    // region = 2ALPHA / 3DIGIT
    if at < n && (is_alpha(subtags[at], 2..=2) || (subtags[at].len() == 3 && is_digits(subtags[at]))) {
        at += 1;
    }
    // variant = 5*8alphanum / (DIGIT 3alphanum), none twice
    let mut variants: Vec<String> = Vec::new();
    while at < n {
        let subtag = subtags[at];
        let is_variant =
            (5..=8).contains(&subtag.len()) || (subtag.len() == 4 && subtag.as_bytes()[0].is_ascii_digit());
        if !is_variant {
            break;
        }
        let lower = subtag.to_ascii_lowercase();
        if variants.contains(&lower) {
            return Some(format!("the variant {subtag:?} is named twice"));
        }
        variants.push(lower);
        at += 1;
    }
    // extension = singleton 1*("-" (2*8alphanum)), no singleton twice
    let mut singletons: Vec<String> = Vec::new();
    while at < n && is_singleton(subtags[at]) {
        let singleton = subtags[at];
        let lower = singleton.to_ascii_lowercase();
        if singletons.contains(&lower) {
            return Some(format!("the extension {singleton:?} is named twice"));
        }
        singletons.push(lower);
        let start = at;
        at += 1;
        while at < n && (2..=8).contains(&subtags[at].len()) {
            at += 1;
        }
        if at == start + 1 {
            return Some(format!("the extension {singleton:?} needs a subtag of 2 to 8 characters after it"));
        }
    }
    // ["-" privateuse]
    if at < n && private_use(at) {
        return (at + 1 == n).then(|| needs_private_subtag(at));
    }
    (at < n).then(|| misplaced(at))
}

fn is_digits(subtag: &str) -> bool {
    subtag.bytes().all(|byte| byte.is_ascii_digit())
}

/// The tag in canonical case (RFC 5646 §2.1.1): lowercase, except subtags after the
/// first and before any singleton: two letters uppercase (a region), four letters
/// titlecase (a script).
fn canonical_case(subtags: &[&str]) -> String {
    let mut after_singleton = false;
    let mut out: Vec<String> = Vec::with_capacity(subtags.len());
    for (subtag_idx, subtag) in subtags.iter().enumerate() {
        let lower = subtag.to_ascii_lowercase();
        let cased = if subtag_idx == 0 || after_singleton {
            lower
        } else if subtag.len() == 2 {
            subtag.to_ascii_uppercase()
        } else if subtag.len() == 4 {
            let mut cased = lower;
            cased[..1].make_ascii_uppercase();
            cased
        } else {
            lower
        };
        if subtag.len() == 1 {
            after_singleton = true;
        }
        out.push(cased);
    }
    out.join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_tags_in_canonical_case_pass() {
        for tag in [
            "en",
            "es",
            "ru",
            "zh",
            "und",
            "zh-Hant",
            "zh-Hant-TW",
            "zh-yue-HK",
            "zh-min-nan",
            "sr-Latn-RS",
            "es-419",
            "pt-BR",
            "de-CH-1901",
            "sl-rozaj-biske",
            "de-DE-u-co-phonebk",
            "en-US-x-twain",
            "en-a-bbb-b-ccc",
            "x-whatever",
            "qaa-Qaaa-QM-x-southern",
            "art-lojban",
            "tlh",
            "az-Latn-x-latn",
        ] {
            assert_eq!(language_tag(tag), Ok(()), "{tag}");
        }
    }

    #[test]
    fn ill_formed_tags_are_refused_naming_the_subtag() {
        let refused = |tag: &str| language_tag(tag).unwrap_err();
        assert!(refused("").contains("must not be empty"));
        assert!(
            refused("en_US").contains("\"en_US\": subtags hold only ASCII letters and digits"),
            "{}",
            refused("en_US")
        );
        assert!(refused("en--US").contains("empty subtag"));
        assert!(refused("en-").contains("empty subtag"));
        assert!(refused("-en").contains("empty subtag"));
        assert!(refused("en-US-ab").contains("\"ab\" cannot follow \"US\" there"), "{}", refused("en-US-ab"));
        assert!(refused("e").contains("must come first, not \"e\""));
        assert!(refused("1en").contains("must come first"));
        assert!(refused("toolongtag").contains("longer than 8 characters"));
        assert!(refused("ru ").contains("ASCII letters and digits"));
        assert!(refused("русский").contains("ASCII letters and digits"));
        assert!(refused("i-klingon").contains("must come first, not \"i\""));
        assert!(refused("en-GB-oed").contains("\"oed\" cannot follow \"GB\""));
        assert!(refused("de-1901-1901").ends_with("the variant \"1901\" is named twice"));
        assert!(refused("en-a-bbb-A-ccc").ends_with("the extension \"A\" is named twice"));
        assert!(refused("en-a").ends_with("the extension \"a\" needs a subtag of 2 to 8 characters after it"));
        assert!(refused("en-a-x-y").ends_with("the extension \"a\" needs a subtag of 2 to 8 characters after it"));
        assert!(refused("x").ends_with("\"x\" needs a private-use subtag after it"));
        assert!(refused("en-x").ends_with("\"x\" needs a private-use subtag after it"));
        assert!(refused("en-x-").contains("empty subtag"));
        assert!(refused("zh-Hant-Hans").contains("\"Hans\" cannot follow \"Hant\""));
        assert!(refused("en-US-GB").contains("\"GB\" cannot follow \"US\""));
        assert!(refused("zh-abc-def-ghi-jkl").contains("\"jkl\" cannot follow \"ghi\""));
        assert!(refused(&format!("en-{}", ["abcde"; 11].join("-"))).contains("more than the limit of 64"));
    }

    #[test]
    fn a_tag_in_another_case_is_refused_with_its_canonical_spelling() {
        let refused = |tag: &str| language_tag(tag).unwrap_err();
        assert_eq!(refused("EN"), "\"EN\" is not in the canonical case of BCP 47 tags: write \"en\"");
        assert!(refused("en-us").ends_with("write \"en-US\""));
        assert!(refused("zh-hant-tw").ends_with("write \"zh-Hant-TW\""));
        assert!(refused("zh-HANT").ends_with("write \"zh-Hant\""));
        assert!(refused("en-US-X-Twain").ends_with("write \"en-US-x-twain\""));
        assert!(refused("az-Latn-x-Latn").ends_with("write \"az-Latn-x-latn\""));
        assert!(refused("de-DE-u-CO-phonebk").ends_with("write \"de-DE-u-co-phonebk\""));
    }

    #[test]
    fn a_book_without_languages_keeps_the_languages_it_always_had() {
        assert_eq!((profile_language("zh"), profile_language("ja"), profile_language("plain")), ("zh", "ja", "und"));
        assert_eq!(TARGET_LANG_DEFAULT, "ru");
        for tag in [profile_language("zh"), profile_language("ja"), profile_language("plain"), TARGET_LANG_DEFAULT] {
            assert_eq!(language_tag(tag), Ok(()));
        }
    }
}
