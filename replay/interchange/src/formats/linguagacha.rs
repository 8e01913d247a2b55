//! LinguaGacha: placeholder until the format is built (see docs/formats.md).

use crate::{ExportInput, Exported, Fields, Format, Parsed, ReadError, WriteError};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

pub(super) fn read_json(_bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file("LinguaGacha is not supported yet"))
}

pub(super) fn read_xlsx(_bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file("LinguaGacha is not supported yet"))
}

pub(super) fn write_json(_input: &ExportInput) -> Result<Exported, WriteError> {
    Err(WriteError { format: Format::GalTransl, message: "LinguaGacha is not supported yet".into() })
}

pub(super) fn write_xlsx(_input: &ExportInput) -> Result<Exported, WriteError> {
    Err(WriteError { format: Format::GalTransl, message: "LinguaGacha is not supported yet".into() })
}

/// The text of cell A1 of the first sheet of an XLSX file, if any.
pub(super) fn xlsx_header(_bytes: &[u8]) -> Result<Option<String>, ReadError> {
    Ok(None)
}
