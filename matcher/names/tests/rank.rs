//! The book-wide ranking: merging across chunks, settling overlaps, the order.

use names::{Chunk, Cue, Lang, Ranked, Scanner, LIKELY};

fn as_is(s: &str) -> String {
    s.to_owned()
}

fn nothing(_: &str) -> bool {
    false
}

fn rank(lang: Lang, texts: &[&str], known: &dyn Fn(&str) -> bool, fold: &dyn Fn(&str) -> String) -> Vec<Ranked> {
    let chunks: Vec<Chunk> =
        texts.iter().enumerate().map(|(i, text)| Chunk { text, chapter: i as u32 / 2, covered: &[] }).collect();
    Scanner::new(lang).rank(&chunks, known, fold)
}

fn surfaces(ranked: &[Ranked]) -> Vec<&str> {
    ranked.iter().map(|r| r.surface.as_str()).collect()
}

#[test]
fn a_speaker_seen_in_several_chunks_is_ranked_with_all_its_sightings() {
    let texts = ["悟空道：“走。”", "那悟空笑道：“好。”", "悟空闻言大喜。"];
    let ranked = rank(Lang::Zh, &texts, &nothing, &as_is);
    assert_eq!(surfaces(&ranked), ["悟空"]);
    let wukong = &ranked[0];
    assert_eq!((wukong.count, wukong.chunks, wukong.chapters), (3, 3, 2));
    assert_eq!(wukong.cues, [(Cue::Speaker, 3)]);
    let at: Vec<(u32, (u32, u32))> = wukong.sightings.iter().map(|(chunk, s)| (*chunk, s.chars)).collect();
    assert_eq!(at, [(0, (0, 2)), (1, (1, 3)), (2, (0, 2))]);
    assert!(wukong.score >= LIKELY, "{wukong:?}");
}

#[test]
fn surfaces_are_merged_by_the_callers_fold() {
    let fold = |s: &str| s.replace('霧', "雾");
    let texts = ["霧川道：“冷。”", "雾川道：“静。”"];
    let ranked = rank(Lang::Zh, &texts, &nothing, &fold);
    assert_eq!(surfaces(&ranked), ["雾川"]);
    let spellings: Vec<&str> = ranked[0].sightings.iter().map(|(_, s)| s.surface.as_str()).collect();
    assert_eq!(spellings, ["霧川", "雾川"]);
}

#[test]
fn the_longer_name_takes_its_span_where_it_stands() {
    // 美猴王 starts a word where 猴王 inside it does not; 猴王 keeps the spans where it
    // stands alone, and both are ranked.
    let texts = ["美猴王道：“来。”那猴王笑道：“去。”", "美猴王闻言大喜。猴王道：“好。”"];
    let ranked = rank(Lang::Zh, &texts, &nothing, &as_is);
    assert_eq!(surfaces(&ranked), ["猴王", "美猴王"]);
    let counts: Vec<(u32, usize)> = ranked.iter().map(|r| (r.count, r.sightings.len())).collect();
    assert_eq!(counts, [(4, 2), (2, 2)]);
}

#[test]
fn a_part_seen_only_inside_a_longer_name_is_dropped() {
    // 天大圣 is never alone: it is 齐天大圣's part.
    let texts = ["齐天大圣道：“来。”", "齐天大圣笑道：“去。”"];
    let ranked = rank(Lang::Zh, &texts, &nothing, &as_is);
    assert_eq!(surfaces(&ranked), ["齐天大圣"]);
}

#[test]
fn known_surfaces_are_never_ranked_and_covered_spans_are_left_out() {
    let texts = ["悟空道：“走。”八戒道：“好。”", "悟空道：“走。”八戒道：“好。”"];
    let known = |s: &str| s == "悟空";
    let ranked = rank(Lang::Zh, &texts, &known, &as_is);
    assert_eq!(surfaces(&ranked), ["八戒"]);
    // Covering 八戒 in the first chunk leaves one sighting, which a weak cue does not
    // keep.
    let at = texts[0].find("八戒").unwrap() as u32;
    let covered = [(at, at + 6)];
    let chunks =
        [Chunk { text: texts[0], chapter: 0, covered: &covered }, Chunk { text: texts[1], chapter: 0, covered: &[] }];
    assert!(Scanner::new(Lang::Zh).rank(&chunks, &known, &as_is).is_empty());
}

#[test]
fn sorted_by_score_then_surface() {
    let texts = ["沈照道：“走。”沈照笑道：“好。”顾寒川道：“嗯。”", "沈照闻言。顾寒川笑道：“来。”"];
    let ranked = rank(Lang::Zh, &texts, &nothing, &as_is);
    assert!(ranked.len() >= 2, "{ranked:?}");
    let ordered = |w: &[Ranked]| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].surface < w[1].surface);
    assert!(ranked.windows(2).all(ordered), "{ranked:?}");
}

#[test]
fn japanese_names_across_chunks() {
    let texts = ["「そうさ」と迷亭が云う。", "迷亭君は笑った。", "ミナトが来た。", "ミナトは帰った。"];
    let ranked = rank(Lang::Ja, &texts, &nothing, &as_is);
    assert_eq!(surfaces(&ranked), ["迷亭", "ミナト"]);
    // 迷亭君は笑った: one span, two cues.
    assert_eq!(ranked[0].cues, [(Cue::Honorific, 1), (Cue::Speaker, 2)]);
}

#[test]
fn nothing_in_nothing_out() {
    assert!(rank(Lang::Zh, &[], &nothing, &as_is).is_empty());
    assert!(rank(Lang::Ja, &["", "。"], &nothing, &as_is).is_empty());
}
