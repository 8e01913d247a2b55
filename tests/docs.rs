//! Keeps the documentation honest: every JSON example line in `docs/events.md` must
//! parse as an event body and pass validation, and every body kind must have at least
//! one example.

use std::collections::BTreeSet;

use ledger_model::validate::{validate_body, Rules};
use ledger_model::{AssemblyConfig, Body, ConfigSet, ProfileRef};

#[test]
fn every_event_example_parses_and_validates() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/events.md")).unwrap();
    let mut in_json = false;
    let mut kinds = BTreeSet::new();
    for (line_idx, line) in text.lines().enumerate() {
        match line.trim() {
            "```json" => in_json = true,
            "```" => in_json = false,
            example if in_json => {
                let mut body: Body = serde_json::from_str(example)
                    .unwrap_or_else(|error| panic!("docs/events.md line {}: {error}", line_idx + 1));
                // A config leaves out what it keeps; it is judged filled in, as written.
                if let Body::ConfigSet(config) = &body {
                    let book = ConfigSet {
                        assembly: AssemblyConfig::default(),
                        profile: ProfileRef { name: "zh".into(), table: None },
                    };
                    body = Body::ConfigSet(config.filled_from(Some(&book)));
                }
                validate_body(&body, &Rules::default())
                    .unwrap_or_else(|error| panic!("docs/events.md line {}: {error}", line_idx + 1));
                kinds.insert(body.kind_name());
            }
            _ => {}
        }
    }
    assert_eq!(kinds.len(), Body::KIND_NAMES.len(), "kinds with examples: {kinds:?}");
}
