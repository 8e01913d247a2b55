//! The decl-aware match of renderings in a translation, and the gender-agreement
//! look at the word after an occurrence.

use std::collections::BTreeMap;

use ledger_model::Gender;

use crate::{saturate, Agreement, Forms, Found, Rendering};

/// Folds one character for matching: lowercase, ё → е.
fn fold(c: char) -> impl Iterator<Item = char> {
    c.to_lowercase().map(|l| if l == 'ё' { 'е' } else { l })
}

/// A letter or digit of any script: no word boundary on either side of one.
fn is_word(c: char) -> bool {
    c.is_alphanumeric()
}

/// Whether `c` is a combining mark the fold absorbs: the stress marks U+0300 and
/// U+0301, the breve of a decomposed й and the diaeresis of a decomposed ё.
fn is_absorbed_mark(c: char) -> bool {
    matches!(c, '\u{300}' | '\u{301}' | '\u{306}' | '\u{308}')
}

/// Folds `text` for matching: [`fold`] per character, a stress mark dropped, и with a
/// combining breve read as й, е with a combining diaeresis as е. Each folded character
/// comes with the byte span of the original characters it stands for.
fn fold_str(text: &str) -> (Vec<char>, Vec<(usize, usize)>) {
    let mut chars: Vec<char> = Vec::with_capacity(text.len());
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(text.len());
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        if is_absorbed_mark(c) {
            if let (Some(last), Some(span)) = (chars.last_mut(), spans.last_mut()) {
                match (c, *last) {
                    ('\u{300}' | '\u{301}', _) | ('\u{308}', 'е') => {
                        span.1 = end;
                        continue;
                    }
                    ('\u{306}', 'и') => {
                        *last = 'й';
                        span.1 = end;
                        continue;
                    }
                    _ => {}
                }
            }
        }
        for folded in fold(c) {
            chars.push(folded);
            spans.push((start, end));
        }
    }
    (chars, spans)
}

/// The translation folded, each folded character with the byte span of the original
/// characters it came from.
struct Text {
    chars: Vec<char>,
    spans: Vec<(usize, usize)>,
}

impl Text {
    fn new(text: &str) -> Text {
        let (chars, spans) = fold_str(text);
        Text { chars, spans }
    }
}

/// A form folded and split into words.
struct Pattern {
    form: String,
    words: Vec<Vec<char>>,
    declared: bool,
}

impl Pattern {
    fn new(form: &str, declared: bool) -> Option<Pattern> {
        let words: Vec<Vec<char>> = form.split_whitespace().map(|w| fold_str(w).0).collect();
        if words.is_empty() {
            return None;
        }
        Some(Pattern { form: form.to_owned(), words, declared })
    }

    fn folded_len(&self) -> usize {
        self.words.iter().map(Vec::len).sum::<usize>() + self.words.len()
    }

    fn first(&self) -> char {
        self.words[0][0]
    }

    /// Where a match starting at `at` ends (exclusive), if the form matches there on
    /// word boundaries.
    fn match_at(&self, text: &[char], at: usize) -> Option<usize> {
        if is_word(self.first()) && at > 0 && is_word(text[at - 1]) {
            return None;
        }
        let mut p = at;
        for (k, word) in self.words.iter().enumerate() {
            if k > 0 {
                let gap = p;
                while p < text.len() && text[p].is_whitespace() {
                    p += 1;
                }
                if p == gap {
                    return None;
                }
            }
            if !text[p..].starts_with(word) {
                return None;
            }
            p += word.len();
        }
        let last = *self.words.last()?.last()?;
        if is_word(last) && p < text.len() && is_word(text[p]) {
            return None;
        }
        Some(p)
    }
}

/// A rendering's patterns: declared ones first, then generated ones, each group
/// longest first.
struct Compiled {
    declared: Vec<Pattern>,
    generated: Vec<Pattern>,
}

impl Compiled {
    fn new(rendering: &Rendering, forms: &Forms) -> Compiled {
        let mut declared: Vec<Pattern> = std::iter::once(&rendering.dst)
            .chain(&rendering.decl)
            .filter_map(|form| Pattern::new(form, true))
            .collect();
        let mut generated: Vec<Pattern> = forms
            .forms
            .iter()
            .filter_map(|form| Pattern::new(form, false))
            .filter(|g| !declared.iter().any(|d| d.words == g.words))
            .collect();
        declared.sort_by_key(|p| std::cmp::Reverse(p.folded_len()));
        generated.sort_by_key(|p| std::cmp::Reverse(p.folded_len()));
        Compiled { declared, generated }
    }

    /// The longest declared match at `at`, else the longest generated one.
    fn best_at(&self, text: &[char], at: usize) -> Option<(usize, &Pattern)> {
        longest_at(&self.declared, text, at).or_else(|| longest_at(&self.generated, text, at))
    }
}

/// The first (longest) of `patterns` that matches at `at`.
fn longest_at<'p>(patterns: &'p [Pattern], text: &[char], at: usize) -> Option<(usize, &'p Pattern)> {
    patterns.iter().filter(|p| p.first() == text[at]).find_map(|p| p.match_at(text, at).map(|end| (end, p)))
}

/// The non-overlapping occurrences of every rendering, left to right: at each
/// position the longest match of any rendering wins (every rendering matching that
/// far gets the occurrence), and the scan resumes after it.
pub(crate) fn occurrences(translation: &str, renderings: &[Rendering], generated: &[Forms]) -> Vec<Vec<Found>> {
    let text = Text::new(translation);
    let compiled: Vec<Compiled> = renderings.iter().zip(generated).map(|(r, f)| Compiled::new(r, f)).collect();
    let mut by_first: BTreeMap<char, Vec<usize>> = BTreeMap::new();
    for (index, c) in compiled.iter().enumerate() {
        let mut firsts: Vec<char> = c.declared.iter().chain(&c.generated).map(Pattern::first).collect();
        firsts.sort_unstable();
        firsts.dedup();
        for first in firsts {
            by_first.entry(first).or_default().push(index);
        }
    }
    let mut found: Vec<Vec<Found>> = vec![Vec::new(); renderings.len()];
    let mut at = 0;
    while at < text.chars.len() {
        let mut best_end = 0;
        let mut winners: Vec<(usize, &Pattern)> = Vec::new();
        for &index in by_first.get(&text.chars[at]).map(Vec::as_slice).unwrap_or_default() {
            if let Some((end, pattern)) = compiled[index].best_at(&text.chars, at) {
                if end > best_end {
                    best_end = end;
                    winners.clear();
                }
                if end == best_end {
                    winners.push((index, pattern));
                }
            }
        }
        if winners.is_empty() {
            at += 1;
            continue;
        }
        let bytes = (saturate(text.spans[at].0), saturate(text.spans[best_end - 1].1));
        for (index, pattern) in winners {
            found[index].push(Found { form: pattern.form.clone(), bytes, declared: pattern.declared });
        }
        // A match ends inside the expansion of one original character only if that
        // character folds to several; resume after the whole character.
        let end_byte = text.spans[best_end - 1].1;
        at = best_end;
        while at < text.chars.len() && text.spans[at].0 < end_byte {
            at += 1;
        }
    }
    found
}

/// Adverbs and particles that may stand between a name and its verb.
const SKIPPABLE: &[&str] = &[
    "не",
    "уже",
    "ещё",
    "еще",
    "вдруг",
    "тихо",
    "снова",
    "вновь",
    "тоже",
    "также",
    "же",
    "лишь",
    "только",
    "сразу",
    "наконец",
    "медленно",
    "быстро",
    "громко",
    "холодно",
    "спокойно",
    "молча",
    "всё",
    "все",
    "ведь",
    "даже",
];

/// The word after the whitespace that follows `from`, as (start, end) bytes.
fn next_word(text: &str, from: usize) -> Option<(usize, usize)> {
    let rest = text.get(from..)?;
    let gap: usize = rest.chars().take_while(|c| c.is_whitespace()).map(char::len_utf8).sum();
    if gap == 0 {
        return None;
    }
    let start = from + gap;
    let len: usize =
        text[start..].chars().take_while(|c| is_word(*c) || is_absorbed_mark(*c)).map(char::len_utf8).sum();
    if len == 0 {
        return None;
    }
    Some((start, start + len))
}

/// The gender a past-tense verb's or short adjective's ending marks, if any.
fn marked_gender(word: &str) -> Option<Gender> {
    let first = word.chars().next()?;
    if !first.is_lowercase() {
        return None;
    }
    let folded: String = fold_str(word).0.into_iter().collect();
    let letters = folded.chars().count();
    let ends = |ending: &str| folded.ends_with(ending);
    if (ends("лась") && letters >= 5) || (ends("ла") && letters >= 3) {
        return Some(Gender::Feminine);
    }
    if (ends("лся") && letters >= 5) || (ends("л") && letters >= 3) {
        return Some(Gender::Masculine);
    }
    if letters >= 5 && (ends("на") || ends("ова") || ends("ева") || ends("ива")) {
        return Some(Gender::Feminine);
    }
    if letters >= 5 && (ends("ен") || ends("ов") || ends("ев") || ends("ив")) {
        return Some(Gender::Masculine);
    }
    None
}

/// A word right after the occurrence ending at byte `end` (skipping at most one
/// word of [`SKIPPABLE`]) whose ending marks the other gender than `gender`.
pub(crate) fn disagreement(text: &str, end: u32, gender: Gender) -> Option<Agreement> {
    let (mut start, mut stop) = next_word(text, end as usize)?;
    let folded: String = fold_str(&text[start..stop]).0.into_iter().collect();
    if SKIPPABLE.contains(&folded.as_str()) {
        (start, stop) = next_word(text, stop)?;
    }
    let word = &text[start..stop];
    let found = marked_gender(word)?;
    let other = match gender {
        Gender::Masculine => Gender::Feminine,
        Gender::Feminine => Gender::Masculine,
        Gender::Neuter | Gender::Plural => return None,
    };
    (found == other).then(|| Agreement {
        word: word.to_owned(),
        bytes: (saturate(start), saturate(stop)),
        expected: gender,
        found,
    })
}
