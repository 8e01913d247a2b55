//! `lorebank import` and `lorebank export`: read the file, make the one book call,
//! render the report (text for people, JSON with `--json`).

use std::path::Path;

use book::{Book, Exported, ImportOptions};
use ledger_model::Seq;

use crate::cli::args::{ExportArgs, ImportArgs};
use crate::failure::Failure;
use crate::render::{json, print, text};

/// The glossary file of `import`, its name and bytes: from stdin it needs `--format`
/// (locally and with `--server`).
pub fn import_file(args: &ImportArgs) -> Result<(String, Vec<u8>), Failure> {
    let (name, bytes) = read_bytes(&args.file)?;
    if name == "stdin" && args.format.is_none() {
        return Err(Failure::invalid("importing from stdin needs --format (there is no file name to detect it by)"));
    }
    Ok((name, bytes))
}

pub fn import(book: &mut Book, args: &ImportArgs, recorded_at_ms: u64, json: bool) -> Result<(), Failure> {
    let (name, bytes) = import_file(args)?;
    let options = ImportOptions {
        format: args.format,
        strict: args.strict,
        dry_run: args.dry_run,
        actor: args.actor.clone(),
        expect_head: args.expect_head.map(Seq),
        recorded_at_ms,
        source_lang: args.source_lang.clone(),
        target_lang: args.target_lang.clone(),
    };
    let report = book.import(&name, &bytes, &options)?;
    print(json, || json::import_report(&report, args.dry_run), || text::import_report(&report, args.dry_run));
    Ok(())
}

/// `--json` prints the export's report, so the file itself needs `-o FILE` (locally
/// and with `--server`).
pub fn check_output(args: &ExportArgs, json: bool) -> Result<(), Failure> {
    if json && args.output.is_none() {
        return Err(Failure::invalid("--json prints the export's report, so the file needs -o FILE"));
    }
    Ok(())
}

pub fn export(book: &mut Book, reader: &projections::Reader, args: &ExportArgs, json: bool) -> Result<(), Failure> {
    check_output(args, json)?;
    let exported =
        book.export_as(reader, args.format, args.chapter, args.as_of.map(Seq), args.target_lang.as_deref())?;
    let bytes = match &exported {
        Exported::Tool(export) => &export.bytes[..],
        Exported::Profile(export) => export.text.as_bytes(),
        Exported::Tmx(export) => &export.bytes[..],
    };
    match &args.output {
        Some(path) => write_whole(path, bytes, Some(book))?,
        None => crate::render::output::write_bytes(bytes),
    }
    let output = args.output.as_deref().and_then(Path::to_str);
    match &exported {
        Exported::Tool(export) => print(json, || json::export(export, output), || text::exported(export)),
        Exported::Profile(export) => {
            print(json, || json::exported_profile(export, output), || text::exported_profile(export))
        }
        Exported::Tmx(export) => print(json, || json::exported_tmx(export, output), || text::exported_tmx(export)),
    }
    Ok(())
}

/// The file's name (for detection, errors and sources) and its bytes, read through
/// the glossary file limit; `-` is stdin.
pub fn read_bytes(path: &Path) -> Result<(String, Vec<u8>), Failure> {
    let bytes = crate::input::read_bounded(path, crate::input::GLOSSARY_FILE)?;
    Ok((crate::input::shown(path), bytes))
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed over it
/// once whole: a reader never sees half an export. `path` must be absent or a
/// regular file, and not the `book` exported nor one of its lock files
/// ([`ledger::check_destination`]).
pub fn write_whole(path: &Path, bytes: &[u8], book: Option<&Book>) -> Result<(), Failure> {
    let check = || match book {
        Some(book) => book.check_destination(path),
        None => ledger::check_destination(path, true, &[]).map_err(book::BookError::from),
    };
    check()?;
    let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    if file_name.is_empty() {
        return Err(Failure::invalid(format!("-o {}: not a file name", path.display())));
    }
    let temp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let cannot = |error: std::io::Error| Failure::io(format!("cannot write {}: {error}", path.display()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        std::io::Write::write_all(&mut file, bytes)?;
        file.sync_all()
    })();
    if let Err(error) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(cannot(error));
    }
    // Again at the last moment: what is there may have changed while the file was
    // written.
    if let Err(error) = check() {
        let _ = std::fs::remove_file(&temp);
        return Err(error.into());
    }
    if let Err(error) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(cannot(error));
    }
    Ok(())
}
