//! NovelAI `.lorebook`: `{"lorebookVersion", "entries": [entry, …], "settings",
//! "categories"}`, with the schema of NovelAI's own exports (docs/formats.md
//! maps every field).
//!
//! An entry's first plaintext key is the src, further keys are aliases,
//! `displayName` the rendering, `text` the note (after the rendering line lorebank
//! writes first), `forceActivation` constant and `enabled: false` the status `draft`.
//! Regex keys, and every other field with a value other than NovelAI's default, are
//! reported lost.

use ledger_model::{RecordId, RecordKind, Status};
use serde::Serialize;
use serde_json::{json, Value};

use crate::formats::lore::{self, Object};
use crate::formats::text::parse_json;
use crate::{
    Alias, At, Entry, ExportInput, Exported, Fields, ImportedSummary, Lost, Notice, Parsed, ReadError, Skipped, Term,
    WriteError,
};

pub(super) const FIELDS: Fields =
    Fields(Fields::DST.0 | Fields::NOTE.0 | Fields::STATUS.0 | Fields::CONSTANT.0 | Fields::ALIASES.0);

/// The version written: the one of the real exports whose schema lorebank writes.
const LOREBOOK_VERSION: u32 = 4;

const ACTIVATION: &str = "NovelAI activates an entry when a key occurs in the last searchRange characters of the \
    story, case-insensitively and bounded by word edges (how the bound treats CJK is not documented), and inserts \
    by budget priority within token budgets; lorebank matches keys leftmost-longest on folded text inside their \
    windows and evicts by its own budget";

const DISABLED: &str = "a disabled NovelAI entry is never activated; lorebank imports it as a draft, which it \
    injects marked [unverified]";

const PLACEHOLDER: &str = "New Lorebook Entry";

/// The entry fields lorebank does not carry, with the value NovelAI's exports hold
/// by default: any other value is reported lost.
fn entry_defaults() -> [(&'static str, Value); 4] {
    [
        ("searchRange", json!(1000)),
        ("keyRelative", json!(false)),
        ("nonStoryActivatable", json!(false)),
        ("category", json!("")),
    ]
}

/// `contextConfig` as NovelAI's exports hold it by default.
fn context_defaults() -> [(&'static str, Value); 9] {
    [
        ("prefix", json!("")),
        ("suffix", json!("\n")),
        ("tokenBudget", json!(2048)),
        ("reservedTokens", json!(0)),
        ("budgetPriority", json!(400)),
        ("trimDirection", json!("trimBottom")),
        ("insertionType", json!("newline")),
        ("maximumTrimType", json!("sentence")),
        ("insertionPosition", json!(-1)),
    ]
}

/// Entry fields read into the term, or that carry nothing (`lastUpdatedAt`).
const HANDLED: [&str; 9] = [
    "id",
    "keys",
    "displayName",
    "text",
    "enabled",
    "forceActivation",
    "lastUpdatedAt",
    "contextConfig",
    "loreBiasGroups",
];

/// Whether NovelAI reads `key` as a regular expression: `/pattern/flags`, flags
/// from `imsu` and `-` (which turns one off).
pub(super) fn is_regex(key: &str) -> bool {
    key.strip_prefix('/')
        .and_then(|body| body.rsplit_once('/'))
        .is_some_and(|(pattern, flags)| !pattern.is_empty() && flags.chars().all(|flag| "imsu-".contains(flag)))
}

pub(super) fn read(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let value: Value = parse_json(bytes)?;
    let Value::Object(root) = &value else {
        return Err(ReadError::file("a NovelAI lorebook is a JSON object with `lorebookVersion` and `entries`"));
    };
    let root = Object { at: At::File, map: root };
    if root.integer("lorebookVersion")?.is_none() {
        return Err(ReadError::at(At::File, "lorebookVersion", "missing: not a NovelAI lorebook"));
    }
    let entries = match root.get("entries") {
        Some(Value::Array(entries)) => entries.as_slice(),
        None => &[],
        Some(Value::Object(_)) => {
            return Err(ReadError::at(
                At::File,
                "entries",
                "an object keyed by uid, as in SillyTavern World Info: read this file as `sillytavern`",
            ));
        }
        Some(other) => {
            return Err(ReadError::at(At::File, "entries", format!("must be a list, not {}", lore::short_json(other))));
        }
    };
    let mut parsed = Parsed::default();
    read_root_losses(&root, &mut parsed);
    let mut disabled = false;
    for (index, entry) in entries.iter().enumerate() {
        let at = match entry.get("id") {
            Some(Value::String(id)) if !id.is_empty() => At::Uid(id.clone()),
            _ => At::Entry(index as u64 + 1),
        };
        let Value::Object(map) = entry else {
            return Err(ReadError::at(at, "entry", format!("must be an object, not {}", lore::short_json(entry))));
        };
        disabled |= read_entry(&Object { at, map }, &mut parsed)?;
    }
    if !parsed.entries.is_empty() {
        parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
    }
    if disabled {
        parsed.notices.push(Notice { at: None, message: DISABLED.into() });
    }
    Ok(parsed)
}

fn read_root_losses(root: &Object<'_>, parsed: &mut Parsed) {
    let mut lose = |field: String, value: &Value| {
        parsed.lost.push(Lost { at: At::File, field, value: Some(lore::short_value(value)) });
    };
    for (field, value) in root.map {
        match (field.as_str(), value) {
            ("lorebookVersion" | "entries", _) | (_, Value::Null) => {}
            ("settings", Value::Object(settings)) => {
                for (setting, value) in settings {
                    let default = setting == "orderByKeyLocations" && value == &Value::Bool(false);
                    if !default && !value.is_null() {
                        lose(format!("settings.{setting}"), value);
                    }
                }
            }
            ("categories", Value::Array(categories)) if categories.is_empty() => {}
            _ => lose(field.clone(), value),
        }
    }
}

/// Reads one entry into `parsed`; returns whether it became a draft.
fn read_entry(object: &Object<'_>, parsed: &mut Parsed) -> Result<bool, ReadError> {
    let at = &object.at;
    if let Some(id) = object.get("id") {
        if !id.is_string() {
            return Err(ReadError::at(at.clone(), "id", format!("must be a string, not {}", lore::short_json(id))));
        }
    }
    let keys = lore::sort_keys(&object.strings("keys")?, is_regex);
    let title = object.string("displayName")?.unwrap_or("");
    let text = object.string("text")?.unwrap_or("");
    let enabled = object.bool("enabled")?.unwrap_or(true);
    let force = object.bool("forceActivation")?.unwrap_or(false);
    if let Some(updated) = object.get("lastUpdatedAt") {
        if !updated.is_number() {
            return Err(ReadError::at(
                at.clone(),
                "lastUpdatedAt",
                format!("must be a number, not {}", lore::short_json(updated)),
            ));
        }
    }

    let mut lost = Vec::new();
    let mut lose = |field: String, value: &Value| {
        lost.push(Lost { at: at.clone(), field, value: Some(lore::short_value(value)) });
    };
    for key in &keys.unusable {
        lose("keys".into(), &Value::String(key.clone()));
    }
    for (field, default) in entry_defaults() {
        if let Some(value) = object.get(field) {
            if !lore::equals_default(value, &default) {
                lose(field.into(), value);
            }
        }
    }
    match object.get("contextConfig") {
        None => {}
        Some(Value::Object(config)) => {
            let defaults = context_defaults();
            for (field, value) in config {
                let default = defaults.iter().find(|(name, _)| name == field).map(|(_, default)| default);
                if !value.is_null() && !default.is_some_and(|default| lore::equals_default(value, default)) {
                    lose(format!("contextConfig.{field}"), value);
                }
            }
        }
        Some(other) => lose("contextConfig".into(), other),
    }
    if let Some(groups) = object.get("loreBiasGroups") {
        if !biases_nothing(groups) {
            lose("loreBiasGroups".into(), groups);
        }
    }
    for (field, value) in object.map {
        if !HANDLED.contains(&field.as_str())
            && !entry_defaults().iter().any(|(name, _)| name == field)
            && !value.is_null()
        {
            lose(field.clone(), value);
        }
    }
    for key in &keys.repeated {
        parsed.notices.push(Notice { at: Some(at.clone()), message: format!("repeated key {key:?} dropped") });
    }

    if keys.plain.is_empty() && keys.unusable.is_empty() {
        if let Some(put) = lore::parse_summary_marker(title.trim(), text) {
            if !enabled {
                lost.push(Lost { at: at.clone(), field: "enabled".into(), value: Some("false".into()) });
            }
            parsed.lost.append(&mut lost);
            parsed.summaries.push(ImportedSummary { at: at.clone(), put });
            return Ok(false);
        }
    }
    parsed.lost.append(&mut lost);
    let Some(src) = keys.plain.first() else {
        let reason = if keys.unusable.is_empty() {
            "no key (a keyless entry is a term only when its displayName marks a lorebank summary)"
        } else {
            "no plaintext key: every key is a regex"
        };
        parsed.skipped.push(Skipped { at: at.clone(), reason: reason.into() });
        return Ok(false);
    };
    let (dst, note) = lore::split_content(src, title, text);
    if dst.is_empty() {
        parsed.skipped.push(Skipped { at: at.clone(), reason: "no dst".into() });
        return Ok(false);
    }
    if dst == PLACEHOLDER {
        parsed.notices.push(Notice {
            at: Some(at.clone()),
            message: format!("displayName is NovelAI's placeholder {PLACEHOLDER:?}, imported as the rendering"),
        });
    }
    let aliases = keys.plain[1..]
        .iter()
        .map(|surface| Alias { surface: surface.clone(), kind: ledger_model::AliasKind::Variant, window: None })
        .collect();
    let status = if enabled { Status::Approved } else { Status::Draft };
    let term = Term { note, status, constant: force, aliases, ..Term::new(src.clone(), dst) };
    parsed.entries.push(Entry { at: at.clone(), term });
    Ok(!enabled)
}

/// Whether `loreBiasGroups` biases nothing: every group has no phrases (NovelAI's
/// exports hold one such default group).
fn biases_nothing(groups: &Value) -> bool {
    let Value::Array(groups) = groups else {
        return false;
    };
    groups.iter().all(|group| match group.get("phrases") {
        None | Some(Value::Null) => group.is_object(),
        Some(Value::Array(phrases)) => phrases.is_empty(),
        Some(_) => false,
    })
}

/// The id an exported record gets: UUID-shaped, the same for the same record in every
/// export (`6c6f7265-0000-8000-8054-000000000012` for T-12: `6c6f7265` is "lore", `54`
/// the letter of the kind, the last group the number in decimal digits).
pub(super) fn entry_id(id: RecordId) -> String {
    let letter = match id.kind() {
        RecordKind::Term => b'T',
        RecordKind::Summary => b'S',
        RecordKind::Candidate => b'C',
        RecordKind::Rule => b'R',
    };
    format!("6c6f7265-0000-8000-80{letter:02x}-{:012}", id.number())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContextConfig {
    prefix: &'static str,
    suffix: &'static str,
    token_budget: u32,
    reserved_tokens: u32,
    budget_priority: i32,
    trim_direction: &'static str,
    insertion_type: &'static str,
    maximum_trim_type: &'static str,
    insertion_position: i32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BiasGroup {
    phrases: [&'static str; 0],
    ensure_sequence_finish: bool,
    generate_once: bool,
    bias: u8,
    enabled: bool,
    when_inactive: bool,
}

/// One entry with the fields, order and defaults of NovelAI's exports.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoreEntry<'a> {
    text: String,
    context_config: ContextConfig,
    last_updated_at: u64,
    display_name: String,
    id: String,
    keys: Vec<&'a str>,
    search_range: u32,
    enabled: bool,
    force_activation: bool,
    key_relative: bool,
    non_story_activatable: bool,
    category: &'static str,
    lore_bias_groups: [BiasGroup; 1],
}

impl<'a> LoreEntry<'a> {
    fn new(id: RecordId, keys: Vec<&'a str>, display_name: String, text: String) -> LoreEntry<'a> {
        LoreEntry {
            text,
            context_config: ContextConfig {
                prefix: "",
                suffix: "\n",
                token_budget: 2048,
                reserved_tokens: 0,
                budget_priority: 400,
                trim_direction: "trimBottom",
                insertion_type: "newline",
                maximum_trim_type: "sentence",
                insertion_position: -1,
            },
            last_updated_at: 0,
            display_name,
            id: entry_id(id),
            keys,
            search_range: 1000,
            enabled: true,
            force_activation: false,
            key_relative: false,
            non_story_activatable: false,
            category: "",
            lore_bias_groups: [BiasGroup {
                phrases: [],
                ensure_sequence_finish: false,
                generate_once: true,
                bias: 0,
                enabled: true,
                when_inactive: false,
            }],
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Settings {
    order_by_key_locations: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Lorebook<'a> {
    lorebook_version: u32,
    entries: Vec<LoreEntry<'a>>,
    settings: Settings,
    categories: [u8; 0],
}

/// Terms in id order, then summaries; compact JSON. `lastUpdatedAt` is 0: an export
/// reads no clock, so the same book gives the same bytes.
pub(super) fn write(input: &ExportInput) -> Result<Exported, WriteError> {
    let mut entries = Vec::new();
    let mut lost = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        lost.extend(lore::term_losses(export, is_regex));
        let mut keys = vec![term.src.as_str()];
        keys.extend(term.aliases.iter().map(|alias| alias.surface.as_str()));
        let text = lore::content(&term.src, &term.dst, term.note.as_deref());
        let mut entry = LoreEntry::new(export.id, keys, term.dst.clone(), text);
        entry.enabled = term.status != Status::Draft;
        entry.force_activation = term.constant;
        entries.push(entry);
    }
    for summary in &input.summaries {
        let mut entry = LoreEntry::new(summary.id, Vec::new(), lore::summary_marker(summary), summary.text.clone());
        entry.force_activation = true;
        entries.push(entry);
    }
    let book = Lorebook {
        lorebook_version: LOREBOOK_VERSION,
        entries,
        settings: Settings { order_by_key_locations: false },
        categories: [],
    };
    Ok(Exported { bytes: lore::json(&book, None), lost })
}
