//! Properties of the locator over the corpus slices (`common`), each a proptest.
//!
//! * A random span of a random chapter, wrapped in random wrapper text (glossary lines
//!   of the book's own names in the shapes of three tools, instructions in English and
//!   Russian), is found: the answer names its chapter and a source span that holds it,
//!   and what the span adds on either side is only what the wrapper happens to
//!   continue (its folded text, whitespace left out, ends the wrapper before the chunk
//!   or starts the one after it) or whitespace, punctuation and hidden markup it leaves
//!   out. The
//!   request span is held to the same rule.
//! * The index is a function of the chapters: built twice, or from the chapters in
//!   another order, it is equal and has the same bytes.
//! * The byte form round-trips, and damaged bytes are refused, never a panic.
//! * Any text is a request: no panic, and every span lies on char boundaries.

mod common;

use common::{index_of, wagahai, wagahai_index, xiyouji, xiyouji_index};
use locate::{DecodeError, Index, Located, Outcome};
use matcher::Profile;
use proptest::prelude::*;
use test_support::profiles::zh_profile;

const NAMES: &[&str] = &["花果山", "猴王", "悟空", "大圣", "玉帝", "菩萨", "老君", "天王", "祖师", "龙王"];
const INSTRUCTIONS: &[&str] = &[
    "Translate the following text into Russian.",
    "Переведи следующий текст на русский язык, сохраняя имена.",
    "Keep the line breaks. Do not add notes.",
    "Сохраняй разметку и переносы строк.",
    "You are a professional translator of Chinese web novels.",
];

/// A wrapper's part: instructions and glossary lines in GalTransl's (`src->dst`),
/// LinguaGacha's (`src -> dst #note`) or AiNiee's (`|src|dst|note|`) shape, ending in
/// a line break.
fn wrapper() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        (0..INSTRUCTIONS.len()).prop_map(|i| INSTRUCTIONS[i].to_owned()),
        (0..NAMES.len(), 0..3usize).prop_map(|(i, shape)| match shape {
            0 => format!("{}->Имя", NAMES[i]),
            1 => format!("{} -> Имя #персонаж", NAMES[i]),
            _ => format!("|{}|Имя|персонаж|", NAMES[i]),
        }),
    ];
    prop::collection::vec(line, 0..8).prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect())
}

/// The folded text without whitespace (and without the markup the fold hides).
fn solid(profile: &Profile, text: &str) -> String {
    profile.normalize(text).unwrap().as_str().chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether the fold of `text` holds no letter or digit (markup the fold hides, such as
/// an Aozora heading `［＃「三」は中見出し］`, is no text).
fn letterless(profile: &Profile, text: &str) -> bool {
    !profile.normalize(text).unwrap().as_str().chars().any(char::is_alphanumeric)
}

/// The property of the first bullet for a chunk `chapter_text[span]` sent as
/// `before + chunk + after`.
fn holds(
    profile: &Profile,
    chapter_text: &str,
    span: std::ops::Range<usize>,
    (before, after): (&str, &str),
    found: &Located,
) -> Result<(), TestCaseError> {
    let (s, e) = (found.source.start, found.source.end);
    let (a, b) = (span.start, span.end);
    // The source span: what it adds continues the wrapper; what it leaves out is
    // whitespace and punctuation.
    if s <= a {
        prop_assert!(
            solid(profile, before).ends_with(&solid(profile, &chapter_text[s..a])),
            "added before: {:?}",
            &chapter_text[s..a]
        );
    } else {
        prop_assert!(letterless(profile, &chapter_text[a..s]), "left out before: {:?}", &chapter_text[a..s]);
    }
    if e >= b {
        prop_assert!(
            solid(profile, after).starts_with(&solid(profile, &chapter_text[b..e])),
            "added after: {:?}",
            &chapter_text[b..e]
        );
    } else {
        prop_assert!(letterless(profile, &chapter_text[e..b]), "left out after: {:?}", &chapter_text[e..b]);
    }
    // The request span, by the same rule.
    let request = format!("{before}{}{after}", &chapter_text[span.clone()]);
    let (rs, re) = (found.request.start, found.request.end);
    let (ra, rb) = (before.len(), before.len() + span.len());
    if rs <= ra {
        prop_assert!(solid(profile, before).ends_with(&solid(profile, &request[rs..ra])));
    } else {
        prop_assert!(letterless(profile, &request[ra..rs]));
    }
    if re >= rb {
        prop_assert!(solid(profile, after).starts_with(&solid(profile, &request[rb..re])));
    } else {
        prop_assert!(letterless(profile, &request[re..rb]));
    }
    Ok(())
}

/// A span of `text` of about `len` chars from char `start` (both taken modulo what
/// fits), without whitespace at its ends.
fn span_of(text: &str, start: usize, len: usize) -> std::ops::Range<usize> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let n = bounds.len() - 1;
    let len = len.min(n);
    let start = start % (n - len + 1);
    let (mut a, mut b) = (bounds[start], bounds[start + len]);
    while a < b && text[a..].starts_with(char::is_whitespace) {
        a += text[a..].chars().next().unwrap().len_utf8();
    }
    while b > a && text[..b].ends_with(char::is_whitespace) {
        b -= text[..b].chars().next_back().unwrap().len_utf8();
    }
    a..b
}

fn check_span(
    index: &Index,
    chapters: &[(u32, String)],
    which: usize,
    (start, len): (usize, usize),
    (before, after): (&str, &str),
) -> Result<(), TestCaseError> {
    let (number, text) = &chapters[which % chapters.len()];
    let span = span_of(text, start, len);
    let chunk = &text[span.clone()];
    let request = format!("{before}{chunk}{after}");
    let outcome = index.locate(&request).unwrap();
    let profile = index.profile();
    match &outcome {
        Outcome::Found { chunk: found, .. } => {
            prop_assert_eq!(found.chapter, *number);
            holds(profile, text, span, (before, after), found)?;
        }
        // The chunk's text is at another place too: the expected span is among the
        // candidates, which all hold the same text.
        Outcome::Ambiguous { candidates, .. } => {
            let ours: Vec<&Located> = candidates.iter().filter(|c| c.chapter == *number).collect();
            prop_assert!(ours.iter().any(|c| holds(profile, text, span.clone(), (before, after), c).is_ok()));
            let texts: std::collections::BTreeSet<String> = candidates
                .iter()
                .map(|c| solid(profile, &index.chapter_text(c.chapter).unwrap()[c.source.clone()]))
                .collect();
            prop_assert_eq!(texts.len(), 1, "{:?}", candidates);
        }
        Outcome::NotFound { .. } => prop_assert!(false, "chunk {chunk:?} not found: {outcome:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_wrapped_span_of_xiyouji_is_found(
        which in 0..8usize,
        start in 0..10_000usize,
        len in 40..1_500usize,
        before in wrapper(),
        after in wrapper(),
    ) {
        check_span(xiyouji_index(), xiyouji(), which, (start, len), (&before, &format!("\n{after}")))?;
    }

    #[test]
    fn a_wrapped_run_of_wagahai_paragraphs_is_found(
        which in 0..4usize,
        first in 0..200usize,
        n in 1..12usize,
        before in wrapper(),
        after in wrapper(),
    ) {
        // Whole paragraphs: a span that starts inside Aozora ruby is no text a tool sends.
        let (number, text) = &wagahai()[which];
        let lines: Vec<(usize, &str)> = text.split("\r\n").scan(0, |at, line| {
            let start = *at;
            *at += line.len() + 2;
            Some((start, line))
        }).filter(|(_, line)| !line.trim().is_empty()).collect();
        let first = first % lines.len();
        let last = (first + n).min(lines.len()) - 1;
        let start = lines[first].0 + (lines[first].1.len() - lines[first].1.trim_start().len());
        let end = lines[last].0 + lines[last].1.trim_end().len();
        let span_chars = text[..start].chars().count();
        let len = text[start..end].chars().count();
        // Shorter chunks are below the threshold (CHUNK_CHARS_MIN) by design.
        prop_assume!(solid(wagahai_index().profile(), &text[start..end]).chars().count() >= 20);
        let _ = number;
        check_span(wagahai_index(), wagahai(), which, (span_chars, len), (&before, &format!("\n{after}")))?;
    }

    #[test]
    fn the_index_is_a_function_of_the_chapters(mut order in Just((0..8usize).collect::<Vec<_>>()).prop_shuffle(), n in 1..8usize) {
        let chapters: Vec<(u32, String)> = order.drain(..).take(n).map(|i| xiyouji()[i].clone()).collect();
        let mut sorted = chapters.clone();
        sorted.sort();
        let once = index_of(zh_profile(), &chapters);
        let twice = index_of(zh_profile(), &sorted);
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(once.to_bytes(), twice.to_bytes());
        prop_assert_eq!(once.chapters().collect::<Vec<_>>(), sorted.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    }

    #[test]
    fn the_byte_form_round_trips(chapters in prop::collection::btree_map(0..1_000u32, (0..8usize, 0..20_000usize, 0..3_000usize), 0..6)) {
        // Slices of chapters under arbitrary numbers.
        let chapters: Vec<(u32, String)> = chapters.into_iter().map(|(number, (which, start, len))| {
            let text = &xiyouji()[which].1;
            let span = span_of(text, start, len);
            (number, text[span].to_owned())
        }).collect();
        let index = index_of(zh_profile(), &chapters);
        let bytes = index.to_bytes();
        let decoded = Index::from_bytes(&bytes, zh_profile()).unwrap();
        prop_assert_eq!(&decoded, &index);
        prop_assert_eq!(decoded.to_bytes(), bytes);
    }

    #[test]
    fn damaged_bytes_are_refused(at in 0..usize::MAX, mask in 1..=255u8) {
        let index = small_index();
        let mut bytes = index.to_bytes();
        let at = at % bytes.len();
        bytes[at] ^= mask;
        let refused = Index::from_bytes(&bytes, zh_profile()).unwrap_err();
        prop_assert!(matches!(refused, DecodeError::NotAnIndex | DecodeError::Damaged | DecodeError::OtherProfile { .. }), "{refused:?}");
    }

    #[test]
    fn arbitrary_bytes_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(Index::from_bytes(&bytes, zh_profile()).is_err());
    }

    #[test]
    fn any_text_is_a_request(pieces in prop::collection::vec(piece(), 0..40)) {
        let request: String = pieces.concat();
        for index in [xiyouji_index(), wagahai_index()] {
            let outcome = index.locate(&request).unwrap();
            let spans: Vec<Located> = match outcome {
                Outcome::Found { chunk, .. } => vec![chunk],
                Outcome::Ambiguous { candidates, .. } => candidates,
                Outcome::NotFound { nearest, .. } => nearest.into_iter().collect(),
            };
            for span in spans {
                prop_assert!(request.get(span.request.clone()).is_some());
                prop_assert!(index.chapter_text(span.chapter).unwrap().get(span.source.clone()).is_some());
            }
        }
    }
}

/// Pieces of requests: the books' own text cut anywhere, names, markup, whitespace,
/// combining marks and width variants.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..8usize, 0..20_000usize, 0..80usize).prop_map(|(which, start, len)| {
            let chars: Vec<char> = xiyouji()[which].1.chars().collect();
            let start = start % chars.len();
            chars[start..(start + len).min(chars.len())].iter().collect()
        }),
        (0..4usize, 0..20_000usize, 0..80usize).prop_map(|(which, start, len)| {
            let chars: Vec<char> = wagahai()[which].1.chars().collect();
            let start = start % chars.len();
            chars[start..(start + len).min(chars.len())].iter().collect()
        }),
        (0..NAMES.len()).prop_map(|i| NAMES[i].to_owned()),
        prop::sample::select(vec![
            "\n", "\r\n", "　", " ", "《", "》", "｜", "［＃", "］", "<ruby>", "㈱", "ｶﾞ", "e\u{301}", "\u{3099}", "->"
        ])
        .prop_map(str::to_owned),
        "\\PC{0,12}",
    ]
}

/// Chapters 1 and 2 of 西游记, for the damage tests.
fn small_index() -> &'static Index {
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| index_of(zh_profile(), &xiyouji()[..2]))
}
