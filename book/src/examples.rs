//! Demonstrations (render format 3): for a term the model gets wrong, an earlier
//! source sentence and its checked translation in which the term was rendered as the
//! book renders it now, offered to assembly beside the glossary line.
//!
//! **The pool.** For a chapter, the book looks at the latest receipt of every
//! recorded chunk of the nearest [`EXAMPLE_CHAPTERS_BACK`] earlier chapters that have
//! any (never the chapter itself or a later one), assembled for the same reader, and
//! at each receipt's latest stored check. A term *needs* an example when one of those
//! checks found it missing, rendered wrongly or with a gender flag, or when the
//! book's `examples_set` names it in `always`; never when it names it in `never`. A *candidate* is
//! an item of those checks that rendered its term, with the term once in the source
//! chunk (one hit, injected, not one sense among several) and once in the
//! translation, so the hit and the
//! rendering anchor the pair: the source sentence around the hit and the translated
//! sentence around the rendering, each at most [`EXAMPLE_SOURCE_CHARS_MAX`] /
//! [`EXAMPLE_TARGET_CHARS_MAX`] chars. A candidate counts only if the post-check,
//! run now with the term's current rendering and forms on the translated sentence,
//! finds the rendering there (a renamed term's old sentences do not teach the new
//! name). Per term the first of the candidates in this order is offered: one that
//! shows the name declined (a form other than the rendering itself: the case a
//! chunk needs cannot be told from its source before it is translated, and the
//! declined forms are what a model gets wrong), the nearest chapter, the shortest
//! pair (chars), then the receipt id and the position in the chunk.
//!
//! What was read of each receipt (its reader, the terms its latest check failed, its
//! candidates) is kept between calls, shared by the book's assemblers, and read again
//! only when the receipt's check index has grown (at most [`EXAMPLE_EXTRACTS_MAX`]
//! receipts; past it the cache starts again): a call then costs a listing of the
//! chapters looked at, one probe of each receipt's check index, and the re-check of
//! the candidates of the terms that need an example.
//!
//! Everything here reads the ledger; assembly itself stays pure: it is given the
//! pool and decides what is shown ([`assembly::assemble::assemble_with`]), and the
//! receipt records what was shown, texts included, so a replay needs nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use ledger::Ledger;
use ledger_model::*;
use postcheck::{Rendering, Verdict as CheckVerdict};
use projections::{Reader, State};

use crate::chunks::{reader_of, receipt_in, text_in};
use crate::error::BookError;
use assembly::assemble::{Disposition, Example, Reason, EXAMPLES_FORMAT};

/// How many earlier chapters (those with recorded chunks, nearest first) the pool
/// looks at.
pub const EXAMPLE_CHAPTERS_BACK: usize = 8;
/// The longest source sentence an example may have, in chars.
pub const EXAMPLE_SOURCE_CHARS_MAX: usize = 80;
/// The longest translated sentence an example may have, in chars.
pub const EXAMPLE_TARGET_CHARS_MAX: usize = 240;

/// At most this many receipts' extracts are kept between calls
/// ([`SharedExtracts`]); past it the cache starts again.
pub const EXAMPLE_EXTRACTS_MAX: usize = 16_384;

/// What the pool read of each receipt, by receipt id, kept between calls and shared
/// by a book's assemblers: a receipt never changes and its check index only grows,
/// so an extract stays true while the index has no filing past the ones it read.
pub(crate) type SharedExtracts = Arc<Mutex<BTreeMap<Hash32, Arc<Extract>>>>;

/// What one receipt and its latest check give the pool.
pub(crate) struct Extract {
    reader: Reader,
    chapter: u32,
    /// How many checks the receipt had filed when this was read.
    filings: u32,
    /// Terms its latest check found missing, wrongly rendered or gender-flagged.
    needs: Vec<u32>,
    /// Candidates its latest check gives, by the rendering of that time.
    candidates: Vec<Candidate>,
}

/// The demonstrations offered at `chapter` to `reader`, at most one per term, by
/// term number; empty unless the book renders format 3. `extracts` keeps what was
/// read of each receipt between calls.
pub(crate) fn pool(
    ledger: &Ledger,
    state: &State,
    reader: &Reader,
    chapter: u32,
    extracts: &SharedExtracts,
) -> Result<Vec<Example>, BookError> {
    if state.assembly().render_format < EXAMPLES_FORMAT {
        return Ok(Vec::new());
    }
    // The latest receipt of every recorded chunk of the nearest earlier chapters that
    // have any, chapter by chapter downwards.
    let mut latest: Vec<(u32, Hash32)> = Vec::new();
    let mut n_chapters = 0;
    for earlier in (1..chapter).rev() {
        if n_chapters == EXAMPLE_CHAPTERS_BACK {
            break;
        }
        let mut of_chapter: Vec<(String, Hash32)> = Vec::new();
        for (_, key, _, id) in ledger.filed(Some(earlier))? {
            match of_chapter.last_mut() {
                Some(last) if last.0 == key => last.1 = id,
                _ => of_chapter.push((key, id)),
            }
        }
        if !of_chapter.is_empty() {
            n_chapters += 1;
            latest.extend(of_chapter.into_iter().map(|(_, id)| (earlier, id)));
        }
    }

    let mut needs: BTreeSet<u32> = BTreeSet::new();
    let mut candidates: BTreeMap<u32, Vec<Candidate>> = BTreeMap::new();
    for (receipt_chapter, receipt_id) in latest {
        let kept = extracts
            .lock()
            .map_err(|_| BookError::Invalid("the examples' cache is poisoned".into()))?
            .get(&receipt_id)
            .cloned();
        let extract = match kept {
            Some(extract) if !crate::check::has_filing(ledger, receipt_id, extract.filings)? => extract,
            _ => {
                let extract = Arc::new(extract(ledger, receipt_chapter, receipt_id)?);
                let mut kept = extracts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if kept.len() >= EXAMPLE_EXTRACTS_MAX {
                    kept.clear();
                }
                kept.insert(receipt_id, Arc::clone(&extract));
                extract
            }
        };
        if extract.reader != *reader {
            continue;
        }
        debug_assert_eq!(extract.chapter, receipt_chapter);
        needs.extend(extract.needs.iter().copied());
        for candidate in &extract.candidates {
            candidates.entry(candidate.example.term).or_default().push(candidate.clone());
        }
    }

    // The book's own word on a term comes before the post-check's (`examples_set`).
    if let Some((declared, _)) = state.examples() {
        needs.extend(declared.always.iter().map(|id| id.number()));
        for id in &declared.never {
            needs.remove(&id.number());
        }
    }
    let mut pool = Vec::new();
    for (term, mut offered) in candidates.into_iter().filter(|(term, _)| needs.contains(term)) {
        let Some(current) = RecordId::new(RecordKind::Term, term).and_then(|id| state.terms().get(&id)) else {
            continue;
        };
        if current.retired {
            continue;
        }
        let put = &current.put;
        let rendering = Rendering {
            term,
            dst: put.dst.clone(),
            decl: put.decl.clone(),
            gender: put.gender,
            kind: put.kind.clone(),
            source_count: 1,
            review: false,
        };
        offered.retain_mut(|candidate| {
            let check = postcheck::check(&candidate.example.target, std::slice::from_ref(&rendering));
            let Some(item) = check.items.first().filter(|item| item.verdict == CheckVerdict::Rendered) else {
                return false;
            };
            candidate.declined = item.found.iter().any(|found| found.form != put.dst);
            true
        });
        offered.sort_by(|a, b| {
            b.declined
                .cmp(&a.declined)
                .then(b.example.chapter.cmp(&a.example.chapter))
                .then(a.length().cmp(&b.length()))
                .then(a.example.receipt.0.cmp(&b.example.receipt.0))
                .then(a.at.cmp(&b.at))
        });
        if let Some(best) = offered.into_iter().next() {
            pool.push(best.example);
        }
    }
    Ok(pool)
}

/// What receipt `receipt_id` (of `chapter`) and its latest check give the pool.
fn extract(ledger: &Ledger, chapter: u32, receipt_id: Hash32) -> Result<Extract, BookError> {
    let (_, receipt) = receipt_in(ledger, &receipt_id.to_hex())?;
    let (filings, latest) = crate::check::latest_check_in(ledger, receipt_id)?;
    let mut extract =
        Extract { reader: reader_of(&receipt), chapter, filings, needs: Vec::new(), candidates: Vec::new() };
    let Some((check_id, stored)) = latest else { return Ok(extract) };
    let mut input: Option<String> = None;
    for item in &stored.check.items {
        let failed =
            matches!(item.verdict, CheckVerdict::Missing | CheckVerdict::WrongRendering) || !item.agreement.is_empty();
        if failed {
            extract.needs.push(item.term);
            continue;
        }
        let [found] = item.found.as_slice() else { continue };
        if item.verdict != CheckVerdict::Rendered || item.source_count != 1 {
            continue;
        }
        let mut hits = receipt.hits.iter().filter(|hit| hit.term == item.term);
        let (Some(hit), None) = (hits.next(), hits.next()) else { continue };
        // The hit must be the term's: injected, and not one sense among several.
        if hit.disposition == Disposition::Rejected || hit.reason == Some(Reason::SenseCollision) {
            continue;
        }
        let input = match &mut input {
            Some(input) => input,
            None => input.insert(text_in(ledger, receipt.input, "input")?),
        };
        let span = |(start, end): (u32, u32)| (start as usize, end as usize);
        let Some(source) = sentence_around(input, span(hit.bytes), source_ends) else { continue };
        let Some(target) = sentence_around(&stored.translation, span(found.bytes), target_ends) else { continue };
        if source.chars().count() > EXAMPLE_SOURCE_CHARS_MAX || target.chars().count() > EXAMPLE_TARGET_CHARS_MAX {
            continue;
        }
        extract.candidates.push(Candidate {
            example: Example {
                term: item.term,
                source: source.to_owned(),
                target: target.to_owned(),
                chapter,
                receipt: receipt_id,
                check: check_id,
            },
            at: hit.bytes.0,
            declined: false,
        });
    }
    Ok(extract)
}

/// An example found in a check, before it is chosen.
#[derive(Clone)]
pub(crate) struct Candidate {
    example: Example,
    /// Where the hit starts in its chunk.
    at: u32,
    /// The translated sentence shows the name in a form other than its rendering.
    declined: bool,
}

impl Candidate {
    fn length(&self) -> usize {
        self.example.source.chars().count() + self.example.target.chars().count()
    }
}

/// Where a sentence of a Chinese or Japanese source may end.
fn source_ends(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '!' | '?' | '…' | '；')
}

/// Where a sentence of a Russian translation may end.
fn target_ends(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

/// What may close a sentence after its last mark: quotes and brackets.
fn closes(c: char) -> bool {
    matches!(c, '」' | '』' | '”' | '"' | '’' | '）' | ')' | '»' | '】')
}

/// The sentence of `text` around the byte span `span`, trimmed: from just after the
/// mark (and the quotes closing it) that ends the sentence before, or a line break,
/// to the first mark at or after the span's end and the quotes closing it, or a line
/// break. `None` if the span is not on char boundaries of `text` or crosses a line.
fn sentence_around(text: &str, span: (usize, usize), ends: fn(char) -> bool) -> Option<&str> {
    let (start, end) = span;
    if start > end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return None;
    }
    if text[start..end].contains('\n') {
        return None;
    }
    // Backwards: the first line break or sentence end before the span, and the
    // quotes closing that sentence.
    let mut from = 0;
    let mut before = text[..start].char_indices().rev().peekable();
    while let Some((at, c)) = before.next() {
        if c == '\n' {
            from = at + c.len_utf8();
            break;
        }
        if ends(c) {
            from = at + c.len_utf8();
            break;
        }
        if closes(c) && before.peek().is_some_and(|&(_, mark)| ends(mark)) {
            from = at + c.len_utf8();
            break;
        }
    }
    let mut to = text.len();
    let mut after = text[end..].char_indices().peekable();
    while let Some((offset, c)) = after.next() {
        if c == '\n' {
            to = end + offset;
            break;
        }
        if ends(c) {
            to = end + offset + c.len_utf8();
            // A run of marks and the quotes closing them belong to the sentence.
            while let Some(&(next_offset, next)) = after.peek() {
                if ends(next) || closes(next) {
                    to = end + next_offset + next.len_utf8();
                    after.next();
                } else {
                    break;
                }
            }
            break;
        }
    }
    let sentence = text[from..to].trim();
    (!sentence.is_empty()).then_some(sentence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around<'a>(text: &'a str, needle: &str, ends: fn(char) -> bool) -> Option<&'a str> {
        let start = text.find(needle).expect("the needle is in the text");
        sentence_around(text, (start, start + needle.len()), ends)
    }

    #[test]
    fn a_source_sentence_runs_from_the_last_mark_to_the_next_with_its_quotes() {
        let text = "雨停了。沈照看着顾寒川，说：“回去。”他没有动。\n第二行。";
        assert_eq!(around(text, "顾寒川", source_ends), Some("沈照看着顾寒川，说：“回去。”"));
        assert_eq!(around(text, "没有", source_ends), Some("他没有动。"));
        assert_eq!(around(text, "雨", source_ends), Some("雨停了。"));
        assert_eq!(around(text, "第二", source_ends), Some("第二行。"));
    }

    #[test]
    fn a_sentence_without_a_closing_mark_ends_at_the_line() {
        let text = "「碇シンジ君」と彼は言った\n次の行";
        assert_eq!(around(text, "シンジ", source_ends), Some("「碇シンジ君」と彼は言った"));
    }

    #[test]
    fn a_target_sentence_is_cut_at_marks_and_keeps_its_closing_quote() {
        let text = "Дождь кончился. Шэнь Чжао посмотрела на Гу Ханьчуаня и сказала: «Назад!» Он не двинулся.";
        assert_eq!(
            around(text, "Гу Ханьчуаня", target_ends),
            Some("Шэнь Чжао посмотрела на Гу Ханьчуаня и сказала: «Назад!»")
        );
        assert_eq!(around(text, "двинулся", target_ends), Some("Он не двинулся."));
    }

    #[test]
    fn a_span_off_char_boundaries_or_across_lines_has_no_sentence() {
        let text = "沈照。\n顾寒川。";
        assert_eq!(sentence_around(text, (1, 3), source_ends), None);
        assert_eq!(sentence_around(text, (0, text.len()), source_ends), None);
        assert_eq!(sentence_around(text, (4, 2), source_ends), None);
    }
}
