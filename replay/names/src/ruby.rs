//! Aozora Bunko ruby (`漢字《かんじ》`, `｜霧の川《きりのかわ》`) and notes (`［＃…］`), read
//! by the same rules as the matcher's capture (`matcher/src/markup.rs`): a `《…》` closed
//! on its line after a run of same-class chars (or after a `｜` on the same line) is a
//! ruby; a `［＃…］` closed on its line is a note; anything else stays ordinary text.
//! The names crate may not depend on the matcher, so the rules are restated here (the
//! same code, trimmed to Aozora markup); `tests/cues.rs` covers an implicit base, a `｜`
//! base, a note and an unclosed `《`.

/// A ruby found in the source: byte ranges of its base and of its reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ruby {
    pub(crate) base: (usize, usize),
    pub(crate) reading: (usize, usize),
}

/// Markup of a text: the byte ranges to hide (sorted, merged) and the rubies.
#[derive(Default)]
pub(crate) struct Markup {
    pub(crate) hidden: Vec<(usize, usize)>,
    pub(crate) rubies: Vec<Ruby>,
}

const RUBY_OPEN: char = '\u{300A}'; // 《
const RUBY_CLOSE: char = '\u{300B}'; // 》
const RUBY_BAR: char = '\u{FF5C}'; // ｜
const NOTE_OPEN: char = '\u{FF3B}'; // ［
const NOTE_HASH: char = '\u{FF03}'; // ＃
const NOTE_CLOSE: char = '\u{FF3D}'; // ］
const GAIJI: char = '\u{203B}'; // ※

/// Class of a char for the rule "the ruby base is the run of same-class chars before
/// `《`": kanji 1, hiragana 2, katakana 3, other letters and digits 4, else 0.
fn ruby_class(c: char) -> u8 {
    match c as u32 {
        0x3005..=0x3007 | 0x303B | 0x30F6 | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF => {
            1
        }
        0x3041..=0x309F => 2,
        0x30A1..=0x30FA | 0x30FC..=0x30FF | 0xFF66..=0xFF9F => 3,
        _ if c.is_alphanumeric() => 4,
        _ => 0,
    }
}

fn find_on_line(text: &str, from: usize, needle: char) -> Option<usize> {
    for (offset, c) in text[from..].char_indices() {
        if c == needle {
            return Some(from + offset);
        }
        if c == '\n' {
            return None;
        }
    }
    None
}

/// Scan `text` for Aozora markup.
pub(crate) fn scan(text: &str) -> Markup {
    let mut markup = Markup::default();
    let mut bar: Option<usize> = None;
    let mut line_start = 0usize;
    let mut marks: Vec<usize> = Vec::new();
    for marker in ['\n', RUBY_OPEN, RUBY_BAR, NOTE_OPEN] {
        marks.extend(text.match_indices(marker).map(|(idx, _)| idx));
    }
    marks.sort_unstable();
    let mut pos = 0usize;
    for &mark in &marks {
        if mark < pos {
            continue;
        }
        pos = mark;
        let Some(c) = text[pos..].chars().next() else { break };
        let next = pos + c.len_utf8();
        match c {
            '\n' => {
                bar = None;
                line_start = next;
            }
            RUBY_BAR if find_on_line(text, next, RUBY_OPEN).is_some() => bar = Some(pos),
            NOTE_OPEN if text[next..].starts_with(NOTE_HASH) => {
                if let Some(close) = find_on_line(text, next, NOTE_CLOSE) {
                    let end = close + NOTE_CLOSE.len_utf8();
                    markup.hidden.push((pos, end));
                    pos = end;
                    continue;
                }
            }
            RUBY_OPEN => {
                if let Some(close) = find_on_line(text, next, RUBY_CLOSE) {
                    let end = close + RUBY_CLOSE.len_utf8();
                    let reading = (next, close);
                    let base = match bar.take() {
                        Some(bar_pos) => {
                            let base_start = bar_pos + RUBY_BAR.len_utf8();
                            (base_start < pos).then(|| {
                                markup.hidden.push((bar_pos, base_start));
                                (base_start, pos)
                            })
                        }
                        None => implicit_base(text, line_start, pos, &markup.hidden),
                    };
                    if let (Some(base), true) = (base, reading.0 < reading.1) {
                        markup.hidden.push((pos, end));
                        markup.rubies.push(Ruby { base, reading });
                        pos = end;
                        continue;
                    }
                }
            }
            _ => {}
        }
        pos = next;
    }
    markup.hidden.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(markup.hidden.len());
    for (start, end) in markup.hidden.drain(..) {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    markup.hidden = merged;
    markup.rubies.sort_unstable_by_key(|r| (r.base, r.reading));
    markup
}

/// The run of same-class chars ending at `end`, not before `line_start`; a gaiji (`※`
/// and its note) counts as a kanji.
fn implicit_base(text: &str, line_start: usize, end: usize, hidden: &[(usize, usize)]) -> Option<(usize, usize)> {
    let mut class = 0u8;
    let mut cursor = end;
    loop {
        let note = hidden
            .iter()
            .rev()
            .take_while(|&&(_, note_end)| note_end >= cursor)
            .find(|&&(_, note_end)| note_end == cursor);
        if let Some(&(note_start, _)) = note {
            if (class == 0 || class == 1)
                && note_start >= line_start + GAIJI.len_utf8()
                && text[..note_start].ends_with(GAIJI)
            {
                class = 1;
                cursor = note_start - GAIJI.len_utf8();
                continue;
            }
        }
        let Some(c) = text[line_start..cursor].chars().next_back() else { break };
        let c_class = ruby_class(c);
        if c_class == 0 || (class != 0 && c_class != class) {
            break;
        }
        class = c_class;
        cursor -= c.len_utf8();
    }
    (cursor < end).then_some((cursor, end))
}
