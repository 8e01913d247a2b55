//! Cue by cue, with the exact spans. The expected offsets are found with `str`'s own
//! search, independently of the scanner's visible-char walk.

use names::{tally, Cue, Lang, Scanner, Sighting};

fn nothing(_: &str) -> bool {
    false
}

fn zh(text: &str) -> Vec<Sighting> {
    Scanner::new(Lang::Zh).scan(text, &[], &nothing)
}

fn ja(text: &str) -> Vec<Sighting> {
    Scanner::new(Lang::Ja).scan(text, &[], &nothing)
}

/// The `nth` occurrence of `needle` in `text`: byte and char offsets.
fn at(text: &str, needle: &str, nth: usize) -> ((u32, u32), (u32, u32)) {
    let (start, _) = text.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("{needle} #{nth} in {text}"));
    let end = start + needle.len();
    let chars = (text[..start].chars().count() as u32, text[..end].chars().count() as u32);
    ((start as u32, end as u32), chars)
}

fn sighting(text: &str, needle: &str, nth: usize, cue: Cue) -> Sighting {
    let (bytes, chars) = at(text, needle, nth);
    Sighting { surface: needle.to_owned(), bytes, chars, cue, reading: None }
}

#[test]
fn surname_with_two_given_characters_repeated_in_the_chunk() {
    let text = "王小明走进院子。大家看着王小明。";
    assert_eq!(zh(text), [sighting(text, "王小明", 0, Cue::Surname), sighting(text, "王小明", 1, Cue::Surname)]);
}

#[test]
fn surname_takes_one_given_character_when_the_second_varies() {
    // 沈照走 and 沈照站: the third character differs, so the name is 沈照.
    let text = "沈照走进门。沈照站在灯前。";
    assert_eq!(zh(text), [sighting(text, "沈照", 0, Cue::Surname), sighting(text, "沈照", 1, Cue::Surname)]);
}

#[test]
fn compound_surname_is_read_as_one() {
    let text = "欧阳锋大笑。欧阳锋转身。";
    assert_eq!(zh(text), [sighting(text, "欧阳锋", 0, Cue::Surname), sighting(text, "欧阳锋", 1, Cue::Surname)]);
}

#[test]
fn a_surname_character_that_ends_a_word_is_no_surname() {
    // 猴王笑: 王 ends 猴王 here.
    assert_eq!(zh("猴王笑了，"), []);
}

#[test]
fn a_surname_followed_by_a_grammar_word_is_no_name() {
    assert_eq!(zh("张了嘴。"), []);
}

#[test]
fn nickname_prefix() {
    let text = "“阿照，回去吧。”";
    assert_eq!(zh(text), [sighting(text, "阿照", 0, Cue::Surname)]);
}

#[test]
fn title_with_a_repeated_prefix() {
    let text = "青云道人站在山门前。众人都认得青云。";
    assert_eq!(zh(text), [sighting(text, "青云道人", 0, Cue::Title)]);
}

#[test]
fn title_after_a_verb_is_no_sighting() {
    // 万望 is said once: nothing says it is a name.
    assert_eq!(zh("万望师父慈悲。"), []);
}

#[test]
fn title_with_one_character_repeated_with_it() {
    let text = "牛魔王来了，牛魔王走了。";
    assert_eq!(zh(text), [sighting(text, "牛魔王", 0, Cue::Title), sighting(text, "牛魔王", 1, Cue::Title)]);
}

#[test]
fn quoted_names_and_book_titles() {
    let text = "他翻开《雾川志》，喊了一声“灵溪”。";
    assert_eq!(zh(text), [sighting(text, "雾川志", 0, Cue::Quoted), sighting(text, "灵溪", 0, Cue::Quoted)]);
}

#[test]
fn quoted_speech_is_no_name() {
    assert_eq!(zh("“是我。”“没什么！”“我们走。”"), []);
    assert_eq!(ja("「はい」「みなと、今夜も早いね」"), []);
}

#[test]
fn frequent_unknown_ngram() {
    let text = "雾川很冷。雾川很静。雾川很远。";
    let found = zh(text);
    assert_eq!(
        found,
        [
            sighting(text, "雾川", 0, Cue::Repeated),
            sighting(text, "雾川", 1, Cue::Repeated),
            sighting(text, "雾川", 2, Cue::Repeated),
        ]
    );
}

#[test]
fn ngram_seen_twice_or_common_word_is_no_sighting() {
    assert_eq!(zh("雾川很冷。雾川很静。"), []);
    assert_eq!(zh("知道。知道。知道。"), []);
    // A number.
    assert_eq!(zh("二十年。二十年。二十年。"), []);
}

#[test]
fn ngram_inside_a_longer_one_is_left_to_it() {
    let text = "顾寒川笑。顾寒川走。顾寒川看。";
    let found = zh(text);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|s| s.surface == "顾寒川"), "{found:?}");
}

#[test]
fn katakana_runs() {
    let text = "ミナトはテレビを見た。ハハハ。ジョン・スミスが来た。ーー";
    assert_eq!(
        ja(text),
        [sighting(text, "ミナト", 0, Cue::Katakana), sighting(text, "ジョン・スミス", 0, Cue::Katakana)]
    );
}

#[test]
fn half_width_katakana_run() {
    let text = "札にはﾐﾅﾄと書いてあった。";
    assert_eq!(ja(text), [sighting(text, "ﾐﾅﾄ", 0, Cue::Katakana)]);
}

#[test]
fn kanji_before_honorifics() {
    let text = "寒月君が来た。この間寒月君に会った。田中さんと山田様。";
    assert_eq!(
        ja(text),
        [
            sighting(text, "寒月", 0, Cue::Honorific),
            sighting(text, "寒月", 1, Cue::Honorific),
            sighting(text, "田中", 0, Cue::Honorific),
            sighting(text, "山田", 0, Cue::Honorific),
        ]
    );
}

#[test]
fn katakana_before_an_honorific_is_an_honorific_sighting() {
    let text = "ミナトさんが笑った。";
    assert_eq!(ja(text), [sighting(text, "ミナト", 0, Cue::Honorific)]);
}

#[test]
fn honorific_words_that_are_not_names() {
    assert_eq!(ja("細君が言う。諸君、奥さん、同様に、御客さん、聖人君子。"), []);
}

#[test]
fn ruby_reading_of_a_name() {
    let text = "苦沙弥《くしゃみ》先生が寝ている。";
    let (bytes, chars) = at(text, "苦沙弥", 0);
    assert_eq!(
        ja(text),
        [Sighting {
            surface: "苦沙弥".into(), bytes, chars, cue: Cue::Honorific, reading: Some("くしゃみ".into())
        }]
    );
}

#[test]
fn ruby_with_a_start_marker() {
    // The base after ｜ is 山田; the marker and the reading are not part of the span.
    let text = "昨日｜山田《やまだ》さんに会った。";
    let (bytes, chars) = at(text, "山田", 0);
    assert_eq!(
        ja(text),
        [Sighting { surface: "山田".into(), bytes, chars, cue: Cue::Honorific, reading: Some("やまだ".into()) }]
    );
}

#[test]
fn katakana_inside_a_ruby_reading_or_a_note_is_hidden() {
    assert_eq!(ja("灯守《ヒモリ》の家。［＃ここでミナトの注］"), []);
}

#[test]
fn unclosed_ruby_stays_text() {
    // No 》 on the line: 《 is ordinary text, and the katakana after it is seen.
    let text = "灯守《ヒモリ\nの家";
    assert_eq!(ja(text), [sighting(text, "ヒモリ", 0, Cue::Katakana)]);
}

#[test]
fn book_title_marks_are_not_ruby_in_chinese() {
    let text = "雾川《雾川志》";
    assert_eq!(zh(text), [sighting(text, "雾川志", 0, Cue::Quoted)]);
    assert!(zh(text)[0].reading.is_none());
}

#[test]
fn known_surfaces_are_left_out_and_claim_their_span() {
    let text = "顾寒川笑。顾寒川走。顾寒川看。";
    let known = |s: &str| s == "顾寒川";
    // 寒川 inside the known name is not reported either.
    assert_eq!(Scanner::new(Lang::Zh).scan(text, &[], &known), []);
    let text = "寒月君が来た。迷亭君も来た。";
    let known = |s: &str| s == "寒月";
    assert_eq!(Scanner::new(Lang::Ja).scan(text, &[], &known), [sighting(text, "迷亭", 0, Cue::Honorific)]);
}

#[test]
fn spans_overlapping_a_covered_range_are_left_out() {
    let text = "寒月君が来た。寒月君が来た。";
    let (first, _) = at(text, "寒月", 0);
    // Covering only the first char of the first name is enough to drop it.
    let covered = [(first.0, first.0 + 3)];
    assert_eq!(Scanner::new(Lang::Ja).scan(text, &covered, &nothing), [sighting(text, "寒月", 1, Cue::Honorific)]);
}

#[test]
fn scanning_twice_gives_the_same_sightings() {
    let text = include_str!("../../../examples/wuchuan/chapters/04.txt");
    let first = zh(text);
    assert!(!first.is_empty());
    assert_eq!(first, zh(text));
    assert!(first.windows(2).all(|w| w[0].bytes.1 <= w[1].bytes.0), "in text order, without overlaps");
}

#[test]
fn tally_keeps_a_weak_cue_only_when_seen_twice() {
    let a = Sighting { surface: "雾川".into(), bytes: (0, 6), chars: (0, 2), cue: Cue::Repeated, reading: None };
    let b = Sighting { surface: "灵溪".into(), bytes: (0, 6), chars: (0, 2), cue: Cue::Quoted, reading: None };
    let c = Sighting { surface: "王五".into(), bytes: (0, 6), chars: (0, 2), cue: Cue::Surname, reading: None };
    let d = Sighting { surface: "ミナト".into(), bytes: (0, 9), chars: (0, 3), cue: Cue::Katakana, reading: None };
    let tallied = tally([a.clone(), b.clone(), c, d.clone(), a.clone(), d.clone()]);
    let summary: Vec<(&str, usize)> = tallied.iter().map(|(s, seen)| (s.as_str(), seen.len())).collect();
    // Most frequent first, ties by surface; 王五 (surname, once) is dropped, 灵溪
    // (quoted, once) is kept.
    assert_eq!(summary, [("ミナト", 2), ("雾川", 2), ("灵溪", 1)]);
    assert_eq!(tallied[1].1, [a.clone(), a]);
}

#[test]
fn cue_strength() {
    let strong: Vec<Cue> = [
        Cue::Surname,
        Cue::Title,
        Cue::Quoted,
        Cue::Honorific,
        Cue::Katakana,
        Cue::Repeated,
        Cue::Speaker,
        Cue::Addressed,
        Cue::Place,
        Cue::Listed,
    ]
    .into_iter()
    .filter(|c| c.is_strong())
    .collect();
    assert_eq!(strong, [Cue::Title, Cue::Quoted, Cue::Honorific]);
}

#[test]
fn speaker_before_a_verb_of_speech() {
    // 悟空 starts a word twice; the colon after 道 makes it speech.
    let text = "悟空道：“师父。”那悟空笑道：“好。”";
    assert_eq!(zh(text), [sighting(text, "悟空", 0, Cue::Speaker), sighting(text, "悟空", 1, Cue::Speaker)]);
}

#[test]
fn a_one_character_verb_inside_a_word_is_no_speech() {
    // 道 before a Han character (大道理) is no verb of speech; 师父 is a role.
    assert_eq!(zh("他讲大道理。师父道：“走。”"), []);
}

#[test]
fn subject_between_a_sentence_start_and_an_adverb() {
    let text = "。玉皇又传旨。那玉皇却不语。";
    assert_eq!(zh(text), [sighting(text, "玉皇", 0, Cue::Speaker), sighting(text, "玉皇", 1, Cue::Speaker)]);
}

#[test]
fn name_after_a_naming_word() {
    let text = "一个唤做清风，一个唤做明月。";
    assert_eq!(zh(text), [sighting(text, "清风", 0, Cue::Addressed), sighting(text, "明月", 0, Cue::Addressed)]);
}

#[test]
fn place_before_a_place_suffix() {
    let text = "却说花果山好景。山门前立着。";
    // 花果山 starts a word; 山门 is two characters and said once.
    assert_eq!(zh(text), [sighting(text, "花果山", 0, Cue::Place)]);
}

#[test]
fn place_after_a_verb_of_motion() {
    let text = "径往灌江口。回到灌江口。";
    assert_eq!(zh(text), [sighting(text, "灌江口", 0, Cue::Place), sighting(text, "灌江口", 1, Cue::Place)]);
}

#[test]
fn items_of_a_list() {
    let text = "即命阿傩、迦叶同来。";
    assert_eq!(zh(text), [sighting(text, "阿傩", 0, Cue::Listed), sighting(text, "迦叶", 0, Cue::Listed)]);
}

#[test]
fn a_noun_and_its_locative_is_no_name() {
    // Repeated three times, but a cave and "inside".
    assert_eq!(zh("洞中有宝。洞中无人。洞中甚暗。"), []);
}

#[test]
fn japanese_speaker_after_a_quote() {
    let text = "「そうさ」と迷亭君が云う。「ええ」と鼻子は答えた。";
    assert_eq!(ja(text), [sighting(text, "迷亭", 0, Cue::Honorific), sighting(text, "鼻子", 0, Cue::Speaker)]);
}

#[test]
fn japanese_name_before_a_naming_phrase() {
    let text = "水島寒月という男が来た。力学という学問。";
    assert_eq!(ja(text), [sighting(text, "水島寒月", 0, Cue::Addressed)]);
}

#[test]
fn japanese_given_name_endings() {
    let text = "鈴木藤十郎の名刺。津木ピン助は誰だ。野郎め。";
    assert_eq!(ja(text), [sighting(text, "鈴木藤十郎", 0, Cue::Surname), sighting(text, "ピン助", 0, Cue::Surname)]);
}
