//! `lorebank check`, `lorebank review` and `lorebank scan`: read the inputs, make
//! the one book call, render the result (`crate::render`).

use book::check::CheckOptions;
use book::review::Acceptance;
use book::Book;
use ledger_model::*;

use crate::cli::args::{CheckArgs, ReviewCommand};
use crate::cli::{default_actor, gender, now_ms, read_text, record_id, write_options};
use crate::failure::Failure;
use crate::render::{json, print, submitted, text};

pub fn check(book: &mut Book, args: &CheckArgs, json: bool) -> Result<(), Failure> {
    let translation = read_text(&args.translation, crate::input::CHUNK)?;
    let options = CheckOptions {
        record: !args.dry_run,
        propose: args.propose,
        actor: args.actor.clone().unwrap_or_else(default_actor),
        recorded_at_ms: now_ms(),
    };
    let checked = book.check(&args.receipt, &translation, &options)?;
    print(json, || json::checked(&checked, !args.dry_run), || text::checked(&checked, !args.dry_run));
    Ok(())
}

pub fn review(book: &mut Book, command: &ReviewCommand, json: bool) -> Result<(), Failure> {
    match command {
        ReviewCommand::List { owner } => {
            let items = book.review_list(owner.as_deref())?;
            print(json, || json::review_list(&items), || text::review_list(&items));
        }
        ReviewCommand::Show { id } => {
            let item = book.review_item(record_id("id", id)?)?;
            print(json, || json::review_item(&item), || text::review_item(&item));
        }
        ReviewCommand::Accept { id, dst, gender: sex, kind, note, term, write } => {
            let id = record_id("id", id)?;
            let acceptance = Acceptance {
                dst: dst.clone(),
                gender: sex.map(gender),
                kind: kind.clone(),
                note: note.clone(),
                term: term.as_deref().map(|term| record_id("--as", term)).transpose()?,
            };
            let written = book.review_accept(id, &acceptance, &write_options(write))?;
            submitted(&written, json);
        }
        ReviewCommand::Reject { id, reason, note, write } | ReviewCommand::Verify { id, reason, note, write } => {
            let verdict =
                if matches!(command, ReviewCommand::Reject { .. }) { Verdict::Reject } else { Verdict::Verify };
            let id = record_id("id", id)?;
            let written = book.review_judge(id, verdict, reason, note.clone(), &write_options(write))?;
            submitted(&written, json);
        }
    }
    Ok(())
}

pub fn scan(
    book: &mut Book,
    chapter: u32,
    chunk: Option<&str>,
    text: Option<&str>,
    dry_run: bool,
    write: &crate::cli::args::WriteOpts,
    json: bool,
) -> Result<(), Failure> {
    let scanned = book.scan(chapter, chunk, text, dry_run, &write_options(write))?;
    print(json, || json::scanned(&scanned, dry_run), || text::scanned(&scanned, dry_run));
    Ok(())
}
