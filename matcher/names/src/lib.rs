//! The unknown-name alarm: finds name-like spans in a chunk of Chinese or Japanese
//! source text that no known surface covers, tallies them over a book, and ranks the
//! surfaces of a whole book by their evidence.
//!
//! This crate owns the cues (see [`Cue`]), the small built-in lists they read (surnames,
//! titles, honorifics, verbs of speech and motion, place suffixes, stop words,
//! loanwords), the book-level rule of [`tally`] and the book-wide ranking of
//! [`Scanner::rank`]. It does not know the glossary: the caller says which surfaces are
//! known (after its own fold) and which byte ranges the assembly already matched.
//!
//! Two ways to use it: chunk by chunk, [`Scanner::scan`] and [`tally`] (each chunk
//! decides its own spans; what the book's review queue does as chunks come in); or a
//! whole book at once, [`Scanner::rank`], which weighs every span a context allows
//! against the whole book, merges folded surfaces across chunks and chapters, and
//! sorts them by an integer score with a cut-off, [`LIKELY`].
//!
//! Pure: no I/O, no clock, no randomness, no HashMap iteration in anything rendered or
//! hashed. The same text, covered ranges and `known` answers always give the same
//! sightings in the same order. Any text is accepted; nothing here panics on input.

mod lists;
mod rank;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use lists::*;
pub use rank::{Chunk, Ranked, LIKELY};

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
    /// A name by its shape. Chinese: a common surname (one of ~100 single or ~30
    /// compound ones) followed by one or two Han characters that are not grammar words,
    /// or the nickname prefix 阿 followed by one. Japanese: kanji ending in a given-name
    /// ending (`…郎`, `…衛門`, `…之助`), or katakana before 助 (ピン助). Weak: a surface
    /// seen once in the whole input is dropped by [`tally`].
    Surname,
    /// Chinese: a title or epithet (`…道人`, `…仙子`, `…公子`, `…长老`, `…宗主`, `…大仙`,
    /// …) with the 1–3 Han characters before it. Strong.
    Title,
    /// A short name-like string alone inside quotes (`「…」`, `『…』`, `“…”`, in Chinese
    /// `‘…’` too), or a Chinese book title in `《…》`. Strong.
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
    /// A speaker or a subject: Chinese, the 2–5 Han characters before a verb of speech
    /// or action (`X道：`, `X笑道`, `X听了`, `X闻言`, `X大怒`, `X传旨`), or between a
    /// sentence's start and an adverb that follows subjects (`。X又`, `那X却`);
    /// Japanese, the kanji or katakana between a closing quote's `と` and `は`/`が`
    /// (`」と迷亭が`), or before `は`/`が` and a verb of speech (`迷亭が云う`). Weak.
    Speaker,
    /// A name after a term of address, a title or a naming word (Chinese: `师兄X`,
    /// `龙王X`, `唤做X`, `法名X`), or, in Japanese, before a naming phrase and a noun of
    /// a person (`Xという男`, `Xと云う人`). Weak.
    Addressed,
    /// Chinese: a place name, one to four Han characters and a place suffix (`…山`,
    /// `…洞`, `…宫`, `…殿`, `…国`, `…洲`, `…河`, `…门`, …), or the place after a verb
    /// of motion (`至X`, `往X`, `到了X`). Weak.
    Place,
    /// Chinese: an item of a list, two to five name characters between enumeration
    /// commas (`阿傩、迦叶`). Weak.
    Listed,
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
            Cue::Surname | Cue::Katakana | Cue::Speaker | Cue::Addressed | Cue::Place => 2,
            Cue::Repeated | Cue::Listed => 3,
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

/// A candidate span `[start, end)` of visible chars. A loose one is a span only
/// [`Mode::Loose`] proposes: the context allows it, the chunk alone does not choose
/// it; `alternatives` is the number of spans the context allowed (this one included).
struct Candidate {
    start: usize,
    end: usize,
    cue: Cue,
    loose: bool,
    alternatives: u8,
}

impl Candidate {
    fn new(start: usize, end: usize, cue: Cue) -> Candidate {
        Candidate { start, end, cue, loose: false, alternatives: 1 }
    }

    fn loose(start: usize, end: usize, cue: Cue, alternatives: usize) -> Candidate {
        Candidate { start, end, cue, loose: true, alternatives: alternatives.clamp(1, 9) as u8 }
    }
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
    static SORTED: OnceLock<Vec<char>> = OnceLock::new();
    is_in(&SORTED, ZH_STOP_CHARS, c)
}

/// Whether `c` is one of the chars of `list`, by a binary search in `sorted` (the
/// lists are looked up for every char of a chunk).
fn is_in(sorted: &OnceLock<Vec<char>>, list: &str, c: char) -> bool {
    let sorted = sorted.get_or_init(|| {
        let mut chars: Vec<char> = list.chars().collect();
        chars.sort_unstable();
        chars
    });
    sorted.binary_search(&c).is_ok()
}

/// The longest string [`Counts`] counts.
const COUNTED_MAX: usize = 6;

/// Occurrences in a chunk of every string of 1 to [`COUNTED_MAX`] visible chars
/// (overlapping ones too), and of those that start or end a word; built once per scan
/// so that no cue searches the chunk again. A string starts a word when the char
/// before it does not run on into it: in Japanese, when that char is no kanji; in
/// Chinese, when it is no Han character or one of [`ZH_BREAK_CHARS`]. It ends a word
/// when the char after it is no such char.
struct Counts<'a> {
    /// Per string: occurrences, those at a word start, those at a word end.
    counts: BTreeMap<&'a [char], [u32; 3]>,
}

impl<'a> Counts<'a> {
    fn new(chars: &'a [char], lang: Lang) -> Counts<'a> {
        let runs: Vec<bool> = chars.iter().map(|&c| runs_on(lang, c)).collect();
        let mut counts: BTreeMap<&[char], [u32; 3]> = BTreeMap::new();
        for start in 0..chars.len() {
            let word_start = start == 0 || !runs[start - 1];
            for len in 1..=COUNTED_MAX.min(chars.len() - start) {
                let entry = counts.entry(&chars[start..start + len]).or_default();
                entry[0] += 1;
                entry[1] += u32::from(word_start);
                entry[2] += u32::from(runs.get(start + len).is_none_or(|&runs| !runs));
            }
        }
        Counts { counts }
    }

    fn get(&self, s: &[char], which: usize) -> usize {
        self.counts.get(s).map_or(0, |n| n[which] as usize)
    }

    /// Occurrences of `s` (at most [`COUNTED_MAX`] chars) in the chunk.
    fn of(&self, s: &[char]) -> usize {
        self.get(s, 0)
    }

    /// Occurrences of `s` at the start of a word.
    fn at_word_start(&self, s: &[char]) -> usize {
        self.get(s, 1)
    }

    /// Occurrences of `s` at the end of a word (no char it runs on into after it).
    fn at_word_end(&self, s: &[char]) -> usize {
        self.get(s, 2)
    }
}

/// Whether a word runs on from `c` into the next char (see [`Counts`]).
fn runs_on(lang: Lang, c: char) -> bool {
    match lang {
        Lang::Ja => is_kanji(c),
        Lang::Zh => zh_word_char(c),
    }
}

/// A Han character a Chinese name may hold: not one of [`ZH_BREAK_CHARS`].
fn zh_word_char(c: char) -> bool {
    static SORTED: OnceLock<Vec<char>> = OnceLock::new();
    is_han(c) && !is_in(&SORTED, ZH_BREAK_CHARS, c)
}

/// Whether `s` is one of `words`.
fn is_one_of(s: &[char], words: &[&str]) -> bool {
    words.iter().any(|w| w.chars().eq(s.iter().copied()))
}

/// Whether `chars[at..]` starts with `word`.
fn starts_with(chars: &[char], at: usize, word: &str) -> bool {
    let mut rest = chars.get(at..).unwrap_or(&[]).iter();
    word.chars().all(|w| rest.next() == Some(&w))
}

/// A chunk read for the cues: its visible chars (ruby readings and notes left out) and
/// where the ruby bases start.
struct Read {
    visible: Vec<Ch>,
    chars: Vec<char>,
    base_starts: Vec<bool>,
    markup: matcher::markup::Markup,
}

impl Read {
    fn new(lang: Lang, text: &str) -> Read {
        let markup = match lang {
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
        Read { visible, chars, base_starts, markup }
    }

    /// The sighting of `candidate`, unless it overlaps a covered range; `None` too
    /// when its span is empty or out of range (never, for the cues' candidates).
    fn sighting(&self, text: &str, candidate: &Candidate, covered: &[(u32, u32)]) -> Option<Sighting> {
        let first = *self.visible.get(candidate.start)?;
        let last = *self.visible.get(candidate.end.checked_sub(1)?)?;
        if candidate.end <= candidate.start {
            return None;
        }
        let bytes = (first.byte, last.byte + last.c.len_utf8() as u32);
        if covered.iter().any(|&(start, end)| start < bytes.1 && bytes.0 < end) {
            return None;
        }
        let surface: String = self.chars[candidate.start..candidate.end].iter().collect();
        let reading = self
            .markup
            .rubies
            .iter()
            .find(|r| r.base == (bytes.0 as usize, bytes.1 as usize))
            .and_then(|r| text.get(r.reading.0..r.reading.1))
            .map(str::to_owned);
        Some(Sighting { surface, bytes, chars: (first.idx, last.idx + 1), cue: candidate.cue, reading })
    }
}

/// How the cues choose among the spans a context allows: `Strict` takes the one the
/// chunk itself supports (what [`Scanner::scan`] reports); `Loose` proposes every
/// span the context allows and leaves the choice to the book-wide evidence of
/// [`Scanner::rank`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Strict,
    Loose,
}

impl Scanner {
    /// A scanner for `lang`.
    pub fn new(lang: Lang) -> Scanner {
        Scanner { lang }
    }

    /// The scanner's language.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// Name-like spans of `text` not covered by a known surface, in text order.
    /// `known(surface)` says whether a surface is covered (the caller folds and looks it
    /// up among records, aliases and sticky entries); spans overlapping a `covered` byte
    /// range (hits the assembly already found) are left out too. A known candidate still
    /// claims its span, so no shorter candidate inside it is reported.
    pub fn scan(&self, text: &str, covered: &[(u32, u32)], known: &dyn Fn(&str) -> bool) -> Vec<Sighting> {
        let read = Read::new(self.lang, text);
        let mut candidates = self.candidates(&read, known, Mode::Strict);
        candidates.sort_by_key(|c| (c.cue.rank(), c.start, usize::MAX - (c.end - c.start), c.cue));
        resolve(&read, text, candidates, covered, known)
    }

    /// Every candidate span of a chunk, overlapping ones too.
    fn candidates(&self, read: &Read, known: &dyn Fn(&str) -> bool, mode: Mode) -> Vec<Candidate> {
        let chars = &read.chars[..];
        let counts = Counts::new(chars, self.lang);
        let mut candidates = Vec::new();
        match self.lang {
            Lang::Zh => {
                surname_candidates(chars, &counts, mode, &mut candidates);
                title_candidates(chars, &counts, known, mode, &mut candidates);
                quoted_candidates(chars, self.lang, &mut candidates);
                repeated_candidates(chars, &mut candidates);
                speaker_candidates(chars, &counts, mode, &mut candidates);
                address_candidates(chars, &counts, mode, &mut candidates);
                place_candidates(chars, &counts, mode, &mut candidates);
                destination_candidates(chars, &counts, mode, &mut candidates);
                listed_candidates(chars, &mut candidates);
                // 洞中, 门外, 陛下: a noun and a locative.
                let locative = |c: &Candidate| {
                    c.end.checked_sub(1).and_then(|i| chars.get(i)).is_some_and(|&ch| ZH_LOCATIVES.contains(ch))
                };
                candidates.retain(|c| c.cue == Cue::Title || !locative(c));
            }
            Lang::Ja => {
                honorific_candidates(chars, &counts, &read.base_starts, &mut candidates);
                quoted_candidates(chars, self.lang, &mut candidates);
                katakana_candidates(chars, &read.base_starts, &mut candidates);
                ja_context_candidates(chars, &read.base_starts, mode, &mut candidates);
            }
        }
        candidates
    }
}

/// The sightings of `candidates` taken in the order given: a candidate overlapping
/// one taken before is dropped, one overlapping a covered range too, and a known one
/// claims its span but is not reported. In text order.
fn resolve(
    read: &Read,
    text: &str,
    candidates: Vec<Candidate>,
    covered: &[(u32, u32)],
    known: &dyn Fn(&str) -> bool,
) -> Vec<Sighting> {
    let mut taken = vec![false; read.chars.len()];
    let mut out = Vec::new();
    for candidate in candidates {
        let Some(span) = taken.get(candidate.start..candidate.end) else { continue };
        if span.iter().any(|&t| t) {
            continue;
        }
        let Some(sighting) = read.sighting(text, &candidate, covered) else { continue };
        taken[candidate.start..candidate.end].iter_mut().for_each(|t| *t = true);
        if known(&sighting.surface) {
            continue;
        }
        out.push(sighting);
    }
    out.sort_by_key(|s| (s.bytes, s.cue));
    out
}

/// Chinese: a surname and one or two name characters, or the nickname prefix 阿 and
/// one character (阿照). The longer form is taken when the shorter one never occurs
/// without the extra character in the chunk. A single-character surname right after a
/// Han character that is not a grammar word is taken as the end of a word (猴王笑 is
/// no 王笑).
fn surname_candidates(chars: &[char], counts: &Counts, mode: Mode, out: &mut Vec<Candidate>) {
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
        out.push(Candidate::new(start, end, Cue::Surname));
        // The other length, for the book to choose.
        if mode == Mode::Loose && given == 2 && !nickname {
            let other = if end == start + surname_len + 2 { end - 1 } else { end + 1 };
            if !is_one_of(&chars[start..other], ZH_STOP_WORDS) {
                out.push(Candidate::loose(start, other, Cue::Surname, 2));
            }
        }
    }
}

/// Chinese: a title and the 1–3 Han characters before it that are not grammar words
/// ([`ZH_STOP_CHARS`], and 好 of 好大圣).
/// Two characters are tried first, then three: the first prefix that is known or occurs
/// again in the chunk wins; then one, if it is known or the one character and the title
/// occur together again (牛魔王 twice). A title whose prefix is neither known nor
/// repeated is no sighting: the characters before a title are as often a verb
/// (万望师父) as a name. In [`Mode::Loose`], failing those, a whole prefix of two or
/// three that starts a word is taken, and every other prefix is proposed loose.
fn title_candidates(
    chars: &[char],
    counts: &Counts,
    known: &dyn Fn(&str) -> bool,
    mode: Mode,
    out: &mut Vec<Candidate>,
) {
    for title in TITLES {
        let title: Vec<char> = title.chars().collect();
        for at in 0..chars.len().saturating_sub(title.len() - 1) {
            if chars[at..at + title.len()] != title[..] {
                continue;
            }
            let prefix_char = |c: char| is_han(c) && !zh_stop(c) && c != '好';
            let avail = chars[..at].iter().rev().take(4).take_while(|&&c| prefix_char(c)).count();
            let bounded = avail <= 3 && (avail == at || !prefix_char(chars[at - avail - 1]));
            let avail = avail.min(3);
            if avail == 0 {
                continue;
            }
            let fits = |len: usize| {
                let prefix = &chars[at - len..at];
                let repeated = if len >= 2 { counts.of(prefix) } else { counts.of(&chars[at - 1..at + title.len()]) };
                known(&prefix.iter().collect::<String>()) || repeated >= 2
            };
            let mut chosen = [2, 3, 1].into_iter().filter(|&len| len <= avail).find(|&len| fits(len));
            // The book takes a whole prefix of two or three that starts a word rather
            // than one character.
            if mode == Mode::Loose && chosen.is_none_or(|len| len == 1) && bounded && avail >= 2 {
                chosen = Some(avail);
            }
            if let Some(len) = chosen {
                out.push(Candidate::new(at - len, at + title.len(), Cue::Title));
            }
            if mode == Mode::Loose {
                for len in (1..=avail).filter(|&len| Some(len) != chosen) {
                    out.push(Candidate::loose(at - len, at + title.len(), Cue::Title, avail));
                }
            }
        }
    }
}

/// Quotes holding only a short name-like string, and Chinese book titles.
fn quoted_candidates(chars: &[char], lang: Lang, out: &mut Vec<Candidate>) {
    let pairs: &[(char, char)] = match lang {
        Lang::Zh => &[('“', '”'), ('‘', '’'), ('「', '」'), ('『', '』'), ('《', '》')],
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
            out.push(Candidate::new(start, start + len, Cue::Quoted));
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
            out.extend(at.iter().map(|&start| Candidate::new(start, start + gram.len(), Cue::Repeated)));
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
            out.push(Candidate::new(start, end, Cue::Katakana));
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
            out.push(Candidate::new(start, at, Cue::Honorific));
        }
    }
}

fn kanji_name_start(chars: &[char], counts: &Counts, run_start: usize, end: usize) -> usize {
    let len = end - run_start;
    if len <= 2 {
        return run_start;
    }
    // A proper tail has a kanji before it here, so any run-start occurrence is elsewhere.
    for tail in 2..len.min(6) {
        if counts.at_word_start(&chars[end - tail..end]) > 0 {
            return end - tail;
        }
    }
    end - len.min(5)
}

/// Chinese: the number of name characters (see [`zh_word_char`]) right before `end`,
/// at most `max + 1`, and whether they start a word (no name character before them).
fn zh_run_before(chars: &[char], end: usize, max: usize) -> (usize, bool) {
    let run = chars[..end].iter().rev().take(max + 1).take_while(|&&c| zh_word_char(c)).count();
    (run, run <= max && (end == run || !zh_word_char(chars[end - run - 1])))
}

/// Chinese: a name ending at `end`, read back over `run` name characters (a word
/// starts at `end - run` when `here`): of the spans of `min..=max` characters, the
/// longest that starts a word elsewhere in the chunk, or that is the whole run and
/// occurs again in the chunk; failing both, the whole run when it starts a word and
/// has `whole.0..=whole.1` characters. A role or a common word is no name. In
/// [`Mode::Loose`] every other span of `min..=max` is proposed too, the fallback among
/// them.
#[allow(clippy::too_many_arguments)]
fn zh_name_before(
    chars: &[char],
    counts: &Counts,
    end: usize,
    (run, here): (usize, bool),
    (min, max): (usize, usize),
    whole: (usize, usize),
    cue: Cue,
    mode: Mode,
    out: &mut Vec<Candidate>,
) {
    let top = run.min(max);
    if top < min {
        return;
    }
    let name_like = |len: usize| {
        let s = &chars[end - len..end];
        !is_one_of(s, ZH_ROLES) && !is_one_of(s, ZH_STOP_WORDS)
    };
    let qualifies = |len: usize| {
        let s = &chars[end - len..end];
        let whole = here && len == run;
        counts.at_word_start(s) > usize::from(whole) || (whole && counts.of(s) >= 2)
    };
    let qualified = (min..=top).rev().find(|&len| qualifies(len));
    // The fallback is the chunk's guess; the book weighs it as a loose one.
    let fallback = (here && (whole.0..=whole.1).contains(&run) && run == top).then_some(run);
    let chosen = match mode {
        Mode::Strict => qualified.or(fallback),
        Mode::Loose => qualified,
    }
    .filter(|&len| name_like(len));
    if let Some(len) = chosen {
        out.push(Candidate::new(end - len, end, cue));
    }
    if mode == Mode::Loose {
        for len in (min..=top).filter(|&len| Some(len) != chosen && name_like(len)) {
            out.push(Candidate::loose(end - len, end, cue, top + 1 - min));
        }
    }
}

/// Chinese: the speaker before a verb of speech or action ([`ZH_SPEECH_VERBS`]); a
/// one-character verb (道, 说, 问, 答, 曰) only when punctuation follows it
/// (`悟空道：`), since it is as often part of a word (大道, 说话). The name is read
/// back from the verb over name characters, two to five of them (see
/// [`zh_name_before`]; a whole run of two or three that starts a word is taken).
/// Also the subject of a sentence: two to four name characters between a sentence's
/// start (after `。`, a quote, or 那, 只见, 却说, … [`ZH_SUBJECT_MARKERS`]) and an
/// adverb that follows subjects (又, 却, 即, 便, … [`ZH_SUBJECT_ADVERBS`]).
fn speaker_candidates(chars: &[char], counts: &Counts, mode: Mode, out: &mut Vec<Candidate>) {
    for at in 2..chars.len() {
        let Some(verb) = ZH_SPEECH_VERBS.iter().find(|verb| starts_with(chars, at, verb)) else { continue };
        let verb_len = verb.chars().count();
        if verb_len == 1 && chars.get(at + 1).is_some_and(|&c| is_han(c)) {
            continue;
        }
        // 大喜道: the verb is 大喜, not 喜道 after 大.
        if ZH_SPEECH_VERBS.iter().any(|v| v.chars().count() == 2 && starts_with(chars, at - 1, v)) {
            continue;
        }
        let run = zh_run_before(chars, at, 5);
        zh_name_before(chars, counts, at, run, (2, 5), (2, 3), Cue::Speaker, mode, out);
    }
    // 。玉皇又, 那大圣却: a subject between a sentence's start and an adverb.
    for at in 2..chars.len() {
        if !ZH_SUBJECT_ADVERBS.contains(chars[at]) {
            continue;
        }
        let (run, here) = zh_run_before(chars, at, 4);
        let start = at.saturating_sub(run);
        let anchored = here
            && (start == 0
                || ZH_SENTENCE_MARKS.contains(chars[start - 1])
                || ZH_SUBJECT_MARKERS
                    .iter()
                    .any(|m| start >= m.chars().count() && starts_with(chars, start - m.chars().count(), m)));
        if anchored {
            zh_name_before(chars, counts, at, (run, here), (2, 4), (2, 3), Cue::Speaker, mode, out);
        }
    }
}

/// Chinese: a place after a verb of motion ([`ZH_MOTION_VERBS`]: 至, 往, 奔, 入, 到了,
/// …): the first two to four name characters after it, the longest that ends a word
/// elsewhere in the chunk. In [`Mode::Loose`] a whole run of two to four that ends a
/// word is taken too, and every other length is proposed loose.
fn destination_candidates(chars: &[char], counts: &Counts, mode: Mode, out: &mut Vec<Candidate>) {
    for at in 0..chars.len() {
        let Some(verb) = ZH_MOTION_VERBS.iter().find(|verb| starts_with(chars, at, verb)) else { continue };
        let start = at + verb.chars().count();
        let run = chars[start..].iter().take(5).take_while(|&&c| zh_word_char(c)).count();
        let top = run.min(4);
        if top < 2 {
            continue;
        }
        let name_like = |len: usize| {
            let s = &chars[start..start + len];
            !is_one_of(s, ZH_ROLES) && !is_one_of(s, ZH_STOP_WORDS)
        };
        let ends = |len: usize| {
            let here = usize::from(len == run);
            counts.at_word_end(&chars[start..start + len]) > here && counts.of(&chars[start..start + len]) >= 2
        };
        let repeated = (2..=top).rev().find(|&len| ends(len));
        let whole = (mode == Mode::Loose && run <= 4).then_some(run);
        let chosen = repeated.or(whole).filter(|&len| name_like(len));
        if let Some(len) = chosen {
            out.push(Candidate::new(start, start + len, Cue::Place));
        }
        if mode == Mode::Loose {
            for len in (2..=top).filter(|&len| Some(len) != chosen && name_like(len)) {
                out.push(Candidate::loose(start, start + len, Cue::Place, top - 1));
            }
        }
    }
}

/// Chinese: a place name, a place suffix ([`ZH_PLACE_SUFFIXES`]) and one to four name
/// characters before it, chosen as [`zh_name_before`] says (a whole run of two or three
/// before the suffix that starts a word is taken; a place of two characters, 东海, must
/// occur again, and only the suffixes of [`ZH_PLACE_SUFFIXES_SHORT`] make one: 洞门,
/// 宝殿 and 下界 are words). 观 before 看, 音 or 世 is a verb or
/// a name (观看, 观音), not a suffix.
fn place_candidates(chars: &[char], counts: &Counts, mode: Mode, out: &mut Vec<Candidate>) {
    for at in 1..chars.len() {
        if !ZH_PLACE_SUFFIXES.contains(chars[at]) || !zh_word_char(chars[at]) {
            continue;
        }
        // 出门, 上山, 归洞: a verb and a place noun.
        if ZH_PLACE_VERBS.contains(chars[at - 1]) {
            continue;
        }
        if chars[at] == '观' && chars.get(at + 1).is_some_and(|&c| "看音世望瞧其之赏察".contains(c)) {
            continue;
        }
        let (run, here) = zh_run_before(chars, at, 4);
        // 洞门, 宝殿, 下界: most suffixes make ordinary words of two characters.
        let min = if ZH_PLACE_SUFFIXES_SHORT.contains(chars[at]) { 2 } else { 3 };
        zh_name_before(chars, counts, at + 1, (run + 1, here), (min, 5), (3, 4), Cue::Place, mode, out);
    }
}

/// Chinese: the items of a list (`阿傩、迦叶`, `郭申、直健`): a run of two to five name
/// characters right before or after an enumeration comma `、`, ending (or starting)
/// at a character that is no name character. A role or a common word is no item.
fn listed_candidates(chars: &[char], out: &mut Vec<Candidate>) {
    let item = |start: usize, end: usize| {
        let s = &chars[start..end];
        (2..=5).contains(&s.len()) && !is_one_of(s, ZH_ROLES) && !is_one_of(s, ZH_STOP_WORDS)
    };
    let mut last_end = None;
    for at in 0..chars.len() {
        if chars[at] != '、' {
            continue;
        }
        let (run, here) = zh_run_before(chars, at, 5);
        if here && item(at - run, at) && last_end != Some(at) {
            out.push(Candidate::new(at - run, at, Cue::Listed));
        }
        let start = at + 1;
        let run = chars[start..].iter().take(6).take_while(|&&c| zh_word_char(c)).count();
        if run <= 5 && item(start, start + run) {
            out.push(Candidate::new(start, start + run, Cue::Listed));
            last_end = Some(start + run);
        }
    }
}

/// Chinese: the name after a term of address or a naming word ([`ZH_ADDRESS`]): the
/// two or three name characters that follow, the longer when it occurs again in the
/// chunk or the run ends there; a role or a common word is no name. After a term of
/// address (not a naming word: 唤做, 名唤, 法名, …) the name must occur again in the
/// chunk, since the term is as often the subject (师父慈悲).
fn address_candidates(chars: &[char], counts: &Counts, mode: Mode, out: &mut Vec<Candidate>) {
    for at in 0..chars.len() {
        let Some(term) = ZH_ADDRESS.iter().find(|term| starts_with(chars, at, term)) else { continue };
        let start = at + term.chars().count();
        let run = chars[start..].iter().take(4).take_while(|&&c| zh_word_char(c)).count();
        let name_like = |len: usize| {
            let s = &chars[start..start + len];
            !is_one_of(s, ZH_ROLES) && !is_one_of(s, ZH_STOP_WORDS)
        };
        let top = run.min(3);
        if top < 2 {
            continue;
        }
        let chosen = if run <= 3 || counts.at_word_end(&chars[start..start + 3]) >= 1 { top } else { 2 };
        let naming = ZH_NAMING.contains(term);
        let chosen =
            Some(chosen).filter(|&len| name_like(len) && (naming || counts.of(&chars[start..start + len]) >= 2));
        if let Some(len) = chosen {
            out.push(Candidate::new(start, start + len, Cue::Addressed));
        }
        if mode == Mode::Loose {
            for len in (2..=top).filter(|&len| Some(len) != chosen && name_like(len)) {
                out.push(Candidate::loose(start, start + len, Cue::Addressed, top - 1));
            }
        }
    }
}

/// Japanese: the run of kanji (or of katakana) ending at `end`, as far back as a ruby
/// base's start; its start.
fn ja_run_start(chars: &[char], base_starts: &[bool], end: usize) -> usize {
    let Some(&last) = chars.get(end.wrapping_sub(1)) else { return end };
    let same = |c: char| if is_katakana(last) { is_katakana(c) } else { is_kanji(c) };
    let mut start = end;
    while start > 0 && same(chars[start - 1]) {
        start -= 1;
        if base_starts[start] {
            break;
        }
    }
    start
}

/// Japanese, three cues that read the context of a kanji or katakana run:
/// * a speaker (`Speaker`): the run right after a closing quote's `と` and before は,
///   が or も (`」と迷亭が`), without a kanji honorific it ends in (迷亭君 → 迷亭); or
///   the run before は, が or も and a verb of speech (`迷亭が云う`, [`JA_SPEECH_VERBS`]);
/// * a name before a naming phrase and a noun of a person (`Addressed`): the run
///   before という, と云う, と申す, … ([`JA_NAMING`]) and 男, 人, 女, … ([`JA_PERSON_NOUNS`]);
/// * a given-name ending (`Surname`): a run of three kanji or more ending in 郎, 助,
///   衛門, 兵衛, … ([`JA_GIVEN_ENDINGS`]), or katakana and 助 (ピン助); in
///   [`Mode::Loose`] its shorter tails too (鈴木藤十郎 → 藤十郎).
///
/// Runs of two or more, not roles or words of the stop lists ([`JA_ROLES`],
/// [`HONORIFIC_STOP`]); katakana runs must pass the katakana rule.
fn ja_context_candidates(chars: &[char], base_starts: &[bool], mode: Mode, out: &mut Vec<Candidate>) {
    let name_like = |s: &[char]| {
        let word: String = s.iter().collect();
        s.len() >= 2
            && (s.iter().all(|&c| is_kanji(c)) || katakana_name_like(s))
            && !JA_ROLES.contains(&word.as_str())
            && !HONORIFIC_STOP.contains(&word.as_str())
    };
    for at in 0..chars.len() {
        // 迷亭君が: the speaker without the honorific.
        let without_honorific = |start: usize, end: usize| {
            JA_KANJI_HONORIFICS
                .iter()
                .find(|h| end - start > h.chars().count() && starts_with(chars, end - h.chars().count(), h))
                .map_or(end, |h| end - h.chars().count())
        };
        // 」と迷亭が
        if chars[at] == '」' && chars.get(at + 1) == Some(&'と') && at + 2 < chars.len() {
            let start = at + 2;
            let same = |c: char| if is_katakana(chars[start]) { is_katakana(c) } else { is_kanji(c) };
            let mut end = start;
            while end < chars.len() && same(chars[end]) && (end == start || !base_starts[end]) {
                end += 1;
            }
            let particle = chars.get(end).is_some_and(|c| "はがも".contains(*c));
            let end = without_honorific(start, end);
            if particle && end - start <= 5 && name_like(&chars[start..end]) {
                out.push(Candidate::new(start, end, Cue::Speaker));
            }
        }
        // 迷亭が云う
        if at >= 2 && "はがも".contains(chars[at]) && chars.get(at + 1).is_some_and(|&c| JA_SPEECH_VERBS.contains(c))
        {
            let start = ja_run_start(chars, base_starts, at);
            let end = without_honorific(start, at);
            if end - start <= 5 && name_like(&chars[start..end]) {
                out.push(Candidate::new(start, end, Cue::Speaker));
            }
        }
        // 水島寒月という男
        let naming = JA_NAMING.iter().find(|phrase| starts_with(chars, at, phrase));
        if let Some(phrase) = naming.filter(|_| at > 0) {
            let after = at + phrase.chars().count();
            let start = ja_run_start(chars, base_starts, at);
            let person = JA_PERSON_NOUNS.iter().any(|noun| starts_with(chars, after, noun));
            if person && at - start <= 6 && name_like(&chars[start..at]) {
                out.push(Candidate::new(start, at, Cue::Addressed));
            }
        }
        // 鈴木藤十郎, ピン助
        for ending in JA_GIVEN_ENDINGS {
            let len = ending.chars().count();
            if !starts_with(chars, at, ending) || chars.get(at + len).is_some_and(|&c| is_kanji(c)) {
                continue;
            }
            let end = at + len;
            if *ending == "助" && at > 0 && is_katakana(chars[at - 1]) {
                let start = ja_run_start(chars, base_starts, at);
                if katakana_name_like(&chars[start..at]) || at - start >= 2 {
                    out.push(Candidate::new(start, end, Cue::Surname));
                }
                continue;
            }
            let start = ja_run_start(chars, base_starts, end);
            if end - start < 3 || end - start > 6 || chars[start..end].iter().any(|&c| !is_kanji(c)) {
                continue;
            }
            if name_like(&chars[start..end]) {
                out.push(Candidate::new(start, end, Cue::Surname));
            }
            if mode == Mode::Loose {
                for tail_start in (start + 1..end).filter(|&tail_start| end - tail_start >= 3) {
                    out.push(Candidate::loose(tail_start, end, Cue::Surname, end - start - 1));
                }
            }
            break;
        }
    }
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
