//! `lorebank check`, `lorebank review` and `lorebank scan`: read the inputs, make
//! the one book call, render the result (text for people, JSON with `--json`).

use book::check::{CheckOptions, Checked};
use book::review::{Acceptance, ReviewItem, Scanned};
use book::Book;
use ledger_model::*;

use crate::cli::args::{CheckArgs, ReviewCommand};
use crate::cli::{default_actor, gender, now_ms, read_text, record_id, write_options};
use crate::failure::Failure;

pub fn check(book: &mut Book, args: &CheckArgs, json: bool) -> Result<(), Failure> {
    let translation = read_text(&args.translation, crate::input::CHUNK)?;
    let options = CheckOptions {
        record: !args.dry_run,
        propose: args.propose,
        actor: args.actor.clone().unwrap_or_else(default_actor),
        recorded_at_ms: now_ms(),
    };
    let checked = book.check(&args.receipt, &translation, &options)?;
    if json {
        outln!("{}", crate::render::json::checked(&checked, !args.dry_run));
        return Ok(());
    }
    check_text(&checked, !args.dry_run);
    Ok(())
}

fn check_text(checked: &Checked, stored: bool) {
    let check = &checked.stored.check;
    outln!(
        "check {} of receipt {} (rules {}): {}",
        &checked.id.to_hex()[..16],
        &checked.stored.receipt.to_hex()[..16],
        check.rules_version,
        if checked.failed() { "problems found" } else { "every term rendered" }
    );
    for item in &check.items {
        let (src, dst) = checked
            .surfaces
            .iter()
            .find(|(term, ..)| *term == item.term)
            .map(|(_, src, dst)| (src.as_str(), dst.as_str()))
            .unwrap_or(("?", "?"));
        let verdict = crate::render::output::word(&item.verdict);
        let review = if item.review { " [review]" } else { "" };
        outln!(
            "  T-{} {src} → {dst}: {verdict}, {} of {} in the translation{review}",
            item.term,
            item.found_count,
            item.source_count
        );
        for found in &item.found {
            let how = if found.declared { "declared" } else { "generated" };
            outln!("      found {:?} at bytes {}..{} ({how})", found.form, found.bytes.0, found.bytes.1);
        }
        for wrong in &item.wrong {
            outln!("      T-{}'s rendering at bytes {}..{}", wrong.term, wrong.bytes.0, wrong.bytes.1);
        }
        for flag in &item.agreement {
            outln!(
                "      gender: {:?} at bytes {}..{} agrees with {}, the rendering is {}",
                flag.word,
                flag.bytes.0,
                flag.bytes.1,
                crate::render::output::word(&flag.found),
                crate::render::output::word(&flag.expected)
            );
        }
    }
    if stored {
        outln!("stored beside the receipt (translation {})", &checked.stored.translation_hash.to_hex()[..16]);
    }
    if let Some(written) = &checked.proposed {
        crate::cli::glossary::submitted(&written.submitted, &written.labels, &[], false);
    }
}

pub fn review(book: &mut Book, command: &ReviewCommand, json: bool) -> Result<(), Failure> {
    match command {
        ReviewCommand::List { owner } => {
            let items = book.review_list(owner.as_deref())?;
            if json {
                outln!("{}", crate::render::json::review_list(&items));
                return Ok(());
            }
            outln!("{} item(s) to review", items.len());
            for item in &items {
                outln!("  {}", item_line(item));
            }
            Ok(())
        }
        ReviewCommand::Show { id } => {
            let id = record_id("id", id)?;
            let item = &book.review_item(id)?;
            if json {
                outln!("{}", crate::render::json::review_item(item));
                return Ok(());
            }
            outln!("{}", item_line(item));
            if let ReviewItem::Candidate { proposed, .. } = item {
                for line in proposed.evidence.as_deref().unwrap_or("").lines() {
                    outln!("  {line}");
                }
            }
            Ok(())
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
            crate::cli::glossary::submitted(&written.submitted, &written.labels, &[], json);
            Ok(())
        }
        ReviewCommand::Reject { id, reason, note, write } | ReviewCommand::Verify { id, reason, note, write } => {
            let verdict =
                if matches!(command, ReviewCommand::Reject { .. }) { Verdict::Reject } else { Verdict::Verify };
            let id = record_id("id", id)?;
            let written = book.review_judge(id, verdict, reason, note.clone(), &write_options(write))?;
            crate::cli::glossary::submitted(&written.submitted, &written.labels, &[], json);
            Ok(())
        }
    }
}

fn item_line(item: &ReviewItem) -> String {
    match item {
        ReviewItem::Candidate { proposed, sightings } => {
            // Low trust is said on every line it is on, with the score and the term.
            let low = match (proposed.trust, proposed.score) {
                (Trust::Low, Some(score)) => format!(", low trust, score {}", embed::Score::from_millionths(score)),
                (Trust::Low, None) => ", low trust".to_owned(),
                _ => String::new(),
            };
            let related = match (proposed.related, proposed.duplicate) {
                (Some(related), Some(duplicate)) => format!("; {duplicate} same as {related}?"),
                (Some(related), None) => format!("; alias of {related}?"),
                _ => String::new(),
            };
            format!(
                "{} {} (candidate, {}{low}, seen {sightings}×){}{related}",
                proposed.id,
                proposed.surface,
                crate::render::output::word(&proposed.origin),
                proposed.suggested_dst.as_ref().map(|dst| format!(" → {dst}")).unwrap_or_default()
            )
        }
        ReviewItem::Flagged { put, why, owner, owner_role } => {
            format!("{} {} → {} ({why}){}", put.id, put.src, put.dst, ask(owner, owner_role))
        }
        ReviewItem::FlaggedRule { put, why, owner, owner_role } => format!(
            "{} rule: {} ({why}){}",
            put.id,
            put.text.split_whitespace().collect::<Vec<_>>().join(" "),
            ask(owner, owner_role)
        ),
    }
}

/// `; ask OWNER (ROLE)`, or nothing without an owner.
fn ask(owner: &Option<String>, role: &Option<String>) -> String {
    match (owner, role) {
        (Some(owner), Some(role)) => format!("; ask {owner} ({role})"),
        (Some(owner), None) => format!("; ask {owner}"),
        _ => String::new(),
    }
}

pub fn scan(
    book: &mut Book,
    chapter: u32,
    chunk: &str,
    text: &str,
    dry_run: bool,
    write: &crate::cli::args::WriteOpts,
    json: bool,
) -> Result<(), Failure> {
    let scanned = book.scan_names(chapter, chunk, text, dry_run, &write_options(write))?;
    if json {
        outln!("{}", crate::render::json::scanned(&scanned, dry_run));
        return Ok(());
    }
    scan_text(&scanned, dry_run);
    Ok(())
}

fn scan_text(scanned: &Scanned, dry_run: bool) {
    outln!("{} name-like span(s) no record covers", scanned.sightings.len());
    for (sighting, candidate) in &scanned.sightings {
        let reading = sighting.reading.as_ref().map(|reading| format!(" ({reading})")).unwrap_or_default();
        outln!(
            "  {}{reading} at chars {}..{} ({}): {candidate}",
            sighting.surface,
            sighting.chars.0,
            sighting.chars.1,
            format!("{:?}", sighting.cue).to_lowercase()
        );
    }
    match (&scanned.written, dry_run) {
        (_, true) => outln!("dry run: {} candidate(s) would be proposed or updated", scanned.proposed.len()),
        (Some(written), false) => crate::cli::glossary::submitted(&written.submitted, &written.labels, &[], false),
        (None, false) => outln!("no change: every sighting is already in the candidates' evidence"),
    }
}
