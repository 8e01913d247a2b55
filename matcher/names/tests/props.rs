//! Any text: `scan` never panics, and its spans are valid.

use names::{Lang, Scanner};
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
