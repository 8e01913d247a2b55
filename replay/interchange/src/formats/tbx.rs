//! TBX: placeholder until the format is built (see docs/formats.md).

use crate::{ExportInput, Exported, Fields, Format, Languages, Parsed, ReadError, WriteError};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

pub(super) fn read(_bytes: &[u8], _languages: &Languages) -> Result<Parsed, ReadError> {
    Err(ReadError::file("TBX is not supported yet"))
}

pub(super) fn write(_input: &ExportInput) -> Result<Exported, WriteError> {
    Err(WriteError { format: Format::GalTransl, message: "TBX is not supported yet".into() })
}
