//! An independent leftmost-longest engine for the matcher's oracles: aho-corasick over
//! a matcher's patterns, which `Matcher::find_with` runs the boundary rules over.

use matcher::{LeftmostLongest, Matcher, PatternId};

/// aho-corasick with leftmost-longest semantics over a matcher's patterns.
pub struct AhoCorasickEngine(aho_corasick::AhoCorasick);

impl AhoCorasickEngine {
    /// The engine of `matcher`'s patterns.
    pub fn new(matcher: &Matcher) -> AhoCorasickEngine {
        let patterns: Vec<&str> = matcher.pattern_ids().map(|id| matcher.pattern(id)).collect();
        AhoCorasickEngine(
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(patterns)
                .expect("aho-corasick build"),
        )
    }
}

impl LeftmostLongest for AhoCorasickEngine {
    fn find_from(&self, haystack: &str, from: usize) -> Option<(PatternId, usize, usize)> {
        let input = aho_corasick::Input::new(haystack).span(from..haystack.len());
        let m = self.0.find(input)?;
        Some((PatternId::new(m.pattern().as_u32()), m.start(), m.end()))
    }
}
