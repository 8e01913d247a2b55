//! Input limits: the most a file, standard input, a request body or a workbook may
//! hold. Every reader reads through one of them and refuses past it before the memory
//! is spent, naming the limit (the CLI exits 2, the server answers 413). The table in
//! docs/operations.md ("Limits") lists them.

use super::{
    BATCH_BYTES_MAX, BATCH_EVENTS_MAX, DOCUMENT_BYTES_MAX, EVENT_BYTES_MAX, NOTE_CHARS_MAX, SUMMARY_CHARS_MAX,
};

/// Largest chunk text (`--text`, a chunk of a request) or translation of a chunk
/// (`check --translation`), in bytes: the matcher's own limit on a text it folds
/// (`matcher::TEXT_BYTES_MAX`, asserted equal in `book`).
pub const CHUNK_BYTES_MAX: usize = 64 << 20;
/// Largest JSON Lines file of events (`apply FILE`), in bytes: twice what the codec
/// may write for one batch, since JSON spells an event out at greater length than the
/// codec does.
pub const EVENTS_FILE_BYTES_MAX: usize = 2 * BATCH_BYTES_MAX;
/// Largest glossary or cast-list file an import reads (`import FILE`,
/// `expect import FILE`, their routes), in bytes: the server's default body limit.
pub const GLOSSARY_FILE_BYTES_MAX: usize = 16 << 20;
/// Largest token file of the server (`serve --token-file`), in bytes.
pub const TOKEN_FILE_BYTES_MAX: usize = 1 << 20;
/// Largest file of certificates the translation proxy trusts besides the system's
/// (`serve --upstream-ca`, PEM), in bytes: a whole system bundle (about 220 KB on
/// Debian) many times over.
pub const CA_FILE_BYTES_MAX: usize = 4 << 20;
/// A chat model's answer to one request of a batch job (`extract`, `adjudicate`,
/// `eval`): read to one byte past it and refused.
pub const MODEL_ANSWER_BYTES_MAX: usize = 1 << 20;
/// The chunks one evaluation translates (`eval`, each once per arm) or one book-wide
/// scan reads (`scan --chapters`).
pub const BOOK_JOB_CHUNKS_MAX: usize = 20_000;
/// Most rows one page of the editor's glossary listing holds (`per_page`).
pub const RECORDS_PER_PAGE_MAX: usize = 500;
/// Largest name dictionary (ENAMDICT format; Debian's `enamdict` is 26 MB) read for
/// the readings of Japanese names in kanji (`names lint`, the term page), in bytes:
/// its size is checked before it is read, and what has no size (a device, a pipe) is
/// read to one byte past it at most.
pub const NAME_DICTIONARY_BYTES_MAX: u64 = 64 << 20;
/// Largest archive file an archive import reads (`import-archive ARCHIVE`,
/// `Book::import_archive`), in bytes: it is read whole into memory and parsed there.
/// Sixteen times the file of a book of a million events (docs/benchmarks.md).
pub const ARCHIVE_BYTES_MAX: u64 = 4 << 30;
/// Largest file of a chapter's source text (`source add FILE`, a file of `source
/// import DIR`, the body of `PUT /v1/books/{book}/source/{chapter}`), in bytes: the
/// text's own limit ([`super::SOURCE_TEXT_BYTES_MAX`]) and a UTF-8 byte order mark,
/// which is dropped.
pub const SOURCE_FILE_BYTES_MAX: usize = super::SOURCE_TEXT_BYTES_MAX as usize + 3;
/// Most files one source import reads (`source import DIR`): a chapter each.
pub const SOURCE_IMPORT_FILES_MAX: usize = 10_000;
/// Most bytes the files of one source import hold together (`source import DIR`):
/// their texts are one batch's blobs, read whole into memory.
pub const SOURCE_IMPORT_BYTES_MAX: u64 = 256 << 20;

/// Most members (parts) of an XLSX workbook's zip archive.
pub const XLSX_PARTS_MAX: usize = 10_000;
/// Most bytes the members of an XLSX workbook inflate to, all together, as the zip's
/// central directory declares them and as they are inflated.
pub const XLSX_INFLATED_BYTES_MAX: u64 = 64 << 20;
/// Most cells (`<c>` elements, empty ones included) in an XLSX workbook.
pub const XLSX_CELLS_MAX: usize = 1_000_000;
/// Most rows (`<row>` elements) in an XLSX workbook: a glossary row is at least one
/// event, so a longer sheet could not be imported as one batch anyway.
pub const XLSX_ROWS_MAX: usize = BATCH_EVENTS_MAX;
/// Most shared strings (`<si>` elements, or the `uniqueCount` the table declares) in
/// an XLSX workbook.
pub const XLSX_SHARED_STRINGS_MAX: usize = XLSX_CELLS_MAX;
/// Longest text of one cell or shared string of an XLSX workbook, in UTF-8 bytes (as
/// the XML spells it): a longer text would not fit one event.
pub const XLSX_CELL_BYTES_MAX: usize = EVENT_BYTES_MAX;
/// The columns of a sheet, `A` to `XFD` (the format's own bound): a cell reference
/// past it is refused.
pub const XLSX_SHEET_COLUMNS: u32 = 16_384;
/// The rows of a sheet, 1 to 1048576 (the format's own bound).
pub const XLSX_SHEET_ROWS: u32 = 1_048_576;

// An events file at its limit holds at least a full batch.
const _: () = assert!(EVENTS_FILE_BYTES_MAX >= BATCH_BYTES_MAX);
// Every limit fits the 32-bit offsets and counts of the readers.
const _: () = assert!(CHUNK_BYTES_MAX <= u32::MAX as usize);
const _: () = assert!(EVENTS_FILE_BYTES_MAX <= u32::MAX as usize);
// An archive holds a whole book: at least a full batch and the largest document, and
// more than any file of events or glossary.
const _: () = assert!(ARCHIVE_BYTES_MAX >= (BATCH_BYTES_MAX + DOCUMENT_BYTES_MAX) as u64);
const _: () = assert!(ARCHIVE_BYTES_MAX >= EVENTS_FILE_BYTES_MAX as u64);
const _: () = assert!(ARCHIVE_BYTES_MAX >= GLOSSARY_FILE_BYTES_MAX as u64);
// An import holds at least one chapter at its limit, and a chapter is one chunk.
const _: () = assert!(SOURCE_IMPORT_BYTES_MAX >= super::SOURCE_TEXT_BYTES_MAX);
const _: () = assert!(super::SOURCE_TEXT_BYTES_MAX <= CHUNK_BYTES_MAX as u64);
// A workbook is a glossary file; what it inflates to may be larger than its bytes.
const _: () = assert!(GLOSSARY_FILE_BYTES_MAX as u64 <= XLSX_INFLATED_BYTES_MAX);
// Every row holds at least one cell, and a shared string no cell uses is waste.
const _: () = assert!(XLSX_ROWS_MAX <= XLSX_CELLS_MAX);
const _: () = assert!(XLSX_SHARED_STRINGS_MAX <= XLSX_CELLS_MAX);
const _: () = assert!(XLSX_ROWS_MAX <= XLSX_SHEET_ROWS as usize);
// A cell holds the longest note or summary a record can have, in 4-byte UTF-8.
const _: () = assert!(XLSX_CELL_BYTES_MAX >= 4 * NOTE_CHARS_MAX && XLSX_CELL_BYTES_MAX >= 4 * SUMMARY_CHARS_MAX);
const _: () = assert!((XLSX_CELL_BYTES_MAX as u64) < XLSX_INFLATED_BYTES_MAX);
