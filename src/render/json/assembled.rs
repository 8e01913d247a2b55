//! The JSON form of an assembled chunk as typed structures, serialized straight to
//! bytes: the server answers thousands of these a second, and a `serde_json::Value`
//! tree of every hit cost an allocation per key and value before a byte was written.
//!
//! The members of every object are declared in the order serde_json's map gives a
//! `Value` (sorted by key), so the bytes are those the `json!` form made, and
//! `--json` (which prints the `Value` of the same structures) keeps its form.
//! `tests::members_come_in_the_order_of_a_value` holds every object to that.

use book::assemble::{
    Assembly, CascadeDecision, Disposition, HitRecord, Injected, InjectedExample, InjectedRule, Reason, RetrievalState,
    RuleDecision, Via,
};
use book::Assembled;
use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde::Serialize as Derive;

/// A record number as its id (`T-3`), written without a `String` of its own.
struct Id(char, u32);

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{}-{}", self.0, self.1))
    }
}

/// Record numbers as ids.
struct Ids<'a>(char, &'a [u32]);

impl Serialize for Ids<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.1.len()))?;
        for number in self.1 {
            seq.serialize_element(&Id(self.0, *number))?;
        }
        seq.end()
    }
}

/// A list whose elements are serialized as `each` makes them.
struct Each<'a, T, F>(&'a [T], F);

impl<'a, T, F, E> Serialize for Each<'a, T, F>
where
    F: Fn(&'a T) -> E,
    E: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(&(self.1)(item))?;
        }
        seq.end()
    }
}

/// A hit, as an assembly and a receipt show it alike (a receipt adds its version).
#[derive(Derive)]
pub(super) struct Hit<'a> {
    bytes: [u32; 2],
    chars: [u32; 2],
    disposition: Disposition,
    reason: Option<Reason>,
    term: Id,
    text: &'a str,
}

impl<'a> Hit<'a> {
    fn of(hit: &'a HitRecord) -> Hit<'a> {
        Hit::new(hit.term, &hit.text, hit.bytes, hit.chars, hit.disposition, hit.reason)
    }

    pub(super) fn new(
        term: u32,
        text: &'a str,
        bytes: (u32, u32),
        chars: (u32, u32),
        disposition: Disposition,
        reason: Option<Reason>,
    ) -> Hit<'a> {
        Hit { bytes: [bytes.0, bytes.1], chars: [chars.0, chars.1], disposition, reason, term: Id('T', term), text }
    }
}

#[derive(Derive)]
struct Entry<'a> {
    line: &'a str,
    term: Id,
    tokens: u32,
    unverified: bool,
    via: Via,
}

impl<'a> Entry<'a> {
    fn of(entry: &'a Injected) -> Entry<'a> {
        Entry {
            line: &entry.line,
            term: Id('T', entry.term),
            tokens: entry.tokens,
            unverified: entry.unverified,
            via: entry.via,
        }
    }
}

#[derive(Derive)]
struct Rule {
    disposition: Disposition,
    reason: Option<Reason>,
    rule: Id,
}

impl Rule {
    fn of(decision: &RuleDecision) -> Rule {
        Rule { disposition: decision.disposition, reason: decision.reason, rule: Id('R', decision.rule) }
    }
}

/// A record a cascade found, as an assembly and a receipt show it alike (a receipt
/// adds its version).
#[derive(Derive)]
pub(super) struct Cascaded {
    by: String,
    depth: u8,
    disposition: Disposition,
    reason: Option<Reason>,
    term: Id,
}

impl Cascaded {
    fn of(decision: &CascadeDecision) -> Cascaded {
        Cascaded::new(decision.term, decision.by, decision.depth, decision.disposition, decision.reason)
    }

    pub(super) fn new(
        term: u32,
        by: ledger_model::RecordId,
        depth: u8,
        disposition: Disposition,
        reason: Option<Reason>,
    ) -> Cascaded {
        Cascaded { by: by.to_string(), depth, disposition, reason, term: Id('T', term) }
    }
}

/// A demonstration shown (render format 3), with where it comes from.
#[derive(Derive)]
struct ExampleLine<'a> {
    chapter: u32,
    check: String,
    line: &'a str,
    receipt: String,
    source: &'a str,
    target: &'a str,
    term: Id,
    tokens: u32,
}

impl<'a> ExampleLine<'a> {
    fn of(shown: &'a InjectedExample) -> ExampleLine<'a> {
        let example = &shown.example;
        ExampleLine {
            chapter: example.chapter,
            check: example.check.to_hex(),
            line: &shown.line,
            receipt: example.receipt.to_hex(),
            source: &example.source,
            target: &example.target,
            term: Id('T', example.term),
            tokens: shown.tokens,
        }
    }
}

#[derive(Derive)]
struct RuleLine<'a> {
    line: &'a str,
    rule: Id,
    tokens: u32,
    unverified: bool,
}

impl<'a> RuleLine<'a> {
    fn of(rule: &'a InjectedRule) -> RuleLine<'a> {
        RuleLine { line: &rule.line, rule: Id('R', rule.rule), tokens: rule.tokens, unverified: rule.unverified }
    }
}

/// [`RetrievalState`] with its members sorted (its own `Serialize` keeps their
/// declared order).
#[derive(Derive)]
struct Retrieval {
    embedding_tier_used: bool,
    n_ambiguous: u32,
    n_budget_evicted: u32,
    n_constant: u32,
    n_exact_hits: u32,
    n_spoiler_blocked: u32,
    n_sticky: u32,
}

impl Retrieval {
    fn of(state: &RetrievalState) -> Retrieval {
        let RetrievalState {
            n_exact_hits,
            n_sticky,
            n_constant,
            n_ambiguous,
            n_spoiler_blocked,
            n_budget_evicted,
            embedding_tier_used,
        } = *state;
        Retrieval {
            embedding_tier_used,
            n_ambiguous,
            n_budget_evicted,
            n_constant,
            n_exact_hits,
            n_spoiler_blocked,
            n_sticky,
        }
    }
}

type HitsOf<'a> = Each<'a, HitRecord, fn(&'a HitRecord) -> Hit<'a>>;
type EntriesOf<'a> = Each<'a, Injected, fn(&'a Injected) -> Entry<'a>>;
type RulesOf<'a> = Each<'a, RuleDecision, fn(&'a RuleDecision) -> Rule>;
type RuleLinesOf<'a> = Each<'a, InjectedRule, fn(&'a InjectedRule) -> RuleLine<'a>>;
type CascadeOf<'a> = Each<'a, CascadeDecision, fn(&'a CascadeDecision) -> Cascaded>;
type ExamplesOf<'a> = Each<'a, InjectedExample, fn(&'a InjectedExample) -> ExampleLine<'a>>;

fn no_cascade(cascade: &CascadeOf<'_>) -> bool {
    cascade.0.is_empty()
}

fn no_examples(examples: &ExamplesOf<'_>) -> bool {
    examples.0.is_empty()
}

/// An assembly: the context, what was found and decided, what was injected.
#[derive(Derive)]
pub struct AssemblyAnswer<'a> {
    /// Only when a cascade found something: a book that does not cascade keeps its
    /// answers byte for byte.
    #[serde(skip_serializing_if = "no_cascade")]
    cascade: CascadeOf<'a>,
    context: &'a str,
    evicted: Ids<'a>,
    /// Only when a demonstration was shown (render format 3).
    #[serde(skip_serializing_if = "no_examples")]
    examples: ExamplesOf<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hits: Option<HitsOf<'a>>,
    injected: EntriesOf<'a>,
    injected_rules: RuleLinesOf<'a>,
    retrieval_state: Retrieval,
    rules: RulesOf<'a>,
    sticky_in: Ids<'a>,
    summaries: Ids<'a>,
}

impl<'a> AssemblyAnswer<'a> {
    /// `assembly`, with its hit list unless `hits` is false.
    pub fn of(assembly: &'a Assembly, hits: bool) -> AssemblyAnswer<'a> {
        AssemblyAnswer {
            cascade: Each(&assembly.cascade[..], Cascaded::of),
            context: &assembly.context,
            evicted: Ids('T', &assembly.evicted),
            examples: Each(&assembly.examples[..], ExampleLine::of),
            hits: hits.then(|| Each(&assembly.hits[..], Hit::of as fn(&'a HitRecord) -> Hit<'a>)),
            injected: Each(&assembly.injected[..], Entry::of),
            injected_rules: Each(&assembly.injected_rules[..], RuleLine::of),
            retrieval_state: Retrieval::of(&assembly.retrieval),
            rules: Each(&assembly.rules[..], Rule::of),
            sticky_in: Ids('T', &assembly.sticky_in),
            summaries: Ids('S', &assembly.summaries),
        }
    }
}

/// An assembled chunk with its receipt: the assembly's members and the receipt's,
/// in one object.
#[derive(Derive)]
pub struct AssembledAnswer<'a> {
    #[serde(skip_serializing_if = "no_cascade")]
    cascade: CascadeOf<'a>,
    chapter: u32,
    chunk: &'a str,
    context: &'a str,
    evicted: Ids<'a>,
    /// Only when a demonstration was shown (render format 3).
    #[serde(skip_serializing_if = "no_examples")]
    examples: ExamplesOf<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hits: Option<HitsOf<'a>>,
    injected: EntriesOf<'a>,
    injected_rules: RuleLinesOf<'a>,
    party: Option<&'a str>,
    prev: Option<String>,
    receipt: String,
    recorded: bool,
    retrieval_state: Retrieval,
    revision: u64,
    rules: RulesOf<'a>,
    snapshot: String,
    sticky_in: Ids<'a>,
    summaries: Ids<'a>,
}

impl<'a> AssembledAnswer<'a> {
    /// `assembled`, recorded or not, with its hit list unless `hits` is false.
    pub fn of(assembled: &'a Assembled, recorded: bool, hits: bool) -> AssembledAnswer<'a> {
        let AssemblyAnswer {
            cascade,
            context,
            evicted,
            examples,
            hits,
            injected,
            injected_rules,
            retrieval_state,
            rules,
            sticky_in,
            summaries,
        } = AssemblyAnswer::of(&assembled.assembly, hits);
        let receipt = &assembled.receipt;
        AssembledAnswer {
            cascade,
            chapter: receipt.chapter,
            chunk: &receipt.chunk_key,
            context,
            evicted,
            examples,
            hits,
            injected,
            injected_rules,
            party: receipt.party.as_deref(),
            prev: receipt.prev.map(|prev| prev.to_hex()),
            receipt: assembled.id.to_hex(),
            recorded,
            retrieval_state,
            revision: receipt.revision.0,
            rules,
            snapshot: receipt.snapshot.to_hex(),
            sticky_in,
            summaries,
        }
    }
}

/// The chunks of one chapter, assembled at one revision.
#[derive(Derive)]
pub struct ChapterAnswer<'a> {
    chapter: u32,
    chunks: Vec<AssembledAnswer<'a>>,
    recorded: bool,
    revision: u64,
    snapshot: String,
}

impl<'a> ChapterAnswer<'a> {
    /// The chunks of `chapter`, assembled at `revision` and `snapshot`.
    pub fn of(
        chapter: u32,
        assembled: &'a [Assembled],
        recorded: bool,
        hits: bool,
        (revision, snapshot): (u64, String),
    ) -> ChapterAnswer<'a> {
        let chunks = assembled.iter().map(|one| AssembledAnswer::of(one, recorded, hits)).collect();
        ChapterAnswer { chapter, chunks, recorded, revision, snapshot }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use book::assemble::{CascadeDecision, Disposition, HitRecord, Injected, InjectedRule, Reason, RuleDecision, Via};
    use ledger_model::{Hash32, Seq};

    fn assembly() -> Assembly {
        Assembly {
            context: "[glossary]\nСяо Янь".into(),
            hits: vec![HitRecord {
                term: 1,
                text: "萧炎".into(),
                bytes: (0, 6),
                chars: (0, 2),
                disposition: Disposition::Ambiguous,
                reason: Some(Reason::SenseCollision),
            }],
            injected: vec![Injected {
                term: 1,
                via: Via::Hit,
                unverified: true,
                tokens: 7,
                line: "萧炎 → Сяо Янь".into(),
            }],
            evicted: vec![4, 9],
            sticky_in: vec![2],
            summaries: vec![1],
            rules: vec![RuleDecision { rule: 3, disposition: Disposition::Rejected, reason: Some(Reason::Unreviewed) }],
            injected_rules: vec![InjectedRule {
                rule: 5,
                unverified: false,
                tokens: 4,
                line: "Обращения на «вы».".into(),
            }],
            cascade: vec![CascadeDecision {
                term: 6,
                by: "T-1".parse().unwrap(),
                depth: 1,
                disposition: Disposition::Ambiguous,
                reason: Some(Reason::Unreviewed),
            }],
            examples: Vec::new(),
            recent: vec![vec![1]],
            retrieval: RetrievalState {
                n_exact_hits: 1,
                n_ambiguous: 1,
                embedding_tier_used: false,
                ..Default::default()
            },
        }
    }

    /// The bytes of `value` once its members are sorted, as a `Value` sorts them.
    fn sorted(bytes: &[u8]) -> Vec<u8> {
        let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        serde_json::to_vec(&value).unwrap()
    }

    #[test]
    fn members_come_in_the_order_of_a_value() {
        let assembly = assembly();
        for hits in [true, false] {
            let bytes = serde_json::to_vec(&AssemblyAnswer::of(&assembly, hits)).unwrap();
            assert_eq!(String::from_utf8(bytes.clone()).unwrap(), String::from_utf8(sorted(&bytes)).unwrap());
            assert_eq!(bytes.windows(7).any(|window| window == b"\"hits\":"), hits, "hits={hits}");
        }
        let receipt = book::receipt::Receipt {
            format: book::receipt::RECEIPT_FORMAT,
            snapshot: Hash32([1; 32]),
            revision: Seq(12),
            chapter: 3,
            chunk_key: "c1".into(),
            input: Hash32([2; 32]),
            prev: Some(Hash32([7; 32])),
            sticky_in: vec![2],
            hits: Vec::new(),
            injected: Vec::new(),
            evicted: vec![4, 9],
            summaries: vec![1],
            recent: Vec::new(),
            retrieval: assembly.retrieval,
            render_format: 2,
            output: Hash32([3; 32]),
            party: Some("tool:pipeline".into()),
            rules: Vec::new(),
            cascade: Vec::new(),
            examples: Vec::new(),
        };
        let assembled = Assembled { assembly, receipt, id: Hash32([9; 32]) };
        let chapter = [assembled.clone(), assembled];
        let answer = ChapterAnswer::of(3, &chapter, true, true, (12, "ab".into()));
        let bytes = serde_json::to_vec(&answer).unwrap();
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), String::from_utf8(sorted(&bytes)).unwrap());
        let text = String::from_utf8(bytes).unwrap();
        for member in [
            "\"term\":\"T-1\"",
            "\"by\":\"T-1\"",
            "\"rule\":\"R-3\"",
            "\"summaries\":[\"S-1\"]",
            "\"evicted\":[\"T-4\",\"T-9\"]",
        ] {
            assert!(text.contains(member), "{member} in {text}");
        }
    }
}
