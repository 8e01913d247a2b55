//! The bounds of a workbook, checked before the XLSX reader inflates it: a workbook
//! of a few hundred kilobytes can inflate to gigabytes (one 500 MB cell, a million
//! rows, millions of shared strings), and a cell reference past the sheet's last
//! column overflows the reader's arithmetic. Every member of the zip is inflated
//! once here through a meter, and its XML read event by event with the reader's own
//! settings, keeping one event at a time (inside a cell or a shared string, no more
//! than [`CELL_WINDOW_BYTES`]); the counts and references are checked against
//! [`ledger_model::limits::input`] before the reader builds anything.

use std::cell::Cell;
use std::io::{self, BufReader, Cursor, Read};

use ledger_model::limits::input::{
    XLSX_CELLS_MAX, XLSX_CELL_BYTES_MAX, XLSX_INFLATED_BYTES_MAX, XLSX_PARTS_MAX, XLSX_ROWS_MAX,
    XLSX_SHARED_STRINGS_MAX, XLSX_SHEET_COLUMNS, XLSX_SHEET_ROWS,
};
use quick_xml::events::{BytesStart, Event};

use crate::ReadError;

/// How far past the last XML event the reader may read while inside a cell or a
/// shared string: the longest text a cell may have, plus room for the tag around it
/// and for what the buffered reader reads ahead.
const CELL_WINDOW_BYTES: u64 = XLSX_CELL_BYTES_MAX as u64 + (32 << 10);

/// Checks that the workbook `bytes` stays within the XLSX input limits, and that
/// every cell, row and dimension reference of it is inside a sheet. An archive that
/// cannot be opened passes: the XLSX reader says what is wrong with it.
pub(super) fn check(bytes: &[u8]) -> Result<(), ReadError> {
    let Ok(mut archive) = zip::ZipArchive::new(Cursor::new(bytes)) else {
        return Ok(());
    };
    if archive.len() > XLSX_PARTS_MAX {
        return Err(ReadError::over_limit(
            "XLSX_PARTS_MAX",
            XLSX_PARTS_MAX as u64,
            "parts",
            format!("the workbook's zip has {} parts", archive.len()),
        ));
    }
    if let Some(declared) = archive.decompressed_size() {
        if declared > u128::from(XLSX_INFLATED_BYTES_MAX) {
            return Err(inflated(&format!("the workbook's parts declare {declared} bytes uncompressed")));
        }
    }
    let names: Vec<String> = (0..archive.len())
        .map(|index| {
            archive.name_for_index(index).and_then(Result::ok).map(|name| name.into_owned()).unwrap_or_default()
        })
        .collect();
    // The workbook and its relationships first: they name the sheets.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&index| !is_workbook_part(&names[index]));
    let meter = Meter { read: Cell::new(0), window_end: Cell::new(u64::MAX) };
    let mut scan = Scan::default();
    for index in order {
        let name = &names[index];
        let Ok(member) = archive.by_index(index) else {
            continue;
        };
        let mut metered = Metered { inner: member, meter: &meter };
        if is_xml(name) || scan.targets.iter().any(|target| target.eq_ignore_ascii_case(name)) {
            scan.part(name, &mut metered, &meter)?;
        }
        // What the XML did not consume (or all of a member that is not XML) still
        // counts towards the bytes inflated.
        meter.window_end.set(u64::MAX);
        if let Err(error) = io::copy(&mut metered, &mut io::sink()) {
            if meter.over() {
                return Err(inflated("the workbook's parts inflate to more bytes"));
            }
            // A damaged member: the XLSX reader reports it if it reads it.
            let _ = error;
        }
    }
    Ok(())
}

fn inflated(what: &str) -> ReadError {
    ReadError::over_limit("XLSX_INFLATED_BYTES_MAX", XLSX_INFLATED_BYTES_MAX, "bytes", what)
}

fn is_xml(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.ends_with(".xml") || name.ends_with(".rels")
}

fn is_workbook_part(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.ends_with("workbook.xml") || name.ends_with("workbook.xml.rels")
}

/// The bytes inflated so far, and how far the reader may read before the next event.
struct Meter {
    read: Cell<u64>,
    window_end: Cell<u64>,
}

impl Meter {
    fn over(&self) -> bool {
        self.read.get() > XLSX_INFLATED_BYTES_MAX
    }
}

/// A member of the zip, inflated through the meter: reading stops with an error one
/// byte past the limit of all members, or past the window of a cell.
struct Metered<'m, R> {
    inner: R,
    meter: &'m Meter,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.meter.read.get();
        let room =
            (XLSX_INFLATED_BYTES_MAX + 1).saturating_sub(read).min(self.meter.window_end.get().saturating_sub(read));
        if room == 0 {
            return Err(io::Error::other("over an XLSX input limit"));
        }
        let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..len])?;
        self.meter.read.set(read + n as u64);
        Ok(n)
    }
}

/// What the parts read so far hold.
#[derive(Default)]
struct Scan {
    cells: usize,
    rows: usize,
    shared: usize,
    /// The sheets of `workbook.xml`: name and relationship id.
    sheets: Vec<(String, String)>,
    /// The relationships of the workbook: id and the part it targets.
    relationships: Vec<(String, String)>,
    /// The parts the workbook's relationships target (sheets whose name need not end
    /// in `.xml`).
    targets: Vec<String>,
}

/// Inside what the text being read belongs to.
enum Inside {
    /// A cell, by its reference (or its number in the part when it has none).
    Cell(String),
    /// A shared string, by its number from 1.
    Shared(usize),
}

impl Scan {
    fn part<R: Read>(&mut self, name: &str, member: &mut Metered<'_, R>, meter: &Meter) -> Result<(), ReadError> {
        let mut xml = quick_xml::Reader::from_reader(BufReader::new(member));
        // The XLSX reader's settings, so that this reads the events it will read.
        let config = xml.config_mut();
        config.check_end_names = false;
        config.trim_text(false);
        config.check_comments = false;
        config.expand_empty_elements = true;
        let lower = name.to_ascii_lowercase();
        let (is_workbook, is_rels) = (lower.ends_with("workbook.xml"), lower.ends_with("workbook.xml.rels"));
        let base = name.rsplit_once("_rels/").map_or("", |(base, _)| base).to_owned();
        let mut buf = Vec::new();
        let mut inside: Option<(Inside, &'static str, usize)> = None;
        let mut text = 0usize;
        let mut cells_here = 0usize;
        loop {
            buf.clear();
            let event = match xml.read_event_into(&mut buf) {
                Ok(event) => event,
                Err(error) => {
                    if meter.over() {
                        return Err(inflated("the workbook's parts inflate to more bytes"));
                    }
                    if let Some((what, _, _)) = &inside {
                        if meter.read.get() >= meter.window_end.get() {
                            return Err(self.long_text(name, what));
                        }
                    }
                    // Malformed XML: the XLSX reader stops at the same event if it
                    // reads this part.
                    let _ = error;
                    return Ok(());
                }
            };
            match &event {
                Event::Start(element) => {
                    let local = element.local_name();
                    match local.as_ref() {
                        "c" => {
                            self.cells += 1;
                            cells_here += 1;
                            if self.cells > XLSX_CELLS_MAX {
                                return Err(ReadError::over_limit(
                                    "XLSX_CELLS_MAX",
                                    XLSX_CELLS_MAX as u64,
                                    "cells",
                                    "the workbook's cells",
                                ));
                            }
                            let reference = attribute(element, "r");
                            if let Some(reference) = &reference {
                                self.in_sheet(name, "cell", reference, reference)?;
                            }
                            if inside.is_none() {
                                let at = reference.unwrap_or_else(|| format!("number {cells_here}"));
                                inside = Some((Inside::Cell(at), "c", 0));
                                text = 0;
                            }
                        }
                        "si" => {
                            self.shared += 1;
                            if self.shared > XLSX_SHARED_STRINGS_MAX {
                                return Err(shared_strings("the workbook's shared strings"));
                            }
                            if inside.is_none() {
                                inside = Some((Inside::Shared(self.shared), "si", 0));
                                text = 0;
                            }
                        }
                        "row" => {
                            self.rows += 1;
                            if self.rows > XLSX_ROWS_MAX {
                                return Err(ReadError::over_limit(
                                    "XLSX_ROWS_MAX",
                                    XLSX_ROWS_MAX as u64,
                                    "rows",
                                    "the workbook's rows",
                                ));
                            }
                            if let Some(reference) = attribute(element, "r") {
                                self.in_sheet(name, "row", &reference, &format!("A{reference}"))?;
                            }
                        }
                        "dimension" => {
                            if let Some(range) = attribute(element, "ref") {
                                for reference in range.split(':') {
                                    self.in_sheet(name, "dimension", &range, reference)?;
                                }
                            }
                        }
                        "sst" => {
                            if let Some(count) = attribute(element, "uniqueCount") {
                                if count.trim().parse::<u64>().is_ok_and(|n| n > XLSX_SHARED_STRINGS_MAX as u64) {
                                    return Err(shared_strings(&format!(
                                        "the shared string table declares {} strings",
                                        count.trim()
                                    )));
                                }
                            }
                        }
                        "sheet" if is_workbook => {
                            if let (Some(sheet), Some(id)) = (attribute(element, "name"), attribute(element, "id")) {
                                self.sheets.push((sheet, id));
                            }
                        }
                        "Relationship" if is_rels => {
                            if let (Some(id), Some(target)) = (attribute(element, "Id"), attribute(element, "Target")) {
                                let target = match target.strip_prefix('/') {
                                    Some(absolute) => absolute.to_owned(),
                                    None => format!("{base}{target}"),
                                };
                                self.targets.push(target.clone());
                                self.relationships.push((id, target));
                            }
                        }
                        _ => {}
                    }
                    if let Some((_, open, depth)) = &mut inside {
                        if local.as_ref() == *open {
                            *depth += 1;
                        }
                    }
                }
                Event::End(element) => {
                    if let Some((_, open, depth)) = &mut inside {
                        if element.local_name().as_ref() == *open {
                            *depth -= 1;
                            if *depth == 0 {
                                inside = None;
                            }
                        }
                    }
                }
                Event::Text(content) => text += content.len(),
                Event::CData(content) => text += content.len(),
                Event::GeneralRef(content) => text += content.len() + 2,
                Event::Eof => return Ok(()),
                _ => {}
            }
            match &inside {
                Some((what, _, _)) if text > XLSX_CELL_BYTES_MAX => return Err(self.long_text(name, what)),
                Some(_) => meter.window_end.set(meter.read.get() + CELL_WINDOW_BYTES),
                None => meter.window_end.set(u64::MAX),
            }
        }
    }

    /// Refuses a reference (`what` of `shown`, the part of it `reference`) past the
    /// last column or row of a sheet: the XLSX reader's arithmetic on it would
    /// overflow, or give a made-up cell.
    fn in_sheet(&self, part: &str, what: &str, shown: &str, reference: &str) -> Result<(), ReadError> {
        let bytes = reference.as_bytes();
        let letters = bytes.iter().take_while(|byte| byte.is_ascii_alphabetic()).count();
        let digits = bytes[letters..].iter().take_while(|byte| byte.is_ascii_digit()).count();
        let column = bytes[..letters].iter().try_fold(0u32, |column, byte| {
            column.checked_mul(26)?.checked_add(u32::from(byte.to_ascii_uppercase() - b'A') + 1)
        });
        let row = std::str::from_utf8(&bytes[letters..letters + digits]).ok().and_then(|row| row.parse::<u32>().ok());
        let column_out = letters > 0 && column.is_none_or(|column| column > XLSX_SHEET_COLUMNS);
        let row_out = digits > 0 && row.is_none_or(|row| row > XLSX_SHEET_ROWS);
        if column_out || row_out {
            return Err(ReadError::file(format!(
                "{}: {what} `{shown}` is out of range (a sheet has columns A to XFD and rows 1 to {XLSX_SHEET_ROWS})",
                self.place(part)
            )));
        }
        Ok(())
    }

    fn long_text(&self, part: &str, what: &Inside) -> ReadError {
        let what = match what {
            Inside::Cell(at) => format!("{}: cell {at}: its text", self.place(part)),
            Inside::Shared(number) => format!("shared string {number} ({part})"),
        };
        ReadError::over_limit("XLSX_CELL_BYTES_MAX", XLSX_CELL_BYTES_MAX as u64, "bytes", what)
    }

    /// `sheet `NAME`` for the part of a sheet the workbook names, else the part.
    fn place(&self, part: &str) -> String {
        let sheet = self
            .relationships
            .iter()
            .find(|(_, target)| target.eq_ignore_ascii_case(part))
            .and_then(|(id, _)| self.sheets.iter().find(|(_, sheet_id)| sheet_id == id).map(|(name, _)| name));
        match sheet {
            Some(name) => format!("sheet `{name}`"),
            None => format!("part `{part}`"),
        }
    }
}

fn shared_strings(what: &str) -> ReadError {
    ReadError::over_limit("XLSX_SHARED_STRINGS_MAX", XLSX_SHARED_STRINGS_MAX as u64, "strings", what)
}

/// The value of the attribute whose local name is `name`, as written (not unescaped).
fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.local_name().as_ref() == name)
        .map(|attribute| attribute.value.into_owned())
}
