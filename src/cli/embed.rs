//! `lorebank embed …`, `lorebank suggest` and `lorebank dedupe`: read the inputs,
//! make the one call of the `suggest` crate, render the result (text for people,
//! JSON with `--json`; the server answers the same JSON).

use std::io::IsTerminal;
use std::path::Path;

use book::Book;
use ledger_model::*;
use suggest::{ModelFiles, ModelOptions, SuggestError};

use crate::cli::args::{DedupeArgs, EmbedCommand, ModelFilesArgs, PoolingArg, SetModelArgs, SuggestArgs};
use crate::cli::{open_book, open_reader, read_text, write_options, Target};
use crate::failure::{Failure, Kind};
use crate::render::{json, print, text};

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

pub fn embed(book: &Target, command: &EmbedCommand, json: bool) -> Result<(), Failure> {
    match command {
        EmbedCommand::SetModel(args) => {
            let files = files(&args.files, "embed set-model")?;
            let mut book = open_book(book)?;
            let set = suggest::set_model(&mut book, &files, &model_options(args), &write_options(&args.write))?;
            let status = suggest::status(&mut book)?;
            print(json, || json::embed::set_model(&set, &status), || text::model_set(&set, &status));
            Ok(())
        }
        EmbedCommand::Refresh { files: args, all } => {
            let models = suggest::Models::new(files(args, "embed refresh")?);
            let mut book = open_book(book)?;
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
            let (model, refreshed) = models.with_model(&mut book, |book, model| {
                let refreshed = suggest::refresh(book, model, *all, |done, total| {
                    if let Some(bar) = &bar {
                        bar.set_length(total);
                        bar.set_position(done);
                    }
                })?;
                Ok((model.id(), refreshed))
            })?;
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            print(json, || json::embed::refreshed(&model.to_string(), &refreshed), || text::refreshed(&refreshed));
            Ok(())
        }
        EmbedCommand::Status => {
            let status = suggest::status(&mut open_reader(book)?)?;
            print(json, || json::embed::status(&status), || text::vector_status(&status));
            Ok(())
        }
    }
}

pub fn suggest(book: &Target, args: &SuggestArgs, json: bool) -> Result<(), Failure> {
    let models = suggest::Models::new(files(&args.files, "suggest")?);
    let text = read_text(&args.text, crate::input::CHUNK)?;
    let chunk = chunk_key(args.chunk.as_deref(), &args.text);
    let mut book: Book = if args.dry_run { open_reader(book)? } else { open_book(book)? };
    let write = write_options(&args.write);
    let options = suggest::SuggestOptions { min_score: args.min_score, phrases: args.phrases, dry_run: args.dry_run };
    let suggested = models.with_model(&mut book, |book, model| {
        suggest::suggest(book, model, args.chapter, &chunk, &text, &options, &write)
    })?;
    print(
        json,
        || json::embed::suggested(&suggested, args.dry_run),
        || text::suggested(&suggested, args.phrases, args.dry_run),
    );
    Ok(())
}

pub fn dedupe(book: &Target, args: &DedupeArgs, json: bool) -> Result<(), Failure> {
    let models = suggest::Models::new(files(&args.files, "dedupe")?);
    let mut book: Book = if args.dry_run { open_reader(book)? } else { open_book(book)? };
    let write = write_options(&args.write);
    let deduped = models
        .with_model(&mut book, |book, model| suggest::dedupe(book, model, args.min_score, args.dry_run, &write))?;
    print(json, || json::embed::deduped(&deduped, args.dry_run), || text::deduped(&deduped, args.dry_run));
    Ok(())
}
