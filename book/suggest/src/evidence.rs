//! The evidence text of a candidate: a first line `sightings: N`, then one line per
//! sighting, as the name alarm writes it (so the review queue counts both alike).

/// The evidence a candidate keeps, at most (a note is at most 2,000 characters):
/// past it a sighting is counted but not listed.
pub(crate) const EVIDENCE_CHARS_MAX: usize = 1_800;

/// The number of sightings an evidence text records.
pub(crate) fn sightings_in(evidence: Option<&str>) -> u64 {
    evidence
        .and_then(|text| text.lines().next())
        .and_then(|line| line.strip_prefix("sightings: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// `evidence` with `line` added as one more sighting; unchanged when it already
/// lists the line.
pub(crate) fn add_line(evidence: Option<&str>, line: &str) -> String {
    let evidence = evidence.unwrap_or_default();
    if evidence.lines().any(|known| known == line) {
        return evidence.to_owned();
    }
    let n = sightings_in(Some(evidence));
    let mut lines: Vec<&str> = evidence.lines().filter(|line| !line.starts_with("sightings: ")).collect();
    let kept: usize = lines.iter().map(|line| line.chars().count() + 1).sum();
    if kept + line.chars().count() < EVIDENCE_CHARS_MAX {
        lines.push(line);
    }
    format!("sightings: {}\n{}", n + 1, lines.join("\n"))
}

/// The evidence of one finding that replaces, rather than adds to, what was there
/// (a dedupe pair is one finding, whatever the run).
pub(crate) fn single(line: &str) -> String {
    let line: String = line.chars().take(EVIDENCE_CHARS_MAX).collect();
    format!("sightings: 1\n{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_added_once_and_counted() {
        let one = add_line(None, "ch1/1@0-2 near T-1");
        assert_eq!(one, "sightings: 1\nch1/1@0-2 near T-1");
        assert_eq!(add_line(Some(&one), "ch1/1@0-2 near T-1"), one);
        let two = add_line(Some(&one), "ch2/1@5-7 near T-1");
        assert_eq!(two, "sightings: 2\nch1/1@0-2 near T-1\nch2/1@5-7 near T-1");
        assert_eq!(sightings_in(Some(&two)), 2);
        // Past the limit a sighting is counted, not listed.
        let long = "x".repeat(EVIDENCE_CHARS_MAX);
        let three = add_line(Some(&two), &long);
        assert_eq!(sightings_in(Some(&three)), 3);
        assert!(!three.contains(&long));
    }
}
