//! What the two lore formats (SillyTavern World Info, NovelAI lorebook) share: typed
//! access to a JSON entry with errors naming the entry and field, the line that
//! carries a term's rendering in the injected text, the marker that carries a
//! summary, and the account of what a lore entry cannot hold on export.

use ledger_model::{RecordId, Scope, Status, SummaryPut};
use serde_json::{Map, Value};

use crate::{At, ExportTerm, Lost, ReadError};

/// One JSON object of a lore file (an entry, or the root), with where it is.
pub(super) struct Object<'a> {
    pub(super) at: At,
    pub(super) map: &'a Map<String, Value>,
}

impl<'a> Object<'a> {
    /// The value of `field`, `None` when absent or `null`.
    pub(super) fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.get(field).filter(|value| !value.is_null())
    }

    fn wrong(&self, field: &str, expected: &str, value: &Value) -> ReadError {
        ReadError::at(self.at.clone(), field, format!("must be {expected}, not {}", short_json(value)))
    }

    /// A string field; absent or `null` is `None`.
    pub(super) fn string(&self, field: &str) -> Result<Option<&'a str>, ReadError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.as_str())),
            Some(other) => Err(self.wrong(field, "a string", other)),
        }
    }

    /// A boolean field; absent or `null` is `None`.
    pub(super) fn bool(&self, field: &str) -> Result<Option<bool>, ReadError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(other) => Err(self.wrong(field, "true or false", other)),
        }
    }

    /// A list of strings; absent or `null` is empty.
    pub(super) fn strings(&self, field: &str) -> Result<Vec<&'a str>, ReadError> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().ok_or_else(|| self.wrong(field, "a list of strings", &Value::Array(items.clone())))
                })
                .collect(),
            Some(other) => Err(self.wrong(field, "a list of strings", other)),
        }
    }

    /// A whole number field (`100` or `100.0`); absent or `null` is `None`.
    pub(super) fn integer(&self, field: &str) -> Result<Option<i64>, ReadError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Number(number)) => {
                if let Some(whole) = number.as_i64() {
                    return Ok(Some(whole));
                }
                match number.as_f64() {
                    Some(float) if float.fract() == 0.0 && float.abs() < 9.0e15 => Ok(Some(float as i64)),
                    _ => Err(self.wrong(field, "a whole number", &Value::Number(number.clone()))),
                }
            }
            Some(other) => Err(self.wrong(field, "a whole number", other)),
        }
    }
}

/// A JSON value as a report shows it: a string as itself, anything else as compact
/// JSON; at most 60 characters.
pub(super) fn short_value(value: &Value) -> String {
    match value {
        Value::String(text) => short(text),
        other => short(&other.to_string()),
    }
}

/// A JSON value as an error shows it: compact JSON (a string quoted), at most 60
/// characters.
pub(super) fn short_json(value: &Value) -> String {
    short(&value.to_string())
}

/// `text`, at most 60 characters (an ellipsis marks a cut).
pub(super) fn short(text: &str) -> String {
    let mut short: String = text.chars().take(60).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// Whether a JSON value equals a default: numbers by value (`100` is `100.0`), `null`
/// only when the default is `null`.
pub(super) fn equals_default(value: &Value, default: &Value) -> bool {
    match (value, default) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => value == default,
    }
}

/// The keys of an entry as lorebank can use them: trimmed, empty ones dropped, exact
/// repeats dropped (reported in `repeated`), and those the tool reads as something
/// other than text (`unusable`: a regex, a macro) set apart.
#[derive(Debug, Default)]
pub(super) struct Keys {
    pub(super) plain: Vec<String>,
    pub(super) unusable: Vec<String>,
    pub(super) repeated: Vec<String>,
}

pub(super) fn sort_keys(keys: &[&str], unusable: impl Fn(&str) -> bool) -> Keys {
    let mut sorted = Keys::default();
    // Repeats are looked up in a set: an entry of k keys costs O(k log k), not the
    // k²/2 comparisons of searching the list (100,000 keys of one entry are 5·10⁹).
    let mut seen = std::collections::BTreeSet::new();
    for key in keys {
        let key = key.trim();
        if key.is_empty() {
            continue;
        }
        if unusable(key) {
            sorted.unusable.push(key.to_owned());
        } else if !seen.insert(key) {
            sorted.repeated.push(key.to_owned());
        } else {
            sorted.plain.push(key.to_owned());
        }
    }
    sorted
}

/// The first line of an exported entry's text: what a user of the tool gets injected
/// as the rendering (`萧炎 → Сяо Янь`).
pub(super) fn rendering_line(src: &str, dst: &str) -> String {
    format!("{src} → {dst}")
}

/// An exported entry's text: the rendering line, then the note on the lines after it.
pub(super) fn content(src: &str, dst: &str, note: Option<&str>) -> String {
    let mut content = rendering_line(src, dst);
    if let Some(note) = note {
        content.push('\n');
        content.push_str(note);
    }
    content
}

/// The rendering and the note of an entry whose first key is `src`, from its title
/// and its text. A first line that is exactly the rendering line of this entry (`src
/// → title`, or with an empty title `src → X` for some rendering X) is removed from the
/// note; with an empty title, X is the rendering. The note is trimmed, with `\r\n`
/// line ends as `\n`, `None` when empty.
pub(super) fn split_content(src: &str, title: &str, text: &str) -> (String, Option<String>) {
    let title = title.trim();
    let (first, rest) = match text.split_once('\n') {
        Some((first, rest)) => (first, rest),
        None => (text, ""),
    };
    let first = first.trim();
    let prefix = format!("{src} → ");
    let mut dst = title.to_owned();
    let mut note = text;
    if let Some(rendering) = first.strip_prefix(&prefix) {
        let rendering = rendering.trim();
        if title.is_empty() && !rendering.is_empty() {
            dst = rendering.to_owned();
            note = rest;
        } else if !title.is_empty() && rendering == title {
            note = rest;
        }
    }
    let note = note.trim().replace("\r\n", "\n");
    (dst, (!note.is_empty()).then_some(note))
}

/// The title of the entry that carries a summary: `lorebank summary S-2 chapter 3
/// from 4`, `lorebank summary S-5 arc 1-10 from 11`, `lorebank summary S-1 book`.
pub(super) fn summary_marker(put: &SummaryPut) -> String {
    let scope = match put.scope {
        Scope::Chapter(chapter) => format!("chapter {chapter}"),
        Scope::Arc { from, to } => format!("arc {from}-{to}"),
        Scope::Book => "book".to_owned(),
    };
    let mut marker = format!("lorebank summary {} {scope}", put.id);
    if let Some(from) = put.visible_from {
        marker.push_str(&format!(" from {from}"));
    }
    marker
}

/// The summary a title marks, with `text`: only a title exactly as
/// [`summary_marker`] writes it (an `S-` id, numbers without leading zeros).
pub(super) fn parse_summary_marker(title: &str, text: &str) -> Option<SummaryPut> {
    let rest = title.strip_prefix("lorebank summary ")?;
    let mut words = rest.split(' ');
    let id: RecordId = words.next()?.parse().ok()?;
    let number = |word: Option<&str>| word.and_then(|word| word.parse::<u32>().ok());
    let scope = match words.next()? {
        "book" => Scope::Book,
        "chapter" => Scope::Chapter(number(words.next())?),
        "arc" => {
            let (from, to) = words.next()?.split_once('-')?;
            Scope::Arc { from: number(Some(from))?, to: number(Some(to))? }
        }
        _ => return None,
    };
    let visible_from = match words.next() {
        None => None,
        Some("from") => Some(number(words.next())?),
        Some(_) => return None,
    };
    let put =
        SummaryPut { id, scope, text: text.to_owned(), visible_from, owner: None, owner_role: None, release_to: None };
    (id.kind() == ledger_model::RecordKind::Summary && words.next().is_none() && summary_marker(&put) == title)
        .then_some(put)
}

/// What a lore entry cannot hold of a term beyond the fields its format leaves out:
/// the kind and window of an alias (every key is a plain key), the status `auto`
/// (an entry is on or off), and a key the tool would read as something other than
/// text (`unusable`).
pub(super) fn term_losses(export: &ExportTerm, unusable: impl Fn(&str) -> bool) -> Vec<Lost> {
    let term = &export.term;
    let at = || At::Record(export.id);
    let mut lost = Vec::new();
    if unusable(&term.src) {
        lost.push(Lost { at: at(), field: "src".into(), value: Some(short(&term.src)) });
    }
    for alias in &term.aliases {
        if unusable(&alias.surface) {
            lost.push(Lost { at: at(), field: "aliases".into(), value: Some(short(&alias.surface)) });
        }
        if alias.kind != ledger_model::AliasKind::Variant {
            let kind = format!("{:?}", alias.kind).to_lowercase();
            lost.push(Lost {
                at: at(),
                field: "aliases.kind".into(),
                value: Some(format!("{}: {kind}", alias.surface)),
            });
        }
        if let Some(window) = alias.window {
            let until = window.until.map(|until| until.to_string()).unwrap_or_default();
            lost.push(Lost {
                at: at(),
                field: "aliases.window".into(),
                value: Some(format!("{}: {}-{until}", alias.surface, window.since)),
            });
        }
    }
    if term.status == Status::Auto {
        lost.push(Lost { at: at(), field: "status".into(), value: Some("auto".into()) });
    }
    lost
}

/// `value` as JSON with `indent` (`None`: compact), without a final newline.
pub(super) fn json<T: serde::Serialize>(value: &T, indent: Option<&[u8]>) -> Vec<u8> {
    let mut bytes = Vec::new();
    let written = match indent {
        Some(indent) => {
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
            let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
            value.serialize(&mut serializer)
        }
        None => value.serialize(&mut serde_json::Serializer::new(&mut bytes)),
    };
    // Serializing plain structs, strings and numbers into a Vec cannot fail.
    debug_assert!(written.is_ok());
    bytes
}

/// A JSON object written in a given key order (serde_json's own map sorts keys).
pub(super) struct Ordered<T>(pub(super) Vec<(String, T)>);

impl<T: serde::Serialize> serde::Serialize for Ordered<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
