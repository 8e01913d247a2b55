//! What the spreadsheet formats (LinguaGacha, AiNiee) share: opening a workbook from
//! bytes, finding its first or its active sheet, reading cells as text with the row
//! in every error, and writing a one-sheet workbook whose bytes depend only on its
//! cells.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

use calamine::{Data, DataRef, Reader, Xlsx, XlsxError as ReadXlsxError};
use rust_xlsxwriter::{DocProperties, ExcelDateTime, Workbook, XlsxError};

use crate::{At, Format, Lost, ReadError, WriteError};

/// A workbook read from bytes.
pub(super) struct Book<'a> {
    bytes: &'a [u8],
    workbook: Xlsx<Cursor<&'a [u8]>>,
}

/// Which sheet a tool reads.
#[derive(Clone, Copy)]
pub(super) enum Sheet {
    /// The first in workbook order (LinguaGacha).
    First,
    /// The one the workbook opens on, `activeTab` of its first view (AiNiee, through
    /// openpyxl's `Workbook.active`).
    Active,
}

impl<'a> Book<'a> {
    pub(super) fn open(bytes: &'a [u8]) -> Result<Book<'a>, ReadError> {
        super::xlsx_bounds::check(bytes)?;
        let workbook = unpanicked(|| Xlsx::new(Cursor::new(bytes)))?
            .map_err(|error| ReadError::file(format!("not an XLSX workbook: {error}")))?;
        Ok(Book { bytes, workbook })
    }

    /// The cells of `sheet`, or `None` for a workbook without sheets.
    pub(super) fn sheet(&mut self, sheet: Sheet) -> Result<Option<Rows>, ReadError> {
        let names = self.workbook.sheet_names();
        let index = match sheet {
            Sheet::First => 0,
            Sheet::Active => active_tab(self.bytes)?,
        };
        let Some(name) = names.get(index) else {
            return match (sheet, names.is_empty()) {
                (_, true) => Ok(None),
                (Sheet::First, false) => Ok(None),
                (Sheet::Active, false) => Err(ReadError::file(format!(
                    "the active sheet is number {} but the workbook has {} sheets",
                    index + 1,
                    names.len()
                ))),
            };
        };
        let name = name.clone();
        let workbook = &mut self.workbook;
        let cells = unpanicked(|| {
            // Only the cells that hold something, by position: a dense range of the
            // used area would be as large as two far-apart cells make it.
            let mut cells = BTreeMap::new();
            let mut reader = match workbook.worksheet_cells_reader(&name) {
                Ok(reader) => reader,
                Err(ReadXlsxError::NotAWorksheet(_)) => return Ok(cells),
                Err(error) => return Err(error),
            };
            while let Some(cell) = reader.next_cell()? {
                if !matches!(cell.get_value(), DataRef::Empty) {
                    cells.insert(cell.get_position(), Data::from(cell.get_value().clone()));
                }
            }
            Ok(cells)
        })?
        .map_err(|error| ReadError::file(format!("sheet `{name}` cannot be read: {error}")))?;
        Ok(Some(Rows { cells }))
    }
}

/// `activeTab` of the first `workbookView` of `xl/workbook.xml` (0 when absent), as
/// openpyxl reads it; calamine does not expose it.
fn active_tab(bytes: &[u8]) -> Result<usize, ReadError> {
    let not_xlsx = |error: &dyn std::fmt::Display| ReadError::file(format!("not an XLSX workbook: {error}"));
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| not_xlsx(&error))?;
    let mut xml = String::new();
    {
        let Ok(part) = archive.by_name("xl/workbook.xml") else {
            return Ok(0);
        };
        // The part is a few kilobytes; a bound keeps a hostile archive from
        // inflating without end.
        part.take(16 << 20).read_to_string(&mut xml).map_err(|error| not_xlsx(&error))?;
    }
    let mut reader = quick_xml::Reader::from_str(&xml);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Start(element)) | Ok(quick_xml::events::Event::Empty(element))
                if element.local_name().as_ref() == "workbookView" =>
            {
                for attribute in element.attributes().flatten() {
                    if attribute.key.local_name().as_ref() == "activeTab" {
                        let value = attribute.value.to_string();
                        return value.trim().parse().map_err(|_| {
                            ReadError::file(format!("workbook view has an activeTab that is not a number: `{value}`"))
                        });
                    }
                }
                return Ok(0);
            }
            Ok(quick_xml::events::Event::Eof) => return Ok(0),
            Ok(_) => {}
            Err(error) => return Err(not_xlsx(&format!("xl/workbook.xml: {error}"))),
        }
    }
}

/// One row of a sheet that holds something.
pub(super) struct SheetRow {
    /// Its number, from 1.
    pub(super) number: u64,
    /// Its first cells, as many as the format has columns (empty where absent).
    pub(super) cells: Vec<Data>,
    /// Every cell past those that holds something, by column letter, as text.
    pub(super) extra: Vec<(String, String)>,
}

/// Runs a call into the XLSX reader, whose arithmetic on positions the file names
/// can overflow (a panic in a debug build): a panic is a malformed workbook.
fn unpanicked<T>(read: impl FnOnce() -> T) -> Result<T, ReadError> {
    catch_unwind(AssertUnwindSafe(read))
        .map_err(|_| ReadError::file("not a well-formed XLSX workbook: the reader failed on it".to_owned()))
}

/// The cells of one sheet that hold something, by (row, column) from 0.
pub(super) struct Rows {
    cells: BTreeMap<(u32, u32), Data>,
}

impl Rows {
    /// Every row that has a cell with content (a wholly empty row is no row), with its
    /// first `columns` cells and the non-blank cells past them.
    pub(super) fn rows(&self, columns: u32) -> Vec<SheetRow> {
        let mut by_row: BTreeMap<u32, Vec<(u32, &Data)>> = BTreeMap::new();
        for (&(row, column), data) in &self.cells {
            by_row.entry(row).or_default().push((column, data));
        }
        let mut rows = Vec::new();
        for (row, in_row) in by_row {
            let cell = |column: u32| self.cells.get(&(row, column)).cloned().unwrap_or(Data::Empty);
            let cells: Vec<Data> = (0..columns).map(cell).collect();
            let extra: Vec<(String, String)> = in_row
                .into_iter()
                .filter(|(column, data)| *column >= columns && !is_blank(data))
                .map(|(column, data)| (column_name(column), data.to_string()))
                .collect();
            if cells.iter().all(is_blank) && extra.is_empty() {
                continue;
            }
            rows.push(SheetRow { number: u64::from(row) + 1, cells, extra });
        }
        rows
    }
}

/// Whether a cell holds nothing (or only whitespace).
pub(super) fn is_blank(data: &Data) -> bool {
    match data {
        Data::Empty => true,
        Data::String(text) => text.trim().is_empty(),
        _ => false,
    }
}

/// The letters of a column from 0 (`A`, `Z`, `AA`).
pub(super) fn column_name(column: u32) -> String {
    let mut name = Vec::new();
    let mut rest = u64::from(column) + 1;
    while rest > 0 {
        let digit = ((rest - 1) % 26) as u8;
        name.push(b'A' + digit);
        rest = (rest - 1) / 26;
    }
    name.reverse();
    String::from_utf8(name).unwrap_or_default()
}

/// A text cell, trimmed (empty for an empty cell). A number, date, boolean or error
/// is refused: a spreadsheet keeps `001` typed into a number cell as `1`, so its
/// text is not what the translator wrote.
pub(super) fn text(data: &Data, row: u64, field: &str) -> Result<String, ReadError> {
    match data {
        Data::Empty => Ok(String::new()),
        Data::String(text) => Ok(text.trim().to_owned()),
        other => Err(ReadError::at(
            At::Row(row),
            field,
            format!("must be a text cell, not {} ({other}); format the column as text", kind(other)),
        )),
    }
}

fn kind(data: &Data) -> &'static str {
    match data {
        Data::Int(_) | Data::Float(_) => "a number",
        Data::Bool(_) => "a boolean",
        Data::DateTime(_) | Data::DateTimeIso(_) => "a date",
        Data::DurationIso(_) => "a duration",
        Data::Error(_) => "an error value",
        Data::String(_) | Data::Empty => "text",
    }
}

/// The text of cell A1 of the first sheet, if it holds text.
pub(super) fn first_cell(bytes: &[u8]) -> Result<Option<String>, ReadError> {
    let mut book = Book::open(bytes)?;
    let Some(rows) = book.sheet(Sheet::First)? else {
        return Ok(None);
    };
    Ok(match rows.cells.get(&(0, 0)) {
        Some(Data::String(text)) => Some(text.trim().to_owned()),
        _ => None,
    })
}

/// A cell to write.
pub(super) enum Cell {
    Text(String),
    Bool(bool),
}

/// One row of an export, and the record it comes from (for errors).
pub(super) struct Row {
    pub(super) record: Option<At>,
    pub(super) cells: Vec<Cell>,
}

/// The creation date every export records: the same for every export, so equal
/// glossaries give equal bytes (the library would otherwise write the current time).
fn creation_date() -> Result<ExcelDateTime, XlsxError> {
    ExcelDateTime::from_ymd(2000, 1, 1)
}

/// A workbook of one sheet named `sheet`: a header row of `header`, then `rows`,
/// every column `width` characters wide. Its bytes depend only on its arguments.
pub(super) fn write(
    format: Format,
    sheet: &str,
    header: &[&str],
    width: f64,
    rows: &[Row],
) -> Result<Vec<u8>, WriteError> {
    let failed = |record: Option<&At>, error: XlsxError| WriteError {
        format,
        message: match record {
            Some(at) => format!("{at}: {error}"),
            None => error.to_string(),
        },
    };
    let mut workbook = Workbook::new();
    workbook
        .set_properties(&DocProperties::new().set_creation_datetime(&creation_date().map_err(|e| failed(None, e))?));
    let worksheet = workbook.add_worksheet();
    worksheet.set_name(sheet).map_err(|error| failed(None, error))?;
    for (column, title) in header.iter().enumerate() {
        let column = column as u16;
        worksheet.set_column_width(column, width).map_err(|error| failed(None, error))?;
        worksheet.write_string(0, column, *title).map_err(|error| failed(None, error))?;
    }
    for (index, row) in rows.iter().enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        for (column, cell) in row.cells.iter().enumerate() {
            let column = column as u16;
            let written = match cell {
                Cell::Text(text) => worksheet.write_string(number, column, text.as_str()).map(|_| ()),
                Cell::Bool(value) => worksheet.write_boolean(number, column, *value).map(|_| ()),
            };
            written.map_err(|error| failed(row.record.as_ref(), error))?;
        }
    }
    workbook.save_to_buffer().map_err(|error| failed(None, error))
}

/// Every non-empty cell past a format's columns, reported lost.
pub(super) fn lost_columns(row: u64, extra: Vec<(String, String)>) -> impl Iterator<Item = Lost> {
    extra.into_iter().map(move |(column, value)| Lost {
        at: At::Row(row),
        field: format!("column {column}"),
        value: Some(short(&value)),
    })
}

/// A value shortened to at most 40 characters for a report.
pub(super) fn short(text: &str) -> String {
    let mut short: String = text.chars().take(40).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}
