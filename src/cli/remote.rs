//! `lorebank --server URL …`: the same commands, sent to a running `lorebank serve`
//! instead of opening the book file, so that scripts and people share the server's
//! one writer. `--book` names a book of the server's library (a path's file stem is
//! taken: `books/wuchuan.lorebank` is `wuchuan`). The answers are the server's JSON,
//! which has the shape `--json` prints locally; `assemble` and `replay` without
//! `--json` print the context as they do locally. A problem answer becomes the same
//! exit code as the local failure. The bearer token, when the server needs one, is
//! read from `LOREBANK_TOKEN`.
//!
//! Every request is built as a struct literal of the types the server parses
//! (`http::requests`), so a field the server takes cannot be left out here without
//! the compiler saying so; one function per command, as `cli::run` has.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use ledger_model::*;
use serde::Serialize;
use serde_json::{json, Value};

use crate::cli::args::*;
use crate::cli::{default_actor, file_label, read_text, record_id, single_write, term_edit, term_put};
use crate::failure::{Failure, Kind};
use crate::http::requests::*;

/// A connection to the server.
struct Remote {
    base: String,
    book: Option<String>,
    token: Option<String>,
    /// `--party`: sent as the `Lorebank-Party` header.
    party: Option<String>,
    agent: ureq::Agent,
}

/// What a request sends.
enum Send {
    Json(Value),
    Ndjson(String),
    Bytes(Vec<u8>),
    Empty,
}

impl Remote {
    fn book(&self) -> Result<&str, Failure> {
        let name = self
            .book
            .as_deref()
            .ok_or_else(|| Failure::invalid("no book given: pass --book NAME or set LOREBANK_BOOK"))?;
        book::library::check_name(name)?;
        Ok(name)
    }

    /// The URL of `rest` under the book, with `query` (a struct of `http::requests`).
    fn book_url(&self, rest: &str, query: &impl Serialize) -> Result<String, Failure> {
        let url = format!("{}/v1/books/{}{rest}", self.base, self.book()?);
        let query = serde_urlencoded::to_string(query)
            .map_err(|error| Failure::invalid(format!("the request's query: {error}")))?;
        Ok(if query.is_empty() { url } else { format!("{url}?{query}") })
    }

    fn call(&self, method: &str, url: &str, send: Send) -> Result<ureq::Response, Failure> {
        let mut request = self.agent.request(method, url);
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        if let Some(party) = &self.party {
            request = request.set("Lorebank-Party", party);
        }
        // Who is at the terminal: the actor of a write that names none, as locally.
        request = request.set("Lorebank-Actor", &default_actor());
        let answer = match send {
            Send::Json(value) => request.set("Content-Type", "application/json").send_string(&value.to_string()),
            Send::Ndjson(text) => request.set("Content-Type", "application/x-ndjson").send_string(&text),
            Send::Bytes(bytes) => request.set("Content-Type", "application/octet-stream").send_bytes(&bytes),
            Send::Empty => request.call(),
        };
        match answer {
            Ok(response) => Ok(response),
            Err(ureq::Error::Status(status, response)) => Err(problem(status, response)),
            Err(ureq::Error::Transport(transport)) => {
                Err(Failure::io(format!("cannot reach the server at {}: {transport}", self.base)))
            }
        }
    }

    fn json(&self, method: &str, url: &str, send: Send) -> Result<Value, Failure> {
        let response = self.call(method, url, send)?;
        let text = response.into_string().map_err(|error| Failure::io(format!("reading the answer: {error}")))?;
        serde_json::from_str(&text).map_err(|error| Failure::io(format!("the server's answer is not JSON: {error}")))
    }

    /// `GET rest?query`: the answer.
    fn get(&self, rest: &str, query: &impl Serialize) -> Result<Value, Failure> {
        self.json("GET", &self.book_url(rest, query)?, Send::Empty)
    }

    /// `method rest` with the JSON `body` (a struct of `http::requests`): the answer.
    fn send(&self, method: &str, rest: &str, body: &impl Serialize) -> Result<Value, Failure> {
        let body = serde_json::to_value(body).map_err(|error| Failure::invalid(format!("the request: {error}")))?;
        self.json(method, &self.book_url(rest, &())?, Send::Json(body))
    }
}

/// The failure a problem answer stands for, with the CLI's exit code.
fn problem(status: u16, response: ureq::Response) -> Failure {
    let body: Value = response.into_json().unwrap_or(Value::Null);
    let detail = body["detail"].as_str().map_or_else(|| format!("the server answered {status}"), str::to_owned);
    let kind = match body["exit_code"].as_u64() {
        Some(1) => Kind::Io,
        Some(2) => Kind::Invalid,
        Some(3) => Kind::Corrupted,
        Some(4) => Kind::Mismatch,
        Some(5) => Kind::Conflict,
        _ if status == 409 => Kind::Conflict,
        _ if (400..500).contains(&status) && status != 401 && status != 408 => Kind::Invalid,
        _ => Kind::Io,
    };
    Failure { kind, message: detail }
}

/// Prints an answer as `--json` prints it locally.
fn print(answer: Value) -> Result<(), Failure> {
    outln!("{answer}");
    Ok(())
}

/// The JSON form of event bodies.
fn events(bodies: &[Body]) -> Result<Vec<Value>, Failure> {
    bodies
        .iter()
        .map(|body| serde_json::to_value(body).map_err(|error| Failure::invalid(format!("an event: {error}"))))
        .collect()
}

/// An append of `bodies` (`POST …/events`).
fn append(remote: &Remote, bodies: &[Body], write: &WriteOpts, replace: bool) -> Result<(), Failure> {
    let request = AppendRequest {
        events: events(bodies)?,
        actor: write.actor.clone(),
        source: write.source.clone(),
        expected_head: write.expect_head,
        replace: Some(replace),
    };
    print(remote.send("POST", "/events", &request)?)
}

fn write_fields(write: &WriteOpts) -> WriteFields {
    WriteFields { actor: write.actor.clone(), source: write.source.clone(), expected_head: write.expect_head }
}

/// Runs `args.command` against the server at `server`.
pub fn run(server: &str, args: &Args) -> Result<(), Failure> {
    let base = server.trim_end_matches('/').to_owned();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(Failure::invalid(format!("--server {server:?}: expected a URL such as http://127.0.0.1:7373")));
    }
    let book = args.book.as_ref().map(|path| {
        let text = path.to_string_lossy();
        match (path.extension().is_some_and(|ext| ext == "lorebank"), path.file_stem()) {
            (true, Some(stem)) => stem.to_string_lossy().into_owned(),
            _ => text.into_owned(),
        }
    });
    let agent = ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(10)).build();
    let token = std::env::var("LOREBANK_TOKEN").ok().filter(|token| !token.is_empty());
    let remote = Remote { base, book, token, party: args.party.clone(), agent };
    let json = args.json;
    match &args.command {
        Command::Serve(_) | Command::Openapi => {
            Err(Failure::invalid("serve and openapi run locally, not with --server"))
        }
        Command::Extract(_) | Command::Adjudicate(_) | Command::Eval(_) | Command::Exchange { .. } => {
            Err(Failure::invalid(
                "extract, adjudicate, eval and exchange work with the model's answers on a book file: run them \
                 without --server",
            ))
        }
        Command::Backup { .. }
        | Command::Restore { .. }
        | Command::ExportArchive { .. }
        | Command::ImportArchive { .. } => Err(Failure::invalid(
            "backup, restore, export-archive and import-archive work on a book file, not with --server",
        )),
        Command::Init { profile, source_lang, target_lang, write } => {
            init(&remote, profile, source_lang, target_lang, write)
        }
        Command::Apply { file, replace, write } => apply(&remote, file, *replace, write),
        Command::Term(TermCommand::Put(put)) => append(&remote, &term_put(put)?, &put.write, put.replace),
        Command::Term(TermCommand::Edit(edit)) => edit_term(&remote, edit),
        Command::Term(TermCommand::Retire { write, .. })
        | Command::Alias(AliasCommand::Add { write, .. } | AliasCommand::Remove { write, .. })
        | Command::Summary(SummaryCommand::Put { write, .. } | SummaryCommand::Retire { write, .. }) => {
            append(&remote, &single_write(&args.command)?.unwrap_or_default(), write, false)
        }
        Command::Term(TermCommand::Show { id, as_of }) => term_show(&remote, id, *as_of),
        Command::Show { as_of, chapter } => {
            print(remote.get("/glossary", &GlossaryQuery { chapter: *chapter, as_of: *as_of })?)
        }
        Command::Snapshot { as_of } => print(remote.get("/snapshot", &AsOfQuery { as_of: *as_of })?),
        Command::Diff { from, to } => print(remote.get("/diff", &DiffQuery { from: Some(*from), to: Some(*to) })?),
        Command::Rollback { to, reason, write } => rollback(&remote, *to, reason.clone(), write),
        Command::Rebuild => print(remote.json("POST", &remote.book_url("/rebuild", &())?, Send::Empty)?),
        Command::Verify => verify(&remote),
        Command::Assemble { chapter, chunk, text, prev, dry_run } => {
            assemble(&remote, *chapter, chunk, text, prev.clone(), *dry_run, json)
        }
        Command::Replay { receipt, snapshot, chapter, text } => {
            replay(&remote, receipt.as_deref(), snapshot.as_deref(), *chapter, text.as_deref(), json)
        }
        Command::Audit { chapter } => print(remote.get("/audit", &ChapterQuery { chapter: Some(*chapter) })?),
        Command::Names(NamesCommand::Lint) => print(remote.get("/names/lint", &())?),
        Command::Impact { with: Some(file), actor, .. } => impact_with(&remote, file, actor.clone()),
        Command::Impact { since, term, with: None, .. } => {
            print(remote.get("/impact", &ImpactQuery { since: *since, term: term.clone() })?)
        }
        Command::Log { from, to } => log(&remote, *from, *to),
        Command::Import(import) => import_file(&remote, import),
        Command::Export(export) => export_file(&remote, export, json),
        Command::Check(check) => check_translation(&remote, check),
        Command::Review(command) => review(&remote, command),
        Command::Expect(command) => expect(&remote, command),
        Command::Source(command) => source(&remote, command, json),
        Command::Coverage { chapter } => print(remote.get("/coverage", &ChapterQuery { chapter: *chapter })?),
        Command::Profile(ProfileCommand::Check { require }) => profile_check(&remote, *require),
        Command::Scan { chapters: Some(_), .. } => Err(Failure::invalid(
            "scan --chapters reads the whole book at once: run it on the book file, without --server",
        )),
        Command::Scan { chapter, chunk, text, dry_run, write, min_score, .. } => {
            let chapter = chapter.ok_or_else(|| Failure::invalid("scan needs --chapter N or --chapters A-B"))?;
            if min_score.is_some() {
                return Err(Failure::invalid("--min-score goes with --chapters (the book-wide ranking)"));
            }
            scan(&remote, chapter, chunk.as_deref(), text.as_deref(), *dry_run, write)
        }
        Command::Embed(command) => embed(&remote, command),
        Command::Suggest(args) => suggest(&remote, args),
        Command::Dedupe(args) => dedupe(&remote, args),
    }
}

fn init(
    remote: &Remote,
    profile: &str,
    source_lang: &Option<String>,
    target_lang: &Option<String>,
    write: &WriteOpts,
) -> Result<(), Failure> {
    let request = CreateBook {
        profile: profile.to_owned(),
        source_lang: source_lang.clone(),
        target_lang: target_lang.clone(),
        actor: write.actor.clone(),
        source: write.source.clone(),
    };
    print(remote.send("PUT", "", &request)?)
}

/// `apply`: the file's lines as an NDJSON append, named as the local command names
/// them.
fn apply(remote: &Remote, file: &Path, replace: bool, write: &WriteOpts) -> Result<(), Failure> {
    let text = read_text(file, crate::input::EVENTS_FILE)?;
    let query = AppendQuery {
        actor: write.actor.clone(),
        source: write.source.clone(),
        expected_head: write.expect_head,
        replace: Some(replace),
        file: Some(file_label(file)),
    };
    print(remote.json("POST", &remote.book_url("/events", &query)?, Send::Ndjson(text))?)
}

/// `impact --with FILE`: the events file sent as an append's NDJSON body to the
/// what-if route, which writes nothing.
fn impact_with(remote: &Remote, file: &Path, actor: Option<String>) -> Result<(), Failure> {
    let text = read_text(file, crate::input::EVENTS_FILE)?;
    let query = AppendQuery { actor, source: None, expected_head: None, replace: None, file: Some(file_label(file)) };
    print(remote.json("POST", &remote.book_url("/impact", &query)?, Send::Ndjson(text))?)
}

fn edit_term(remote: &Remote, edit: &TermEditArgs) -> Result<(), Failure> {
    let id = record_id("id", &edit.id)?;
    let request = TermEditRequest { edit: term_edit(edit)?, write: write_fields(&edit.write) };
    print(remote.send("PATCH", &format!("/terms/{id}"), &request)?)
}

fn term_show(remote: &Remote, id: &str, as_of: Option<u64>) -> Result<(), Failure> {
    let id = record_id("id", id)?;
    print(remote.get(&format!("/terms/{id}"), &AsOfQuery { as_of })?)
}

fn rollback(remote: &Remote, to: u64, reason: Option<String>, write: &WriteOpts) -> Result<(), Failure> {
    let request = RollbackRequest {
        to,
        reason,
        actor: write.actor.clone(),
        source: write.source.clone(),
        expected_head: write.expect_head,
    };
    print(remote.send("POST", "/rollback", &request)?)
}

/// `verify`: a damaged book is answered `ok: false` (200), printed and exit 3.
fn verify(remote: &Remote) -> Result<(), Failure> {
    let answer = remote.json("POST", &remote.book_url("/verify", &())?, Send::Empty)?;
    outln!("{answer}");
    if answer["ok"] == json!(false) {
        let message = answer["message"].as_str().unwrap_or("verify failed").to_owned();
        return Err(Failure { kind: Kind::Corrupted, message });
    }
    Ok(())
}

fn assemble(
    remote: &Remote,
    chapter: u32,
    chunk: &str,
    text: &Path,
    prev: Option<String>,
    dry_run: bool,
    json: bool,
) -> Result<(), Failure> {
    let request = AssembleRequest {
        chapter,
        chunk: chunk.to_owned(),
        text: read_text(text, crate::input::CHUNK)?,
        prev,
        record: Some(!dry_run),
    };
    let answer = remote.send("POST", "/assemble", &request)?;
    if json {
        return print(answer);
    }
    out!("{}", answer["context"].as_str().unwrap_or_default());
    let recorded = if dry_run { "receipt (not recorded)" } else { "receipt" };
    errln!("{recorded} {}", answer["receipt"].as_str().unwrap_or_default());
    Ok(())
}

fn replay(
    remote: &Remote,
    receipt: Option<&str>,
    snapshot: Option<&str>,
    chapter: Option<u32>,
    text: Option<&Path>,
    json: bool,
) -> Result<(), Failure> {
    let answer = match (receipt, snapshot, chapter, text) {
        (_, Some(snapshot), Some(chapter), Some(text)) => {
            let request = SnapshotAssembleRequest {
                snapshot: snapshot.to_owned(),
                chapter,
                text: read_text(text, crate::input::CHUNK)?,
            };
            remote.send("POST", "/replay", &request)?
        }
        (Some(receipt), _, _, _) => {
            remote.json("POST", &remote.book_url(&format!("/receipts/{receipt}/replay"), &())?, Send::Empty)?
        }
        _ => return Err(Failure::invalid("replay needs a RECEIPT, or --snapshot with --chapter and --text")),
    };
    if json {
        outln!("{answer}");
    } else {
        out!("{}", answer["context"].as_str().unwrap_or_default());
    }
    if answer["identical"] == json!(false) {
        let at = answer["first_difference"].as_u64().unwrap_or(0);
        return Err(Failure {
            kind: Kind::Mismatch,
            message: format!("replay differs from the recorded output at byte {at}"),
        });
    }
    Ok(())
}

fn import_file(remote: &Remote, import: &ImportArgs) -> Result<(), Failure> {
    let (file, bytes) = crate::cli::interchange::import_file(import)?;
    let query = ImportQuery {
        format: import.format.map(|format| format.name().to_owned()),
        file: Some(file),
        strict: Some(import.strict),
        dry_run: Some(import.dry_run),
        actor: import.actor.clone(),
        expected_head: import.expect_head,
        source_lang: import.source_lang.clone(),
        target_lang: import.target_lang.clone(),
    };
    print(remote.json("POST", &remote.book_url("/import", &query)?, Send::Bytes(bytes))?)
}

/// An export fetched from the server, written like a local one: the file to `-o
/// FILE` or stdout, and its report from the answer's `Lorebank-Export` header.
fn export_file(remote: &Remote, export: &ExportArgs, json: bool) -> Result<(), Failure> {
    crate::cli::interchange::check_output(export, json)?;
    let query = ExportQuery {
        format: Some(export.format.name().to_owned()),
        chapter: export.chapter,
        as_of: export.as_of,
        target_lang: export.target_lang.clone(),
    };
    let response = remote.call("GET", &remote.book_url("/export", &query)?, Send::Empty)?;
    let header = |name: &str| response.header(name).unwrap_or("").to_owned();
    let (revision, snapshot, lost) =
        (header("lorebank-revision"), header("lorebank-snapshot"), header("lorebank-lost"));
    let mut report: Value = serde_json::from_str(&header("lorebank-export"))
        .map_err(|error| Failure::io(format!("the server's export report is not JSON: {error}")))?;
    let mut bytes = Vec::new();
    response
        .into_reader()
        .read_to_end(&mut bytes)
        .map_err(|error| Failure::io(format!("reading the export: {error}")))?;
    match &export.output {
        Some(path) => crate::cli::interchange::write_whole(path, &bytes, None)?,
        None => crate::render::output::write_bytes(&bytes),
    }
    if json {
        report["output"] = json!(export.output.as_deref().and_then(Path::to_str));
        outln!("{report}");
    } else if export.format == book::ExportForm::Tmx {
        errln!(
            "exported {} chunk(s) as {} TMX unit(s) at revision {revision} (snapshot {snapshot}); unchecked {}, \
             withheld {}, refused {}",
            report["n_chunks"],
            report["n_units"],
            report["unchecked"]["count"],
            report["withheld"]["count"],
            report["refused"]["count"]
        );
    } else {
        errln!(
            "exported {} as {} at revision {revision} (snapshot {snapshot}); lost: {}",
            bytes.len(),
            export.format.name(),
            if lost.is_empty() { "nothing" } else { &lost }
        );
    }
    Ok(())
}

fn check_translation(remote: &Remote, check: &CheckArgs) -> Result<(), Failure> {
    let request = CheckRequest {
        translation: read_text(&check.translation, crate::input::CHUNK)?,
        propose: Some(check.propose),
        record: Some(!check.dry_run),
        actor: check.actor.clone(),
    };
    print(remote.send("POST", &format!("/receipts/{}/check", check.receipt), &request)?)
}

fn review(remote: &Remote, command: &ReviewCommand) -> Result<(), Failure> {
    match command {
        ReviewCommand::List { owner } => print(remote.get("/review", &ReviewQuery { owner: owner.clone() })?),
        ReviewCommand::Show { id } => {
            let id = record_id("id", id)?;
            print(remote.get(&format!("/review/{id}"), &())?)
        }
        ReviewCommand::Accept { id, dst, gender, kind, note, term, write } => {
            let id = record_id("id", id)?;
            let request = AcceptRequest {
                dst: dst.clone(),
                gender: gender.map(crate::cli::gender),
                kind: kind.clone(),
                note: note.clone(),
                term: term.clone(),
                actor: write.actor.clone(),
                source: write.source.clone(),
                expected_head: write.expect_head,
            };
            print(remote.send("POST", &format!("/review/{id}/accept"), &request)?)
        }
        ReviewCommand::Reject { id, reason, note, write } | ReviewCommand::Verify { id, reason, note, write } => {
            let id = record_id("id", id)?;
            let what = if matches!(command, ReviewCommand::Reject { .. }) { "reject" } else { "verify" };
            let request = JudgeRequest {
                reason: Some(reason.clone()),
                note: note.clone(),
                actor: write.actor.clone(),
                source: write.source.clone(),
                expected_head: write.expect_head,
            };
            print(remote.send("POST", &format!("/review/{id}/{what}"), &request)?)
        }
    }
}

fn expect(remote: &Remote, command: &ExpectCommand) -> Result<(), Failure> {
    match command {
        ExpectCommand::Import { file, format, dry_run, write } => {
            let (name, bytes) = crate::cli::interchange::read_bytes(file)?;
            let query = ExpectQuery {
                format: format.map(|format| format.name().to_owned()),
                file: Some(name),
                dry_run: Some(*dry_run),
                actor: write.actor.clone(),
                source: write.source.clone(),
                expected_head: write.expect_head,
            };
            print(remote.json("POST", &remote.book_url("/expected", &query)?, Send::Bytes(bytes))?)
        }
        ExpectCommand::Add { surface, kind, note, write } => {
            let body = Body::ConceptExpected(ConceptExpected {
                surface: surface.clone(),
                kind: kind.clone(),
                note: note.clone(),
            });
            append(remote, &[body], write, false)
        }
        ExpectCommand::Drop { surface, write } => {
            append(remote, &[Body::ConceptDropped(ConceptDropped { surface: surface.clone() })], write, false)
        }
    }
}

/// `source add|import|list|show`; `show` without `--json` prints the text itself, as
/// locally.
fn source(remote: &Remote, command: &SourceCommand, json: bool) -> Result<(), Failure> {
    match command {
        SourceCommand::Add { file, chapter, title, write } => {
            let bytes = crate::cli::read_bytes(file, crate::input::SOURCE_FILE)?;
            let query = SourceQuery {
                title: title.clone(),
                actor: write.actor.clone(),
                source: write.source.clone(),
                expected_head: write.expect_head,
            };
            print(remote.json("PUT", &remote.book_url(&format!("/source/{chapter}"), &query)?, Send::Bytes(bytes))?)
        }
        SourceCommand::Import { dir, write } => {
            let mut files = Vec::new();
            for (name, bytes) in crate::cli::read_source_dir(dir)? {
                // A text that is not UTF-8 cannot travel as JSON: refused here as the
                // book refuses it.
                let text = book::source::source_text_of(&name, &bytes)?.to_owned();
                files.push(SourceFile { name, text });
            }
            let request = SourceImportRequest {
                files,
                actor: write.actor.clone(),
                source: write.source.clone(),
                expected_head: write.expect_head,
            };
            print(remote.send("POST", "/source", &request)?)
        }
        SourceCommand::List => print(remote.get("/source", &())?),
        SourceCommand::Show { chapter } => {
            let answer = remote.get(&format!("/source/{chapter}"), &())?;
            if json {
                return print(answer);
            }
            crate::render::output::write_bytes(answer["content"].as_str().unwrap_or_default().as_bytes());
            Ok(())
        }
    }
}

/// `profile check`: the report, and below the required level exit 2, as locally.
fn profile_check(remote: &Remote, require: u8) -> Result<(), Failure> {
    let answer = remote.get("/profile", &())?;
    outln!("{answer}");
    Ok(book::governance::require_level(answer["level"].as_u64().unwrap_or(0), require)?)
}

fn scan(
    remote: &Remote,
    chapter: u32,
    chunk: Option<&str>,
    text: Option<&Path>,
    dry_run: bool,
    write: &WriteOpts,
) -> Result<(), Failure> {
    let request = ScanRequest {
        chunk: chunk.map(str::to_owned),
        text: text.map(|text| read_text(text, crate::input::CHUNK)).transpose()?,
        dry_run: Some(dry_run),
        actor: write.actor.clone(),
        source: write.source.clone(),
        expected_head: write.expect_head,
    };
    print(remote.send("POST", &format!("/chapters/{chapter}/scan"), &request)?)
}

/// The embedding commands. The server embeds with its own model files (`serve
/// --embed-model`): --model and --tokenizer are not sent.
fn embed(remote: &Remote, command: &EmbedCommand) -> Result<(), Failure> {
    match command {
        EmbedCommand::SetModel(set) => {
            let options = crate::cli::embed::model_options(set);
            let request = EmbeddingModelRequest {
                name: options.name,
                pooling: Some(options.pooling),
                normalize: Some(options.normalize),
                output: options.output,
                dim: options.dim,
                suggest_min_score: Some(options.suggest_min_score),
                dedupe_min_score: Some(options.dedupe_min_score),
                actor: set.write.actor.clone(),
                source: set.write.source.clone(),
                expected_head: set.write.expect_head,
            };
            print(remote.send("PUT", "/embedding", &request)?)
        }
        EmbedCommand::Refresh { all, .. } => {
            print(remote.send("POST", "/embedding/refresh", &RefreshRequest { all: Some(*all) })?)
        }
        EmbedCommand::Status => print(remote.get("/embedding", &())?),
    }
}

fn suggest(remote: &Remote, args: &SuggestArgs) -> Result<(), Failure> {
    let request = SuggestRequest {
        chunk: crate::cli::embed::chunk_key(args.chunk.as_deref(), &args.text),
        text: read_text(&args.text, crate::input::CHUNK)?,
        dry_run: Some(args.dry_run),
        min_score: args.min_score,
        phrases: Some(args.phrases),
        actor: args.write.actor.clone(),
        source: args.write.source.clone(),
        expected_head: args.write.expect_head,
    };
    print(remote.send("POST", &format!("/chapters/{}/suggest", args.chapter), &request)?)
}

fn dedupe(remote: &Remote, args: &DedupeArgs) -> Result<(), Failure> {
    let request = DedupeRequest {
        dry_run: Some(args.dry_run),
        min_score: args.min_score,
        actor: args.write.actor.clone(),
        source: args.write.source.clone(),
        expected_head: args.write.expect_head,
    };
    print(remote.send("POST", "/dedupe", &request)?)
}

/// The log, page by page, each event one JSON line as it arrives.
fn log(remote: &Remote, from: u64, to: Option<u64>) -> Result<(), Failure> {
    let mut next = Some(from);
    while let Some(from) = next {
        let query = LogQuery { from: Some(from), to, limit: None };
        let response = remote.call("GET", &remote.book_url("/events", &query)?, Send::Empty)?;
        next = response.header("lorebank-next-from").and_then(|value| value.parse().ok());
        let mut reader = std::io::BufReader::new(response.into_reader());
        let mut line = String::new();
        loop {
            line.clear();
            let n = std::io::BufRead::read_line(&mut reader, &mut line)
                .map_err(|error| Failure::io(format!("reading the log: {error}")))?;
            if n == 0 {
                break;
            }
            let trimmed = line.trim_end();
            if trimmed.starts_with("{\"error\"") {
                return Err(Failure::io(format!("the server failed mid-log: {trimmed}")));
            }
            outln!("{trimmed}");
            if !crate::render::output::stdout_open() {
                return Ok(());
            }
        }
        // Drain nothing more: the page ended.
        let _ = reader.read_to_end(&mut Vec::new());
    }
    Ok(())
}
