//! A 1,000-chapter book of source text made deterministically from the 西游记 slice in
//! `tests/data/corpora/`, and a tool's request for a chunk of it, shared by
//! `benches/locate.rs` (finding the chunk) and `benches/proxy.rs` (the proxy's added
//! latency).
//!
//! Chapter `c` is a window of the slice's paragraphs starting at paragraph
//! `c × 7919 mod n` and 3,000 to 6,000 chars long, with every Han char outside the
//! slice's 200 most frequent ones and the glossary's names replaced through a
//! permutation drawn for that chapter (xorshift seeded by `c`). Chapters keep the
//! slice's paragraphs, punctuation, function words and names, so names and stock
//! phrases recur across chapters as in a real book, while its content words make each
//! chapter its own text.

/// The chapters of the book.
pub const CHAPTERS: u32 = 1_000;
/// A request's chunk: at least this many chars (whole paragraphs).
pub const CHUNK_CHARS: usize = 3_000;
/// The names kept in every chapter, which the tool's own glossary lists.
pub const NAMES: &[&str] = &[
    "悟空",
    "孙悟空",
    "大圣",
    "齐天大圣",
    "玉帝",
    "猴王",
    "美猴王",
    "菩萨",
    "老君",
    "如来",
    "观音",
    "天王",
    "哪吒",
    "二郎",
    "花果山",
    "水帘洞",
    "太白金星",
    "祖师",
    "龙王",
    "行者",
];

fn corpus() -> String {
    let path = crate::corpus("xiyouji-head.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Whether `c` is a Han char of the basic block.
pub fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// The 1,000 chapters (number, text, paragraphs without indentation).
pub fn book() -> Vec<(u32, String, Vec<String>)> {
    let text = corpus();
    let paragraphs: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut counts = std::collections::BTreeMap::<char, usize>::new();
    for c in text.chars().filter(|&c| is_han(c)) {
        *counts.entry(c).or_default() += 1;
    }
    let mut by_count: Vec<(usize, char)> = counts.iter().map(|(&c, &n)| (n, c)).collect();
    by_count.sort_by(|a, b| b.cmp(a));
    let mut fixed: std::collections::BTreeSet<char> = by_count.iter().take(200).map(|&(_, c)| c).collect();
    fixed.extend(NAMES.iter().flat_map(|name| name.chars()));
    let movable: Vec<char> = counts.keys().copied().filter(|c| !fixed.contains(c)).collect();
    (1..=CHAPTERS)
        .map(|number| {
            let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ u64::from(number).wrapping_mul(0x2545_F491_4F6C_DD1D));
            let mut image = movable.clone();
            for i in (1..image.len()).rev() {
                image.swap(i, (rng.next() % (i as u64 + 1)) as usize);
            }
            let map: std::collections::BTreeMap<char, char> = movable.iter().copied().zip(image).collect();
            let target = 3_000 + (number as usize * 37) % 3_000;
            let mut at = (number as usize * 7_919) % paragraphs.len();
            let mut lines = Vec::new();
            let mut n_chars = 0;
            while n_chars < target {
                let line: String = paragraphs[at].chars().map(|c| *map.get(&c).unwrap_or(&c)).collect();
                n_chars += line.chars().count();
                lines.push(line);
                at = (at + 1) % paragraphs.len();
            }
            let mut chapter = format!("第{number}回\r\n\r\n");
            for line in &lines {
                chapter.push_str("    ");
                chapter.push_str(line);
                chapter.push_str("\r\n\r\n");
            }
            (number, chapter, lines)
        })
        .collect()
}

/// The first paragraphs of a chapter up to `CHUNK_CHARS` chars, wrapped in GalTransl's
/// prompt with every name of the glossary, as a GalTransl-like tool sends it; and the
/// number of paragraphs in the chunk.
pub fn request(lines: &[String]) -> (String, usize) {
    let mut chunk: Vec<&str> = Vec::new();
    let mut n_chars = 0;
    for line in lines {
        if n_chars >= CHUNK_CHARS {
            break;
        }
        n_chars += line.chars().count();
        chunk.push(line);
    }
    let glossary: String = NAMES.iter().map(|name| format!("{name}->Имя {}\n", name.chars().count())).collect();
    let prompt = format!(
        "你是一个视觉小说翻译模型，可以通顺地使用给定的术语表以指定的风格将中文翻译成俄文。\n\
         参考以下术语表（可为空，格式为src->dst #备注）：\n{glossary}\
         根据上述术语表的对应关系和备注，结合历史剧情和上下文，以流畅的风格将下面的文本从中文翻译成俄文：\n{}",
        chunk.join("\n")
    );
    (prompt, chunk.len())
}
