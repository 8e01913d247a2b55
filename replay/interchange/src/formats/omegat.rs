//! OmegaT: placeholder until the format is built (see docs/formats.md).

use crate::{ExportInput, Exported, Fields, Format, Parsed, ReadError, WriteError};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

pub(super) fn read_tsv(_bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file("OmegaT is not supported yet"))
}

pub(super) fn read_csv(_bytes: &[u8]) -> Result<Parsed, ReadError> {
    Err(ReadError::file("OmegaT is not supported yet"))
}

pub(super) fn write_tsv(_input: &ExportInput) -> Result<Exported, WriteError> {
    Err(WriteError { format: Format::GalTransl, message: "OmegaT is not supported yet".into() })
}

pub(super) fn write_csv(_input: &ExportInput) -> Result<Exported, WriteError> {
    Err(WriteError { format: Format::GalTransl, message: "OmegaT is not supported yet".into() })
}
