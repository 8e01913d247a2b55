//! SillyTavern World Info: `{"entries": {"<uid>": entry, …}}`, as SillyTavern's
//! `world-info.js` writes and reads it (docs/formats.md maps every
//! field).
//!
//! An entry's first plaintext `key` is the src, further plaintext keys are aliases,
//! `keysecondary` with `selectiveLogic` the secondary keys, `comment` the rendering,
//! `content` the note (after the rendering line lorebank writes first), `constant`,
//! `order` the priority and `disable` the status `draft`. Regex and macro keys, and
//! every other field with a value other than SillyTavern's default, are reported lost.

use ledger_model::{KeyLogic, SecondaryKeys, Status};
use serde::Serialize;
use serde_json::{json, Value};

use crate::formats::lore::{self, Object, Ordered};
use crate::formats::text::parse_json;
use crate::{
    Alias, At, Entry, ExportInput, Exported, Fields, ImportedSummary, Lost, Notice, Parsed, ReadError, Skipped, Term,
    WriteError,
};

pub(super) const FIELDS: Fields = Fields(
    Fields::DST.0
        | Fields::NOTE.0
        | Fields::STATUS.0
        | Fields::PRIORITY.0
        | Fields::CONSTANT.0
        | Fields::SECONDARY.0
        | Fields::ALIASES.0,
);

const ACTIVATION: &str = "SillyTavern activates an entry when a key occurs in the last scanDepth messages (a \
    lower-cased substring test unless caseSensitive; matchWholeWords changes nothing for CJK keys, since every CJK \
    character is a word boundary to JavaScript), keeps it with its probability, inserts by order and stops at the \
    token budget (25 % of the context by default); lorebank matches keys leftmost-longest on folded text inside \
    their windows, never rolls a probability, and evicts by its own budget";

const DISABLED: &str = "a disabled SillyTavern entry is never activated; lorebank imports it as a draft, which it \
    injects marked [unverified]";

/// The fields lorebank does not carry, with SillyTavern's default for each (from
/// `newWorldInfoEntryDefinition`): any other value is reported lost. `null` is the
/// default of every field.
fn defaults() -> [(&'static str, Value); 33] {
    [
        ("vectorized", json!(false)),
        ("addMemo", json!(false)),
        ("position", json!(0)),
        ("ignoreBudget", json!(false)),
        ("excludeRecursion", json!(false)),
        ("preventRecursion", json!(false)),
        ("matchPersonaDescription", json!(false)),
        ("matchCharacterDescription", json!(false)),
        ("matchCharacterPersonality", json!(false)),
        ("matchCharacterDepthPrompt", json!(false)),
        ("matchScenario", json!(false)),
        ("matchCreatorNotes", json!(false)),
        ("delayUntilRecursion", json!(0)),
        ("probability", json!(100)),
        ("useProbability", json!(true)),
        ("depth", json!(4)),
        ("outletName", json!("")),
        ("group", json!("")),
        ("groupOverride", json!(false)),
        ("groupWeight", json!(100)),
        ("scanDepth", Value::Null),
        ("caseSensitive", Value::Null),
        ("matchWholeWords", Value::Null),
        ("useGroupScoring", Value::Null),
        ("automationId", json!("")),
        ("role", json!(0)),
        ("sticky", Value::Null),
        ("cooldown", Value::Null),
        ("delay", Value::Null),
        ("triggers", json!([])),
        ("characterFilterNames", json!([])),
        ("characterFilterTags", json!([])),
        ("characterFilterExclude", json!(false)),
    ]
}

/// Fields read into the term, and fields with a rule of their own.
const HANDLED: [&str; 12] = [
    "uid",
    "key",
    "keysecondary",
    "selective",
    "selectiveLogic",
    "comment",
    "content",
    "constant",
    "order",
    "disable",
    "displayIndex",
    "characterFilter",
];

/// Whether SillyTavern reads `key` as a regular expression (`parseRegexFromString`:
/// `/pattern/flags`, flags from `gimsuy`, each at most once, every `/` inside the
/// pattern escaped).
pub(super) fn is_regex(key: &str) -> bool {
    let Some(body) = key.strip_prefix('/') else {
        return false;
    };
    let Some((pattern, flags)) = body.rsplit_once('/') else {
        return false;
    };
    let flags_ok = flags.chars().all(|flag| "gimsuy".contains(flag))
        && flags.chars().enumerate().all(|(index, flag)| !flags[..index].contains(flag));
    let mut previous = None;
    let unescaped_slash = pattern.chars().any(|c| {
        let bad = c == '/' && previous != Some('\\');
        previous = Some(c);
        bad
    });
    !pattern.is_empty() && flags_ok && !unescaped_slash
}

/// Whether SillyTavern substitutes a macro in `key` before matching (`{{char}}`).
fn is_macro(key: &str) -> bool {
    key.find("{{").is_some_and(|open| key[open..].contains("}}"))
}

/// A key lorebank cannot use as a surface.
fn unusable(key: &str) -> bool {
    is_regex(key) || is_macro(key)
}

fn logic(number: i64) -> Option<KeyLogic> {
    match number {
        0 => Some(KeyLogic::AndAny),
        1 => Some(KeyLogic::NotAll),
        2 => Some(KeyLogic::NotAny),
        3 => Some(KeyLogic::AndAll),
        _ => None,
    }
}

fn logic_number(logic: KeyLogic) -> u8 {
    match logic {
        KeyLogic::AndAny => 0,
        KeyLogic::NotAll => 1,
        KeyLogic::NotAny => 2,
        KeyLogic::AndAll => 3,
    }
}

pub(super) fn read(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let value: Value = parse_json(bytes)?;
    let Value::Object(root) = &value else {
        return Err(ReadError::file("a SillyTavern World Info file is a JSON object with `entries`"));
    };
    let entries = match root.get("entries") {
        Some(Value::Object(entries)) => entries,
        Some(Value::Array(_)) if root.contains_key("lorebookVersion") => {
            return Err(ReadError::at(
                At::File,
                "entries",
                "a list, as in a NovelAI lorebook: read this file as `novelai`",
            ));
        }
        Some(other) => {
            return Err(ReadError::at(
                At::File,
                "entries",
                format!("must be an object keyed by uid, not {}", lore::short_json(other)),
            ));
        }
        None => return Err(ReadError::at(At::File, "entries", "missing: World Info is {\"entries\": {uid: entry}}")),
    };
    let mut parsed = Parsed::default();
    for (field, value) in root {
        if field != "entries" && !value.is_null() {
            parsed.lost.push(Lost { at: At::File, field: field.clone(), value: Some(lore::short_value(value)) });
        }
    }
    // serde_json sorts keys as text; SillyTavern (JavaScript) orders integer keys by value.
    let mut ordered = Vec::with_capacity(entries.len());
    for (key, entry) in entries {
        let at = At::Uid(key.clone());
        let uid: u64 = key.parse().ok().filter(|uid: &u64| uid.to_string() == *key).ok_or_else(|| {
            ReadError::at(at.clone(), "uid", format!("entries key {key:?} is not a uid (a whole number)"))
        })?;
        ordered.push((uid, at, entry));
    }
    ordered.sort_by_key(|(uid, ..)| *uid);
    let mut disabled = false;
    for (uid, at, entry) in ordered {
        let Value::Object(map) = entry else {
            return Err(ReadError::at(at, "entry", format!("must be an object, not {}", lore::short_json(entry))));
        };
        let object = Object { at: at.clone(), map };
        disabled |= read_entry(&object, uid, &mut parsed)?;
    }
    if !parsed.entries.is_empty() {
        parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
    }
    if disabled {
        parsed.notices.push(Notice { at: None, message: DISABLED.into() });
    }
    Ok(parsed)
}

/// Reads one entry into `parsed`; returns whether it became a draft.
fn read_entry(object: &Object<'_>, uid: u64, parsed: &mut Parsed) -> Result<bool, ReadError> {
    let at = &object.at;
    if let Some(field_uid) = object.get("uid") {
        let agrees = field_uid.as_u64() == Some(uid) || field_uid.as_f64() == Some(uid as f64);
        if !agrees {
            return Err(ReadError::at(
                at.clone(),
                "uid",
                format!("must be {uid}, the entry's key in `entries`, not {}", lore::short_json(field_uid)),
            ));
        }
    }
    let keys = lore::sort_keys(&object.strings("key")?, unusable);
    let secondary_keys = lore::sort_keys(&object.strings("keysecondary")?, unusable);
    let selective = object.bool("selective")?.unwrap_or(true);
    let logic_value = object.integer("selectiveLogic")?.unwrap_or(0);
    let logic = logic(logic_value).ok_or_else(|| {
        ReadError::at(
            at.clone(),
            "selectiveLogic",
            format!("{logic_value} is not 0 (AND ANY), 1 (NOT ALL), 2 (NOT ANY) or 3 (AND ALL)"),
        )
    })?;
    let title = object.string("comment")?.unwrap_or("");
    let raw_content = object.string("content")?.unwrap_or("");
    let (decorators, content) = split_decorators(raw_content);
    let constant = object.bool("constant")?.unwrap_or(false);
    let order = object.integer("order")?.unwrap_or(100);
    let priority = i32::try_from(order)
        .map_err(|_| ReadError::at(at.clone(), "order", format!("{order} is out of range for a priority")))?;
    let disable = object.bool("disable")?.unwrap_or(false);
    let display_index = object.get("displayIndex");

    // What lorebank cannot hold: keys, the fields of SillyTavern's entry definition in
    // its order, then the fields outside it.
    let mut lost = Vec::new();
    let mut lose =
        |field: &str, value: String| lost.push(Lost { at: at.clone(), field: field.into(), value: Some(value) });
    for key in &keys.unusable {
        lose("key", lore::short(key));
    }
    for key in &secondary_keys.unusable {
        lose("keysecondary", lore::short(key));
    }
    if !selective && !secondary_keys.plain.is_empty() {
        // SillyTavern ignores the secondary keys of an entry that is not selective.
        lose("keysecondary", lore::short(&secondary_keys.plain.join(", ")));
    }
    for (field, default) in defaults() {
        if let Some(value) = object.get(field) {
            let also_default = field == "delayUntilRecursion" && value == &Value::Bool(false);
            if !lore::equals_default(value, &default) && !also_default {
                lose(field, lore::short_value(value));
            }
        }
    }
    if let Some(filter) = object.get("characterFilter") {
        if !is_empty_filter(filter) {
            lose("characterFilter", lore::short_value(filter));
        }
    }
    if let Some(index) = display_index {
        if index.as_u64() != Some(uid) {
            lose("displayIndex", lore::short_value(index));
        }
    }
    let known = |field: &str| HANDLED.contains(&field) || defaults().iter().any(|(name, _)| *name == field);
    for (field, value) in object.map {
        if !known(field) && !value.is_null() {
            lose(field, lore::short_value(value));
        }
    }
    for key in keys.repeated.iter().chain(&secondary_keys.repeated) {
        parsed.notices.push(Notice { at: Some(at.clone()), message: format!("repeated key {key:?} dropped") });
    }

    if keys.plain.is_empty() && keys.unusable.is_empty() {
        if let Some(put) = lore::parse_summary_marker(title.trim(), raw_content) {
            if disable {
                lost.push(Lost { at: at.clone(), field: "disable".into(), value: Some("true".into()) });
            }
            if order != 100 {
                lost.push(Lost { at: at.clone(), field: "order".into(), value: Some(order.to_string()) });
            }
            if !secondary_keys.plain.is_empty() && selective {
                lost.push(Lost {
                    at: at.clone(),
                    field: "keysecondary".into(),
                    value: Some(lore::short(&secondary_keys.plain.join(", "))),
                });
            }
            parsed.lost.append(&mut lost);
            parsed.summaries.push(ImportedSummary { at: at.clone(), put });
            return Ok(false);
        }
    }
    // A summary's text is its content whole; a term's note loses the decorators.
    lost.extend(decorators.into_iter().map(|decorator| Lost {
        at: at.clone(),
        field: "content".into(),
        value: Some(lore::short(decorator)),
    }));
    parsed.lost.append(&mut lost);
    let Some(src) = keys.plain.first() else {
        let reason = if keys.unusable.is_empty() {
            "no key (a keyless entry is a term only when its comment marks a lorebank summary)"
        } else {
            "no plaintext key: every key is a regex or a macro"
        };
        parsed.skipped.push(Skipped { at: at.clone(), reason: reason.into() });
        return Ok(false);
    };
    let (dst, note) = lore::split_content(src, title, content);
    if dst.is_empty() {
        parsed.skipped.push(Skipped { at: at.clone(), reason: "no dst".into() });
        return Ok(false);
    }
    let secondary = (selective && !secondary_keys.plain.is_empty())
        .then(|| SecondaryKeys { logic, keys: secondary_keys.plain.clone() });
    let aliases = keys.plain[1..]
        .iter()
        .map(|surface| Alias { surface: surface.clone(), kind: ledger_model::AliasKind::Variant, window: None })
        .collect();
    let status = if disable { Status::Draft } else { Status::Approved };
    let term = Term { note, status, priority, constant, secondary, aliases, ..Term::new(src.clone(), dst) };
    parsed.entries.push(Entry { at: at.clone(), term });
    Ok(disable)
}

/// The leading decorator lines of an entry's content (`@@activate`,
/// `@@dont_activate`: SillyTavern's `parseDecorators` takes every leading line that
/// starts with `@@` out of the content) and the content after them.
fn split_decorators(content: &str) -> (Vec<&str>, &str) {
    let mut decorators = Vec::new();
    let mut rest = content;
    while rest.starts_with("@@") {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        decorators.push(line.trim_end_matches('\r'));
        rest = after;
    }
    (decorators, rest)
}

/// A `characterFilter` that filters nothing (SillyTavern deletes it, or fills in this
/// empty one when it loads a file).
fn is_empty_filter(filter: &Value) -> bool {
    let Value::Object(filter) = filter else {
        return false;
    };
    filter.iter().all(|(field, value)| match field.as_str() {
        "isExclude" => value == &Value::Bool(false) || value.is_null(),
        "names" | "tags" => value == &json!([]) || value.is_null(),
        _ => value.is_null(),
    })
}

/// One entry as SillyTavern's `newWorldInfoEntryDefinition` lays it out (uid first,
/// as `createWorldInfoEntry` writes it), every field present.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorldEntry<'a> {
    uid: usize,
    key: Vec<&'a str>,
    keysecondary: Vec<&'a str>,
    comment: String,
    content: String,
    constant: bool,
    vectorized: bool,
    selective: bool,
    selective_logic: u8,
    add_memo: bool,
    order: i32,
    position: u8,
    disable: bool,
    ignore_budget: bool,
    exclude_recursion: bool,
    prevent_recursion: bool,
    match_persona_description: bool,
    match_character_description: bool,
    match_character_personality: bool,
    match_character_depth_prompt: bool,
    match_scenario: bool,
    match_creator_notes: bool,
    delay_until_recursion: u8,
    probability: u8,
    use_probability: bool,
    depth: u8,
    outlet_name: &'static str,
    group: &'static str,
    group_override: bool,
    group_weight: u8,
    scan_depth: Option<u8>,
    case_sensitive: Option<bool>,
    match_whole_words: Option<bool>,
    use_group_scoring: Option<bool>,
    automation_id: &'static str,
    role: u8,
    sticky: Option<u8>,
    cooldown: Option<u8>,
    delay: Option<u8>,
    triggers: [&'static str; 0],
}

impl<'a> WorldEntry<'a> {
    /// An entry with SillyTavern's defaults.
    fn new(uid: usize, key: Vec<&'a str>, comment: String, content: String) -> WorldEntry<'a> {
        WorldEntry {
            uid,
            key,
            keysecondary: Vec::new(),
            comment,
            content,
            constant: false,
            vectorized: false,
            selective: true,
            selective_logic: 0,
            add_memo: false,
            order: 100,
            position: 0,
            disable: false,
            ignore_budget: false,
            exclude_recursion: false,
            prevent_recursion: false,
            match_persona_description: false,
            match_character_description: false,
            match_character_personality: false,
            match_character_depth_prompt: false,
            match_scenario: false,
            match_creator_notes: false,
            delay_until_recursion: 0,
            probability: 100,
            use_probability: true,
            depth: 4,
            outlet_name: "",
            group: "",
            group_override: false,
            group_weight: 100,
            scan_depth: None,
            case_sensitive: None,
            match_whole_words: None,
            use_group_scoring: None,
            automation_id: "",
            role: 0,
            sticky: None,
            cooldown: None,
            delay: None,
            triggers: [],
        }
    }
}

#[derive(Serialize)]
struct World<'a> {
    entries: Ordered<WorldEntry<'a>>,
}

/// Terms in id order, then summaries, with uids from 0; 4-space indent and no final
/// newline, as SillyTavern's editor saves (`JSON.stringify(data, null, 4)`).
pub(super) fn write(input: &ExportInput) -> Result<Exported, WriteError> {
    let mut entries = Vec::new();
    let mut lost = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        lost.extend(lore::term_losses(export, unusable));
        let uid = entries.len();
        let mut key = vec![term.src.as_str()];
        key.extend(term.aliases.iter().map(|alias| alias.surface.as_str()));
        let content = lore::content(&term.src, &term.dst, term.note.as_deref());
        let mut entry = WorldEntry::new(uid, key, term.dst.clone(), content);
        if let Some(secondary) = &term.secondary {
            entry.keysecondary = secondary.keys.iter().map(String::as_str).collect();
            entry.selective_logic = logic_number(secondary.logic);
            for key in secondary.keys.iter().filter(|key| unusable(key)) {
                lost.push(Lost { at: At::Record(export.id), field: "secondary".into(), value: Some(lore::short(key)) });
            }
        }
        entry.constant = term.constant;
        entry.order = term.priority;
        entry.disable = term.status == Status::Draft;
        entries.push((uid.to_string(), entry));
    }
    for summary in &input.summaries {
        let uid = entries.len();
        let mut entry = WorldEntry::new(uid, Vec::new(), lore::summary_marker(summary), summary.text.clone());
        entry.constant = true;
        entries.push((uid.to_string(), entry));
    }
    let world = World { entries: Ordered(entries) };
    Ok(Exported { bytes: lore::json(&world, Some(b"    ")), lost })
}
