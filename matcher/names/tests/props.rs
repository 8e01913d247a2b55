//! Any text: `scan` and `rank` never panic, and their spans are valid; `rank` does not
//! depend on the order of the chunks.

use names::{Chunk, Lang, Ranked, Scanner};
use proptest::prelude::*;

/// Text from the characters the cues care about, markup included, and anything else.
fn text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "王",
        "欧阳",
        "阿",
        "照",
        "小",
        "明",
        "道人",
        "宗主",
        "先生",
        "的",
        "“",
        "”",
        "「",
        "」",
        "『",
        "』",
        "《",
        "》",
        "｜",
        "［＃",
        "］",
        "※",
        "ミ",
        "ナ",
        "ト",
        "ー",
        "・",
        "ｰ",
        "ﾐ",
        "さん",
        "君",
        "様",
        "寒",
        "月",
        "\n",
        "。",
        "a",
        "一",
        "二",
        "𠀋",
        "々",
        "くしゃみ",
        "道：",
        "笑道",
        "、",
        "山",
        "往",
        "」と",
        "が云う",
        "という男",
        "郎",
    ]);
    prop_oneof![prop::collection::vec(pieces, 0..60).prop_map(|v| v.concat()), any::<String>(),]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn spans_are_valid(text in text(), zh in any::<bool>(), cover in any::<(u16, u16)>()) {
        let scanner = Scanner::new(if zh { Lang::Zh } else { Lang::Ja });
        let covered = [(u32::from(cover.0.min(cover.1)), u32::from(cover.0.max(cover.1)))];
        let found = scanner.scan(&text, &covered, &|s: &str| s.ends_with('明'));
        prop_assert_eq!(&found, &scanner.scan(&text, &covered, &|s: &str| s.ends_with('明')));
        let mut previous_end = 0;
        for s in &found {
            let (start, end) = (s.bytes.0 as usize, s.bytes.1 as usize);
            prop_assert!(start < end && end <= text.len());
            prop_assert!(text.is_char_boundary(start) && text.is_char_boundary(end));
            prop_assert!(start >= previous_end, "sorted and not overlapping");
            previous_end = end;
            prop_assert_eq!(s.chars.0 as usize, text[..start].chars().count());
            prop_assert_eq!(s.chars.1 as usize, text[..end].chars().count());
            prop_assert!(!s.surface.is_empty());
            prop_assert!(!s.surface.ends_with('明'), "known surfaces are left out");
            prop_assert!(!(covered[0].0 < s.bytes.1 && s.bytes.0 < covered[0].1), "overlaps a covered range");
            // The surface is the span's text with markup left out.
            let mut rest = text[start..end].chars();
            prop_assert!(s.surface.chars().all(|c| rest.any(|d| d == c)));
        }
    }
}

/// A book: up to six chunks and a chapter for each, and an order to give them in.
fn book() -> impl Strategy<Value = (Vec<(String, u32)>, Vec<usize>)> {
    prop::collection::vec((text(), 0u32..3), 0..6).prop_flat_map(|chunks| {
        let order: Vec<usize> = (0..chunks.len()).collect();
        (Just(chunks), Just(order).prop_shuffle())
    })
}

/// The ranking with each sighting's chunk named by `original[index]`, sightings sorted.
fn renumbered(ranked: Vec<Ranked>, original: &[usize]) -> Vec<Ranked> {
    ranked
        .into_iter()
        .map(|mut r| {
            r.sightings.iter_mut().for_each(|(chunk, _)| *chunk = original[*chunk as usize] as u32);
            r.sightings.sort_by_key(|(chunk, s)| (*chunk, s.bytes, s.cue));
            r
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rank_is_valid_and_ignores_chunk_order((chunks, order) in book(), zh in any::<bool>()) {
        let scanner = Scanner::new(if zh { Lang::Zh } else { Lang::Ja });
        let known = |s: &str| s.ends_with('明');
        // A fold that merges spellings (half-width katakana, 霧) and empties some.
        let fold = |s: &str| if s.starts_with('a') { String::new() } else { s.replace('ﾐ', "ミ").replace('霧', "雾") };
        let given: Vec<Chunk> = chunks.iter().map(|(text, chapter)| Chunk { text, chapter: *chapter, covered: &[] }).collect();
        let ranked = scanner.rank(&given, &known, &fold);
        let shuffled: Vec<Chunk> = order.iter().map(|&i| given[i]).collect();
        let again = renumbered(scanner.rank(&shuffled, &known, &fold), &order);
        prop_assert_eq!(&ranked, &again);
        let ordered = |w: &[Ranked]| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].surface < w[1].surface);
        prop_assert!(ranked.windows(2).all(ordered));
        for r in &ranked {
            prop_assert!(!r.surface.is_empty() && !r.sightings.is_empty());
            prop_assert!(r.chunks as usize <= given.len() && r.chapters <= r.chunks);
            for (chunk, s) in &r.sightings {
                let text = given[*chunk as usize].text;
                let (start, end) = (s.bytes.0 as usize, s.bytes.1 as usize);
                prop_assert!(start < end && end <= text.len());
                prop_assert!(text.is_char_boundary(start) && text.is_char_boundary(end));
                prop_assert_eq!(fold(&s.surface), r.surface.clone());
                prop_assert!(!s.surface.ends_with('明'), "known surfaces are left out");
            }
        }
    }
}
