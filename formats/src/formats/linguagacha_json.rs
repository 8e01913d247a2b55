//! The JSON that LinguaGacha and AiNiee share: a list of `{src, dst, info, …}`
//! objects or a `{src: dst}` object, read with the keys of every object in file
//! order and duplicates kept (a JSON object read into a map would keep the last of
//! two equal keys and drop the other without a word), and written with a 4-space
//! indent and non-ASCII characters unescaped, as both tools write it.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::formats::text::parse_json;
use crate::{At, ReadError};

/// A JSON value whose objects keep their keys in file order, duplicates included.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl fmt::Display for Json {
    /// What a value is, for an error: `the number 5`, `a list`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(value) => write!(f, "the boolean {value}"),
            Json::Number(number) => write!(f, "the number {number}"),
            Json::String(text) => write!(f, "the string {}", serde_json::Value::String(text.clone())),
            Json::Array(_) => f.write_str("a list"),
            Json::Object(_) => f.write_str("an object"),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, value: bool) -> Result<Json, E> {
        Ok(Json::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Json, E> {
        Ok(Json::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Json, E> {
        Ok(Json::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Json, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Json, E> {
        Ok(Json::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Json, E> {
        Ok(Json::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut pairs = Vec::new();
        while let Some(pair) = map.next_entry::<String, Json>()? {
            pairs.push(pair);
        }
        Ok(Json::Object(pairs))
    }
}

/// A glossary file: a list of objects or a `{src: dst}` object.
pub(super) enum Document {
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Parses `bytes`; `shape` says what the tool expects, for the error when the top
/// level is neither a list nor an object.
pub(super) fn parse(bytes: &[u8], shape: &str) -> Result<Document, ReadError> {
    match parse_json::<Json>(bytes)? {
        Json::Array(items) => Ok(Document::List(items)),
        Json::Object(pairs) => Ok(Document::Object(pairs)),
        other => Err(ReadError::file(format!("{shape}, not {other}"))),
    }
}

/// One object of a list: its place and its keys in file order, each key once.
pub(super) struct Item<'a> {
    pub(super) at: At,
    pub(super) pairs: &'a [(String, Json)],
}

impl<'a> Item<'a> {
    /// The object at `at`, or an error when it is not an object or repeats a key.
    pub(super) fn new(at: At, json: &'a Json) -> Result<Item<'a>, ReadError> {
        let Json::Object(pairs) = json else {
            return Err(ReadError::at(at, "entry", format!("must be an object, not {json}")));
        };
        for (index, (key, _)) in pairs.iter().enumerate() {
            if pairs[..index].iter().any(|(earlier, _)| earlier == key) {
                return Err(ReadError::at(at, key, "appears twice in the entry"));
            }
        }
        Ok(Item { at, pairs })
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Json> {
        self.pairs.iter().find(|(name, _)| name == key).map(|(_, value)| value)
    }

    /// A string field, trimmed; absent or null is `None`, any other type an error.
    pub(super) fn text(&self, key: &str) -> Result<Option<&'a str>, ReadError> {
        match self.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(text)) => Ok(Some(text.trim())),
            Some(other) => Err(ReadError::at(self.at.clone(), key, format!("must be a string, not {other}"))),
        }
    }

    /// A boolean field; absent or null is `false`, any other type an error.
    pub(super) fn flag(&self, key: &str) -> Result<bool, ReadError> {
        match self.get(key) {
            None | Some(Json::Null) => Ok(false),
            Some(Json::Bool(value)) => Ok(*value),
            Some(other) => Err(ReadError::at(self.at.clone(), key, format!("must be true or false, not {other}"))),
        }
    }
}

/// The text of a `{src: dst}` object's value, trimmed (null is empty).
pub(super) fn object_dst(at: &At, value: &Json) -> Result<String, ReadError> {
    match value {
        Json::Null => Ok(String::new()),
        Json::String(text) => Ok(text.trim().to_owned()),
        other => Err(ReadError::at(at.clone(), "dst", format!("must be a string, not {other}"))),
    }
}

/// `value` as JSON with a 4-space indent, non-ASCII unescaped, and a final newline.
pub(super) fn pretty<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    // Serializing plain strings and booleans into a vector cannot fail.
    if value.serialize(&mut serializer).is_ok() {
        bytes.push(b'\n');
    }
    bytes
}

/// A value shortened for a report, as JSON.
pub(super) fn shown(value: &Json) -> String {
    let text = match value {
        Json::Null => "null".to_owned(),
        Json::Bool(value) => value.to_string(),
        Json::Number(number) => number.to_string(),
        Json::String(text) => serde_json::Value::String(text.clone()).to_string(),
        Json::Array(_) => "[…]".to_owned(),
        Json::Object(_) => "{…}".to_owned(),
    };
    super::xlsx::short(&text)
}
