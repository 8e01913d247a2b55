//! One module per format family, and what they share: detection, dispatch, and the
//! generic account of what an export cannot hold.

use ledger_model::limits::input::GLOSSARY_FILE_BYTES_MAX;
use ledger_model::{Status, Window};

use crate::{At, ExportInput, Exported, Fields, Format, Languages, Lost, Parsed, ReadError, Term, WriteError};

mod ainiee;
mod galtransl;
mod linguagacha;
mod linguagacha_json;
mod lore;
mod novelai;
mod omegat;
mod sakura;
mod sillytavern;
mod tbx;
mod tbx_xml;
mod text;
mod xlsx;
mod xlsx_bounds;

pub(crate) fn fields(format: Format) -> Fields {
    match format {
        Format::GalTransl => galtransl::FIELDS,
        Format::Sakura | Format::SakuraText => sakura::FIELDS,
        Format::LinguaGacha | Format::LinguaGachaXlsx => linguagacha::FIELDS,
        Format::AiNiee | Format::AiNieeXlsx => ainiee::FIELDS,
        Format::SillyTavern => sillytavern::FIELDS,
        Format::NovelAi => novelai::FIELDS,
        Format::OmegaT | Format::OmegaTCsv => omegat::FIELDS,
        Format::Tbx | Format::Tbx2008 => tbx::FIELDS,
    }
}

pub(crate) fn read(format: Format, bytes: &[u8], languages: &Languages) -> Result<Parsed, ReadError> {
    within_limit(bytes)?;
    match format {
        Format::GalTransl => galtransl::read(bytes),
        Format::Sakura => sakura::read_json(bytes),
        Format::SakuraText => sakura::read_text(bytes),
        Format::LinguaGacha => linguagacha::read_json(bytes),
        Format::LinguaGachaXlsx => linguagacha::read_xlsx(bytes),
        Format::AiNiee => ainiee::read_json(bytes),
        Format::AiNieeXlsx => ainiee::read_xlsx(bytes),
        Format::SillyTavern => sillytavern::read(bytes),
        Format::NovelAi => novelai::read(bytes),
        Format::OmegaT => omegat::read_tsv(bytes),
        Format::OmegaTCsv => omegat::read_csv(bytes),
        Format::Tbx | Format::Tbx2008 => tbx::read(bytes, languages),
    }
}

pub(crate) fn write(format: Format, input: &ExportInput) -> Result<Exported, WriteError> {
    let mut exported = match format {
        Format::GalTransl => galtransl::write(input),
        Format::Sakura => sakura::write_json(input),
        Format::SakuraText => sakura::write_text(input),
        Format::LinguaGacha => linguagacha::write_json(input),
        Format::LinguaGachaXlsx => linguagacha::write_xlsx(input),
        Format::AiNiee => ainiee::write_json(input),
        Format::AiNieeXlsx => ainiee::write_xlsx(input),
        Format::SillyTavern => sillytavern::write(input),
        Format::NovelAi => novelai::write(input),
        Format::OmegaT => omegat::write_tsv(input),
        Format::OmegaTCsv => omegat::write_csv(input),
        Format::Tbx => tbx::write(input),
        Format::Tbx2008 => tbx::write_2008(input),
    }?;
    let mut lost = unheld_fields(format.fields(), input);
    if !format.has_summaries() {
        lost.extend(input.summaries.iter().map(|summary| Lost {
            at: At::Record(summary.id),
            field: "summary".into(),
            value: None,
        }));
    }
    lost.append(&mut exported.lost);
    exported.lost = lost;
    Ok(exported)
}

/// Every field of every term that `carried` leaves out and that holds a value other
/// than its default, in id order then field order.
fn unheld_fields(carried: Fields, input: &ExportInput) -> Vec<Lost> {
    let mut lost = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        for (field, name) in Fields::NAMED {
            if !carried.contains(field) && !is_default(term, field) {
                lost.push(Lost { at: At::Record(export.id), field: name.to_owned(), value: None });
            }
        }
    }
    lost
}

/// Whether `term` holds the default value of `field` (what an import of a format
/// without the field gives a new record).
pub(crate) fn is_default(term: &Term, field: Fields) -> bool {
    match field {
        Fields::SENSE => term.sense.is_none(),
        Fields::DST => false,
        Fields::KIND => term.kind.is_none(),
        Fields::GENDER => term.gender.is_none(),
        Fields::DECL => term.decl.is_empty(),
        Fields::SPEECH => term.speech.is_none(),
        Fields::NOTE => term.note.is_none(),
        Fields::WINDOW => term.window == Window::default(),
        Fields::STATUS => term.status == Status::Approved,
        Fields::PRIORITY => term.priority == 0,
        Fields::CONSTANT => !term.constant,
        Fields::SECONDARY => term.secondary.is_none(),
        Fields::ALIASES => term.aliases.is_empty(),
        _ => true,
    }
}

/// Detects the format of a file from its name and its first bytes.
///
/// By extension: `.lorebook` NovelAI, `.tbx` and `.xml` TBX, `.csv` OmegaT CSV,
/// `.utf8` `.tab` `.tsv` OmegaT, `.xlsx` LinguaGacha or AiNiee by the header of the
/// first sheet. A `.json` file (or one whose content starts with `{` or `[`) by its
/// shape: `lorebookVersion` NovelAI, other `entries` SillyTavern, a list with `regex` or
/// `case_sensitive` LinguaGacha, with `srt` AiNiee, a `{src: dst}` object
/// LinguaGacha, any other list of `{src, dst, info}` Sakura. Any other text: OmegaT
/// when its first line is a `#` comment naming the tab-separated format or a coding,
/// Sakura text when every line that is neither blank nor a `//` or `\\` comment uses
/// `->` and none has a tab, otherwise GalTransl; a file that starts with a UTF-16 byte
/// order mark is OmegaT.
pub fn detect(file_name: &str, bytes: &[u8]) -> Result<Format, ReadError> {
    within_limit(bytes)?;
    let extension = file_name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("lorebook") => return Ok(Format::NovelAi),
        Some("tbx") | Some("xml") => return Ok(Format::Tbx),
        Some("csv") => return Ok(Format::OmegaTCsv),
        Some("utf8") | Some("tab") | Some("tsv") => return Ok(Format::OmegaT),
        Some("xlsx") => return detect_xlsx(bytes),
        _ => {}
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return detect_xlsx(bytes);
    }
    // UTF-16 with a byte order mark: only OmegaT's readers decode it (GalTransl and
    // Sakura read UTF-8); TBX in UTF-16 names itself by its extension.
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Ok(Format::OmegaT);
    }
    let text = text::without_bom(bytes);
    let first = text.iter().copied().find(|byte| !byte.is_ascii_whitespace());
    if extension.as_deref() == Some("json") || matches!(first, Some(b'{') | Some(b'[')) {
        return detect_json(bytes);
    }
    if first == Some(b'<') {
        return Ok(Format::Tbx);
    }
    Ok(detect_text(text))
}

/// Refuses a file over [`GLOSSARY_FILE_BYTES_MAX`], whatever its format.
fn within_limit(bytes: &[u8]) -> Result<(), ReadError> {
    if bytes.len() > GLOSSARY_FILE_BYTES_MAX {
        return Err(ReadError::over_limit(
            "GLOSSARY_FILE_BYTES_MAX",
            GLOSSARY_FILE_BYTES_MAX as u64,
            "bytes",
            format!("the file has {} bytes", bytes.len()),
        ));
    }
    Ok(())
}

fn detect_xlsx(bytes: &[u8]) -> Result<Format, ReadError> {
    match linguagacha::xlsx_header(bytes)?.as_deref() {
        Some("原文") => Ok(Format::AiNieeXlsx),
        _ => Ok(Format::LinguaGachaXlsx),
    }
}

fn detect_json(bytes: &[u8]) -> Result<Format, ReadError> {
    let value: serde_json::Value = text::parse_json(bytes)?;
    Ok(match &value {
        // A NovelAI lorebook has `entries` too.
        serde_json::Value::Object(object) if object.contains_key("lorebookVersion") => Format::NovelAi,
        serde_json::Value::Object(object) if object.contains_key("entries") => Format::SillyTavern,
        serde_json::Value::Object(_) => Format::LinguaGacha,
        serde_json::Value::Array(items) => {
            let has = |key: &str| items.iter().any(|item| item.get(key).is_some());
            if has("regex") || has("case_sensitive") {
                Format::LinguaGacha
            } else if has("srt") {
                Format::AiNiee
            } else {
                Format::Sakura
            }
        }
        _ => return Err(ReadError::file("JSON glossary must be an object or a list")),
    })
}

fn detect_text(text: &[u8]) -> Format {
    let text = String::from_utf8_lossy(text);
    let first_line = text.lines().next().unwrap_or("");
    if first_line.starts_with('#') && (first_line.contains("tab-separated") || first_line.contains("coding:")) {
        return Format::OmegaT;
    }
    // Comment lines (`//`, `\\`) are neither form: manga-image-translator writes them
    // in Sakura text and skips them, GalTransl skips those without a tab.
    let lines = || text.lines().filter(|line| !line.trim().is_empty() && !text::is_comment_line(line.trim()));
    // Sakura's reader refuses a line without `->`; GalTransl reads both forms.
    if lines().next().is_some() && lines().all(|line| line.contains("->") && !line.contains('\t')) {
        return Format::SakuraText;
    }
    Format::GalTransl
}
