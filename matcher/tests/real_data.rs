//! Real-data tests on the corpus slices (`tests/data/corpora/`): OpenCC's own conversion
//! cases fold together, 萧炎 meets 蕭炎 but not 簫炎, a traditional-script chunk of
//! 西游记 and its simplified original give the same hits with correct original spans,
//! and Japanese names in 吾輩は猫である match across katakana, hiragana and half-width
//! forms and through Aozora ruby, whose readings are reported for use as aliases.
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

mod common;

use common::{check_hits, profile, read_corpus, SETUP};
use matcher::{Flavour, Matcher, MatcherBuilder, Profile};
use serde_json::Value;

/// OpenCC's testcases.json has trailing commas: drop a comma that is followed (after
/// whitespace) by `}` or `]`, outside strings.
fn lenient_json(text: &str) -> Value {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for (idx, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars[idx + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    serde_json::from_str(&out).expect("testcases.json after dropping trailing commas")
}

/// Cases where a character-level fold cannot equal OpenCC's phrase-level output, with
/// the reason. The test asserts that exactly these cases differ.
const OPENCC_EXCEPTIONS: &[(&str, &str, &str)] = &[
    ("BYVoid_OpenCC_PR_1369_t2x", "hk2s", "沈厚→沉厚 is a phrase; 沈 alone stays (a surname)"),
    ("BYVoid_OpenCC_PR_1369_t2x", "t2s", "沈厚→沉厚 is a phrase; 沈 alone stays (a surname)"),
    ("BYVoid_OpenCC_PR_1369_t2x", "tw2s", "沈厚→沉厚 is a phrase; 沈 alone stays (a surname)"),
    ("BYVoid_OpenCC_Issue_1335", "t2s", "幷→并: not in Debian OpenCC 1.1.6 character data"),
    ("BYVoid_OpenCC_Issue_930", "hk2s", "貍→狸: not in Debian OpenCC 1.1.6 character data"),
    ("BYVoid_OpenCC_Issue_930", "t2s", "貍→狸: not in Debian OpenCC 1.1.6 character data"),
    ("BYVoid_OpenCC_Issue_930", "tw2s", "貍→狸: not in Debian OpenCC 1.1.6 character data"),
    ("BYVoid_OpenCC_PR_464_han_vs_han", "t2s", "扞→捍 only in some phrases"),
    ("BYVoid_OpenCC_PR_464_jia_vs_jia", "t2s", "袷→夹 only in some phrases"),
    ("BYVoid_OpenCC_PR_464_xi_vs_xi", "t2s", "谿→溪 only in some phrases"),
    ("BYVoid_OpenCC_PR_464_zha_vs_zha", "t2s", "劄/箚→札 only in some phrases"),
    ("deleted_14-character_phrase_t2s", "t2s", "鍾→钟 (not 锺) only inside the phrase 千鍾"),
    ("rao_variant", "t2s", "遶→绕: not in Debian OpenCC 1.1.6 character data"),
    ("t2s_huai_and_pi_phrases", "t2s", "坏→坯 only in some phrases (坏 is also simplified 壞)"),
];

#[test]
fn opencc_cases_fold_together() {
    let json = lenient_json(&read_corpus("opencc-testcases.json"));
    let cases = json["cases"].as_array().expect("cases array");
    assert!(cases.len() >= 200, "only {} OpenCC cases", cases.len());
    let zh = profile(Flavour::Zh);
    let ja = profile(Flavour::Ja);
    let mut n_checked = 0usize;
    let mut differing = Vec::new();
    for case in cases {
        let id = case["id"].as_str().expect("id");
        let input = case["input"].as_str().expect("input");
        let expected = case["expected"].as_object().expect("expected");
        for (config, output) in expected {
            let profile: &Profile = match config.as_str() {
                "t2s" | "tw2s" | "hk2s" => zh,
                "t2jp" | "jp2t" => ja,
                _ => continue,
            };
            let output = output.as_str().expect("expected string");
            n_checked += 1;
            let (a, b) = (profile.fold(input), profile.fold(output));
            if a != b {
                differing.push((id.to_string(), config.clone(), format!("{a} != {b}")));
            }
        }
    }
    assert!(n_checked >= 100, "only {n_checked} cases checked");
    differing.sort();
    let mut listed: Vec<(String, String)> =
        OPENCC_EXCEPTIONS.iter().map(|(id, config, _)| (id.to_string(), config.to_string())).collect();
    listed.sort();
    assert_eq!(listed.len(), 14, "the exception list changed size: update this count knowingly");
    let found: Vec<(String, String)> = differing.iter().map(|(id, c, _)| (id.clone(), c.clone())).collect();
    assert_eq!(
        found, listed,
        "cases whose folds differ must be exactly the listed exceptions; differing: {differing:#?}"
    );
}

#[test]
fn xiao_yan_meets_traditional_but_not_the_flute() {
    let zh = profile(Flavour::Zh);
    let matcher = MatcherBuilder::new(zh).build([("萧炎", 412)]).expect("build");
    let text = "蕭炎笑道：簫炎不是萧炎。";
    let normalized = zh.normalize(text).expect("normalize");
    let hits = matcher.find(&normalized);
    check_hits(&matcher, &normalized, &hits, text);
    let spans: Vec<&str> = hits.iter().map(|h| &text[h.src.bytes()]).collect();
    assert_eq!(spans, ["蕭炎", "萧炎"]);
    assert_eq!(hits[0].src.chars(), 0..2);
    assert_eq!(hits[1].src.chars(), 9..11);
    assert_eq!(matcher.values(hits[0].pattern), [412]);
}

/// Names of 西游记 (simplified) used as glossary keys.
const XIYOUJI_NAMES: &[&str] = &[
    "孙悟空",
    "悟空",
    "猪八戒",
    "八戒",
    "沙和尚",
    "沙僧",
    "唐僧",
    "三藏",
    "观音菩萨",
    "菩萨",
    "玉皇大帝",
    "太上老君",
    "如来",
    "齐天大圣",
    "大圣",
    "花果山",
    "水帘洞",
    "金箍棒",
    "龙王",
    "哪吒",
    "二郎",
    "行者",
    "师父",
    "妖精",
    "长老",
    "天王",
    "土地",
    "老孙",
    "猴王",
    "弼马温",
    "东胜神洲",
    "傲来国",
    "须菩提祖师",
    "筋斗云",
    "蟠桃",
    "阎王",
    "东海龙王",
    "南海",
];

#[test]
fn traditional_chunk_and_simplified_twin_give_the_same_hits() {
    let zh = profile(Flavour::Zh);
    // The first 51,791 chars of 西游记 (chapters 1-7 and part of 8).
    let text = read_corpus("xiyouji-head.txt");
    let keys = XIYOUJI_NAMES.iter().enumerate().map(|(i, k)| (*k, i as u32));
    let matcher = MatcherBuilder::new(zh).build(keys).expect("build");
    let s2t = opencc_rust::OpenCC::new("/usr/share/opencc/s2t.json")
        .unwrap_or_else(|e| panic!("opencc s2t config: {e}; run {SETUP}"));
    let chars: Vec<char> = text.chars().collect();
    let mut n_hits = 0usize;
    let mut n_traditional_spans = 0usize;
    for chunk in chars.chunks(3_000) {
        let simplified: String = chunk.iter().collect();
        let traditional = s2t.convert(&simplified).expect("s2t");
        assert_eq!(traditional.chars().count(), simplified.chars().count(), "s2t changed the length of a chunk");
        let norm_s = zh.normalize(&simplified).expect("normalize");
        let norm_t = zh.normalize(&traditional).expect("normalize");
        let hits_s = matcher.find(&norm_s);
        let hits_t = matcher.find(&norm_t);
        check_hits(&matcher, &norm_s, &hits_s, "simplified chunk");
        check_hits(&matcher, &norm_t, &hits_t, "traditional chunk");
        let key = |m: &Matcher, hits: &[matcher::Hit]| -> Vec<(u32, std::ops::Range<usize>)> {
            hits.iter().map(|h| (m.values(h.pattern)[0], h.src.chars())).collect()
        };
        assert_eq!(key(&matcher, &hits_s), key(&matcher, &hits_t), "hits differ between twins");
        for (hs, ht) in hits_s.iter().zip(&hits_t) {
            if simplified[hs.src.bytes()] != traditional[ht.src.bytes()] {
                n_traditional_spans += 1;
            }
        }
        n_hits += hits_s.len();
    }
    // Oracles on the same 3,000-char chunks: Python `re` with the names longest first
    // (leftmost-first over length-sorted alternatives is leftmost-longest) finds 1,061
    // names; the `opencc -c s2t` command spells 535 of them differently.
    assert!(n_hits > 1_000, "only {n_hits} hits in the 西游记 slice");
    assert!(
        n_traditional_spans > 500,
        "only {n_traditional_spans} hits were spelled differently in the traditional twin"
    );
}

/// Katakana → half-width katakana, written out here (independent of NFKC).
fn to_half_width(text: &str) -> String {
    const FULL: &str = "。「」、・ヲァィゥェォャュョッーアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン";
    const HALF: &str = "｡｢｣､･ｦｧｨｩｪｫｬｭｮｯｰｱｲｳｴｵｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓﾔﾕﾖﾗﾘﾙﾚﾛﾜﾝ";
    let full: Vec<char> = FULL.chars().collect();
    let half: Vec<char> = HALF.chars().collect();
    assert_eq!(full.len(), half.len());
    const VOICED: &str = "ガギグゲゴザジズゼゾダヂヅデドバビブベボヴ";
    const VOICED_BASE: &str = "カキクケコサシスセソタチツテトハヒフヘホウ";
    const SEMI: &str = "パピプペポ";
    const SEMI_BASE: &str = "ハヒフヘホ";
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let half_of = |c: char| full.iter().position(|&f| f == c).map(|i| half[i]);
        if let Some(i) = VOICED.chars().position(|v| v == c) {
            let base = VOICED_BASE.chars().nth(i).unwrap();
            out.push(half_of(base).unwrap());
            out.push('ﾞ');
        } else if let Some(i) = SEMI.chars().position(|v| v == c) {
            let base = SEMI_BASE.chars().nth(i).unwrap();
            out.push(half_of(base).unwrap());
            out.push('ﾟ');
        } else if let Some(h) = half_of(c) {
            out.push(h);
        } else {
            out.push(c);
        }
    }
    out
}

/// Katakana → hiragana, written out here (U+30A1..U+30F6 shift by 0x60).
fn to_hiragana(text: &str) -> String {
    text.chars()
        .map(|c| match c as u32 {
            0x30A1..=0x30F6 => char::from_u32(c as u32 - 0x60).unwrap(),
            _ => c,
        })
        .collect()
}

fn katakana_words(text: &str, n_min_chars: usize) -> Vec<String> {
    let mut words = std::collections::BTreeMap::<String, usize>::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if ('\u{30A1}'..='\u{30FA}').contains(&c) || c == 'ー' {
            current.push(c);
        } else {
            if current.chars().count() >= n_min_chars && !current.starts_with('ー') {
                *words.entry(current.clone()).or_default() += 1;
            }
            current.clear();
        }
    }
    words.into_keys().collect()
}

#[test]
fn japanese_names_match_across_kana_forms() {
    let ja = profile(Flavour::Ja);
    // Most of chapter 10 and part of 11, where 寒月 tells his violin story.
    let text = read_corpus("wagahai-violin.txt");
    // Keys in three spellings of the same name must find every katakana occurrence
    // (the plain substring count is the oracle: 49 in this slice).
    let n_written = text.matches("ヴァイオリン").count();
    assert!(n_written > 40, "expected ヴァイオリン in the text, found {n_written}");
    let normalized = ja.normalize(&text).expect("normalize");
    for key in ["ヴァイオリン", "ゔぁいおりん", "ｳﾞｧｲｵﾘﾝ"] {
        let matcher = MatcherBuilder::new(ja).build([(key, 1)]).expect("build");
        let hits = matcher.find(&normalized);
        check_hits(&matcher, &normalized, &hits, key);
        assert_eq!(hits.len(), n_written, "key {key}");
        assert!(hits.iter().all(|h| &text[h.src.bytes()] == "ヴァイオリン"));
    }

    // The text re-spelled in half-width katakana and in hiragana folds to the same
    // text and gives the same hits for every katakana word of the book.
    // Both slices of the book; Python `re` over the raw text counts 97 distinct
    // katakana words of three chars or more and 193 leftmost-longest occurrences.
    let chunk = text.clone() + &read_corpus("wagahai-kushami.txt");
    let words = katakana_words(&chunk, 3);
    assert!(words.len() >= 90, "only {} katakana words", words.len());
    let matcher =
        MatcherBuilder::new(ja).build(words.iter().enumerate().map(|(i, w)| (w.as_str(), i as u32))).expect("build");
    let original = ja.normalize(&chunk).expect("normalize");
    let hits = matcher.find(&original);
    check_hits(&matcher, &original, &hits, "original");
    assert!(hits.len() > 150, "only {} katakana hits", hits.len());
    for (label, twin) in [("half-width", to_half_width(&chunk)), ("hiragana", to_hiragana(&chunk))] {
        assert_ne!(twin, chunk);
        let normalized = ja.normalize(&twin).expect("normalize");
        assert_eq!(normalized.as_str(), original.as_str(), "{label} twin folds differently");
        let twin_hits = matcher.find(&normalized);
        check_hits(&matcher, &normalized, &twin_hits, label);
        let patterns = |hits: &[matcher::Hit]| hits.iter().map(|h| h.pattern).collect::<Vec<_>>();
        assert_eq!(patterns(&twin_hits), patterns(&hits), "{label} twin hits");
    }
}

#[test]
fn japanese_names_match_through_aozora_ruby() {
    let ja = profile(Flavour::Ja);
    // The end of chapter 3 and part of chapter 4, where 苦沙弥 most often carries its
    // reading.
    let text = read_corpus("wagahai-kushami.txt");
    let normalized = ja.normalize(&text).expect("normalize");
    // Readings are hidden from matching and reported with their base; the substring
    // count of `苦沙弥《くしゃみ》` is the oracle (7 in this slice).
    let kushami: Vec<_> = normalized.rubies().iter().filter(|r| &text[r.base.bytes()] == "苦沙弥").collect();
    assert_eq!(kushami.len(), text.matches("苦沙弥《くしゃみ》").count(), "rubies on 苦沙弥");
    assert!(kushami.len() >= 5, "only {} rubies on 苦沙弥", kushami.len());
    assert!(kushami.iter().all(|r| normalized.reading(r) == "くしゃみ"));
    for ruby in normalized.rubies() {
        assert_eq!(&text[ruby.reading.bytes()], normalized.reading(ruby));
        assert!(ruby.base.end <= ruby.reading.start);
    }
    // No ruby bracket is left in the folded text.
    assert!(text.contains('《'));
    assert!(!normalized.as_str().contains('《'), "ruby left in the folded text");
    assert!(!normalized.as_str().contains("［＃"), "notes left in the folded text");

    // Name keys find every occurrence of the name in the visible text, and hit spans
    // never include a reading.
    let names = ["苦沙弥", "迷亭", "寒月", "東風", "吾輩"];
    let matcher = MatcherBuilder::new(ja).build(names.iter().enumerate().map(|(i, n)| (*n, i as u32))).expect("build");
    let hits = matcher.find(&normalized);
    check_hits(&matcher, &normalized, &hits, "wagahai");
    for (idx, name) in names.iter().enumerate() {
        let n_hits = hits.iter().filter(|h| matcher.values(h.pattern) == [idx as u32]).count();
        let n_visible = normalized.as_str().matches(name).count();
        assert_eq!(n_hits, n_visible, "{name}");
        // Substring counts of the raw slice: 33 苦沙弥, 107 迷亭, 79 寒月, 12 東風, 48 吾輩.
        assert!(n_hits >= 10, "{name}: {n_hits}");
    }
    assert!(hits.iter().all(|h| !text[h.src.bytes()].contains('《')));

    // Readings used as aliases: katakana and hiragana spellings of a reading match.
    let aliases: Vec<String> = kushami.iter().map(|r| normalized.reading(r).to_string()).collect();
    let alias_matcher = MatcherBuilder::new(ja).build([(aliases[0].as_str(), 0)]).expect("build");
    for probe in ["クシャミ先生", "くしゃみ先生", "ｸｼｬﾐ先生"] {
        let n = ja.normalize(probe).expect("normalize");
        assert_eq!(alias_matcher.find(&n).len(), 1, "{probe}");
    }
}
