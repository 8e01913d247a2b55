//! The XML under TBX: bytes decoded (UTF-8, or UTF-16 with a byte order mark, or the
//! legacy encoding the XML declaration names) and parsed with quick-xml into a small
//! element tree, every element with its line.
//!
//! Only well-formed XML gets through, and every error names a line and a column. No
//! DTD is ever read: a `<!DOCTYPE>` is noted and skipped, nothing it names is
//! fetched, no entity it declares is expanded, and a reference to any entity other
//! than the five XML predefines (`&lt;` `&gt;` `&amp;` `&apos;` `&quot;`) or a
//! character reference is an error. That also makes entity-expansion attacks
//! impossible.

use std::borrow::Cow;

use quick_xml::events::{BytesRef, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use quick_xml::XmlVersion;

use crate::formats::text::{utf8, without_bom};
use crate::{At, ReadError};

/// Deeper than any TBX document nests (`tbx/text/body/conceptEntry/langSec/termSec/
/// termNoteGrp/termNote/hi` is 9); a limit keeps hostile input from exhausting the
/// stack of the recursive readers above.
const MAX_DEPTH: usize = 64;

/// An element: its namespace (resolved), local name, attributes and children.
#[derive(Debug)]
pub(super) struct Element {
    /// The namespace URI, `None` when unbound.
    pub ns: Option<String>,
    /// The local name.
    pub name: String,
    /// The name as written (with its prefix), for reports.
    pub qname: String,
    /// Attributes as (qualified name as written, value with references resolved).
    pub attrs: Vec<(String, String)>,
    /// Child elements and text, in document order.
    pub children: Vec<Node>,
    /// The line of the start tag, from 1.
    pub line: u64,
}

/// A child of an element.
#[derive(Debug)]
pub(super) enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    /// The value of attribute `name` (qualified as written: `xml:lang`), if present.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// The child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|node| match node {
            Node::Element(element) => Some(element),
            Node::Text(_) => None,
        })
    }

    /// All the text inside, markup removed, trimmed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.collect_text(&mut out);
        out.trim().to_owned()
    }

    fn collect_text(&self, out: &mut String) {
        for child in &self.children {
            match child {
                Node::Text(text) => out.push_str(text),
                Node::Element(element) => element.collect_text(out),
            }
        }
    }
}

/// A parsed document.
#[derive(Debug)]
pub(super) struct Document {
    /// The root element.
    pub root: Element,
    /// Whether the document had a `<!DOCTYPE>` (skipped).
    pub doctype: bool,
    /// The legacy encoding the XML declaration named and the bytes were decoded from
    /// (`windows-1254`); `None` for UTF-8 and UTF-16.
    pub legacy_encoding: Option<&'static str>,
}

/// Decodes and parses `bytes`.
pub(super) fn parse(bytes: &[u8]) -> Result<Document, ReadError> {
    let (text, legacy_encoding) = decode(bytes)?;
    check_chars(&text)?;
    let mut document = build(&text)?;
    document.legacy_encoding = legacy_encoding;
    Ok(document)
}

/// UTF-16 (little or big endian) when the file starts with its byte order mark, UTF-8
/// when it starts with UTF-8's; otherwise the encoding its XML declaration names when
/// that is a legacy one lorebank knows by that label (WHATWG's labels: `windows-1254`,
/// `iso-8859-1`, `shift_jis`, `gb2312`, …), and UTF-8 when it names none (or UTF-8, or
/// an encoding lorebank does not know).
fn decode(bytes: &[u8]) -> Result<(Cow<'_, str>, Option<&'static str>), ReadError> {
    let utf16 = if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        Some((encoding_rs::UTF_16LE, rest))
    } else {
        bytes.strip_prefix(b"\xFE\xFF").map(|rest| (encoding_rs::UTF_16BE, rest))
    };
    if let Some((encoding, rest)) = utf16 {
        let text = encoding.decode_without_bom_handling_and_without_replacement(rest).ok_or_else(|| {
            ReadError::file(format!("not valid {} (it starts with its byte order mark)", encoding.name()))
        })?;
        return Ok((text, None));
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Ok((Cow::Borrowed(utf8(without_bom(bytes))?), None));
    }
    match declared_legacy_encoding(bytes) {
        Some(encoding) => Ok((Cow::Owned(decode_legacy(encoding, bytes)?), Some(encoding.name()))),
        None => Ok((Cow::Borrowed(utf8(bytes)?), None)),
    }
}

/// The encoding the XML declaration at the start of `bytes` names (`<?xml version="1.0"
/// encoding="windows-1254"?>`), when it is one other than UTF-8 and UTF-16.
fn declared_legacy_encoding(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let head = bytes.strip_prefix(b"<?xml").filter(|head| head.first().is_some_and(u8::is_ascii_whitespace))?;
    let end = head.iter().take(512).position(|&byte| byte == b'>')?;
    let declaration = std::str::from_utf8(&head[..end]).ok()?;
    let (_, after) = declaration.split_once("encoding")?;
    let value = after.trim_start().strip_prefix('=')?.trim_start();
    let quote = value.chars().next().filter(|&c| c == '"' || c == '\'')?;
    let (label, _) = value[1..].split_once(quote)?;
    let encoding = encoding_rs::Encoding::for_label(label.trim().as_bytes())?;
    let unicode = [encoding_rs::UTF_8, encoding_rs::UTF_16LE, encoding_rs::UTF_16BE, encoding_rs::REPLACEMENT];
    (!unicode.contains(&encoding)).then_some(encoding)
}

/// `bytes` decoded as `encoding`, or an error naming the line of the first byte
/// sequence that is not in it.
fn decode_legacy(encoding: &'static encoding_rs::Encoding, bytes: &[u8]) -> Result<String, ReadError> {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::with_capacity(
        decoder.max_utf8_buffer_length_without_replacement(bytes.len()).unwrap_or(bytes.len().saturating_mul(3)),
    );
    let (result, read) = decoder.decode_to_string_without_replacement(bytes, &mut text, true);
    match result {
        encoding_rs::DecoderResult::InputEmpty => Ok(text),
        encoding_rs::DecoderResult::Malformed(bad, after) => {
            let offset = read.saturating_sub(usize::from(bad) + usize::from(after));
            let line = text.bytes().filter(|&byte| byte == b'\n').count() as u64 + 1;
            Err(ReadError {
                limit: None,
                at: Some(At::Line(line)),
                field: None,
                message: format!(
                    "not {} as the XML declaration says (malformed bytes at offset {offset})",
                    encoding.name()
                ),
            })
        }
        // The buffer is as large as the decoder asks for the whole input.
        encoding_rs::DecoderResult::OutputFull => {
            Err(ReadError::file(format!("cannot decode the file as {}", encoding.name())))
        }
    }
}

/// Whether XML 1.0 allows `c` in a document.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Refuses a character XML 1.0 does not allow (a control character), naming where.
fn check_chars(text: &str) -> Result<(), ReadError> {
    match text.char_indices().find(|&(_, c)| !xml_char(c)) {
        Some((offset, c)) => {
            let (line, column) = line_column(text, offset as u64);
            Err(ReadError {
                limit: None,
                at: Some(At::Line(line)),
                field: None,
                message: format!("invalid XML: column {column}: character U+{:04X} is not allowed in XML", c as u32),
            })
        }
        None => Ok(()),
    }
}

/// The line and column (in characters, both from 1) of byte `offset` of `text`.
pub(super) fn line_column(text: &str, offset: u64) -> (u64, u64) {
    let bytes = text.as_bytes();
    let end = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
    let before = &bytes[..end];
    let line = before.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
    let line_start = before.iter().rposition(|&byte| byte == b'\n').map_or(0, |index| index + 1);
    // Characters, not bytes: count the bytes that start a UTF-8 sequence.
    let column = before[line_start..].iter().filter(|&&byte| byte & 0xC0 != 0x80).count() as u64 + 1;
    (line, column)
}

/// The line of each start tag, counted on from the previous one: the reader moves
/// forward only, so a document is scanned once, not once per element.
struct Lines {
    offset: usize,
    line: u64,
}

impl Lines {
    fn line_at(&mut self, text: &str, offset: u64) -> u64 {
        let offset = usize::try_from(offset).unwrap_or(usize::MAX).min(text.len());
        if offset > self.offset {
            let skipped = &text.as_bytes()[self.offset..offset];
            self.line += skipped.iter().filter(|&&byte| byte == b'\n').count() as u64;
            self.offset = offset;
        }
        self.line
    }
}

fn invalid(text: &str, offset: u64, message: impl std::fmt::Display) -> ReadError {
    let (line, column) = line_column(text, offset);
    ReadError {
        limit: None,
        at: Some(At::Line(line)),
        field: None,
        message: format!("invalid XML: column {column}: {message}"),
    }
}

fn build(text: &str) -> Result<Document, ReadError> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut doctype = false;
    let mut lines = Lines { offset: 0, line: 1 };
    loop {
        let start = reader.buffer_position();
        let (ns, event) = match reader.read_resolved_event() {
            Ok(resolved) => resolved,
            Err(error) => return Err(invalid(text, reader.error_position(), error)),
        };
        match event {
            Event::Start(tag) | Event::Empty(tag) if root.is_some() && stack.is_empty() => {
                return Err(invalid(text, start, format!("a second root element <{}>", tag.name().0)));
            }
            Event::Start(ref tag) | Event::Empty(ref tag) => {
                let empty = matches!(event, Event::Empty(_));
                if stack.len() >= MAX_DEPTH {
                    return Err(invalid(text, start, format!("elements nested deeper than {MAX_DEPTH}")));
                }
                let ns = match ns {
                    ResolveResult::Bound(ns) => Some(ns.0.to_owned()),
                    ResolveResult::Unbound => None,
                    ResolveResult::Unknown(prefix) => {
                        return Err(invalid(text, start, format!("undeclared namespace prefix `{prefix}`")));
                    }
                };
                let mut attrs = Vec::new();
                for attr in tag.attributes() {
                    let attr = attr.map_err(|error| invalid(text, start, attribute_error(&error.to_string())))?;
                    let value =
                        attr.normalized_value(XmlVersion::Implicit1_0).map_err(|error| invalid(text, start, error))?;
                    attrs.push((attr.key.0.to_owned(), value.into_owned()));
                }
                let element = Element {
                    ns,
                    name: tag.local_name().as_ref().to_owned(),
                    qname: tag.name().0.to_owned(),
                    attrs,
                    children: Vec::new(),
                    line: lines.line_at(text, start),
                };
                if empty {
                    close(element, &mut stack, &mut root);
                } else {
                    stack.push(element);
                }
            }
            Event::End(_) => {
                // quick-xml has checked that the end tag matches the open element.
                if let Some(element) = stack.pop() {
                    close(element, &mut stack, &mut root);
                }
            }
            Event::Text(content) => push_text(text, start, &mut stack, &content.xml10_content())?,
            Event::CData(content) => push_text(text, start, &mut stack, &content.xml10_content())?,
            Event::GeneralRef(reference) => {
                let resolved = resolve(&reference).map_err(|message| invalid(text, start, message))?;
                push_text(text, start, &mut stack, &resolved)?;
            }
            Event::DocType(_) => doctype = true,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::Eof => {
                if let Some(open) = stack.last() {
                    let message = format!("the document ends inside <{}> (opened on line {})", open.qname, open.line);
                    return Err(invalid(text, text.len() as u64, message));
                }
                return match root {
                    Some(root) => Ok(Document { root, doctype, legacy_encoding: None }),
                    None => Err(ReadError::file("invalid XML: no root element")),
                };
            }
        }
    }
}

/// quick-xml's message about a malformed attribute, without the offset inside the tag
/// it starts with (the error names the tag's column instead).
fn attribute_error(message: &str) -> String {
    let message = match message.strip_prefix("position ") {
        Some(rest) => rest.split_once(": ").map_or(message, |(_, rest)| rest),
        None => message,
    };
    format!("in the tag starting here: {message}")
}

fn close(element: Element, stack: &mut [Element], root: &mut Option<Element>) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(Node::Element(element)),
        None => *root = Some(element),
    }
}

fn push_text(text: &str, start: u64, stack: &mut [Element], content: &str) -> Result<(), ReadError> {
    let Some(parent) = stack.last_mut() else {
        if content.trim().is_empty() {
            return Ok(());
        }
        let rest = usize::try_from(start).ok().and_then(|start| text.get(start..)).unwrap_or("");
        let leading = rest.len() - rest.trim_start().len();
        return Err(invalid(text, start + leading as u64, "text outside the root element"));
    };
    match parent.children.last_mut() {
        Some(Node::Text(previous)) => previous.push_str(content),
        _ => parent.children.push(Node::Text(content.to_owned())),
    }
    Ok(())
}

/// A predefined entity or a character reference; anything else is refused (no DTD
/// is read, so no other entity is defined).
fn resolve(reference: &BytesRef<'_>) -> Result<String, String> {
    let name: &str = reference;
    let predefined = match name {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "apos" => Some('\''),
        "quot" => Some('"'),
        _ => None,
    };
    if let Some(c) = predefined {
        return Ok(c.to_string());
    }
    match reference.resolve_char_ref() {
        Ok(Some(c)) if xml_char(c) => Ok(c.to_string()),
        Ok(Some(c)) => Err(format!("character reference &{name}; is U+{:04X}, which XML does not allow", c as u32)),
        Ok(None) => Err(format!(
            "undefined entity &{name}; (lorebank reads no DTD: only &lt; &gt; &amp; &apos; &quot; and character references)"
        )),
        Err(error) => Err(format!("bad character reference &{name};: {error}")),
    }
}
