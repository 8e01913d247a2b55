//! The unknown-name alarm: finds name-like spans in a chunk of Chinese or Japanese
//! source text that no known surface covers, and tallies them over a book.
//!
//! This crate owns the cues (see [`Cue`]), the small built-in lists they read (surnames,
//! titles, honorifics, stop words, loanwords) and the book-level rule of [`tally`]. It
//! does not know the glossary: the caller says which surfaces are known (after its own
//! fold) and which byte ranges the assembly already matched.
//!
//! Pure: no I/O, no clock, no randomness, no HashMap iteration in anything rendered or
//! hashed. The same text, covered ranges and `known` answers always give the same
//! sightings in the same order. Any text is accepted; nothing here panics on input.

mod lists;

use std::collections::BTreeMap;

use lists::*;

/// The language of the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Chinese (simplified or traditional). `《…》` are book-title marks, not ruby.
    Zh,
    /// Japanese. `《…》` after a base (or after `｜`) is Aozora ruby.
    Ja,
}

/// Why a span looks like a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cue {
    /// Chinese: a common surname (one of ~100 single or ~30 compound ones) followed by
    /// one or two Han characters that are not grammar words, or the nickname prefix 阿
    /// followed by one. Weak: a surface seen once
    /// in the whole input is dropped by [`tally`].
    Surname,
    /// Chinese: a title or epithet (`…道人`, `…仙子`, `…公子`, `…长老`, `…宗主`, …) with the
    /// 1–3 Han characters before it. Strong.
    Title,
    /// A short name-like string alone inside quotes (`「…」`, `『…』`, `“…”`), or a
    /// Chinese book title in `《…》`. Strong.
    Quoted,
    /// Japanese: kanji or katakana right before an honorific (`さん`, `様`, `君`, `殿`,
    /// `先生`, `ちゃん`, …). Strong.
    Honorific,
    /// Japanese: a katakana run of two or more characters that is not a common
    /// loanword. Weak.
    Katakana,
    /// Chinese: a string of 2–4 Han characters repeated three times or more in the
    /// chunk, with no grammar word in it and not a common word. Weak.
    Repeated,
}

impl Cue {
    /// Strong cues keep a surface that [`tally`] saw only once.
    pub fn is_strong(self) -> bool {
        matches!(self, Cue::Title | Cue::Quoted | Cue::Honorific)
    }

    /// Rank when two candidate spans overlap: lower wins.
    fn rank(self) -> u8 {
        match self {
            Cue::Title | Cue::Honorific => 0,
            Cue::Quoted => 1,
            Cue::Surname | Cue::Katakana => 2,
            Cue::Repeated => 3,
        }
    }
}

/// One name-like span of a chunk.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sighting {
    /// The span's text, with ruby annotations and markers left out.
    pub surface: String,
    /// Byte offsets `[start, end)` into the original text, on char boundaries.
    pub bytes: (u32, u32),
    /// Char offsets `[start, end)` into the original text.
    pub chars: (u32, u32),
    /// Why it looks like a name.
    pub cue: Cue,
    /// The Aozora ruby reading, when a ruby's base is exactly this span.
    pub reading: Option<String>,
}

/// The scanner of one language.
#[derive(Clone, Debug)]
pub struct Scanner {
    lang: Lang,
}

/// A visible char: markup (ruby readings, `｜`, notes) is skipped.
#[derive(Clone, Copy)]
struct Ch {
    c: char,
    byte: u32,
    idx: u32,
}

struct Candidate {
    start: usize,
    end: usize,
    cue: Cue,
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

fn is_kanji(c: char) -> bool {
    is_han(c) || c == '々'
}

fn is_katakana(c: char) -> bool {
    matches!(c as u32, 0x30A1..=0x30FA | 0x30FC..=0x30FF | 0xFF66..=0xFF9F)
}

fn is_long_vowel(c: char) -> bool {
    c == 'ー' || c == 'ｰ'
}

fn zh_stop(c: char) -> bool {
    ZH_STOP_CHARS.contains(c)
}

/// The longest string [`Counts`] counts.
const COUNTED_MAX: usize = 5;

/// Occurrences in a chunk of every string of 1 to [`COUNTED_MAX`] visible chars
/// (overlapping ones too), and of those that start a kanji run; built once per scan so
/// that no cue searches the chunk again.
struct Counts<'a> {
    all: BTreeMap<&'a [char], u32>,
    run_starts: BTreeMap<&'a [char], u32>,
}

impl<'a> Counts<'a> {
    fn new(chars: &'a [char]) -> Counts<'a> {
        let mut all: BTreeMap<&[char], u32> = BTreeMap::new();
        let mut run_starts: BTreeMap<&[char], u32> = BTreeMap::new();
        for start in 0..chars.len() {
            let run_start = start == 0 || !is_kanji(chars[start - 1]);
            for len in 1..=COUNTED_MAX.min(chars.len() - start) {
                let s = &chars[start..start + len];
                *all.entry(s).or_default() += 1;
                if run_start {
                    *run_starts.entry(s).or_default() += 1;
                }
            }
        }
        Counts { all, run_starts }
    }

    /// Occurrences of `s` (at most [`COUNTED_MAX`] chars) in the chunk.
    fn of(&self, s: &[char]) -> usize {
        self.all.get(s).map_or(0, |&n| n as usize)
    }

    /// Occurrences of `s` with no kanji right before it.
    fn at_run_start(&self, s: &[char]) -> usize {
        self.run_starts.get(s).map_or(0, |&n| n as usize)
    }
}

impl Scanner {
    /// A scanner for `lang`.
    pub fn new(lang: Lang) -> Scanner {
        Scanner { lang }
    }

    /// Name-like spans of `text` not covered by a known surface, in text order.
    /// `known(surface)` says whether a surface is covered (the caller folds and looks it
    /// up among records, aliases and sticky entries); spans overlapping a `covered` byte
    /// range (hits the assembly already found) are left out too. A known candidate still
    /// claims its span, so no shorter candidate inside it is reported.
    pub fn scan(&self, text: &str, covered: &[(u32, u32)], known: &dyn Fn(&str) -> bool) -> Vec<Sighting> {
        let markup = match self.lang {
            Lang::Ja => matcher::markup::scan(text, true, false),
            Lang::Zh => matcher::markup::Markup::default(),
        };
        let mut visible: Vec<Ch> = Vec::with_capacity(text.len() / 3);
        let mut hidden = markup.hidden.iter().peekable();
        for (idx, (byte, c)) in text.char_indices().enumerate() {
            while hidden.peek().is_some_and(|&&(_, end)| end <= byte) {
                hidden.next();
            }
            if hidden.peek().is_some_and(|&&(start, end)| start <= byte && byte < end) {
                continue;
            }
            visible.push(Ch { c, byte: byte as u32, idx: idx as u32 });
        }
        let chars: Vec<char> = visible.iter().map(|ch| ch.c).collect();
        // A ruby base starts a word: 昨日｜山田《やまだ》さん is 山田, not 昨日山田.
        let bases: Vec<usize> = markup.rubies.iter().map(|r| r.base.0).collect();
        let base_starts: Vec<bool> =
            visible.iter().map(|ch| bases.binary_search(&(ch.byte as usize)).is_ok()).collect();
        let counts = Counts::new(&chars);
        let mut candidates = Vec::new();
        match self.lang {
            Lang::Zh => {
                surname_candidates(&chars, &counts, &mut candidates);
                title_candidates(&chars, &counts, known, &mut candidates);
                quoted_candidates(&chars, self.lang, &mut candidates);
                repeated_candidates(&chars, &mut candidates);
            }
            Lang::Ja => {
                honorific_candidates(&chars, &counts, &base_starts, &mut candidates);
                quoted_candidates(&chars, self.lang, &mut candidates);
                katakana_candidates(&chars, &base_starts, &mut candidates);
            }
        }
        candidates.sort_by_key(|c| (c.cue.rank(), c.start, usize::MAX - (c.end - c.start), c.cue));
        let mut taken = vec![false; chars.len()];
        let mut out = Vec::new();
        for candidate in candidates {
            if taken[candidate.start..candidate.end].iter().any(|&t| t) {
                continue;
            }
            let first = visible[candidate.start];
            let last = visible[candidate.end - 1];
            let bytes = (first.byte, last.byte + last.c.len_utf8() as u32);
            if covered.iter().any(|&(start, end)| start < bytes.1 && bytes.0 < end) {
                continue;
            }
            let surface: String = chars[candidate.start..candidate.end].iter().collect();
            taken[candidate.start..candidate.end].iter_mut().for_each(|t| *t = true);
            if known(&surface) {
                continue;
            }
            let reading = markup
                .rubies
                .iter()
                .find(|r| r.base == (bytes.0 as usize, bytes.1 as usize))
                .map(|r| text[r.reading.0..r.reading.1].to_owned());
            out.push(Sighting { surface, bytes, chars: (first.idx, last.idx + 1), cue: candidate.cue, reading });
        }
        out.sort_by_key(|s| (s.bytes, s.cue));
        out
    }
}

/// Chinese: a surname and one or two name characters, or the nickname prefix 阿 and
/// one character (阿照). The longer form is taken when the shorter one never occurs
/// without the extra character in the chunk. A single-character surname right after a
/// Han character that is not a grammar word is taken as the end of a word (猴王笑 is
/// no 王笑).
fn surname_candidates(chars: &[char], counts: &Counts, out: &mut Vec<Candidate>) {
    let name_char = |c: char| is_han(c) && !zh_stop(c) && !NUMERALS.contains(c);
    for start in 0..chars.len() {
        let nickname = chars[start] == '阿';
        let surname_len = if start + 1 < chars.len()
            && COMPOUND_SURNAMES.iter().any(|s| s.chars().eq(chars[start..start + 2].iter().copied()))
        {
            2
        } else if nickname || SURNAMES.contains(chars[start]) {
            1
        } else {
            continue;
        };
        // 猴王笑: after a word character, a surname character ends that word.
        if surname_len == 1 && start > 0 && is_han(chars[start - 1]) && !zh_stop(chars[start - 1]) {
            continue;
        }
        let given = chars[start + surname_len..].iter().take(2).take_while(|&&c| name_char(c)).count();
        if given == 0 {
            continue;
        }
        let short = &chars[start..start + surname_len + 1];
        let end = if given == 2 && !nickname && counts.of(&chars[start..start + surname_len + 2]) == counts.of(short) {
            start + surname_len + 2
        } else {
            start + surname_len + 1
        };
        let surface = &chars[start..end];
        if surface.len() == 2 && ZH_STOP_WORDS.iter().any(|w| w.chars().eq(surface.iter().copied())) {
            continue;
        }
        out.push(Candidate { start, end, cue: Cue::Surname });
    }
}

/// Chinese: a title and the 1–3 Han characters before it. Two characters are tried
/// first, then three: the first prefix that is known or occurs again in the chunk wins;
/// then one, if it is known or the one character and the title occur together again
/// (牛魔王 twice). A title whose prefix is neither known nor repeated is no
/// sighting: the characters before a title are as often a verb (万望师父) as a name.
fn title_candidates(chars: &[char], counts: &Counts, known: &dyn Fn(&str) -> bool, out: &mut Vec<Candidate>) {
    for title in TITLES {
        let title: Vec<char> = title.chars().collect();
        for at in 0..chars.len().saturating_sub(title.len() - 1) {
            if chars[at..at + title.len()] != title[..] {
                continue;
            }
            let avail = chars[..at].iter().rev().take(3).take_while(|&&c| is_han(c) && !zh_stop(c)).count();
            if avail == 0 {
                continue;
            }
            let fits = |len: usize| {
                let prefix = &chars[at - len..at];
                let repeated = if len >= 2 { counts.of(prefix) } else { counts.of(&chars[at - 1..at + title.len()]) };
                known(&prefix.iter().collect::<String>()) || repeated >= 2
            };
            let Some(len) = [2, 3, 1].into_iter().filter(|&len| len <= avail).find(|&len| fits(len)) else {
                continue;
            };
            out.push(Candidate { start: at - len, end: at + title.len(), cue: Cue::Title });
        }
    }
}

/// Quotes holding only a short name-like string, and Chinese book titles.
fn quoted_candidates(chars: &[char], lang: Lang, out: &mut Vec<Candidate>) {
    let pairs: &[(char, char)] = match lang {
        Lang::Zh => &[('“', '”'), ('「', '」'), ('『', '』'), ('《', '》')],
        Lang::Ja => &[('「', '」'), ('『', '』'), ('“', '”')],
    };
    for (open_at, &open) in chars.iter().enumerate() {
        let Some(&(_, close)) = pairs.iter().find(|(o, _)| *o == open) else { continue };
        let start = open_at + 1;
        let book_title = open == '《';
        let max = if book_title { 12 } else { 6 };
        let Some(len) = chars[start..].iter().take(max + 1).position(|&c| c == close) else { continue };
        let inner = &chars[start..start + len];
        let ok = match lang {
            Lang::Zh if book_title => {
                !inner.is_empty() && inner.iter().all(|&c| is_han(c) || c == '·' || c.is_alphanumeric())
            }
            Lang::Zh => (2..=6).contains(&len) && inner.iter().all(|&c| is_han(c) && !zh_stop(c)),
            Lang::Ja => {
                (2..=6).contains(&len)
                    && inner.iter().all(|&c| is_kanji(c) || is_katakana(c) || c == '・')
                    && (inner.iter().any(|&c| is_kanji(c)) || katakana_name_like(inner))
            }
        };
        if ok {
            out.push(Candidate { start, end: start + len, cue: Cue::Quoted });
        }
    }
}

/// Chinese: strings of 2–4 Han characters seen three times or more in the chunk. A
/// string that only ever occurs inside a longer kept one is left to the longer one, and
/// a string of three or four whose shorter head or tail is twice as frequent is left to
/// the shorter one.
fn repeated_candidates(chars: &[char], out: &mut Vec<Candidate>) {
    let mut grams: BTreeMap<&[char], Vec<usize>> = BTreeMap::new();
    for start in 0..chars.len() {
        for len in 2..=4 {
            let Some(gram) = chars.get(start..start + len) else { break };
            if !gram.iter().all(|&c| is_han(c) && !zh_stop(c)) {
                break;
            }
            grams.entry(gram).or_default().push(start);
        }
    }
    let numeral_count = |g: &[char]| g.iter().filter(|&&c| NUMERALS.contains(c)).count();
    let stop_word = |g: &[char]| ZH_STOP_WORDS.iter().any(|w| w.chars().eq(g.iter().copied()));
    let frequent = |g: &[char]| grams.get(g).map_or(0, Vec::len);
    let kept: BTreeMap<&[char], &Vec<usize>> = grams
        .iter()
        .filter(|(g, at)| at.len() >= 3 && numeral_count(g) < 2 && g[0] != '一' && !stop_word(g))
        .filter(|(g, _)| g.len() == 2 || !g.windows(2).all(stop_word))
        // 奉玉帝 (7) next to 玉帝 (76): a frequent string with one more char stuck on.
        .filter(|(g, at)| {
            g.len() == 2 || (frequent(&g[1..]) < 2 * at.len() && frequent(&g[..g.len() - 1]) < 2 * at.len())
        })
        .map(|(g, at)| (*g, at))
        .collect();
    for (gram, at) in &kept {
        let inside_longer = grams.iter().any(|(longer, longer_at)| {
            longer.len() > gram.len() && longer_at.len() == at.len() && longer.windows(gram.len()).any(|w| w == *gram)
        });
        if !inside_longer {
            out.extend(at.iter().map(|&start| Candidate { start, end: start + gram.len(), cue: Cue::Repeated }));
        }
    }
}

/// A katakana run that may be a name: two chars or more, not only long-vowel marks,
/// not a common loanword, and not a laugh or an onomatopoeia (a unit of one or two chars
/// repeated: ハハハ, ペンペン, or one char making up most of it: ワハハハハ).
fn katakana_name_like(run: &[char]) -> bool {
    let word: String = run.iter().collect();
    let repeated_unit = (1..=2)
        .any(|unit| run.len() >= 2 * unit && run.len() % unit == 0 && run.chunks(unit).all(|c| c == &run[..unit]));
    let dominant = run.len() >= 4 && run.iter().any(|c| 2 * run.iter().filter(|d| *d == c).count() > run.len());
    run.len() >= 2
        && !run.iter().all(|&c| is_long_vowel(c))
        && !LOANWORDS.contains(&word.as_str())
        && !repeated_unit
        && !dominant
}

/// Japanese: katakana runs of two or more (a `・` between katakana joins a run).
fn katakana_candidates(chars: &[char], base_starts: &[bool], out: &mut Vec<Candidate>) {
    let mut at = 0;
    while at < chars.len() {
        if !is_katakana(chars[at]) || is_long_vowel(chars[at]) {
            at += 1;
            continue;
        }
        let start = at;
        let mut end = at;
        while end < chars.len() && (end == start || !base_starts[end]) {
            let joined = chars[end] == '・' && chars.get(end + 1).is_some_and(|&c| is_katakana(c));
            if !is_katakana(chars[end]) && !joined {
                break;
            }
            end += 1;
        }
        at = end;
        if katakana_name_like(&chars[start..end]) {
            out.push(Candidate { start, end, cue: Cue::Katakana });
        }
    }
}

/// Japanese: the kanji (two or more) or katakana right before an honorific, unless the
/// kanji are a common noun made polite (御客さん), the last kanji and the honorific make
/// a word (諸君, 同様, 奥さん) or the run is in the stop list. Of a long kanji run, the
/// shortest tail of two or more kanji that starts a kanji run elsewhere in the chunk is
/// the name (この間寒月君 → 寒月); otherwise the whole run, at most five kanji.
fn honorific_candidates(chars: &[char], counts: &Counts, base_starts: &[bool], out: &mut Vec<Candidate>) {
    for honorific in HONORIFICS {
        let honorific: Vec<char> = honorific.chars().collect();
        let kanji_honorific = honorific.iter().all(|&c| is_kanji(c));
        for at in 1..chars.len().saturating_sub(honorific.len() - 1) {
            if chars[at..at + honorific.len()] != honorific[..] {
                continue;
            }
            // 君子, 様子, 殿下: the honorific is part of a longer word.
            if kanji_honorific && chars.get(at + honorific.len()).is_some_and(|&c| is_kanji(c)) {
                continue;
            }
            let before = chars[at - 1];
            let katakana = is_katakana(before);
            if !katakana && !is_kanji(before) {
                continue;
            }
            let same = |c: char| if katakana { is_katakana(c) } else { is_kanji(c) };
            let mut start = at;
            while start > 0 && same(chars[start - 1]) {
                start -= 1;
                if base_starts[start] {
                    break;
                }
            }
            let start = if katakana { start } else { kanji_name_start(chars, counts, start, at) };
            let name: String = chars[start..at].iter().collect();
            // 御客さん, 御嬢さん: 御 makes a common noun polite.
            if at - start < 2 || chars[start] == '御' || HONORIFIC_STOP.contains(&name.as_str()) {
                continue;
            }
            // 諸君, 細君, 同様, 奥さん: the last kanji and the honorific make a word.
            let word_forming = HONORIFIC_WORDS
                .iter()
                .any(|(h, before)| h.chars().eq(honorific.iter().copied()) && before.contains(chars[at - 1]));
            if (!katakana && word_forming) || (katakana && !katakana_name_like(&chars[start..at])) {
                continue;
            }
            out.push(Candidate { start, end: at, cue: Cue::Honorific });
        }
    }
}

fn kanji_name_start(chars: &[char], counts: &Counts, run_start: usize, end: usize) -> usize {
    let len = end - run_start;
    if len <= 2 {
        return run_start;
    }
    // A proper tail has a kanji before it here, so any run-start occurrence is elsewhere.
    for tail in 2..len.min(COUNTED_MAX + 1) {
        if counts.at_run_start(&chars[end - tail..end]) > 0 {
            return end - tail;
        }
    }
    end - len.min(5)
}

/// Book-level: the sightings of many chunks grouped by surface, most frequent first
/// (ties by surface, in code-point order), each group in the order given. A surface
/// seen once in the whole input is kept only if its cue is strong (title, honorific,
/// quoted): a weak cue (surname, katakana, repeated n-gram) needs a second sighting.
/// Surfaces are compared as given; a caller that wants folded deduplication folds the
/// surfaces first.
pub fn tally(sightings: impl IntoIterator<Item = Sighting>) -> Vec<(String, Vec<Sighting>)> {
    let mut groups: BTreeMap<String, Vec<Sighting>> = BTreeMap::new();
    for sighting in sightings {
        groups.entry(sighting.surface.clone()).or_default().push(sighting);
    }
    let mut out: Vec<(String, Vec<Sighting>)> =
        groups.into_iter().filter(|(_, seen)| seen.len() >= 2 || seen.iter().any(|s| s.cue.is_strong())).collect();
    out.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    out
}
