//! The command line: argv (`args`), one function per command that parses what clap
//! could not, makes one call of the book service and renders the answer (here and
//! in the command families `glossary`, `chunks`, `interchange`, `review`, `archive`,
//! `embed`), and `--server` mode (`remote`), the same commands sent to a running
//! `lorebank serve`.

pub mod archive;
pub mod args;
pub mod chunks;
pub mod embed;
pub mod glossary;
pub mod interchange;
pub mod remote;
pub mod review;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use book::{Actor, Book, Labelled, Patience, WriteOptions};
use ledger_model::*;
use projections::Reader;

use crate::cli::args::*;
use crate::failure::Failure;
use crate::input::{Bound, CHUNK, EVENTS_FILE, SOURCE_FILE};
use crate::render::{json, output, print, submitted, text};

/// Runs one command line: locally on the book file, or with `--server` against a
/// running `lorebank serve`.
pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(party) = &args.party {
        let reads_as_party = matches!(
            args.command,
            Command::Show { .. } | Command::Assemble { .. } | Command::Replay { .. } | Command::Export(_)
        );
        if !reads_as_party {
            return Err(Failure::invalid(format!(
                "--party {party}: only show, assemble, replay and export read as a party; this command reads the book's full view"
            )));
        }
    }
    if let Some(server) = &args.server {
        return remote::run(server, &args);
    }
    let json = args.json;
    let wait = args.wait;
    let book = args
        .book
        .map(|path| Target { path, wait, json })
        .ok_or_else(|| Failure::invalid("no book given: pass --book PATH or set LOREBANK_BOOK"));
    let single = single_write(&args.command)?;
    let reader = Reader::from_party(args.party.clone());
    match args.command {
        Command::Serve(serve) => serve_command(*serve),
        Command::Openapi => openapi(),
        Command::Init { profile, source_lang, target_lang, write } => {
            let languages = LanguagesSet { source: source_lang, target: target_lang };
            init(&book?.path, &profile, &languages, &write, json)
        }
        Command::Term(TermCommand::Show { id, as_of }) => term_show(&book?, record_id("id", &id)?, as_of, json),
        Command::Show { as_of, chapter } => {
            glossary::show(&mut open_reader(&book?)?, &reader, as_of.map(Seq), chapter, json)
        }
        Command::Snapshot { as_of } => glossary::snapshot(&mut open_reader(&book?)?, as_of.map(Seq), json),
        Command::Diff { from, to } => glossary::diff(&mut open_reader(&book?)?, Seq(from), Seq(to), json),
        Command::Rollback { to, reason, write } => rollback(&book?, Seq(to), reason, &write, json),
        Command::Rebuild => glossary::rebuild(&mut open_book(&book?)?, json),
        Command::Assemble { chapter, chunk, text, prev, dry_run } => {
            assemble(&book?, &reader, chapter, &chunk, &text, prev.as_deref(), dry_run, json)
        }
        Command::Replay { receipt, snapshot, chapter, text } => {
            replay(&book?, &reader, receipt.as_deref(), snapshot.as_deref(), chapter, text.as_deref(), json)
        }
        Command::Audit { chapter } => chunks::audit(&mut open_reader(&book?)?, chapter, json),
        Command::Names(NamesCommand::Lint) => {
            let lint = open_reader(&book?)?.names_lint()?;
            print(json, || json::name_lint(&lint), || text::name_lint(&lint));
            Ok(())
        }
        Command::Impact { with: Some(file), actor, .. } => impact_with(&book?, &file, actor, json),
        Command::Impact { since, term, with: None, .. } => impact(&book?, since, term.as_deref(), json),
        Command::Apply { file, replace, write } => apply(&book?, &file, replace, &write, json),
        Command::Import(import) => {
            let mut book = if import.dry_run { open_reader(&book?)? } else { open_book(&book?)? };
            interchange::import(&mut book, &import, now_ms(), json)
        }
        Command::Export(export) => interchange::export(&mut open_reader(&book?)?, &reader, &export, json),
        Command::Expect(ExpectCommand::Import { file, format, dry_run, write }) => {
            expect_import(&book?, &file, format, dry_run, &write, json)
        }
        Command::Expect(ExpectCommand::Add { surface, kind, note, write }) => {
            commit(&book?, &write, vec![Body::ConceptExpected(ConceptExpected { surface, kind, note })], json)
        }
        Command::Expect(ExpectCommand::Drop { surface, write }) => {
            commit(&book?, &write, vec![Body::ConceptDropped(ConceptDropped { surface })], json)
        }
        Command::Source(command) => source(&book?, command, json),
        Command::Coverage { chapter } => glossary::coverage(&mut open_reader(&book?)?, chapter, json),
        Command::Profile(ProfileCommand::Check { require }) => {
            glossary::profile_check(&mut open_reader(&book?)?, require, json)
        }
        Command::Check(check) => {
            let mut book = if check.dry_run && !check.propose { open_reader(&book?)? } else { open_book(&book?)? };
            review::check(&mut book, &check, json)
        }
        Command::Review(command) => {
            let reads = matches!(command, ReviewCommand::List { .. } | ReviewCommand::Show { .. });
            let mut book = if reads { open_reader(&book?)? } else { open_book(&book?)? };
            review::review(&mut book, &command, json)
        }
        Command::Extract(extract) => {
            let text = extract.text.as_ref().map(|text| read_text(text, SOURCE_FILE)).transpose()?;
            let mut book = if extract.dry_run { open_reader(&book?)? } else { open_book(&book?)? };
            review::extract(&mut book, &extract, text, json)
        }
        Command::Eval(eval) => review::evaluate(&mut open_book(&book?)?, &eval, json),
        Command::Exchange { id } => {
            let (id, exchange) = open_reader(&book?)?.exchange_named(&id)?;
            print(json, || json::exchange(id, &exchange), || text::exchange(id, &exchange));
            Ok(())
        }
        Command::Adjudicate(adjudicate) => {
            let mut book = if adjudicate.dry_run { open_reader(&book?)? } else { open_book(&book?)? };
            review::adjudicate(&mut book, &adjudicate, json)
        }
        Command::Scan { chapters: Some(chapters), min_score, dry_run, write, .. } => {
            let mut book = if dry_run { open_reader(&book?)? } else { open_book(&book?)? };
            review::scan_ranked(&mut book, chapters, min_score, dry_run, &write, json)
        }
        Command::Scan { chapter, chunk, text, dry_run, write, min_score, .. } => {
            let chapter = chapter.ok_or_else(|| Failure::invalid("scan needs --chapter N or --chapters A-B"))?;
            if min_score.is_some() {
                return Err(Failure::invalid("--min-score goes with --chapters (the book-wide ranking)"));
            }
            let text = text.map(|text| read_text(&text, CHUNK)).transpose()?;
            let mut book = if dry_run { open_reader(&book?)? } else { open_book(&book?)? };
            review::scan(&mut book, chapter, chunk.as_deref(), text.as_deref(), dry_run, &write, json)
        }
        Command::Term(TermCommand::Put(put)) => term_put_command(&book?, &put, json),
        Command::Term(TermCommand::Edit(edit)) => term_edit_command(&book?, &edit, json),
        Command::Term(TermCommand::Retire { write, .. })
        | Command::Alias(AliasCommand::Add { write, .. } | AliasCommand::Remove { write, .. })
        | Command::Summary(SummaryCommand::Retire { write, .. }) => {
            commit(&book?, &write, single.unwrap_or_default(), json)
        }
        Command::Summary(SummaryCommand::Put { id, scope, text, visible_from, write }) => {
            let fields = book::SummaryFields { scope: parse_scope(&scope)?, text, visible_from };
            let written =
                open_book(&book?)?.summary_put(Some(record_id("id", &id)?), &fields, &write_options(&write))?;
            submitted(&written, json);
            Ok(())
        }
        Command::Log { from, to } => log(&book?, from, to, json),
        Command::Verify => verify(&book?, json),
        Command::Backup { out, force } => {
            archive::copied("backup", &open_reader(&book?)?.backup(&out, force)?, json);
            Ok(())
        }
        Command::Restore { backup, force } => {
            let target = book?;
            archive::copied("restored", &Book::restore(&backup, &target.path, force, &mut target.patience())?, json);
            Ok(())
        }
        Command::ExportArchive { out, force } => {
            archive::copied("archive", &open_reader(&book?)?.export_archive(&out, force)?, json);
            Ok(())
        }
        Command::ImportArchive { archive } => {
            archive::copied("imported", &Book::import_archive(&archive, &book?.path)?, json);
            Ok(())
        }
        Command::Embed(command) => embed::embed(&book?, &command, json),
        Command::Suggest(suggest) => embed::suggest(&book?, &suggest, json),
        Command::Dedupe(dedupe) => embed::dedupe(&book?, &dedupe, json),
    }
}

/// `lorebank serve`: the flags become the server's settings.
fn serve_command(serve: ServeArgs) -> Result<(), Failure> {
    crate::serve::run(crate::serve::Settings {
        dir: serve.dir,
        listen: serve.listen,
        token_file: serve.token_file,
        max_open_books: serve.max_open_books as usize,
        max_open_bytes: serve.max_open_bytes,
        idle_close: serve.idle_close,
        cluster: serve.cluster.map(|urls| crate::http::cluster::ClusterSettings {
            urls,
            library: serve.library,
            replicas: serve.replicas as usize,
            seed: serve.seed,
        }),
        limits: crate::http::routes::Limits {
            events_max: serve.events_max as usize,
            chunks_max: serve.chunks_max as usize,
            log_page_max: serve.log_page_max,
            body_bytes_max: serve.body_limit as usize,
            timeout_s: serve.request_timeout.as_secs_f64().max(0.001),
        },
        upstream: serve.upstream.map(|url| crate::serve::UpstreamSettings {
            url,
            ca: serve.upstream_ca,
            key_env: serve.upstream_key_env,
            key_file: serve.upstream_key_file,
            timeout: serve.upstream_timeout,
            unplaced: if serve.proxy_forward_unplaced {
                crate::http::proxy::Unplaced::Forward
            } else {
                crate::http::proxy::Unplaced::Refuse
            },
            propose: serve.proxy_propose,
        }),
        embed: serve.embed_model.map(|model| suggest::ModelFiles {
            model,
            tokenizer: serve.embed_tokenizer,
            operator_libraries: serve.embed_operator_library,
        }),
    })
}

/// `lorebank openapi`: the HTTP API's OpenAPI document.
fn openapi() -> Result<(), Failure> {
    out!("{}", crate::http::api::document());
    Ok(())
}

#[allow(clippy::too_many_arguments, reason = "the arguments of the command")]
fn assemble(
    book: &Target,
    reader: &Reader,
    chapter: u32,
    chunk: &str,
    text: &Path,
    prev: Option<&str>,
    dry_run: bool,
    json: bool,
) -> Result<(), Failure> {
    let text = read_text(text, CHUNK)?;
    let mut book = if dry_run { open_reader(book)? } else { open_book(book)? };
    chunks::assemble(&mut book, reader, chapter, chunk, &text, prev, !dry_run, json)
}

fn replay(
    book: &Target,
    reader: &Reader,
    receipt: Option<&str>,
    snapshot: Option<&str>,
    chapter: Option<u32>,
    text: Option<&Path>,
    json: bool,
) -> Result<(), Failure> {
    let mut book = open_reader(book)?;
    match (receipt, snapshot, chapter, text) {
        (_, Some(snapshot), Some(chapter), Some(text)) => {
            chunks::replay_snapshot(&mut book, reader, snapshot, chapter, &read_text(text, CHUNK)?, json)
        }
        (Some(receipt), _, _, _) => chunks::replay(&mut book, reader, receipt, json),
        _ => Err(Failure::invalid("replay needs a RECEIPT, or --snapshot with --chapter and --text")),
    }
}

fn impact(book: &Target, since: Option<u64>, term: Option<&str>, json: bool) -> Result<(), Failure> {
    let term = term.map(|text| record_id("--term", text)).transpose()?;
    chunks::impact(&mut open_reader(book)?, since.map(Seq), term, json)
}

/// `impact --with FILE`: the events file decided against the head, nothing written.
fn impact_with(book: &Target, file: &Path, actor_named: Option<String>, json: bool) -> Result<(), Failure> {
    let text = read_text(file, EVENTS_FILE)?;
    let bodies = crate::input::event_lines(&file_label(file), &text).map_err(Failure::invalid)?;
    let write = WriteOptions { actor: actor(actor_named), source: None, expect_head: None, recorded_at_ms: now_ms() };
    let what_if = open_reader(book)?.impact_with(&write, bodies)?;
    print(json, || json::what_if(&what_if), || text::what_if(&what_if));
    Ok(())
}

fn expect_import(
    book: &Target,
    file: &Path,
    format: Option<formats::Format>,
    dry_run: bool,
    write: &WriteOpts,
    json: bool,
) -> Result<(), Failure> {
    let (name, bytes) = interchange::read_bytes(file)?;
    let mut book = if dry_run { open_reader(book)? } else { open_book(book)? };
    let imported = book.expect_import(&name, &bytes, format, dry_run, &write_options(write))?;
    print(json, || json::expect_imported(&imported, dry_run), || text::expect_imported(&imported, dry_run));
    Ok(())
}

/// `source add|import|list|show`.
fn source(book: &Target, command: SourceCommand, json: bool) -> Result<(), Failure> {
    match command {
        SourceCommand::Add { file, chapter, title, write } => {
            let bytes = read_bytes(&file, SOURCE_FILE)?;
            let written = open_book(book)?.source_add(chapter, title, &bytes, &write_options(&write))?;
            print(json, || json::source_written(&written), || text::source_written(&written));
        }
        SourceCommand::Import { dir, write } => {
            let files = read_source_dir(&dir)?;
            let written = open_book(book)?.source_import(files, &write_options(&write))?;
            print(json, || json::source_written(&written), || text::source_written(&written));
        }
        SourceCommand::List => {
            let chapters = open_reader(book)?.source_list()?;
            print(json, || json::source_list(&chapters), || text::source_list(&chapters));
        }
        SourceCommand::Show { chapter } => {
            let (chapter, content) = open_reader(book)?.source_text(chapter)?;
            if json {
                print(true, || json::source_shown(&chapter, &content), || {});
            } else {
                output::write_bytes(content.as_bytes());
            }
        }
    }
    Ok(())
}

/// The regular files of `dir` (not its subfolders), by name, each read through
/// [`SOURCE_FILE`]; at most `SOURCE_IMPORT_FILES_MAX` of them.
pub fn read_source_dir(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let shown = crate::input::shown(dir);
    let entries = std::fs::read_dir(dir).map_err(|error| Failure::invalid(format!("{shown}: {error}")))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| Failure::invalid(format!("{shown}: {error}")))?;
        let kind = entry.file_type().map_err(|error| Failure::invalid(format!("{shown}: {error}")))?;
        if kind.is_file() {
            paths.push(entry.path());
        }
        if paths.len() > ledger_model::limits::input::SOURCE_IMPORT_FILES_MAX {
            return Err(book::BookError::TooLarge(format!(
                "{shown}: more than the limit SOURCE_IMPORT_FILES_MAX of {} files",
                ledger_model::limits::input::SOURCE_IMPORT_FILES_MAX
            ))
            .into());
        }
    }
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        files.push((name, crate::input::read_bounded(&path, SOURCE_FILE)?));
    }
    Ok(files)
}

fn term_put_command(book: &Target, put: &TermPutArgs, json: bool) -> Result<(), Failure> {
    let events = term_put(put)?;
    let written = open_book(book)?.append(&write_options(&put.write), Labelled::appended(events), put.replace)?;
    submitted(&written, json);
    Ok(())
}

fn term_edit_command(book: &Target, edit: &TermEditArgs, json: bool) -> Result<(), Failure> {
    let id = record_id("id", &edit.id)?;
    let changes = term_edit(edit)?;
    let written = open_book(book)?.term_edit(id, &changes, &write_options(&edit.write))?;
    submitted(&written, json);
    Ok(())
}

/// The event body of a command that appends exactly one body built from its
/// arguments (retire, alias, summary), or `None` for any other command.
pub fn single_write(command: &Command) -> Result<Option<Vec<Body>>, Failure> {
    let body = match command {
        Command::Term(TermCommand::Retire { id, reason, .. }) => {
            Body::TermRetired(TermRetired { id: record_id("id", id)?, reason: reason.clone() })
        }
        Command::Alias(AliasCommand::Add { id, surface, kind, since, until, .. }) => {
            let window = match (since, until) {
                (None, None) => None,
                (since, until) => Some(Window { since: since.unwrap_or(1), until: *until }),
            };
            let kind = match kind {
                AliasKindArg::Variant => AliasKind::Variant,
                AliasKindArg::Nickname => AliasKind::Nickname,
                AliasKindArg::Title => AliasKind::Title,
                AliasKindArg::Reading => AliasKind::Reading,
            };
            Body::AliasAdded(AliasAdded {
                id: record_id("id", id)?,
                surface: surface.clone(),
                kind,
                window,
                release_to: None,
            })
        }
        Command::Alias(AliasCommand::Remove { id, surface, .. }) => {
            Body::AliasRemoved(AliasRemoved { id: record_id("id", id)?, surface: surface.clone() })
        }
        Command::Summary(SummaryCommand::Put { id, scope, text, visible_from, .. }) => Body::SummaryPut(SummaryPut {
            id: record_id("id", id)?,
            scope: parse_scope(scope)?,
            text: text.clone(),
            visible_from: *visible_from,
            owner: None,
            owner_role: None,
            release_to: None,
        }),
        Command::Summary(SummaryCommand::Retire { id, reason, .. }) => {
            Body::SummaryRetired(SummaryRetired { id: record_id("id", id)?, reason: reason.clone() })
        }
        _ => return Ok(None),
    };
    Ok(Some(vec![body]))
}

/// Reads a file or `-` (standard input) whole, through `bound`.
pub fn read_bytes(path: &Path, bound: Bound) -> Result<Vec<u8>, Failure> {
    crate::input::read_bounded(path, bound)
}

/// Reads a text from a file or `-` (standard input) through `bound`, as UTF-8.
pub fn read_text(path: &Path, bound: Bound) -> Result<String, Failure> {
    let bytes = read_bytes(path, bound)?;
    String::from_utf8(bytes).map_err(|error| {
        Failure::invalid(format!(
            "{}: not UTF-8 at byte {}",
            crate::input::shown(path),
            error.utf8_error().valid_up_to()
        ))
    })
}

pub fn record_id(flag: &str, text: &str) -> Result<RecordId, Failure> {
    text.parse().map_err(|error: RecordIdError| Failure::invalid(format!("{flag}: {error}")))
}

pub fn parse_scope(text: &str) -> Result<Scope, Failure> {
    // The book's rule, with the flag's name in the message.
    book::service::parse_scope(text)
        .map_err(|_| Failure::invalid(format!("--scope {text:?}: expected `chapter:N`, `arc:A-B` or `book`")))
}

pub fn gender(arg: GenderArg) -> Gender {
    match arg {
        GenderArg::M => Gender::Masculine,
        GenderArg::F => Gender::Feminine,
        GenderArg::N => Gender::Neuter,
        GenderArg::Pl => Gender::Plural,
    }
}

fn status(arg: StatusArg) -> Status {
    match arg {
        StatusArg::Approved => Status::Approved,
        StatusArg::Auto => Status::Auto,
        StatusArg::Draft => Status::Draft,
    }
}

fn logic(arg: LogicArg) -> KeyLogic {
    match arg {
        LogicArg::AndAny => KeyLogic::AndAny,
        LogicArg::AndAll => KeyLogic::AndAll,
        LogicArg::NotAny => KeyLogic::NotAny,
        LogicArg::NotAll => KeyLogic::NotAll,
    }
}

fn decl(forms: &[String]) -> Vec<String> {
    forms.iter().map(|form| form.trim().to_owned()).filter(|form| !form.is_empty()).collect()
}

/// A value, `--clear-FIELD` (none), or unchanged.
fn edited<T>(value: Option<T>, clear: bool) -> Option<Option<T>> {
    if clear {
        Some(None)
    } else {
        value.map(Some)
    }
}

pub fn term_edit(args: &TermEditArgs) -> Result<book::TermEdit, Failure> {
    let supersedes = args.supersedes.as_deref().map(|text| record_id("--supersedes", text)).transpose()?;
    let secondary = args.secondary.as_ref().map(|keys| SecondaryKeys {
        logic: logic(args.secondary_logic.unwrap_or(LogicArg::AndAny)),
        keys: keys.clone(),
    });
    Ok(book::TermEdit {
        src: args.src.clone(),
        dst: args.dst.clone(),
        sense: edited(args.sense.clone(), args.clear_sense),
        kind: edited(args.kind.clone(), args.clear_kind),
        gender: edited(args.gender.map(gender), args.clear_gender),
        decl: if args.clear_decl { Some(Vec::new()) } else { args.decl.as_deref().map(decl) },
        speech: edited(args.speech.clone(), args.clear_speech),
        note: edited(args.note.clone(), args.clear_note),
        since: args.since,
        until: edited(args.until, args.clear_until),
        status: args.status.map(status),
        priority: args.priority,
        constant: args.constant,
        secondary: edited(secondary, args.clear_secondary),
        secondary_logic: if args.secondary.is_none() { args.secondary_logic.map(logic) } else { None },
        supersedes: edited(supersedes, args.clear_supersedes),
        owner: edited(args.owner.clone(), args.clear_owner),
        owner_role: edited(args.owner_role.clone(), args.clear_owner_role),
        release_to: edited(args.release_to.clone(), args.clear_release_to),
        note_release_to: edited(args.note_release_to.clone(), args.clear_note_release_to),
    })
}

pub fn term_put(args: &TermPutArgs) -> Result<Vec<Body>, Failure> {
    let id = record_id("--id", &args.id)?;
    let secondary = (!args.secondary.is_empty())
        .then(|| SecondaryKeys { logic: logic(args.secondary_logic), keys: args.secondary.clone() });
    let supersedes = args.supersedes.as_deref().map(|text| record_id("--supersedes", text)).transpose()?;
    let put = TermPut {
        id,
        src: args.src.clone(),
        sense: args.sense.clone(),
        dst: args.dst.clone(),
        kind: args.kind.clone(),
        gender: args.gender.map(gender),
        decl: decl(&args.decl),
        speech: args.speech.clone(),
        note: args.note.clone(),
        window: Window { since: args.since, until: args.until },
        status: status(args.status),
        priority: args.priority,
        constant: args.constant,
        secondary,
        supersedes,
        owner: args.owner.clone(),
        owner_role: args.owner_role.clone(),
        release_to: args.release_to.clone(),
        note_release_to: args.note_release_to.clone(),
    };
    let mut bodies = vec![Body::TermPut(put)];
    for surface in &args.alias {
        bodies.push(Body::AliasAdded(AliasAdded {
            id,
            surface: surface.clone(),
            kind: AliasKind::Variant,
            window: None,
            release_to: None,
        }));
    }
    Ok(bodies)
}

/// The book a command works on, and how long it waits for its turn there.
pub struct Target {
    path: PathBuf,
    wait: Duration,
    json: bool,
}

impl Target {
    /// The patience `--wait` gives, which says on stderr, once, what it waits for.
    fn patience(&self) -> Patience<'static> {
        let json = self.json;
        Patience::telling(self.wait, move |message| {
            if json {
                errln!("{}", serde_json::json!({ "waiting": { "message": message } }));
            } else {
                errln!("note: {message}");
            }
        })
    }
}

/// Opens a book for a write command, after waiting its turn (`--wait`).
pub fn open_book(book: &Target) -> Result<Book, Failure> {
    Ok(Book::open_waiting(&book.path, &mut book.patience())?)
}

/// Opens a book read-only for a read command, in a turn shared with other readers.
pub fn open_reader(book: &Target) -> Result<Book, Failure> {
    Ok(Book::open_reader_waiting(&book.path, &mut book.patience())?)
}

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as u64)
}

pub fn default_actor() -> String {
    let user: String = std::env::var("USER")
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    format!("human:{}", if user.is_empty() { "unknown" } else { &user })
}

pub fn write_options(write: &WriteOpts) -> WriteOptions {
    WriteOptions {
        actor: actor(write.actor.clone()),
        source: write.source.clone(),
        expect_head: write.expect_head.map(Seq),
        recorded_at_ms: now_ms(),
    }
}

/// The actor `--actor` names, or the caller: the user at the terminal.
pub fn actor(named: Option<String>) -> Actor {
    named.map_or_else(|| Actor::Caller(default_actor()), Actor::Named)
}

/// Appends one atomic batch (`decide` against the head, then append) and prints the
/// outcome.
fn append_batch(
    book: &Target,
    write: &WriteOpts,
    bodies: Vec<Labelled>,
    replace: bool,
    json: bool,
) -> Result<(), Failure> {
    let written = open_book(book)?.append(&write_options(write), bodies, replace)?;
    submitted(&written, json);
    Ok(())
}

fn commit(book: &Target, write: &WriteOpts, bodies: Vec<Body>, json: bool) -> Result<(), Failure> {
    append_batch(book, write, Labelled::appended(bodies), false, json)
}

fn init(book: &Path, profile: &str, languages: &LanguagesSet, write: &WriteOpts, json: bool) -> Result<(), Failure> {
    let initialized = Book::init_in(book, profile, languages, &write_options(write))?;
    // A book is named by its file's stem, as a server's library names its files.
    let name = book.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    print(
        json,
        || json::initialized(&name, &initialized),
        || {
            text::initialized(book, profile, &initialized);
            text::submitted(&initialized.written);
        },
    );
    Ok(())
}

fn apply(book: &Target, file: &Path, replace: bool, write: &WriteOpts, json: bool) -> Result<(), Failure> {
    let text = read_text(file, EVENTS_FILE)?;
    let bodies = crate::input::event_lines(&file_label(file), &text).map_err(Failure::invalid)?;
    append_batch(book, write, bodies, replace, json)
}

/// How an events file is named in errors and default sources: its name, not its
/// whole path (`stdin` for `-`).
pub fn file_label(file: &Path) -> String {
    if file.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        file.file_name().map_or_else(|| file.display().to_string(), |name| name.to_string_lossy().into_owned())
    }
}

fn rollback(book: &Target, to: Seq, reason: Option<String>, write: &WriteOpts, json: bool) -> Result<(), Failure> {
    let written = open_book(book)?.rollback(to, reason, &write_options(write))?;
    submitted(&written, json);
    Ok(())
}

fn term_show(book: &Target, id: RecordId, as_of: Option<u64>, json: bool) -> Result<(), Failure> {
    let versions = open_reader(book)?.term_history(id, as_of.map(Seq))?;
    print(json, || json::term_history(id, &versions), || text::term_history(id, &versions));
    Ok(())
}

fn log(book: &Target, from: u64, to: Option<u64>, json: bool) -> Result<(), Failure> {
    open_reader(book)?.events(Seq(from), to.map(Seq), |event| {
        let line = if json { json::event(&event).to_string() } else { text::event_line(&event) };
        outln!("{line}");
        // A reader that has gone (`| head`) ends the scan; that is success.
        output::stdout_open()
    })?;
    Ok(())
}

fn verify(book: &Target, json: bool) -> Result<(), Failure> {
    let mut book = open_reader(book)?;
    match book.verify() {
        Ok(report) => {
            print(json, || json::verified(&report), || text::verified(&report));
            Ok(())
        }
        Err(error) => {
            let error = book::BookError::from(error);
            if let Some(damaged) = json::verify_failed(&error).filter(|_| json) {
                outln!("{damaged}");
            }
            Err(error.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};
    use serde_json::json;

    use super::*;

    /// A value of each kind of field, as the command line takes it.
    fn sample(value: book::FieldValue) -> &'static str {
        match value {
            book::FieldValue::Text => "x",
            book::FieldValue::Texts | book::FieldValue::Keys => "a,b",
            book::FieldValue::Chapter => "3",
            book::FieldValue::Integer => "2",
            book::FieldValue::Flag => "true",
            book::FieldValue::Gender => "m",
            book::FieldValue::Status => "draft",
            book::FieldValue::Logic => "and-all",
            book::FieldValue::Record => "T-2",
        }
    }

    fn flag(name: &str) -> String {
        name.replace('_', "-")
    }

    /// The edit `term edit T-1 ARGS…` makes, in its JSON form.
    fn edit(args: &[&str]) -> serde_json::Value {
        let argv = [&["lorebank", "term", "edit", "T-1"][..], args].concat();
        let Command::Term(TermCommand::Edit(edit)) = Args::try_parse_from(argv).unwrap().command else {
            unreachable!("term edit parses as term edit")
        };
        serde_json::to_value(term_edit(&edit).unwrap()).unwrap()
    }

    /// `term edit` has `--FIELD` for every field of `book::TERM_FIELDS` and
    /// `--clear-FIELD` for every clearable one, each changing that field alone, and
    /// nothing else but the write's options; docs/cli.md names each flag.
    #[test]
    fn term_edit_takes_exactly_the_fields_of_the_books_list() {
        let command = Args::command();
        let term = command.find_subcommand("term").unwrap();
        let clap_edit = term.find_subcommand("edit").unwrap();
        let globals: Vec<&str> = command.get_arguments().filter_map(clap::Arg::get_long).collect();
        let mut taken: Vec<String> = clap_edit
            .get_arguments()
            .filter_map(clap::Arg::get_long)
            .filter(|long| !globals.contains(long) && !["actor", "source", "expect-head"].contains(long))
            .map(str::to_owned)
            .collect();
        let mut listed = Vec::new();
        let docs = include_str!("../../docs/cli.md");
        let synopsis = &docs[docs.find("* `term edit ID").unwrap()..docs.find("* `term retire ID").unwrap()];
        for field in book::TERM_FIELDS {
            let name = flag(field.name);
            let set = edit(&[&format!("--{name}"), sample(field.value)]);
            assert_eq!(set.as_object().unwrap().keys().collect::<Vec<_>>(), [field.name], "--{name}: {set}");
            assert!(synopsis.contains(&format!("--{name} ")), "docs/cli.md names --{name}");
            listed.push(name.clone());
            if field.clear != book::Clear::No {
                let cleared = edit(&[&format!("--clear-{name}")]);
                let empty = if field.clear == book::Clear::Empty { json!([]) } else { json!(null) };
                assert_eq!(cleared, json!({ field.name: empty }), "--clear-{name}");
                assert!(synopsis.contains(&format!("--clear-{name}")), "docs/cli.md names --clear-{name}");
                listed.push(format!("clear-{name}"));
            }
        }
        taken.sort();
        listed.sort();
        assert_eq!(taken, listed, "term edit's flags are the fields of book::TERM_FIELDS");
    }
}
