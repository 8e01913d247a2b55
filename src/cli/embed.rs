//! `lorebank embed …`, `lorebank suggest` and `lorebank dedupe`: read the inputs,
//! make the one call of the `suggest` crate, render the result (text for people,
//! JSON with `--json`; the server answers the same JSON).

use std::io::IsTerminal;
use std::path::Path;

use book::Book;
use ledger_model::*;
use suggest::{ModelFiles, ModelOptions, SuggestError};

use crate::cli::args::{DedupeArgs, EmbedCommand, ModelFilesArgs, PoolingArg, SetModelArgs, SuggestArgs, WriteOpts};
use crate::cli::{open_book, open_reader, read_text, write_options, Target};
use crate::failure::{Failure, Kind};

impl From<SuggestError> for Failure {
    fn from(error: SuggestError) -> Failure {
        match error {
            SuggestError::Book(error) => error.into(),
            other => Failure { kind: Kind::of(other.class()), message: other.to_string() },
        }
    }
}

fn files(args: &ModelFilesArgs, command: &str) -> Result<ModelFiles, Failure> {
    let model = args.model.clone().ok_or_else(|| {
        Failure::invalid(format!("{command} needs the model file: pass --model FILE or set LOREBANK_EMBED_MODEL"))
    })?;
    Ok(ModelFiles { model, tokenizer: args.tokenizer.clone(), operator_libraries: args.operator_libraries.clone() })
}

fn embed_write(write: &WriteOpts) -> book::WriteOptions {
    let mut options = write_options(write);
    if write.actor.is_none() {
        options.actor = suggest::DEFAULT_ACTOR.to_owned();
    }
    options
}

pub fn pooling(arg: PoolingArg) -> EmbeddingPooling {
    match arg {
        PoolingArg::Mean => EmbeddingPooling::Mean,
        PoolingArg::Cls => EmbeddingPooling::Cls,
        PoolingArg::InGraph => EmbeddingPooling::InGraph,
    }
}

pub fn model_options(args: &SetModelArgs) -> ModelOptions {
    ModelOptions {
        output: args.output.clone(),
        dim: args.dim,
        suggest_min_score: args.suggest_min_score,
        dedupe_min_score: args.dedupe_min_score,
        ..ModelOptions::new(args.name.clone(), pooling(args.pooling), !args.no_normalize)
    }
}

/// The chunk key of `--chunk`, or the text file's stem (`stdin` for `-`).
pub fn chunk_key(chunk: Option<&str>, text: &Path) -> String {
    match chunk {
        Some(chunk) => chunk.to_owned(),
        None if text.as_os_str() == "-" => "stdin".to_owned(),
        None => text.file_stem().map_or_else(|| "1".to_owned(), |stem| stem.to_string_lossy().into_owned()),
    }
}

fn score(millionths: i32) -> String {
    embed::Score::from_millionths(millionths).to_string()
}

pub fn embed(book: &Target, command: &EmbedCommand, json: bool) -> Result<(), Failure> {
    match command {
        EmbedCommand::SetModel(args) => {
            let files = files(&args.files, "embed set-model")?;
            let mut book = open_book(book)?;
            let set = suggest::set_model(&mut book, &files, &model_options(args), &write_options(&args.write))?;
            let status = suggest::status(&mut book)?;
            if json {
                outln!("{}", crate::render::json::embed::set_model(&set, &status));
                return Ok(());
            }
            outln!("embedding model {} (id {})", suggest::identity_of(&set.set), &set.id.to_string()[..16]);
            match (&set.written, &set.replaced) {
                (None, _) => outln!("no change: the book already has this model"),
                (Some(written), replaced) => {
                    if let Some(replaced) = replaced {
                        outln!(
                            "replaces {}: its {} vector entries are stale; `lorebank embed refresh` recomputes them",
                            replaced.name,
                            status.n_stale
                        );
                    }
                    crate::cli::glossary::submitted(&written.submitted, &written.labels, &[], false);
                }
            }
            Ok(())
        }
        EmbedCommand::Refresh { files: args, all } => {
            let files = files(args, "embed refresh")?;
            let mut book = open_book(book)?;
            let mut model = suggest::Model::for_book(&mut book, &files)?;
            let bar = std::io::stderr().is_terminal().then(|| {
                let bar = indicatif::ProgressBar::new(0);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "embedding {bar:40} {pos}/{len} terms ({per_sec}, eta {eta})",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                bar
            });
            let refreshed = suggest::refresh(&mut book, &mut model, *all, |done, total| {
                if let Some(bar) = &bar {
                    bar.set_length(total);
                    bar.set_position(done);
                }
            })?;
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            if json {
                outln!("{}", crate::render::json::embed::refreshed(&model.id().to_string(), &refreshed));
                return Ok(());
            }
            outln!(
                "refreshed {} terms: {} embedded ({} texts), {} kept; {} stale vector entries dropped",
                refreshed.n_terms,
                refreshed.n_embedded,
                refreshed.n_texts,
                refreshed.n_kept,
                refreshed.n_dropped
            );
            for skipped in &refreshed.skipped {
                outln!("  {} {}: no vector ({})", skipped.id, skipped.role.as_str(), skipped.reason);
            }
            Ok(())
        }
        EmbedCommand::Status => {
            let status = suggest::status(&mut open_reader(book)?)?;
            if json {
                outln!("{}", crate::render::json::embed::status(&status));
                return Ok(());
            }
            match (&status.model, &status.model_id) {
                (Some(set), Some(id)) => {
                    outln!("embedding model {} (id {})", suggest::identity_of(set), &id.to_string()[..16]);
                    outln!(
                        "{} active terms: {} with fresh vectors, {} without; {} stale vector entries",
                        status.n_terms,
                        status.n_fresh,
                        status.n_missing,
                        status.n_stale
                    );
                }
                _ => outln!("no embedding model: set one with `lorebank embed set-model`"),
            }
            outln!("vector set: {} entries, {} bytes", status.n_entries, status.n_bytes);
            Ok(())
        }
    }
}

pub fn suggest(book: &Target, args: &SuggestArgs, json: bool) -> Result<(), Failure> {
    let files = files(&args.files, "suggest")?;
    let text = read_text(&args.text, crate::input::CHUNK)?;
    let chunk = chunk_key(args.chunk.as_deref(), &args.text);
    let mut book: Book = if args.dry_run { open_reader(book)? } else { open_book(book)? };
    let mut model = suggest::Model::for_book(&mut book, &files)?;
    let write = embed_write(&args.write);
    let options = suggest::SuggestOptions { min_score: args.min_score, phrases: args.phrases, dry_run: args.dry_run };
    let suggested = suggest::suggest(&mut book, &mut model, args.chapter, &chunk, &text, &options, &write)?;
    if json {
        outln!("{}", crate::render::json::embed::suggested(&suggested, args.dry_run));
        return Ok(());
    }
    outln!("{} name-like span(s) no term covers", suggested.spans.len());
    for span in &suggested.spans {
        let sighting = &span.sighting;
        let near = match &span.nearest {
            Some((id, role, text, value)) => format!("near {id} {text} ({}) {}", role.as_str(), score(*value)),
            None => "no term of the chapter to compare with".to_owned(),
        };
        let to = match span.candidate {
            Some(candidate) => format!(": {candidate}"),
            None => format!(", below {}", score(suggested.min_score)),
        };
        outln!("  {} at chars {}..{}: {near}{to}", sighting.surface, sighting.chars.0, sighting.chars.1);
    }
    if args.phrases {
        outln!(
            "{} phrase(s) of {} near a term the chunk does not name, at {} or more",
            suggested.phrases.len(),
            suggested.n_phrases,
            score(suggested.min_score)
        );
        for phrase in &suggested.phrases {
            let (id, role, text, value) = &phrase.nearest;
            let to = phrase.candidate.map(|candidate| format!(": {candidate}")).unwrap_or_default();
            outln!(
                "  {} at chars {}..{}: near {id} {text} ({}) {}{to}",
                phrase.surface,
                phrase.chars.0,
                phrase.chars.1,
                role.as_str(),
                score(*value)
            );
        }
    }
    finish(suggested.proposed.len(), suggested.written.as_ref(), args.dry_run);
    Ok(())
}

pub fn dedupe(book: &Target, args: &DedupeArgs, json: bool) -> Result<(), Failure> {
    let files = files(&args.files, "dedupe")?;
    let mut book: Book = if args.dry_run { open_reader(book)? } else { open_book(book)? };
    let mut model = suggest::Model::for_book(&mut book, &files)?;
    let deduped = suggest::dedupe(&mut book, &mut model, args.min_score, args.dry_run, &embed_write(&args.write))?;
    if json {
        outln!("{}", crate::render::json::embed::deduped(&deduped, args.dry_run));
        return Ok(());
    }
    outln!(
        "{} pair(s) of {} active terms at {} or more{}",
        deduped.pairs.len(),
        deduped.n_terms,
        score(deduped.min_score),
        if deduped.n_over_limit > 0 {
            format!(" ({} more over the limit left out)", deduped.n_over_limit)
        } else {
            String::new()
        }
    );
    for pair in &deduped.pairs {
        outln!(
            "  {} {} ~ {} {} {} ({} ~ {}){}",
            pair.first,
            pair.first_text.1,
            pair.second,
            pair.second_text.1,
            score(pair.score),
            pair.first_text.0.as_str(),
            pair.second_text.0.as_str(),
            pair.candidate.map(|candidate| format!(": {candidate}")).unwrap_or_default()
        );
    }
    finish(deduped.proposed.len(), deduped.written.as_ref(), args.dry_run);
    Ok(())
}

fn finish(n_proposed: usize, written: Option<&book::Written>, dry_run: bool) {
    match (written, dry_run) {
        (_, true) => outln!("dry run: {n_proposed} candidate(s) would be proposed or updated"),
        (Some(written), false) => crate::cli::glossary::submitted(&written.submitted, &written.labels, &[], false),
        (None, false) => outln!("no change: every finding is already a candidate"),
    }
}
