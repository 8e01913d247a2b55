//! Recall and precision of the alarm against the gold lists in `tests/gold/` (see its
//! README). Run with `cargo test -p names --test gold_recall -- --nocapture` to see the
//! numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use names::{tally, Chunk, Lang, Ranked, Scanner, LIKELY};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

// The test reads its gold files; the crate itself does no I/O (clippy.toml).
#[allow(clippy::disallowed_methods)]
fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).replace("\r\n", "\n")
}

/// Chunks of a bundled chapter: a line holding only `---` splits it.
fn split_marked(text: &str) -> Vec<String> {
    text.split("\n---\n").map(str::to_owned).collect()
}

/// Chunks of a classic slice: whole lines, about 1,500 chars each.
fn split_lines(text: &str) -> Vec<String> {
    let mut chunks = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if chunks.last().unwrap().chars().count() >= 1500 {
            chunks.push(String::new());
        }
        chunks.last_mut().unwrap().push_str(line);
    }
    chunks
}

/// The `src` and alias `surface` fields of a glossary in lorebank's JSONL.
fn glossary_surfaces(path: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in read(path).lines() {
        for key in ["\"src\":\"", "\"surface\":\""] {
            if let Some(at) = line.find(key) {
                let rest = &line[at + key.len()..];
                out.insert(rest[..rest.find('"').unwrap()].to_owned());
            }
        }
    }
    out
}

struct Gold {
    /// Every gold name, with its category and count.
    names: BTreeMap<String, (String, usize)>,
}

fn gold(name: &str) -> Gold {
    let text = read(&repo().join("matcher/names/tests/gold").join(name));
    let mut names = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 3, "{name} line {}: want surface, category, count", n + 1);
        let count = fields[2].parse().unwrap_or_else(|_| panic!("{name} line {}: count", n + 1));
        names.insert(fields[0].to_owned(), (fields[1].to_owned(), count));
    }
    Gold { names }
}

/// The test's stand-in for the caller's fold: the traditional characters of the
/// bundled book's letter to simplified, hiragana and half-width katakana to katakana.
/// Every mapping keeps the UTF-8 length of the char, so byte offsets carry over.
fn fold(text: &str) -> String {
    const HALF: &str = "ｦｧｨｩｪｫｬｭｮｯｰｱｲｳｴｵｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓﾔﾕﾖﾗﾘﾙﾚﾛﾜﾝ";
    const FULL: &str = "ヲァィゥェォャュョッーアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン";
    const TRAD: &str = "霧長燈顧滅們穩應過閱";
    const SIMP: &str = "雾长灯顾灭们稳应过阅";
    text.chars()
        .map(|c| match c {
            '\u{3041}'..='\u{3096}' => char::from_u32(c as u32 + 0x60).unwrap(),
            _ => {
                if let Some(i) = HALF.chars().position(|h| h == c) {
                    FULL.chars().nth(i).unwrap()
                } else if let Some(i) = TRAD.chars().position(|t| t == c) {
                    SIMP.chars().nth(i).unwrap()
                } else {
                    c
                }
            }
        })
        .collect()
}

/// Byte ranges of the known surfaces in `text`, leftmost-longest, as the assembly's hits.
fn covered(text: &str, known: &BTreeSet<String>) -> Vec<(u32, u32)> {
    let text = &fold(text);
    let known: BTreeSet<String> = known.iter().map(|k| fold(k)).collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let longest = known.iter().filter(|k| text[at..].starts_with(k.as_str())).map(String::len).max();
        match longest {
            Some(len) => {
                out.push((at as u32, (at + len) as u32));
                at += len;
            }
            None => at += text[at..].chars().next().unwrap().len_utf8(),
        }
    }
    out
}

struct Measure {
    recall: f64,
    precision: f64,
    /// Gold targets found, of all targets; right proposals.
    found: (usize, usize),
    right: usize,
    proposed: Vec<(String, usize)>,
    missed: Vec<String>,
}

fn measure(lang: Lang, chunks: &[String], known: &BTreeSet<String>, gold: &Gold) -> Measure {
    let scanner = Scanner::new(lang);
    let folded: BTreeSet<String> = known.iter().map(|k| fold(k)).collect();
    let is_known = |s: &str| folded.contains(&fold(s));
    // The caller tallies folded surfaces: 霧川 and 雾川 are one name.
    let sightings =
        chunks.iter().flat_map(|chunk| scanner.scan(chunk, &covered(chunk, known), &is_known)).map(|mut s| {
            s.surface = fold(&s.surface);
            s
        });
    let proposed: Vec<(String, usize)> = tally(sightings).into_iter().map(|(s, seen)| (s, seen.len())).collect();
    judge(proposed, known, gold)
}

/// The book-wide ranking of all chunks at once (chunk text and chapter): the whole
/// list, and the part at or above [`LIKELY`].
fn measure_rank(
    lang: Lang,
    chunks: &[(String, u32)],
    known: &BTreeSet<String>,
    gold: &Gold,
) -> (Measure, Measure, Vec<Ranked>) {
    let scanner = Scanner::new(lang);
    let folded: BTreeSet<String> = known.iter().map(|k| fold(k)).collect();
    let is_known = |s: &str| folded.contains(&fold(s));
    let covered: Vec<Vec<(u32, u32)>> = chunks.iter().map(|(text, _)| covered(text, known)).collect();
    let input: Vec<Chunk> = chunks
        .iter()
        .zip(&covered)
        .map(|((text, chapter), covered)| Chunk { text, chapter: *chapter, covered })
        .collect();
    let ranked = scanner.rank(&input, &is_known, &fold);
    let all = ranked.iter().map(|r| (r.surface.clone(), r.sightings.len())).collect();
    let likely = ranked.iter().filter(|r| r.score >= LIKELY).map(|r| (r.surface.clone(), r.sightings.len())).collect();
    (judge(all, known, gold), judge(likely, known, gold), ranked)
}

/// Recall over the gold person and place names seen twice or more and not known;
/// precision over the proposals, right when they are any gold entry.
fn judge(proposed: Vec<(String, usize)>, known: &BTreeSet<String>, gold: &Gold) -> Measure {
    let folded: BTreeSet<String> = known.iter().map(|k| fold(k)).collect();
    let proposed_set: BTreeSet<&str> = proposed.iter().map(|(s, _)| s.as_str()).collect();
    let gold_folded: BTreeMap<String, (String, usize)> =
        gold.names.iter().fold(BTreeMap::new(), |mut acc, (name, (category, count))| {
            let entry = acc.entry(fold(name)).or_insert((category.clone(), 0));
            entry.1 += count;
            acc
        });
    let target: Vec<&String> = gold_folded
        .iter()
        .filter(|(name, (category, count))| {
            *count >= 2 && (category == "person" || category == "place") && !folded.contains(&fold(name))
        })
        .map(|(name, _)| name)
        .collect();
    let missed: Vec<String> =
        target.iter().filter(|name| !proposed_set.contains(name.as_str())).map(|s| (*s).clone()).collect();
    let recall = if target.is_empty() { 1.0 } else { 1.0 - missed.len() as f64 / target.len() as f64 };
    let right = proposed.iter().filter(|(s, _)| gold_folded.contains_key(s)).count();
    let precision = if proposed.is_empty() { 1.0 } else { right as f64 / proposed.len() as f64 };
    let found = (target.len() - missed.len(), target.len());
    Measure { recall, precision, found, right, proposed, missed }
}

fn report(corpus: &str, m: &Measure) {
    println!(
        "{corpus}: recall {:.3} ({} of {}), precision {:.3} ({} of {}), {} proposed",
        m.recall,
        m.found.0,
        m.found.1,
        m.precision,
        m.right,
        m.proposed.len(),
        m.proposed.len()
    );
    println!("  missed: {:?}", m.missed);
    println!("  proposed: {:?}", m.proposed);
}

/// The ranking: the whole list and the likely part, and each surface's score.
fn report_rank(corpus: &str, (all, likely, ranked): &(Measure, Measure, Vec<Ranked>), gold: &Gold) {
    report(&format!("{corpus}, ranked, whole list"), all);
    report(&format!("{corpus}, ranked, score >= {LIKELY}"), likely);
    let shown: Vec<String> = ranked
        .iter()
        .map(|r| {
            let mark = if gold.names.contains_key(&r.surface) { "" } else { "✗" };
            format!("{mark}{} {} n{} {:?}", r.surface, r.score, r.count, r.cues)
        })
        .collect();
    println!("  ranked: {}", shown.join(" | "));
}

/// Chunks of a classic slice with their chapters: about 1,500 chars of whole lines
/// each ([`split_lines`]); a chunk's chapter is the number of chapter headings (a line
/// `第…回`, or an Aozora `中見出し` note) before it.
fn split_chapters(text: &str) -> Vec<(String, u32)> {
    let mut chapter = 0;
    split_lines(text)
        .into_iter()
        .map(|chunk| {
            let here = chapter;
            chapter += chunk
                .lines()
                .filter(|line| (line.starts_with('第') && line.contains('回')) || line.contains("中見出し"))
                .count() as u32;
            (chunk, here)
        })
        .collect()
}

fn wuchuan_chunks() -> Vec<String> {
    wuchuan_chapters().into_iter().map(|(chunk, _)| chunk).collect()
}

/// The bundled book's chunks, each with its chapter (its file).
fn wuchuan_chapters() -> Vec<(String, u32)> {
    let dir = repo().join("examples/wuchuan/chapters");
    ["01.txt", "02.txt", "03.txt", "04.txt", "05.txt"]
        .iter()
        .enumerate()
        .flat_map(|(chapter, f)| {
            split_marked(&read(&dir.join(f))).into_iter().map(move |chunk| (chunk, chapter as u32))
        })
        .collect()
}

/// Fails when `m` is below `floor` (recall, precision).
fn at_least(corpus: &str, m: &Measure, (recall, precision): (f64, f64)) {
    assert!(m.recall >= recall, "{corpus}: recall {:.3} < {recall}, missed {:?}", m.recall, m.missed);
    assert!(m.precision >= precision, "{corpus}: precision {:.3} < {precision}: {:?}", m.precision, m.proposed);
}

#[test]
fn bundled_chinese_book_meets_the_goal() {
    let gold = gold("wuchuan.tsv");
    let chunks = wuchuan_chunks();
    let glossary = glossary_surfaces(&repo().join("examples/wuchuan/glossary.jsonl"));
    let with = measure(Lang::Zh, &chunks, &glossary, &gold);
    report("wuchuan (glossary known)", &with);
    let without = measure(Lang::Zh, &chunks, &BTreeSet::new(), &gold);
    report("wuchuan (nothing known)", &without);
    // With nothing known every gold name is a target: the goal.
    at_least("wuchuan", &without, (0.9, 0.5));
    // With the glossary known no gold name is unknown, so every proposal is a false
    // alarm: there is one, 信封 (an envelope, four times in one chunk).
    assert_eq!(with.recall, 1.0);
    assert_eq!(with.proposed, [("信封".to_owned(), 4)]);
    // The whole book at once.
    let ranked = measure_rank(Lang::Zh, &wuchuan_chapters(), &BTreeSet::new(), &gold);
    report_rank("wuchuan (nothing known)", &ranked, &gold);
    at_least("wuchuan, ranked", &ranked.0, (0.9, 0.5));
    at_least("wuchuan, ranked, likely", &ranked.1, (0.9, 0.5));
    let (with_all, _, _) = measure_rank(Lang::Zh, &wuchuan_chapters(), &glossary, &gold);
    report("wuchuan (glossary known), ranked, whole list", &with_all);
    assert!(with_all.proposed.len() <= 1, "{:?}", with_all.proposed);
}

#[test]
fn bundled_japanese_book_meets_the_goal() {
    let gold = gold("wuchuan-ja.tsv");
    let text = read(&repo().join("examples/wuchuan-ja/chapter-01.txt"));
    let chunks = split_marked(&text);
    let glossary = glossary_surfaces(&repo().join("examples/wuchuan-ja/glossary.jsonl"));
    let with = measure(Lang::Ja, &chunks, &glossary, &gold);
    report("wuchuan-ja (glossary known)", &with);
    let without = measure(Lang::Ja, &chunks, &BTreeSet::new(), &gold);
    report("wuchuan-ja (nothing known)", &without);
    assert!(with.proposed.is_empty(), "{:?}", with.proposed);
    at_least("wuchuan-ja (glossary known)", &with, (0.9, 0.5));
    at_least("wuchuan-ja (nothing known)", &without, (0.9, 0.5));
    let one_chapter: Vec<(String, u32)> = chunks.into_iter().map(|chunk| (chunk, 0)).collect();
    let ranked = measure_rank(Lang::Ja, &one_chapter, &BTreeSet::new(), &gold);
    report_rank("wuchuan-ja (nothing known)", &ranked, &gold);
    at_least("wuchuan-ja, ranked", &ranked.0, (0.9, 0.5));
    let (with_all, _, _) = measure_rank(Lang::Ja, &one_chapter, &glossary, &gold);
    assert!(with_all.proposed.is_empty(), "{:?}", with_all.proposed);
}

/// One classic slice: chunk by chunk with [`tally`], and the whole slice ranked.
fn classic(lang: Lang, corpus: &str, gold_file: &str, floors: &Floors) {
    let gold = gold(gold_file);
    let text = read(&repo().join("tests/data/corpora").join(format!("{corpus}.txt")));
    let m = measure(lang, &split_lines(&text), &BTreeSet::new(), &gold);
    report(corpus, &m);
    at_least(corpus, &m, floors.tally);
    let ranked = measure_rank(lang, &split_chapters(&text), &BTreeSet::new(), &gold);
    report_rank(corpus, &ranked, &gold);
    at_least(&format!("{corpus}, ranked"), &ranked.0, floors.ranked);
    at_least(&format!("{corpus}, ranked, likely"), &ranked.1, floors.likely);
}

/// Measured floors (recall, precision), the measured numbers rounded down (see
/// docs/names.md): chunk by chunk with `tally`, the whole ranked list, and its part at
/// or above `LIKELY`. The classics miss the goal (recall 0.8 with precision
/// 0.5); a change that lowers a number fails here.
struct Floors {
    tally: (f64, f64),
    ranked: (f64, f64),
    likely: (f64, f64),
}

#[test]
fn classic_chinese_chapter() {
    let floors = Floors { tally: (0.72, 0.30), ranked: (0.81, 0.26), likely: (0.68, 0.51) };
    classic(Lang::Zh, "xiyouji-head", "xiyouji-head.tsv", &floors);
}

#[test]
fn classic_japanese_chapter() {
    let floors = Floors { tally: (0.62, 0.75), ranked: (0.62, 0.79), likely: (0.62, 0.89) };
    classic(Lang::Ja, "wagahai-kushami", "wagahai-kushami.tsv", &floors);
}

/// The held-out slice: no rule was tuned on it (see tests/gold/README.md).
#[test]
fn held_out_chinese_chapters() {
    let floors = Floors { tally: (0.55, 0.30), ranked: (0.61, 0.25), likely: (0.45, 0.47) };
    classic(Lang::Zh, "xiyouji-20-26", "xiyouji-20-26.tsv", &floors);
}
