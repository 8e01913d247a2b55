//! Ruby and markup capture: Aozora Bunko (`漢字《かんじ》`, `｜`, `［＃…］`) and HTML
//! `<ruby>base<rp>(</rp><rt>reading</rt><rp>)</rp></ruby>`.
//!
//! The parser does not change the text. It returns the byte ranges to hide from the
//! fold (annotations, markers, tags) and the ruby pairs (base span, reading span), so
//! the base is matched as if the annotation were absent and the reading can be used as
//! an alias. Anything that does not parse as markup (an unclosed `《`, a `｜` with no
//! ruby after it on the line, an unknown tag) stays ordinary text.

/// A ruby annotation found in the source: byte ranges of its base and its reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRuby {
    /// Byte range of the base (`漢字` in `漢字《かんじ》`).
    pub base: (usize, usize),
    /// Byte range of the reading (`かんじ`).
    pub reading: (usize, usize),
}

/// Result of scanning a text for markup.
#[derive(Debug, Default)]
pub struct Markup {
    /// Sorted, non-overlapping byte ranges the fold skips.
    pub hidden: Vec<(usize, usize)>,
    /// Ruby pairs, sorted by base start.
    pub rubies: Vec<RawRuby>,
}

const RUBY_OPEN: char = '\u{300A}'; // 《
const RUBY_CLOSE: char = '\u{300B}'; // 》
const RUBY_BAR: char = '\u{FF5C}'; // ｜
const NOTE_OPEN: char = '\u{FF3B}'; // ［
const NOTE_HASH: char = '\u{FF03}'; // ＃
const NOTE_CLOSE: char = '\u{FF3D}'; // ］
const GAIJI: char = '\u{203B}'; // ※

/// Scans `text` for the enabled markup kinds: Aozora ruby and notes, HTML ruby.
/// The same rules the fold uses, for other crates that need a text's rubies (the
/// name alarm reads their readings).
pub fn scan(text: &str, aozora: bool, html: bool) -> Markup {
    let mut markup = Markup::default();
    if aozora {
        scan_aozora(text, &mut markup);
    }
    if html && text.contains('<') {
        scan_html(text, &mut markup);
    }
    markup.hidden.sort_unstable();
    // Merge overlaps so the fold can walk the ranges with one cursor.
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

/// Class of a char for the Aozora rule "the ruby base is the run of same-class chars
/// before `《`" (kanji, hiragana, katakana, Latin and digits). Zero: not a base char.
fn ruby_class(c: char) -> u8 {
    match c as u32 {
        0x3005..=0x3007
        | 0x303B
        | 0x30F6
        | 0x4EDD
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF
        | 0x20000..=0x3FFFF => 1,
        0x3041..=0x309F => 2,
        0x30A1..=0x30FA | 0x30FC..=0x30FF | 0xFF66..=0xFF9F => 3,
        _ if c.is_alphanumeric() => 4,
        _ => 0,
    }
}

/// Find `needle` in `text[from..]` before the end of the line; byte index of the match.
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

fn scan_aozora(text: &str, markup: &mut Markup) {
    let mut bar: Option<usize> = None;
    let mut line_start = 0usize;
    // Visit only the positions of marker chars (found with std's memchr-based char
    // search), in text order; a consumed note or ruby skips the marks inside it.
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
            // Only a marker if a ruby follows on the same line.
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
                        markup.rubies.push(RawRuby { base, reading });
                        pos = end;
                        continue;
                    }
                }
            }
            _ => {}
        }
        pos = next;
    }
}

/// The run of same-class chars ending at `end` (exclusive), not before `line_start`.
/// A gaiji (`※` followed by a note, already in `hidden`) counts as a kanji.
fn implicit_base(text: &str, line_start: usize, end: usize, hidden: &[(usize, usize)]) -> Option<(usize, usize)> {
    let mut class = 0u8;
    let mut cursor = end;
    loop {
        // Ranges are pushed in text order: only the latest ones can end at `cursor`.
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

/// A recognized ruby-family tag at `pos`: (name, closing, end byte after `>`).
fn parse_tag(text: &str, pos: usize) -> Option<(&'static str, bool, usize)> {
    let rest = &text[pos..];
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'<') {
        return None;
    }
    let mut idx = 1;
    let closing = bytes.get(1) == Some(&b'/');
    if closing {
        idx += 1;
    }
    let name_start = idx;
    while idx < bytes.len() && bytes[idx].is_ascii_alphabetic() {
        idx += 1;
    }
    let name = &rest[name_start..idx];
    let known = ["ruby", "rb", "rt", "rp", "rtc"].into_iter().find(|k| k.eq_ignore_ascii_case(name))?;
    // Attributes (on opening tags) up to `>`, on one line, no nested `<`.
    let mut end = None;
    for (offset, &b) in bytes[idx..].iter().enumerate() {
        match b {
            b'>' => {
                end = Some(pos + idx + offset + 1);
                break;
            }
            b'<' | b'\n' => return None,
            _ if closing && !b.is_ascii_whitespace() => return None,
            _ => {}
        }
    }
    let first_after_name = bytes.get(idx).copied();
    if !matches!(first_after_name, Some(b'>') | Some(b' ') | Some(b'\t') | Some(b'/')) {
        return None;
    }
    end.map(|end| (known, closing, end))
}

fn scan_html(text: &str, markup: &mut Markup) {
    let mut in_ruby = false;
    let mut base_first: Option<usize> = None;
    let mut last_visible_end = 0usize;
    let mut pos = 0usize;
    while let Some(c) = text[pos..].chars().next() {
        if c == '<' {
            if let Some((name, closing, tag_end)) = parse_tag(text, pos) {
                match (name, closing) {
                    ("ruby", false) => {
                        in_ruby = true;
                        base_first = None;
                        markup.hidden.push((pos, tag_end));
                    }
                    ("ruby", true) => {
                        in_ruby = false;
                        base_first = None;
                        markup.hidden.push((pos, tag_end));
                    }
                    ("rp", false) => {
                        let close = find_tag(text, tag_end, "rp", true);
                        let end = close.map_or(tag_end, |(_, close_end)| close_end);
                        markup.hidden.push((pos, end));
                        pos = end;
                        continue;
                    }
                    ("rt", false) => {
                        let content_end = next_ruby_tag(text, tag_end);
                        let mut end = content_end;
                        if let Some(("rt", true, close_end)) = parse_tag(text, content_end) {
                            end = close_end;
                        }
                        markup.hidden.push((pos, end));
                        if let (true, Some(first)) = (in_ruby, base_first) {
                            if first < last_visible_end && tag_end < content_end {
                                markup
                                    .rubies
                                    .push(RawRuby { base: (first, last_visible_end), reading: (tag_end, content_end) });
                            }
                        }
                        base_first = None;
                        pos = end;
                        continue;
                    }
                    _ => markup.hidden.push((pos, tag_end)),
                }
                pos = tag_end;
                continue;
            }
        }
        let next = pos + c.len_utf8();
        if in_ruby && base_first.is_none() && !c.is_whitespace() {
            base_first = Some(pos);
        }
        if !c.is_whitespace() {
            last_visible_end = next;
        }
        pos = next;
    }
}

/// Position of the next ruby-family tag at or after `from` (or the end of the text).
fn next_ruby_tag(text: &str, from: usize) -> usize {
    let mut pos = from;
    while let Some(offset) = text[pos..].find('<') {
        let at = pos + offset;
        if parse_tag(text, at).is_some() {
            return at;
        }
        pos = at + 1;
    }
    text.len()
}

/// The next tag `name` (closing or not) at or after `from`: (start, end).
fn find_tag(text: &str, from: usize, name: &str, closing: bool) -> Option<(usize, usize)> {
    let mut pos = from;
    while let Some(offset) = text[pos..].find('<') {
        let at = pos + offset;
        if let Some((found, is_closing, end)) = parse_tag(text, at) {
            if found == name && is_closing == closing {
                return Some((at, end));
            }
        }
        pos = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible(text: &str, markup: &Markup) -> String {
        let mut out = String::new();
        let mut pos = 0;
        for &(start, end) in &markup.hidden {
            out.push_str(&text[pos..start]);
            pos = end;
        }
        out.push_str(&text[pos..]);
        out
    }

    fn rubies(text: &str, markup: &Markup) -> Vec<(String, String)> {
        markup
            .rubies
            .iter()
            .map(|r| (text[r.base.0..r.base.1].to_string(), text[r.reading.0..r.reading.1].to_string()))
            .collect()
    }

    #[test]
    fn aozora_implicit_and_bar() {
        let text = "吾輩《わがはい》は猫である。｜名前《なまえ》はまだ［＃「まだ」に傍点］無い。";
        let m = scan(text, true, false);
        assert_eq!(visible(text, &m), "吾輩は猫である。名前はまだ無い。");
        assert_eq!(rubies(text, &m), [("吾輩".into(), "わがはい".into()), ("名前".into(), "なまえ".into())]);
    }

    #[test]
    fn aozora_gaiji_in_base() {
        let text = "に気※［＃「火＋稻のつくり」、第4水準2-79-87］《きえん》を吐いて";
        let m = scan(text, true, false);
        assert_eq!(visible(text, &m), "に気※を吐いて");
        assert_eq!(rubies(text, &m)[0].1, "きえん");
        assert!(rubies(text, &m)[0].0.starts_with("気※［＃"));
    }

    #[test]
    fn aozora_unclosed_and_lone_bar_stay_text() {
        let text = "あ｜い\n漢《かん\n字》";
        let m = scan(text, true, false);
        assert_eq!(visible(text, &m), text);
        assert!(m.rubies.is_empty());
    }

    #[test]
    fn aozora_off_keeps_book_brackets() {
        let text = "读《西游记》";
        assert_eq!(visible(text, &scan(text, false, true)), text);
    }

    #[test]
    fn html_ruby_with_rp() {
        let text = "<ruby>漢字<rp>(</rp><rt>かんじ</rt><rp>)</rp></ruby>を<RUBY>書<rt>か</ruby>く";
        let m = scan(text, false, true);
        assert_eq!(visible(text, &m), "漢字を書く");
        assert_eq!(rubies(text, &m), [("漢字".into(), "かんじ".into()), ("書".into(), "か".into())]);
    }

    #[test]
    fn other_tags_stay_text() {
        let text = "a<b>c</b> <rubyx>";
        assert_eq!(visible(text, &scan(text, false, true)), text);
    }
}
