//! TMX 1.4b: a translation memory of what was translated. The book gathers the pairs
//! (a chunk's source text and its checked translation, with where each comes from)
//! and this module writes them as bytes; lorebank does not read TMX.
//!
//! * [`sentences`] splits a text into sentences by a [`SentenceRule`] (zh and ja
//!   share one, ru has its own), keeping every character: the pieces joined are the
//!   text.
//! * [`write`] writes a [`TmxInput`]: one `<tu>` per pair, or one per sentence where
//!   both sides split into the same number (two or more) of sentences; each carries
//!   the dates and actors of its [`Pair`] and `<prop>`s naming its [`Origin`].
//! * [`tmx_date`] is the TMX form of a time (`YYYYMMDDThhmmssZ`).
//!
//! A text that holds a character XML 1.0 cannot hold (a C0 control other than tab,
//! line feed and carriage return, U+FFFE or U+FFFF) cannot be written without
//! changing it, so its pair is left out and named in [`TmxWritten::refused`]. A
//! carriage return is written as `&#13;`, which a parser keeps (a literal one would
//! become a line feed). docs/formats.md describes the document.

use ledger_model::Hash32;

/// The value of `creationtool` and of `o-tmf` in the header.
pub const CREATION_TOOL: &str = "lorebank";
/// The `adminlang` of the header: the language of the `<prop>` names.
pub const ADMIN_LANG: &str = "en";

/// The `type` of each provenance `<prop>`, in the order a `<tu>` lists them.
pub mod prop {
    /// The chapter of the chunk.
    pub const CHAPTER: &str = "x-lorebank-chapter";
    /// The chunk key within its chapter.
    pub const CHUNK: &str = "x-lorebank-chunk";
    /// The receipt id (`lorebank replay RECEIPT`).
    pub const RECEIPT: &str = "x-lorebank-receipt";
    /// The snapshot id the receipt was assembled at.
    pub const SNAPSHOT: &str = "x-lorebank-snapshot";
    /// The id of the stored post-check the translation comes from.
    pub const CHECK: &str = "x-lorebank-check";
    /// `n/N` for the nth of N sentence units of one chunk (sentence units only).
    pub const SENTENCE: &str = "x-lorebank-sentence";
}

/// How a language's text is split into sentences. Two rules, told apart by what ends
/// a sentence:
///
/// | text | [`SentenceRule::Cjk`] | [`SentenceRule::Russian`] |
/// | --- | --- | --- |
/// | `他来了。她走了。` | `他来了。` `她走了。` | one sentence (no `.`, `!`, `?`, `…`) |
/// | `Он пришёл. Она ушла.` | one sentence (no `。`, `！`, `？`, `…`) | `Он пришёл. ` `Она ушла.` |
/// | `Я... не знаю.` | one sentence | one sentence: a lowercase letter follows |
/// | `3.14 и т.д.` | one sentence | one sentence: no space after the stop |
///
/// In both, a sentence ends after a run of its terminators and the closing quotes
/// and brackets right after them, and takes the white space that follows; a line
/// break ends a sentence whatever precedes it. When unsure which to pick, pick by the
/// text's language ([`SentenceRule::for_lang`]); a language without a rule is not
/// split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SentenceRule {
    /// Chinese and Japanese: a sentence ends after `。`, `！`, `？`, `!`, `?`, `…`, `‥`
    /// or `｡` (a run of them), and the closing quotes and brackets that follow
    /// (`」』”’）)》〉】〕］]｣"'`), whatever comes next.
    Cjk,
    /// Russian: a sentence ends after `.`, `!`, `?` or `…` (a run of them: `?!`,
    /// `...`), and the closing quotes and brackets that follow (`»”“’")]`), when
    /// white space follows and the next text does not start with a lowercase letter;
    /// or at the end of the text.
    Russian,
}

impl SentenceRule {
    /// The rule of a language tag, by its primary subtag (`zh`, `zh-Hans`, `ja`,
    /// `ru`, any case); `None` for any other language (its text is not split).
    pub fn for_lang(lang: &str) -> Option<SentenceRule> {
        let primary = lang.split(['-', '_']).next().unwrap_or("");
        if primary.eq_ignore_ascii_case("zh") || primary.eq_ignore_ascii_case("ja") {
            Some(SentenceRule::Cjk)
        } else if primary.eq_ignore_ascii_case("ru") {
            Some(SentenceRule::Russian)
        } else {
            None
        }
    }

    fn terminator(self, c: char) -> bool {
        match self {
            SentenceRule::Cjk => matches!(c, '。' | '！' | '？' | '!' | '?' | '…' | '‥' | '｡'),
            SentenceRule::Russian => matches!(c, '.' | '!' | '?' | '…'),
        }
    }

    fn closer(self, c: char) -> bool {
        match self {
            SentenceRule::Cjk => {
                matches!(
                    c,
                    '」' | '』'
                        | '”'
                        | '’'
                        | '）'
                        | ')'
                        | '》'
                        | '〉'
                        | '】'
                        | '〕'
                        | '］'
                        | ']'
                        | '｣'
                        | '"'
                        | '\''
                )
            }
            SentenceRule::Russian => matches!(c, '»' | '”' | '“' | '’' | '"' | ')' | ']'),
        }
    }
}

/// Whether `c` breaks a line.
fn line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// `text` split into sentences by `rule`: consecutive, non-empty pieces that joined
/// give `text` back. Each piece keeps the white space after it (white space before
/// the first sentence belongs to it), so every piece holds something other than
/// white space, except the one piece of a text of nothing but white space. An empty
/// text has no sentence.
pub fn sentences(text: &str, rule: SentenceRule) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |index: usize| chars.get(index).map_or(text.len(), |&(byte, _)| byte);
    let mut pieces = Vec::new();
    let mut start = 0; // byte where the current sentence starts
    let mut has_content = false; // whether it holds anything but white space yet
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index].1;
        if rule.terminator(c) {
            let mut end = index;
            while end < chars.len() && rule.terminator(chars[end].1) {
                end += 1;
            }
            while end < chars.len() && rule.closer(chars[end].1) {
                end += 1;
            }
            let mut next = end;
            while next < chars.len() && chars[next].1.is_whitespace() {
                next += 1;
            }
            let ends = match rule {
                SentenceRule::Cjk => true,
                SentenceRule::Russian => next == chars.len() || (next > end && !chars[next].1.is_lowercase()),
            };
            if ends {
                pieces.push(&text[start..byte_at(next)]);
                start = byte_at(next);
                has_content = false;
                index = next;
            } else {
                // The white space after it is read on its own: a line break in it
                // still ends the sentence.
                has_content = true;
                index = end;
            }
            continue;
        }
        if line_break(c) && has_content {
            let mut next = index;
            while next < chars.len() && chars[next].1.is_whitespace() {
                next += 1;
            }
            pieces.push(&text[start..byte_at(next)]);
            start = byte_at(next);
            has_content = false;
            index = next;
            continue;
        }
        has_content |= !c.is_whitespace();
        index += 1;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// When and by whom a unit was created or last changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Unix milliseconds.
    pub at_ms: u64,
    /// Who (an actor, `human:anna`).
    pub by: String,
}

/// Where a pair comes from, written as the `<prop>`s of its units ([`prop`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The chapter.
    pub chapter: u32,
    /// The chunk key.
    pub chunk_key: String,
    /// The receipt of the chunk.
    pub receipt: Hash32,
    /// The snapshot the receipt was assembled at.
    pub snapshot: Hash32,
    /// The stored check the translation comes from.
    pub check: Hash32,
}

/// One chunk's source text and its translation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The source text.
    pub source: String,
    /// The translation.
    pub target: String,
    /// `creationdate` and `creationid`, when known.
    pub created: Option<Stamp>,
    /// `changedate` and `changeid`, when known.
    pub changed: Option<Stamp>,
    /// Where it comes from.
    pub origin: Origin,
}

/// What a TMX export writes: the pairs, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmxInput {
    /// `creationtoolversion`.
    pub tool_version: String,
    /// The language of the sources (`srclang`, and their `xml:lang`).
    pub source_lang: String,
    /// The language of the translations.
    pub target_lang: String,
    /// The pairs.
    pub pairs: Vec<Pair>,
}

/// Which side of a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The source text.
    Source,
    /// The translation.
    Target,
}

impl Side {
    /// `source` or `translation`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "translation",
        }
    }
}

/// A pair left out: one of its texts holds a character XML 1.0 cannot hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The pair's index in [`TmxInput::pairs`].
    pub pair: usize,
    /// The text.
    pub side: Side,
    /// The first such character in it.
    pub character: char,
}

/// How a pair was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// One unit for the whole pair (`segtype="paragraph"`).
    Whole,
    /// One unit per sentence, this many.
    Sentences(usize),
    /// Left out (see [`TmxWritten::refused`]).
    Refused,
}

/// The document and what became of each pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmxWritten {
    /// The document: UTF-8, `\n` line ends.
    pub bytes: Vec<u8>,
    /// Per pair of the input, in order, how it was written.
    pub written: Vec<Written>,
    /// The pairs left out, in order.
    pub refused: Vec<Refused>,
}

impl TmxWritten {
    /// The `<tu>` elements written.
    pub fn n_units(&self) -> usize {
        self.written
            .iter()
            .map(|written| match written {
                Written::Whole => 1,
                Written::Sentences(n) => *n,
                Written::Refused => 0,
            })
            .sum()
    }
}

/// Whether XML 1.0 allows `c` in a document.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// The first character of `text` that XML 1.0 cannot hold, if any: a C0 control
/// other than tab, line feed and carriage return, U+FFFE or U+FFFF (a Rust string
/// holds no surrogate).
pub fn unrepresentable(text: &str) -> Option<char> {
    text.chars().find(|&c| !xml_char(c))
}

/// `text` as character data. A carriage return is a reference (a parser keeps it).
fn escape_text(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
}

/// `value` as an attribute value between double quotes: white space other than the
/// space as references (a parser would turn it into spaces), characters XML cannot
/// hold dropped (the caller checks that none is there).
fn escape_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if xml_char(c) => out.push(c),
            _ => {}
        }
    }
    out
}

/// `at_ms` (unix milliseconds) in TMX's form, `YYYYMMDDThhmmssZ` (UTC, the
/// milliseconds dropped); `None` past the year 9999, which the form cannot hold.
pub fn tmx_date(at_ms: u64) -> Option<String> {
    let seconds = at_ms / 1000;
    let (year, month, day) = civil_from_days(seconds / 86_400);
    if year > 9999 {
        return None;
    }
    let second_of_day = seconds % 86_400;
    Some(format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    ))
}

/// The proleptic Gregorian date of `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468; // days since 0000-03-01
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// How one pair is to be written.
enum Plan<'a> {
    Refused,
    Whole,
    Sentences(Vec<(&'a str, &'a str)>),
}

/// How a pair splits: its sentences on both sides, each without the white space
/// around it, when both split into the same number, two or more, of sentences with
/// something besides white space in each; else the whole pair.
fn plan(pair: &Pair, source: Option<SentenceRule>, target: Option<SentenceRule>) -> Plan<'_> {
    let (Some(source), Some(target)) = (source, target) else { return Plan::Whole };
    let sources = sentences(&pair.source, source);
    let targets = sentences(&pair.target, target);
    if sources.len() < 2 || sources.len() != targets.len() {
        return Plan::Whole;
    }
    let units: Vec<(&str, &str)> = sources.iter().zip(&targets).map(|(s, t)| (s.trim(), t.trim())).collect();
    if units.iter().all(|(s, t)| !s.is_empty() && !t.is_empty()) {
        Plan::Sentences(units)
    } else {
        Plan::Whole
    }
}

/// Writes `input` as a TMX 1.4b document (see the module's documentation and
/// docs/formats.md). The same input gives the same bytes.
pub fn write(input: &TmxInput) -> TmxWritten {
    let source_rule = SentenceRule::for_lang(&input.source_lang);
    let target_rule = SentenceRule::for_lang(&input.target_lang);
    let mut refused = Vec::new();
    let mut plans = Vec::with_capacity(input.pairs.len());
    for (pair_idx, pair) in input.pairs.iter().enumerate() {
        let bad = unrepresentable(&pair.source)
            .map(|c| (Side::Source, c))
            .or_else(|| unrepresentable(&pair.target).map(|c| (Side::Target, c)));
        match bad {
            Some((side, character)) => {
                refused.push(Refused { pair: pair_idx, side, character });
                plans.push(Plan::Refused);
            }
            None => plans.push(plan(pair, source_rule, target_rule)),
        }
    }
    let any_sentences = plans.iter().any(|plan| matches!(plan, Plan::Sentences(_)));
    let header_segtype = if any_sentences { "sentence" } else { "paragraph" };
    let source_lang = escape_attribute(&input.source_lang);
    let target_lang = escape_attribute(&input.target_lang);

    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<!DOCTYPE tmx SYSTEM \"tmx14.dtd\">\n");
    out.push_str("<tmx version=\"1.4\">\n");
    out.push_str(&format!(
        "  <header creationtool=\"{CREATION_TOOL}\" creationtoolversion=\"{}\" segtype=\"{header_segtype}\" \
         o-tmf=\"{CREATION_TOOL}\" adminlang=\"{ADMIN_LANG}\" srclang=\"{source_lang}\" datatype=\"plaintext\"/>\n",
        escape_attribute(&input.tool_version)
    ));
    out.push_str("  <body>\n");
    let langs = (source_lang.as_str(), target_lang.as_str());
    let mut written = Vec::with_capacity(input.pairs.len());
    for (pair, plan) in input.pairs.iter().zip(&plans) {
        let receipt = pair.origin.receipt.to_hex();
        match plan {
            Plan::Refused => written.push(Written::Refused),
            Plan::Sentences(units) => {
                for (unit_idx, texts) in units.iter().enumerate() {
                    let tuid = format!("{receipt}/{}", unit_idx + 1);
                    let sentence = format!("{}/{}", unit_idx + 1, units.len());
                    unit(&mut out, pair, &tuid, None, Some(&sentence), *texts, langs);
                }
                written.push(Written::Sentences(units.len()));
            }
            Plan::Whole => {
                let segtype = any_sentences.then_some("paragraph");
                unit(&mut out, pair, &receipt, segtype, None, (&pair.source, &pair.target), langs);
                written.push(Written::Whole);
            }
        }
    }
    out.push_str("  </body>\n</tmx>\n");
    TmxWritten { bytes: out.into_bytes(), written, refused }
}

/// One `<tu>`: its attributes, provenance props and two variants.
fn unit(
    out: &mut String,
    pair: &Pair,
    tuid: &str,
    segtype: Option<&str>,
    sentence: Option<&str>,
    (source, target): (&str, &str),
    (source_lang, target_lang): (&str, &str),
) {
    out.push_str(&format!("    <tu tuid=\"{}\"", escape_attribute(tuid)));
    if let Some(segtype) = segtype {
        out.push_str(&format!(" segtype=\"{segtype}\""));
    }
    for (stamp, date, id) in [(&pair.created, "creationdate", "creationid"), (&pair.changed, "changedate", "changeid")]
    {
        if let Some(stamp) = stamp {
            if let Some(at) = tmx_date(stamp.at_ms) {
                out.push_str(&format!(" {date}=\"{at}\""));
            }
            out.push_str(&format!(" {id}=\"{}\"", escape_attribute(&stamp.by)));
        }
    }
    out.push_str(">\n");
    let origin = &pair.origin;
    let props = [
        (prop::CHAPTER, origin.chapter.to_string()),
        (prop::CHUNK, origin.chunk_key.clone()),
        (prop::RECEIPT, origin.receipt.to_hex()),
        (prop::SNAPSHOT, origin.snapshot.to_hex()),
        (prop::CHECK, origin.check.to_hex()),
    ];
    for (kind, value) in
        props.iter().map(|(kind, value)| (*kind, value.as_str())).chain(sentence.map(|n| (prop::SENTENCE, n)))
    {
        out.push_str(&format!("      <prop type=\"{kind}\">"));
        escape_text(value, out);
        out.push_str("</prop>\n");
    }
    for (lang, text) in [(source_lang, source), (target_lang, target)] {
        out.push_str(&format!("      <tuv xml:lang=\"{lang}\"><seg>"));
        escape_text(text, out);
        out.push_str("</seg></tuv>\n");
    }
    out.push_str("    </tu>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_in_the_tmx_form() {
        assert_eq!(tmx_date(0).as_deref(), Some("19700101T000000Z"));
        assert_eq!(tmx_date(951_782_400_000).as_deref(), Some("20000229T000000Z"));
        assert_eq!(tmx_date(1_700_000_000_999).as_deref(), Some("20231114T221320Z"));
        assert_eq!(tmx_date(253_402_300_799_000).as_deref(), Some("99991231T235959Z"));
        assert_eq!(tmx_date(253_402_300_800_000), None);
        assert_eq!(tmx_date(u64::MAX), None);
    }
}
