//! `lorebank check`, `lorebank review` and `lorebank scan`: read the inputs, make
//! the one book call, render the result (`crate::render`).

use book::check::CheckOptions;
use book::review::Acceptance;
use book::Book;
use ledger_model::*;

use crate::cli::args::{AdjudicateArgs, CheckArgs, EvalArgs, ExtractArgs, ModelArgs, ReviewCommand};
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

/// The model of `--model-url` (the `chat` crate's client), as the book's jobs ask it.
struct ChatModel {
    endpoint: chat::Endpoint,
    name: String,
}

impl book::exchange::Model for ChatModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete(&self, request: &[u8]) -> Result<Vec<u8>, String> {
        let limit = book::exchange::ANSWER_BYTES_MAX;
        let answer =
            self.endpoint.post_blocking("/chat/completions", request.to_vec(), limit).map_err(|f| f.to_string())?;
        if (200..300).contains(&answer.status) {
            return Ok(answer.body);
        }
        let text = String::from_utf8_lossy(&answer.body);
        let excerpt: String = text.chars().take(300).collect();
        Err(format!("answered {}: {}", answer.status, excerpt.trim()))
    }
}

/// The flags a model endpoint is configured by.
const MODEL_FLAGS: chat::Flags = chat::Flags {
    noun: "model endpoint",
    url: "--model-url",
    ca: "--model-ca",
    key: "--model-key-env or --model-key-file",
};

/// The model of `args`, when a URL is given.
fn chat_model(args: &ModelArgs) -> Result<Option<ChatModel>, Failure> {
    let Some(url) = &args.model_url else { return Ok(None) };
    let endpoint = crate::input::endpoint(&crate::input::EndpointSettings {
        flags: MODEL_FLAGS,
        key_flags: ("--model-key-env", "--model-key-file"),
        url,
        ca: args.model_ca.as_deref(),
        key_env: args.model_key_env.as_deref(),
        key_file: args.model_key_file.as_deref(),
        timeout: args.model_timeout,
    })?;
    Ok(Some(ChatModel { endpoint, name: args.model.clone() }))
}

pub fn scan_ranked(
    book: &mut Book,
    chapters: (u32, u32),
    min_score: Option<u32>,
    dry_run: bool,
    write: &crate::cli::args::WriteOpts,
    json: bool,
) -> Result<(), Failure> {
    let scanned = book.scan_ranked(chapters, min_score, dry_run, &write_options(write))?;
    print(json, || json::scanned_ranked(&scanned, dry_run), || text::scanned_ranked(&scanned, dry_run));
    Ok(())
}

pub fn extract(book: &mut Book, args: &ExtractArgs, text: Option<String>, json: bool) -> Result<(), Failure> {
    let model = chat_model(&args.model)?;
    let options = book::extract::ExtractOptions {
        model_name: Some(args.model.model.clone()),
        fresh: args.fresh,
        dry_run: args.dry_run,
    };
    let model = model.as_ref().map(|model| model as &dyn book::exchange::Model);
    let extracted = book.extract(model, args.chapter, text.as_deref(), &options, &write_options(&args.write))?;
    print(json, || json::extracted(&extracted, args.dry_run), || text::extracted(&extracted, args.dry_run));
    Ok(())
}

pub fn adjudicate(book: &mut Book, args: &AdjudicateArgs, json: bool) -> Result<(), Failure> {
    let model = chat_model(&args.model)?;
    let options = book::adjudicate::AdjudicateOptions {
        model_name: Some(args.model.model.clone()),
        fresh: args.fresh,
        dry_run: args.dry_run,
    };
    let model = model.as_ref().map(|model| model as &dyn book::exchange::Model);
    let adjudicated = book.adjudicate(model, args.chapter, &options, &write_options(&args.write))?;
    print(json, || json::adjudicated(&adjudicated, args.dry_run), || text::adjudicated(&adjudicated, args.dry_run));
    Ok(())
}

pub fn evaluate(book: &mut Book, args: &EvalArgs, json: bool) -> Result<(), Failure> {
    use crate::render::report;
    let model = chat_model(&args.model)?;
    let options = book::eval::EvalOptions {
        arms: args.modes.iter().filter_map(|name| book::eval::Arm::of(name)).collect(),
        seed: args.seed,
        fresh: args.fresh,
        model_name: Some(args.model.model.clone()),
        chunk_chars: args.chunk_chars as usize,
    };
    let write = book::WriteOptions {
        actor: crate::cli::actor(args.actor.clone()),
        source: None,
        expect_head: None,
        recorded_at_ms: now_ms(),
    };
    let model = model.as_ref().map(|model| model as &dyn book::exchange::Model);
    let evaluation = book.evaluate(model, args.chapters, &options, &write)?;
    let judged: Vec<report::Judged> = args
        .require
        .iter()
        .map(|requirement| {
            let (met, value) = requirement.judge(&evaluation);
            (requirement.clone(), met, value)
        })
        .collect();
    if let Some(dir) = &args.out {
        let written = |what: &str, error: std::io::Error| Failure::io(format!("{}: {error}", dir.join(what).display()));
        std::fs::create_dir_all(dir).map_err(|error| Failure::io(format!("--out {}: {error}", dir.display())))?;
        let mut files = vec![
            ("report.md".to_owned(), report::markdown(&evaluation, &judged)),
            ("report.json".to_owned(), format!("{:#}\n", report::json(&evaluation, &judged))),
        ];
        for chart in report::CHARTS {
            files.push((format!("{}.svg", chart.0), report::svg(&evaluation, *chart)));
        }
        for (name, text) in files {
            std::fs::write(dir.join(&name), text).map_err(|error| written(&name, error))?;
        }
    }
    print(json, || report::json(&evaluation, &judged), || outln!("{}", report::markdown(&evaluation, &judged)));
    let unmet: Vec<&str> = judged.iter().filter(|(_, met, _)| !met).map(|(r, _, _)| r.text.as_str()).collect();
    if !unmet.is_empty() {
        return Err(Failure::invalid(format!("requirement(s) not met: {}", unmet.join(", "))));
    }
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
