//! `lorebank import` and `lorebank export`: read the file, make the one book call,
//! render the report (text for people, JSON with `--json`).

use std::path::Path;

use book::interchange::Grouped;
use book::{Book, ImportOptions, ImportReport};
use ledger_model::Seq;

use crate::cli::args::{ExportArgs, ExportFormat, ImportArgs};
use crate::failure::Failure;

/// How many items of each list the text report shows (`--json` lists all).
const SHOWN: usize = 20;

pub fn import(book: &mut Book, args: &ImportArgs, recorded_at_ms: u64, json: bool) -> Result<(), Failure> {
    let (name, bytes) = read_bytes(&args.file)?;
    if name == "stdin" && args.format.is_none() {
        return Err(Failure::invalid("importing from stdin needs --format (there is no file name to detect it by)"));
    }
    let options = ImportOptions {
        format: args.format,
        strict: args.strict,
        dry_run: args.dry_run,
        actor: args.actor.clone(),
        expect_head: args.expect_head.map(Seq),
        recorded_at_ms,
        target_lang: Some(args.target_lang.clone()),
    };
    let report = book.import(&name, &bytes, &options)?;
    if json {
        outln!("{}", crate::render::json::import_report(&report, args.dry_run));
    } else {
        import_text(&report, args.dry_run);
    }
    Ok(())
}

fn import_text(report: &ImportReport, dry_run: bool) {
    let how = if report.detected { "detected" } else { "--format" };
    outln!(
        "{} ({}, {how}) as {}: {} imported, {} updated, {} unchanged, {} skipped, {} field(s) lost",
        report.file,
        report.format,
        report.actor,
        report.imported.len(),
        report.updated.len(),
        report.unchanged.len(),
        report.skipped.len(),
        report.n_lost()
    );
    for placed in report.imported.iter().take(SHOWN) {
        outln!("  new       {} {} ({})", placed.id, placed.src, placed.at);
    }
    more(report.imported.len());
    for placed in report.updated.iter().take(SHOWN) {
        outln!("  updated   {} {} ({}): {}", placed.id, placed.src, placed.at, placed.fields.join(", "));
    }
    more(report.updated.len());
    for skipped in report.skipped.iter().take(SHOWN) {
        outln!("  skipped   {}: {}", skipped.at, skipped.reason);
    }
    more(report.skipped.len());
    lost_text(&report.lost);
    for notice in &report.notices {
        match notice.at.first() {
            Some(first) if notice.at.len() > 1 => {
                outln!("  note      {} ({first} and {} more)", notice.what, notice.at.len() - 1)
            }
            Some(first) => outln!("  note      {} ({first})", notice.what),
            None => outln!("  note      {}", notice.what),
        }
    }
    let snapshot = report.snapshot;
    match (report.written, dry_run) {
        (_, true) => outln!("dry run: {} event(s) would be appended; snapshot would be {snapshot}", report.n_events),
        (true, false) => outln!("appended {} event(s); head {}; snapshot {snapshot}", report.n_events, report.revision),
        (false, false) => outln!("no change: every entry is already in the book; head {}", report.revision),
    }
}

fn more(n: usize) {
    if n > SHOWN {
        outln!("            … and {} more (--json lists all)", n - SHOWN);
    }
}

fn lost_text(lost: &[Grouped]) {
    for group in lost {
        let places: Vec<String> = group.at.iter().take(5).map(ToString::to_string).collect();
        let extra = if group.at.len() > 5 { format!(" and {} more", group.at.len() - 5) } else { String::new() };
        let values =
            if group.values.is_empty() { String::new() } else { format!("; e.g. {}", group.values.join(", ")) };
        outln!("  lost      {} ×{} ({}{extra}){values}", group.what, group.at.len(), places.join(", "));
    }
}

/// `export --format profile`: the profile's compact form (no chapter gate: every
/// active record with its own window).
fn export_profile(book: &mut Book, reader: &projections::Reader, args: &ExportArgs, json: bool) -> Result<(), Failure> {
    if args.chapter.is_some() {
        return Err(Failure::invalid(
            "--chapter: the profile form lists every active record with its own window; export it without --chapter",
        ));
    }
    let export = book.export_profile(reader, args.as_of.map(Seq))?;
    match &args.output {
        Some(path) => write_whole(path, export.text.as_bytes(), Some(book))?,
        None => crate::render::output::write_bytes(export.text.as_bytes()),
    }
    if json {
        outln!(
            "{}",
            serde_json::json!({
                "format": "profile",
                "output": args.output.as_deref().and_then(Path::to_str),
                "revision": export.revision.0,
                "snapshot": export.snapshot.to_string(),
                "n_records": export.n_records,
            })
        );
    } else {
        errln!(
            "exported {} record(s) in the profile form at revision {} (snapshot {})",
            export.n_records,
            export.revision,
            export.snapshot
        );
    }
    Ok(())
}

pub fn export(book: &mut Book, reader: &projections::Reader, args: &ExportArgs, json: bool) -> Result<(), Failure> {
    if json && args.output.is_none() {
        return Err(Failure::invalid("--json prints the export's report, so the file needs -o FILE"));
    }
    let format = match args.format {
        ExportFormat::Tool(format) => format,
        ExportFormat::Profile => return export_profile(book, reader, args, json),
    };
    let export = book.export(reader, format, args.chapter, args.as_of.map(Seq), Some(&args.target_lang))?;
    match &args.output {
        Some(path) => write_whole(path, &export.bytes, Some(book))?,
        None => crate::render::output::write_bytes(&export.bytes),
    }
    if json {
        outln!("{}", crate::render::json::export(&export, args.output.as_deref().and_then(Path::to_str)));
        return Ok(());
    }
    // The report goes to stderr: stdout may be the file itself.
    let gate = export.chapter.map_or_else(|| "every chapter".to_owned(), |chapter| format!("chapter {chapter}"));
    errln!(
        "exported {} term(s) and {} summary(ies) as {} for {gate} at revision {} (snapshot {})",
        export.n_terms,
        export.n_summaries,
        export.format,
        export.revision,
        export.snapshot
    );
    if !export.rejected.is_empty() {
        let ids: Vec<String> = export.rejected.iter().map(ToString::to_string).collect();
        errln!("  withheld  {} (rejected by an editor)", ids.join(", "));
    }
    for group in &export.lost {
        let places: Vec<String> = group.at.iter().take(5).map(ToString::to_string).collect();
        let extra = if group.at.len() > 5 { format!(" and {} more", group.at.len() - 5) } else { String::new() };
        errln!(
            "  lost      {} ×{} ({}{extra}): {} cannot hold it",
            group.what,
            group.at.len(),
            places.join(", "),
            export.format
        );
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
