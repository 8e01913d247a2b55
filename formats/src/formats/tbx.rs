//! TBX: reads TBX 2008 (`<martif>`, `termEntry/langSet/(tig|ntig/termGrp)/term`) and
//! TBX v3 (`<tbx>` in `urn:iso:std:iso:30042:ed-2`, `conceptEntry/langSec/termSec/
//! term`, TBX-Basic, TBX-Min or TBX-Core, DCA or DCT style); writes TBX-Basic 2019 in
//! DCA style (`tbx`) and TBX-Basic 2008 (`tbx-2008`), the same concepts and data
//! categories in the elements of each generation. docs/formats.md maps every element.
//!
//! One concept is one entry. Its terms in the book's source language are `src` (the
//! first) and aliases (the others), its first term in the target language is `dst`;
//! `grammaticalGender` is `gender`, the concept's `subjectField` is `kind`, `<note>`s
//! are `note`, and the target term's notes starting `decl:` are the declension forms.
//! Everything else a concept holds is reported lost, with its value.

use ledger_model::{AliasKind, Gender};

use crate::formats::tbx_xml::{self, Element, Node};
use crate::{
    Alias, At, Entry, ExportInput, Exported, Fields, Format, Languages, Lost, Notice, Parsed, ReadError, Skipped, Term,
    WriteError,
};

pub(super) const FIELDS: Fields =
    Fields(Fields::DST.0 | Fields::NOTE.0 | Fields::KIND.0 | Fields::GENDER.0 | Fields::DECL.0 | Fields::ALIASES.0);

/// The namespace of TBX v3 (ISO 30042:2019).
const TBX_NS: &str = "urn:iso:std:iso:30042:ed-2";
/// The namespaces of the DCT-style data categories of TBX-Basic and TBX-Min.
const DCT_NS: [&str; 2] = ["http://www.tbxinfo.net/ns/basic", "http://www.tbxinfo.net/ns/min"];
/// The dialects of TBX v3 whose data categories are all TBX-Basic's.
const DIALECTS: [&str; 3] = ["TBX-Basic", "TBX-Min", "TBX-Core"];
/// The prefix of a note that holds one declension form.
const DECL_PREFIX: &str = "decl:";

/// The element names of one generation of TBX.
struct Dialect {
    /// The namespace of its own elements (`None`: TBX 2008 has none).
    ns: Option<&'static str>,
    concept: &'static str,
    language: &'static str,
    /// The elements that hold one term.
    terms: &'static [&'static str],
}

const TBX_2008: Dialect = Dialect { ns: None, concept: "termEntry", language: "langSet", terms: &["tig", "ntig"] };
const TBX_V3: Dialect = Dialect { ns: Some(TBX_NS), concept: "conceptEntry", language: "langSec", terms: &["termSec"] };

pub(super) fn read(bytes: &[u8], languages: &Languages) -> Result<Parsed, ReadError> {
    let document = tbx_xml::parse(bytes)?;
    let root = &document.root;
    let dialect = dialect(root)?;
    let mut parsed = Parsed::default();
    if let Some(encoding) = document.legacy_encoding {
        parsed.notices.push(Notice {
            at: None,
            message: format!("decoded as {encoding}, the encoding the XML declaration names"),
        });
    }
    if document.doctype {
        parsed.notices.push(Notice {
            at: None,
            message: "the <!DOCTYPE> was skipped: lorebank fetches no DTD and expands no entity one declares".into(),
        });
    }
    let own = |element: &Element, name: &str| element.ns.as_deref() == dialect.ns && element.name == name;
    let Some(text) = root.elements().find(|element| own(element, "text")) else {
        return Err(ReadError::at(At::Line(root.line), "text", format!("<{}> has no <text> element", root.qname)));
    };
    let Some(body) = text.elements().find(|element| own(element, "body")) else {
        return Err(ReadError::at(At::Line(text.line), "body", "<text> has no <body> element"));
    };
    for element in text.elements().filter(|element| !own(element, "body")) {
        parsed.lost.push(lost(At::File, &element.qname, &element.text()));
    }
    let mut number = 0;
    for element in body.elements() {
        if !own(element, dialect.concept) {
            parsed.lost.push(lost(At::File, &element.qname, &element.text()));
            continue;
        }
        number += 1;
        read_concept(&dialect, element, number, languages, &mut parsed)?;
    }
    Ok(parsed)
}

/// The generation of TBX `root` is, or why it is none lorebank reads.
fn dialect(root: &Element) -> Result<Dialect, ReadError> {
    let at = At::Line(root.line);
    match root.name.as_str() {
        "martif" => match &root.ns {
            None => Ok(TBX_2008),
            // translate-toolkit accepts a martif in any default namespace; no tool is
            // known to write one, and TBX 2008 has none (docs/formats.md).
            Some(ns) if ns == TBX_NS => Err(ReadError::at(
                at,
                "xmlns",
                format!(
                    "a TBX 2008 <martif> is in no namespace, this one is in {ns:?}, the namespace of TBX v3's <tbx>: \
                     remove the xmlns attribute to read it as TBX 2008"
                ),
            )),
            Some(ns) => Err(ReadError::at(
                at,
                "xmlns",
                format!("a TBX 2008 <martif> is in no namespace, this one is in {ns:?}"),
            )),
        },
        "tbx" => {
            if root.ns.as_deref() != Some(TBX_NS) {
                let ns = root.ns.as_deref().unwrap_or("no namespace");
                return Err(ReadError::at(at, "xmlns", format!("a TBX v3 <tbx> is in namespace {TBX_NS}, not {ns}")));
            }
            match root.attr("type") {
                Some(kind) if DIALECTS.contains(&kind) => {}
                Some(kind) => {
                    return Err(ReadError::at(
                        at,
                        "type",
                        format!("unknown TBX dialect {kind:?} (lorebank reads TBX-Basic, TBX-Min and TBX-Core)"),
                    ));
                }
                None => return Err(ReadError::at(at, "type", "<tbx> has no type (the dialect, e.g. TBX-Basic)")),
            }
            match root.attr("style") {
                Some("dca" | "dct") => Ok(TBX_V3),
                Some(style) => Err(ReadError::at(at, "style", format!("unknown TBX style {style:?} (dca or dct)"))),
                None => Err(ReadError::at(at, "style", "<tbx> has no style (dca or dct)")),
            }
        }
        _ => Err(ReadError::at(
            at,
            "root",
            format!("the root element <{}> is neither <martif> (TBX 2008) nor <tbx> (TBX v3)", root.qname),
        )),
    }
}

/// What a child of a concept, language section or term holds.
enum Item<'a> {
    /// A data category: `<termNote type="X">` (DCA or TBX 2008) or `<basic:X>` (DCT).
    Category(&'a str, &'a Element),
    /// A `<note>`.
    Note(&'a Element),
    /// A group: its first element is the item, the rest qualify it.
    Group(&'a Element),
    /// Anything else.
    Other(&'a Element),
}

fn classify<'a>(dialect: &Dialect, element: &'a Element) -> Item<'a> {
    if element.ns.as_deref() == dialect.ns {
        match element.name.as_str() {
            "note" => Item::Note(element),
            "termNote" | "descrip" | "admin" | "ref" | "xref" | "transac" => {
                Item::Category(element.attr("type").unwrap_or(element.name.as_str()), element)
            }
            "termNoteGrp" | "descripGrp" | "adminGrp" | "transacGrp" => Item::Group(element),
            _ => Item::Other(element),
        }
    } else if element.ns.as_deref().is_some_and(|ns| DCT_NS.contains(&ns)) {
        Item::Category(element.name.as_str(), element)
    } else {
        Item::Other(element)
    }
}

/// Where an item sits, which decides what it can map to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Concept,
    Language,
    Source,
    Alias,
    Target,
}

/// What one concept maps to, gathered in document order.
struct Concept {
    at: At,
    src: Option<String>,
    aliases: Vec<Alias>,
    dst: Option<String>,
    kind: Option<String>,
    gender: Option<Gender>,
    decl: Vec<String>,
    notes: Vec<String>,
    lost: Vec<Lost>,
    notices: Vec<Notice>,
}

impl Concept {
    /// `text` on one line, as lorebank keeps terms, kinds and forms: a run of white
    /// space holding a line break or tab (an indented document wraps long terms)
    /// becomes one space, with a notice.
    fn one_line(&mut self, element: &str, text: String) -> String {
        let breaks = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
        if !text.contains(breaks) {
            return text;
        }
        self.notices.push(Notice {
            at: Some(self.at.clone()),
            message: format!("a line break or tab inside <{element}> read as a space"),
        });
        text.split(|c: char| c.is_whitespace() || breaks(c))
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn read_concept(
    dialect: &Dialect,
    element: &Element,
    number: u64,
    languages: &Languages,
    parsed: &mut Parsed,
) -> Result<(), ReadError> {
    let at = match element.attr("id").map(str::trim) {
        Some(id) if !id.is_empty() => At::Uid(id.to_owned()),
        _ => At::Entry(number),
    };
    let mut concept = Concept {
        at: at.clone(),
        src: None,
        aliases: Vec::new(),
        dst: None,
        kind: None,
        gender: None,
        decl: Vec::new(),
        notes: Vec::new(),
        lost: Vec::new(),
        notices: Vec::new(),
    };
    stray_text(element, &mut concept);
    for child in element.elements() {
        if child.ns.as_deref() != dialect.ns || child.name != dialect.language {
            item(dialect, child, Level::Concept, &mut concept);
            continue;
        }
        let Some(lang) = child.attr("xml:lang").map(str::trim).filter(|lang| !lang.is_empty()) else {
            return Err(ReadError::at(
                at,
                "xml:lang",
                format!("<{}> on line {} has no xml:lang", child.qname, child.line),
            ));
        };
        let terms = child
            .elements()
            .filter(|term| term.ns.as_deref() == dialect.ns && dialect.terms.contains(&term.name.as_str()))
            .map(|term| term_parts(dialect, term, &at))
            .collect::<Result<Vec<_>, _>>()?;
        let source = same_language(lang, &languages.source);
        let target = same_language(lang, &languages.target);
        // When the book translates within one language, the first section is the source.
        let is_source = source && !(target && concept.src.is_some());
        if !is_source && !target {
            let surfaces: Vec<&str> = terms.iter().map(|(text, _)| text.as_str()).collect();
            concept.lost.push(lost(at.clone(), &child.qname, &format!("{lang}: {}", surfaces.join("; "))));
            continue;
        }
        stray_text(child, &mut concept);
        let mut terms = terms.into_iter();
        for grandchild in child.elements() {
            if grandchild.ns.as_deref() == dialect.ns && dialect.terms.contains(&grandchild.name.as_str()) {
                let Some((text, items)) = terms.next() else { continue };
                let text = if is_source || concept.dst.is_none() { concept.one_line("term", text) } else { text };
                let level = if is_source {
                    if concept.src.is_none() {
                        concept.src = Some(text);
                        Level::Source
                    } else {
                        concept.aliases.push(Alias { surface: text, kind: AliasKind::Variant, window: None });
                        Level::Alias
                    }
                } else if concept.dst.is_none() {
                    concept.dst = Some(text);
                    Level::Target
                } else {
                    concept.lost.push(lost(at.clone(), "term", &text));
                    continue;
                };
                for entry in items {
                    item(dialect, entry, level, &mut concept);
                }
            } else {
                item(dialect, grandchild, Level::Language, &mut concept);
            }
        }
    }
    let Some(src) = concept.src else {
        parsed.skipped.push(Skipped { at, reason: format!("no term in the source language {}", languages.source) });
        return Ok(());
    };
    let Some(dst) = concept.dst else {
        parsed.skipped.push(Skipped { at, reason: "no dst".into() });
        return Ok(());
    };
    parsed.lost.append(&mut concept.lost);
    parsed.notices.append(&mut concept.notices);
    let note = (!concept.notes.is_empty()).then(|| concept.notes.join("\n"));
    parsed.entries.push(Entry {
        at,
        term: Term {
            kind: concept.kind,
            gender: concept.gender,
            decl: concept.decl,
            note,
            aliases: concept.aliases,
            ..Term::new(src, dst)
        },
    });
    Ok(())
}

/// The term of a `termSec`, `tig` or `ntig` (whose `termGrp` holds the term and its
/// `termNote`s) and the elements that describe it.
fn term_parts<'a>(dialect: &Dialect, element: &'a Element, at: &At) -> Result<(String, Vec<&'a Element>), ReadError> {
    let own = |child: &Element, name: &str| child.ns.as_deref() == dialect.ns && child.name == name;
    let mut items: Vec<&Element> = Vec::new();
    for child in element.elements() {
        if element.name == "ntig" && own(child, "termGrp") {
            items.extend(child.elements());
        } else {
            items.push(child);
        }
    }
    let Some(position) = items.iter().position(|child| own(child, "term")) else {
        return Err(ReadError::at(
            at.clone(),
            "term",
            format!("<{}> on line {} has no <term>", element.qname, element.line),
        ));
    };
    let term = items.remove(position);
    let text = term.text();
    if text.is_empty() {
        return Err(ReadError::at(at.clone(), "term", format!("empty <term> on line {}", term.line)));
    }
    // Markup inside the term (`<hi>`) is flattened to its text; the markup is lost.
    let mut items_with_markup = items;
    items_with_markup.extend(term.elements());
    Ok((text, items_with_markup))
}

/// Maps one item at `level`, or reports it lost.
fn item(dialect: &Dialect, element: &Element, level: Level, concept: &mut Concept) {
    let at = concept.at.clone();
    match classify(dialect, element) {
        Item::Note(note) => {
            let text = flat_text(note, concept);
            match (level, text.strip_prefix(DECL_PREFIX).map(str::trim)) {
                // An empty note says nothing; lorebank keeps no empty note or form.
                _ if text.is_empty() => {}
                (Level::Target, Some("")) => {}
                (Level::Target, Some(form)) => {
                    let form = concept.one_line("note", form.to_owned());
                    concept.decl.push(form);
                }
                (Level::Alias, _) => concept.lost.push(lost(at, "note", &text)),
                _ => concept.notes.push(text),
            }
        }
        Item::Category("partOfSpeech", pos) if pos.text() == "noun" && level != Level::Concept => {}
        Item::Category("subjectField", field) if level == Level::Concept && concept.kind.is_none() => {
            let kind = flat_text(field, concept);
            concept.kind = Some(concept.one_line(&field.qname, kind)).filter(|kind| !kind.is_empty());
        }
        Item::Category("grammaticalGender", gender) if level == Level::Target && concept.gender.is_none() => {
            let value = gender.text();
            match value.as_str() {
                "masculine" => concept.gender = Some(Gender::Masculine),
                "feminine" => concept.gender = Some(Gender::Feminine),
                "neuter" => concept.gender = Some(Gender::Neuter),
                _ => concept.lost.push(lost(at, "grammaticalGender", &value)),
            }
        }
        Item::Category(name, category) => concept.lost.push(lost(at, name, &value(category))),
        Item::Group(group) => {
            let mut children = group.elements();
            if let Some(head) = children.next() {
                item(dialect, head, level, concept);
            }
            for child in children {
                concept.lost.push(lost(at.clone(), &format!("{}/{}", group.qname, child.qname), &child.text()));
            }
        }
        Item::Other(other) => concept.lost.push(lost(at, &other.qname, &value(other))),
    }
}

/// What a lost element says: its text, and where a `ref` or `xref` points.
fn value(element: &Element) -> String {
    match element.attr("target") {
        Some(target) => format!("{} → {target}", element.text()),
        None => element.text(),
    }
}

/// The text of a mapped element; markup inside it (`<hi>`) is reported lost.
fn flat_text(element: &Element, concept: &mut Concept) -> String {
    for child in element.elements() {
        concept.lost.push(lost(concept.at.clone(), &child.qname, &child.text()));
    }
    element.text()
}

/// Text directly inside a structural element is not TBX; it is reported lost.
fn stray_text(element: &Element, concept: &mut Concept) {
    for child in &element.children {
        if let Node::Text(text) = child {
            if !text.trim().is_empty() {
                concept.lost.push(lost(concept.at.clone(), &format!("text in <{}>", element.qname), text.trim()));
            }
        }
    }
}

/// Whether language tag `tag` (`zh-CN`) is in language `book` (`zh`): their primary
/// subtags are equal, ignoring case.
fn same_language(tag: &str, book: &str) -> bool {
    let primary = |tag: &str| tag.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
    let primary_tag = primary(tag);
    !primary_tag.is_empty() && primary_tag == primary(book)
}

fn lost(at: At, field: &str, value: &str) -> Lost {
    Lost { at, field: field.to_owned(), value: Some(short(value)) }
}

/// A lost value, at most 60 characters.
fn short(text: &str) -> String {
    let mut short: String = text.chars().take(60).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// TBX-Basic 2019, DCA style: the document shape of docs/formats.md, one
/// `conceptEntry` per term (id = record id) in the order given (id order).
pub(super) fn write(input: &ExportInput) -> Result<Exported, WriteError> {
    write_as(&V3_OUT, input)
}

/// TBX-Basic 2008 (`martif`): the same concepts, terms and data categories as
/// [`write`], in the elements of TBX 2008 (`termEntry`, `langSet`, `tig`).
pub(super) fn write_2008(input: &ExportInput) -> Result<Exported, WriteError> {
    write_as(&TBX_2008_OUT, input)
}

/// What one generation of TBX writes around the same concepts.
struct Written {
    format: Format,
    dialect: Dialect,
    /// The document up to `<text>`, given the source language (an attribute value)
    /// and what the export is for.
    head: fn(&str, &str) -> String,
    /// The closing tag of the root.
    root_end: &'static str,
}

const V3_OUT: Written = Written { format: Format::Tbx, dialect: TBX_V3, head: v3_head, root_end: "</tbx>" };
const TBX_2008_OUT: Written =
    Written { format: Format::Tbx2008, dialect: TBX_2008, head: martif_head, root_end: "</martif>" };

fn v3_head(source_lang: &str, description: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <?xml-model href=\"https://raw.githubusercontent.com/LTAC-Global/TBX_Core_RNG/master/TBXcoreStructV03.rng\" \
         type=\"application/xml\" schematypens=\"http://relaxng.org/ns/structure/1.0\"?>\n\
         <?xml-model href=\"https://raw.githubusercontent.com/LTAC-Global/TBX-Basic_dialect/master/DCA/TBX-Basic_DCA.sch\" \
         type=\"application/xml\" schematypens=\"http://purl.oclc.org/dsdl/schematron\"?>\n\
         <tbx type=\"TBX-Basic\" style=\"dca\" xml:lang=\"{source_lang}\" xmlns=\"{TBX_NS}\">\n\
         \x20 <tbxHeader>\n    <fileDesc>\n      <sourceDesc>\n        <p>{description}</p>\n      </sourceDesc>\n    \
         </fileDesc>\n  </tbxHeader>\n"
    )
}

/// The TBX-Basic 2008 header: no DOCTYPE (a reader would have to fetch the DTD by
/// a relative name), the XCS of TBX-Basic named as the LISA sample names it.
fn martif_head(source_lang: &str, description: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <martif type=\"TBX-Basic\" xml:lang=\"{source_lang}\">\n\
         \x20 <martifHeader>\n    <fileDesc>\n      <sourceDesc>\n        <p>{description}</p>\n      </sourceDesc>\n    \
         </fileDesc>\n    <encodingDesc>\n      <p type=\"XCSURI\">{TBX_BASIC_2008_XCS}</p>\n    </encodingDesc>\n  \
         </martifHeader>\n"
    )
}

/// The XCS (data categories and picklists) of TBX-Basic 2008, as its sample names it.
const TBX_BASIC_2008_XCS: &str = "TBXBasicXCSV02.xcs";

/// Writes `input` in the shape of `out`: one concept per term (id = record id) in the
/// order given (id order); the source-language section holds `src` and the aliases,
/// the target-language section the rendering with its gender and declension forms.
fn write_as(out: &Written, input: &ExportInput) -> Result<Exported, WriteError> {
    let Dialect { concept, language, terms, .. } = out.dialect;
    let term_element = terms[0];
    if input.terms.is_empty() {
        return Err(WriteError {
            format: out.format,
            message: format!("a TBX body holds at least one {concept}, and there is no term to export"),
        });
    }
    let mut lost = Vec::new();
    let source_lang = attribute(&input.source_lang);
    let target_lang = attribute(&input.target_lang);
    let description = match input.chapter {
        Some(chapter) => format!("lorebank export for chapter {chapter}"),
        None => "lorebank export".to_owned(),
    };
    let mut doc = (out.head)(&source_lang, &description);
    doc.push_str("  <text>\n    <body>\n");
    for export in &input.terms {
        let term = &export.term;
        let at = At::Record(export.id);
        let mut text = |field: &str, value: &str| {
            let (escaped, removed) = escape_text(value);
            if let Some(c) = removed {
                lost.push(Lost {
                    at: at.clone(),
                    field: field.to_owned(),
                    value: Some(format!("character U+{:04X} dropped: XML cannot hold it", c as u32)),
                });
            }
            escaped
        };
        doc.push_str(&format!("      <{concept} id=\"{}\">\n", export.id));
        if let Some(kind) = &term.kind {
            doc.push_str(&format!("        <descrip type=\"subjectField\">{}</descrip>\n", text("kind", kind)));
        }
        if let Some(note) = &term.note {
            doc.push_str(&format!("        <note>{}</note>\n", text("note", note)));
        }
        doc.push_str(&format!("        <{language} xml:lang=\"{source_lang}\">\n"));
        let mut surfaces = vec![text("src", &term.src)];
        surfaces.extend(term.aliases.iter().map(|alias| text("aliases", &alias.surface)));
        for surface in surfaces {
            doc.push_str(&format!(
                "          <{term_element}>\n            <term>{surface}</term>\n            \
                 <termNote type=\"partOfSpeech\">noun</termNote>\n          </{term_element}>\n"
            ));
        }
        doc.push_str(&format!("        </{language}>\n"));
        doc.push_str(&format!("        <{language} xml:lang=\"{target_lang}\">\n          <{term_element}>\n"));
        doc.push_str(&format!("            <term>{}</term>\n", text("dst", &term.dst)));
        doc.push_str("            <termNote type=\"partOfSpeech\">noun</termNote>\n");
        let gender = match term.gender {
            Some(Gender::Masculine) => Some("masculine"),
            Some(Gender::Feminine) => Some("feminine"),
            Some(Gender::Neuter) => Some("neuter"),
            Some(Gender::Plural) | None => None,
        };
        if let Some(gender) = gender {
            doc.push_str(&format!("            <termNote type=\"grammaticalGender\">{gender}</termNote>\n"));
        }
        for form in &term.decl {
            doc.push_str(&format!("            <note>{DECL_PREFIX} {}</note>\n", text("decl", form)));
        }
        doc.push_str(&format!("          </{term_element}>\n        </{language}>\n      </{concept}>\n"));
        lost.extend(unwritten(&at, term));
    }
    doc.push_str(&format!("    </body>\n  </text>\n{}\n", out.root_end));
    Ok(Exported { bytes: doc.into_bytes(), lost })
}

/// What of `term` no generation of TBX-Basic holds, beyond the fields TBX does not
/// carry at all (which the dispatcher reports).
fn unwritten(at: &At, term: &Term) -> Vec<Lost> {
    let mut lost = Vec::new();
    if term.note.as_deref().is_some_and(|note| note.trim() != note) {
        // A reader trims the text of an element (TBX files are indented).
        lost.push(Lost {
            at: at.clone(),
            field: "note".into(),
            value: Some("white space around the note (a reader trims it)".into()),
        });
    }
    if term.gender == Some(Gender::Plural) {
        lost.push(Lost {
            at: at.clone(),
            field: "gender".into(),
            value: Some("pl (TBX-Basic's grammaticalGender has no plural)".into()),
        });
    }
    for alias in &term.aliases {
        if alias.kind != AliasKind::Variant {
            let kind = format!("{:?}", alias.kind).to_lowercase();
            lost.push(Lost {
                at: at.clone(),
                field: "aliases.kind".into(),
                value: Some(format!("{}: kind {kind}", short(&alias.surface))),
            });
        }
        if let Some(window) = alias.window {
            let until = window.until.map(|until| until.to_string()).unwrap_or_default();
            lost.push(Lost {
                at: at.clone(),
                field: "aliases.window".into(),
                value: Some(format!("{}: window {}..{until}", short(&alias.surface), window.since)),
            });
        }
    }
    lost
}

/// `value` as XML character data, and the first character XML 1.0 cannot hold at all
/// (dropped). A carriage return is written as a reference, which survives parsing.
fn escape_text(value: &str) -> (String, Option<char>) {
    let mut out = String::with_capacity(value.len());
    let mut removed = None;
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'.. => out.push(c),
            _ => {
                removed.get_or_insert(c);
            }
        }
    }
    (out, removed)
}

/// `value` as an attribute value between double quotes; characters XML cannot hold
/// are dropped (language tags never hold them).
fn attribute(value: &str) -> String {
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
            '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'.. => out.push(c),
            _ => {}
        }
    }
    out
}
