//! `lorebank --server URL …`: the same commands, sent to a running `lorebank serve`
//! instead of opening the book file, so that scripts and people share the server's
//! one writer. `--book` names a book of the server's library (a path's file stem is
//! taken: `books/wuchuan.lorebank` is `wuchuan`). The answers are the server's JSON,
//! which has the shape `--json` prints locally; `assemble` and `replay` without
//! `--json` print the context as they do locally. A problem answer becomes the same
//! exit code as the local failure. The bearer token, when the server needs one, is
//! read from `LOREBANK_TOKEN`.

use std::io::Read;
use std::time::Duration;

use ledger_model::*;
use serde_json::{json, Value};

use crate::cli::args::*;
use crate::cli::{default_actor, read_text, record_id, single_write, term_edit, term_put};
use crate::failure::{Failure, Kind};

/// A connection to the server.
struct Remote {
    base: String,
    book: Option<String>,
    token: Option<String>,
    /// `--party`: sent as the `Lorebank-Party` header.
    party: Option<String>,
    agent: ureq::Agent,
}

/// How a request goes: method, path under the book (or absolute), query, body.
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

    fn book_url(&self, rest: &str) -> Result<String, Failure> {
        Ok(format!("{}/v1/books/{}{rest}", self.base, self.book()?))
    }

    fn call(&self, method: &str, url: &str, query: &[(&str, String)], send: Send) -> Result<ureq::Response, Failure> {
        let mut request = self.agent.request(method, url);
        for (name, value) in query {
            request = request.query(name, value);
        }
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

    fn json(&self, method: &str, url: &str, query: &[(&str, String)], send: Send) -> Result<Value, Failure> {
        let response = self.call(method, url, query, send)?;
        let text = response.into_string().map_err(|error| Failure::io(format!("reading the answer: {error}")))?;
        serde_json::from_str(&text).map_err(|error| Failure::io(format!("the server's answer is not JSON: {error}")))
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

fn write_fields(write: &WriteOpts) -> Value {
    json!({
        "actor": write.actor,
        "source": write.source,
        "expected_head": write.expect_head,
    })
}

fn append_json(bodies: &[Body], write: &WriteOpts, replace: bool) -> Value {
    let mut value = write_fields(write);
    value["events"] = json!(bodies);
    value["replace"] = json!(replace);
    value
}

fn opt<T: ToString>(name: &'static str, value: Option<T>) -> Vec<(&'static str, String)> {
    value.map(|value| (name, value.to_string())).into_iter().collect()
}

/// The fields of a term edit as a PATCH body: a field left out stays, `null` clears.
fn edit_json(edit: &book::TermEdit, write: &WriteOpts) -> Value {
    let mut value = write_fields(write);
    let mut set = |name: &str, field: Option<Value>| {
        if let Some(field) = field {
            value[name] = field;
        }
    };
    set("src", edit.src.as_ref().map(|v| json!(v)));
    set("dst", edit.dst.as_ref().map(|v| json!(v)));
    set("sense", edit.sense.as_ref().map(|v| json!(v)));
    set("kind", edit.kind.as_ref().map(|v| json!(v)));
    set("gender", edit.gender.as_ref().map(|v| json!(v)));
    set("decl", edit.decl.as_ref().map(|v| json!(v)));
    set("speech", edit.speech.as_ref().map(|v| json!(v)));
    set("note", edit.note.as_ref().map(|v| json!(v)));
    set("since", edit.since.map(|v| json!(v)));
    set("until", edit.until.map(|v| json!(v)));
    set("status", edit.status.map(|v| json!(v)));
    set("priority", edit.priority.map(|v| json!(v)));
    set("constant", edit.constant.map(|v| json!(v)));
    set("secondary", edit.secondary.as_ref().map(|v| json!(v)));
    set("secondary_logic", edit.secondary_logic.map(|v| json!(v)));
    set("supersedes", edit.supersedes.map(|v| json!(v.map(|id| id.to_string()))));
    set("owner", edit.owner.as_ref().map(|v| json!(v)));
    set("owner_role", edit.owner_role.as_ref().map(|v| json!(v)));
    set("release_to", edit.release_to.as_ref().map(|v| json!(v)));
    set("note_release_to", edit.note_release_to.as_ref().map(|v| json!(v)));
    value
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
    let answer = match &args.command {
        Command::Serve(_) | Command::Openapi => {
            return Err(Failure::invalid("serve and openapi run locally, not with --server"))
        }
        Command::Backup { .. }
        | Command::Restore { .. }
        | Command::ExportArchive { .. }
        | Command::ImportArchive { .. } => {
            return Err(Failure::invalid(
                "backup, restore, export-archive and import-archive work on a book file, not with --server",
            ))
        }
        Command::Init { profile, write } => {
            let body = json!({ "profile": profile, "actor": write.actor, "source": write.source });
            remote.json("PUT", &remote.book_url("")?, &[], Send::Json(body))?
        }
        Command::Apply { file, replace, write } => {
            let text = read_text(file, crate::input::EVENTS_FILE)?;
            let mut query = vec![("file", crate::cli::file_label(file))];
            query.extend(opt("actor", write.actor.clone()));
            query.extend(replace.then(|| ("replace", "true".to_owned())));
            query.extend(opt("source", write.source.clone()));
            query.extend(opt("expected_head", write.expect_head));
            remote.json("POST", &remote.book_url("/events")?, &query, Send::Ndjson(text))?
        }
        Command::Term(TermCommand::Put(put)) => {
            let bodies = term_put(put)?;
            remote.json(
                "POST",
                &remote.book_url("/events")?,
                &[],
                Send::Json(append_json(&bodies, &put.write, put.replace)),
            )?
        }
        Command::Term(TermCommand::Edit(edit)) => {
            let id = record_id("id", &edit.id)?;
            let body = edit_json(&term_edit(edit)?, &edit.write);
            remote.json("PATCH", &remote.book_url(&format!("/terms/{id}"))?, &[], Send::Json(body))?
        }
        Command::Term(TermCommand::Retire { write, .. })
        | Command::Alias(AliasCommand::Add { write, .. } | AliasCommand::Remove { write, .. })
        | Command::Summary(SummaryCommand::Put { write, .. } | SummaryCommand::Retire { write, .. }) => {
            let bodies = single_write(&args.command)?.unwrap_or_default();
            remote.json("POST", &remote.book_url("/events")?, &[], Send::Json(append_json(&bodies, write, false)))?
        }
        Command::Term(TermCommand::Show { id, as_of }) => {
            let id = record_id("id", id)?;
            remote.json("GET", &remote.book_url(&format!("/terms/{id}"))?, &opt("as_of", *as_of), Send::Empty)?
        }
        Command::Show { as_of, chapter } => {
            let mut query = opt("as_of", *as_of);
            query.extend(opt("chapter", *chapter));
            remote.json("GET", &remote.book_url("/glossary")?, &query, Send::Empty)?
        }
        Command::Snapshot { as_of } => {
            remote.json("GET", &remote.book_url("/snapshot")?, &opt("as_of", *as_of), Send::Empty)?
        }
        Command::Diff { from, to } => {
            let query = [("from", from.to_string()), ("to", to.to_string())];
            remote.json("GET", &remote.book_url("/diff")?, &query, Send::Empty)?
        }
        Command::Rollback { to, reason, write } => {
            let mut body = write_fields(write);
            body["to"] = json!(to);
            body["reason"] = json!(reason);
            remote.json("POST", &remote.book_url("/rollback")?, &[], Send::Json(body))?
        }
        Command::Rebuild => remote.json("POST", &remote.book_url("/rebuild")?, &[], Send::Empty)?,
        Command::Verify => {
            let answer = remote.json("POST", &remote.book_url("/verify")?, &[], Send::Empty)?;
            if answer["ok"] == json!(false) {
                outln!("{answer}");
                let message = answer["message"].as_str().unwrap_or("verify failed").to_owned();
                return Err(Failure { kind: Kind::Corrupted, message });
            }
            answer
        }
        Command::Assemble { chapter, chunk, text, prev, dry_run } => {
            let body = json!({
                "chapter": chapter,
                "chunk": chunk,
                "text": read_text(text, crate::input::CHUNK)?,
                "prev": prev,
                "record": !dry_run,
            });
            let answer = remote.json("POST", &remote.book_url("/assemble")?, &[], Send::Json(body))?;
            if !json {
                out!("{}", answer["context"].as_str().unwrap_or_default());
                let recorded = if *dry_run { "receipt (not recorded)" } else { "receipt" };
                errln!("{recorded} {}", answer["receipt"].as_str().unwrap_or_default());
                return Ok(());
            }
            answer
        }
        Command::Replay { receipt, snapshot, chapter, text } => {
            let answer = match (receipt, snapshot, chapter, text) {
                (_, Some(snapshot), Some(chapter), Some(text)) => {
                    let body = json!({ "snapshot": snapshot, "chapter": chapter, "text": read_text(text, crate::input::CHUNK)? });
                    remote.json("POST", &remote.book_url("/replay")?, &[], Send::Json(body))?
                }
                (Some(receipt), _, _, _) => {
                    remote.json("POST", &remote.book_url(&format!("/receipts/{receipt}/replay"))?, &[], Send::Empty)?
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
            return Ok(());
        }
        Command::Audit { chapter } => {
            remote.json("GET", &remote.book_url("/audit")?, &[("chapter", chapter.to_string())], Send::Empty)?
        }
        Command::Impact { since, term } => {
            let mut query = opt("since", *since);
            query.extend(opt("term", term.clone()));
            remote.json("GET", &remote.book_url("/impact")?, &query, Send::Empty)?
        }
        Command::Log { from, to } => return log(&remote, *from, *to),
        Command::Import(import) => {
            let (file, bytes) = crate::cli::interchange::read_bytes(&import.file)?;
            let mut query = vec![("file", file), ("target_lang", import.target_lang.clone())];
            query.extend(opt("format", import.format.map(|format| format.name())));
            query.extend(opt("actor", import.actor.clone()));
            query.extend(opt("expected_head", import.expect_head));
            query.extend(import.strict.then(|| ("strict", "true".to_owned())));
            query.extend(import.dry_run.then(|| ("dry_run", "true".to_owned())));
            remote.json("POST", &remote.book_url("/import")?, &query, Send::Bytes(bytes))?
        }
        Command::Export(export) => return export_remote(&remote, export, json),
        Command::Check(check) => {
            let translation = read_text(&check.translation, crate::input::CHUNK)?;
            let body = json!({
                "translation": translation,
                "propose": check.propose,
                "record": !check.dry_run,
                "actor": check.actor,
            });
            let url = remote.book_url(&format!("/receipts/{}/check", check.receipt))?;
            remote.json("POST", &url, &[], Send::Json(body))?
        }
        Command::Review(ReviewCommand::List { owner }) => {
            remote.json("GET", &remote.book_url("/review")?, &opt("owner", owner.clone()), Send::Empty)?
        }
        Command::Expect(ExpectCommand::Import { file, format, dry_run, write }) => {
            let (name, bytes) = crate::cli::interchange::read_bytes(file)?;
            let mut query = vec![("file", name)];
            query.extend(opt("format", format.map(|format| format.name())));
            query.extend(opt("actor", write.actor.clone()));
            query.extend(opt("source", write.source.clone()));
            query.extend(opt("expected_head", write.expect_head));
            query.extend(dry_run.then(|| ("dry_run", "true".to_owned())));
            remote.json("POST", &remote.book_url("/expected")?, &query, Send::Bytes(bytes))?
        }
        Command::Expect(ExpectCommand::Add { surface, kind, note, write }) => {
            let body = Body::ConceptExpected(ConceptExpected {
                surface: surface.clone(),
                kind: kind.clone(),
                note: note.clone(),
            });
            remote.json("POST", &remote.book_url("/events")?, &[], Send::Json(append_json(&[body], write, false)))?
        }
        Command::Expect(ExpectCommand::Drop { surface, write }) => {
            let body = Body::ConceptDropped(ConceptDropped { surface: surface.clone() });
            remote.json("POST", &remote.book_url("/events")?, &[], Send::Json(append_json(&[body], write, false)))?
        }
        Command::Coverage { chapter } => {
            remote.json("GET", &remote.book_url("/coverage")?, &opt("chapter", *chapter), Send::Empty)?
        }
        Command::Profile(ProfileCommand::Check { require }) => {
            let answer = remote.json("GET", &remote.book_url("/profile")?, &[], Send::Empty)?;
            outln!("{answer}");
            book::governance::require_level(answer["level"].as_u64().unwrap_or(0), *require)?;
            return Ok(());
        }
        Command::Review(ReviewCommand::Show { id }) => {
            let id = record_id("id", id)?;
            remote.json("GET", &remote.book_url(&format!("/review/{id}"))?, &[], Send::Empty)?
        }
        Command::Review(ReviewCommand::Accept { id, dst, gender, kind, note, term, write }) => {
            let id = record_id("id", id)?;
            let gender = gender.map(|arg| crate::render::text::word(&crate::cli::gender(arg)));
            let body = json!({
                "dst": dst, "gender": gender, "kind": kind, "note": note, "term": term,
                "actor": write.actor, "source": write.source, "expected_head": write.expect_head,
            });
            remote.json("POST", &remote.book_url(&format!("/review/{id}/accept"))?, &[], Send::Json(body))?
        }
        Command::Review(
            ReviewCommand::Reject { id, reason, note, write } | ReviewCommand::Verify { id, reason, note, write },
        ) => {
            let id = record_id("id", id)?;
            let what =
                if matches!(args.command, Command::Review(ReviewCommand::Reject { .. })) { "reject" } else { "verify" };
            let body = json!({
                "reason": reason, "note": note,
                "actor": write.actor, "source": write.source, "expected_head": write.expect_head,
            });
            remote.json("POST", &remote.book_url(&format!("/review/{id}/{what}"))?, &[], Send::Json(body))?
        }
        Command::Scan { chapter, chunk, text, dry_run, write } => {
            let text = read_text(text, crate::input::CHUNK)?;
            let body = json!({
                "chunk": chunk, "text": text, "dry_run": dry_run,
                "actor": write.actor, "source": write.source, "expected_head": write.expect_head,
            });
            remote.json("POST", &remote.book_url(&format!("/chapters/{chapter}/scan"))?, &[], Send::Json(body))?
        }
        // The server embeds with its own model files (`serve --embed-model`): --model
        // and --tokenizer are not sent.
        Command::Embed(EmbedCommand::SetModel(set)) => {
            let options = crate::cli::embed::model_options(set);
            let mut body = write_fields(&set.write);
            body["name"] = json!(options.name);
            body["pooling"] = json!(options.pooling);
            body["normalize"] = json!(options.normalize);
            body["output"] = json!(options.output);
            body["dim"] = json!(options.dim);
            body["suggest_min_score"] = json!(options.suggest_min_score);
            body["dedupe_min_score"] = json!(options.dedupe_min_score);
            remote.json("PUT", &remote.book_url("/embedding")?, &[], Send::Json(body))?
        }
        Command::Embed(EmbedCommand::Refresh { all, .. }) => {
            remote.json("POST", &remote.book_url("/embedding/refresh")?, &[], Send::Json(json!({ "all": all })))?
        }
        Command::Embed(EmbedCommand::Status) => {
            remote.json("GET", &remote.book_url("/embedding")?, &[], Send::Empty)?
        }
        Command::Suggest(suggest) => {
            let text = read_text(&suggest.text, crate::input::CHUNK)?;
            let body = json!({
                "chunk": crate::cli::embed::chunk_key(suggest.chunk.as_deref(), &suggest.text),
                "text": text,
                "dry_run": suggest.dry_run,
                "min_score": suggest.min_score,
                "phrases": suggest.phrases,
                "actor": suggest.write.actor,
                "source": suggest.write.source,
                "expected_head": suggest.write.expect_head,
            });
            let url = remote.book_url(&format!("/chapters/{}/suggest", suggest.chapter))?;
            remote.json("POST", &url, &[], Send::Json(body))?
        }
        Command::Dedupe(dedupe) => {
            let body = json!({
                "dry_run": dedupe.dry_run,
                "min_score": dedupe.min_score,
                "actor": dedupe.write.actor,
                "source": dedupe.write.source,
                "expected_head": dedupe.write.expect_head,
            });
            remote.json("POST", &remote.book_url("/dedupe")?, &[], Send::Json(body))?
        }
    };
    outln!("{answer}");
    Ok(())
}

/// An export fetched from the server, written like a local one: the file to `-o
/// FILE` or stdout, and its report from the answer's `Lorebank-Export` header.
fn export_remote(remote: &Remote, export: &ExportArgs, json: bool) -> Result<(), Failure> {
    crate::cli::interchange::check_output(export, json)?;
    let mut query = vec![("format", export.format.name().to_owned()), ("target_lang", export.target_lang.clone())];
    query.extend(opt("chapter", export.chapter));
    query.extend(opt("as_of", export.as_of));
    let response = remote.call("GET", &remote.book_url("/export")?, &query, Send::Empty)?;
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
        report["output"] = json!(export.output.as_deref().and_then(std::path::Path::to_str));
        outln!("{report}");
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

/// The log, page by page, each event one JSON line as it arrives.
fn log(remote: &Remote, from: u64, to: Option<u64>) -> Result<(), Failure> {
    let mut next = Some(from);
    while let Some(from) = next {
        let mut query = vec![("from", from.to_string())];
        query.extend(opt("to", to));
        let response = remote.call("GET", &remote.book_url("/events")?, &query, Send::Empty)?;
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
