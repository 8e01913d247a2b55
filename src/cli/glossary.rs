//! The glossary's reads and upkeep: `show`, `snapshot`, `diff`, `rebuild`,
//! `coverage`, `profile check` and `expect import`: one book call each, rendered by
//! `crate::render`.

use std::io::IsTerminal;

use book::Book;
use ledger_model::*;

use crate::failure::Failure;
use crate::render::{json, print, text};

pub fn show(
    book: &mut Book,
    reader: &projections::Reader,
    as_of: Option<Seq>,
    chapter: Option<u32>,
    json: bool,
) -> Result<(), Failure> {
    let glossary = book.glossary(reader, as_of, chapter)?;
    print(json, || json::glossary(&glossary), || text::glossary(&glossary, reader, chapter));
    Ok(())
}

/// Prints the coverage report.
pub fn coverage(book: &mut Book, chapter: Option<u32>, json: bool) -> Result<(), Failure> {
    let coverage = book.coverage(chapter)?;
    print(json, || json::coverage(&coverage), || text::coverage(&coverage));
    Ok(())
}

/// Prints the profile check; below the `require`d level it fails (exit 2), so it can
/// gate a build.
pub fn profile_check(book: &mut Book, require: u8, json: bool) -> Result<(), Failure> {
    let report = book.profile_check()?;
    print(json, || json::profile_report(&report), || text::profile_report(&report));
    Ok(book::governance::require_level(u64::from(report.level), require)?)
}

pub fn snapshot(book: &mut Book, as_of: Option<Seq>, json: bool) -> Result<(), Failure> {
    let info = book.snapshot_info(as_of)?;
    print(json, || json::snapshot(&info), || text::snapshot(&info));
    Ok(())
}

pub fn diff(book: &mut Book, from: Seq, to: Seq, json: bool) -> Result<(), Failure> {
    let diff = book.diff(from, to)?;
    print(json, || json::diff(&diff.old, &diff.new, &diff.records, &diff.config), || text::diff(&diff, from, to));
    Ok(())
}

pub fn rebuild(book: &mut Book, json: bool) -> Result<(), Failure> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("folding {bar:40} {pos}/{len} events ({per_sec}, eta {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let rebuilt = book.rebuild(|done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    print(json, || json::rebuilt(&rebuilt), || text::rebuilt(&rebuilt));
    Ok(())
}
