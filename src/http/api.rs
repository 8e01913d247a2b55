//! The OpenAPI 3.1 document of the HTTP API, generated from these declarations
//! (utoipa), served at `/openapi.json` and committed as docs/openapi.json; a test
//! fails when the two differ, and another when a route of the router is missing
//! here.

#![allow(dead_code)]

use utoipa::OpenApi;

use super::problem::ProblemBody;
use super::requests::{
    AcceptRequest, AppendRequest, AssembleRequest, ChapterRequest, CheckRequest, ChunkRequest, CreateBook,
    DedupeRequest, EmbeddingModelRequest, JudgeRequest, RefreshRequest, RollbackRequest, ScanRequest,
    SnapshotAssembleRequest, SourceFile, SourceImportRequest, SuggestRequest, TermEditRequest,
};

/// The document as pretty JSON with a final newline (the committed form).
pub fn document() -> String {
    let mut text = Api::openapi().to_pretty_json().unwrap_or_default();
    text.push('\n');
    text
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "lorebank",
        description = "The HTTP/JSON API of lorebank serve: a library of books, each an event-sourced \
glossary ledger. Answers have the shapes of the CLI's --json output (docs/cli.md); errors are RFC 9457 \
problem details (docs/http.md).",
        license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0"),
    ),
    paths(
        status, list_books, book_info, create_book, append, log, glossary, term_show, term_edit,
        snapshot, diff, rollback, verify, rebuild, assemble, assemble_chapter, receipt, replay_receipt,
        replay_snapshot, audit, impact, impact_with, names_lint, import, export, check, review_list, review_item, review_accept, review_reject,
        review_verify, scan, profile_check, coverage, expect_import, source_list, source_import, source_show,
        source_put, overview, event, chapter_audit, timeline,
        rollback_preview, review_queue, records, embedding_status, embedding_set_model, embedding_refresh, suggest, dedupe
    ),
    components(schemas(
        ProblemBody, CreateBook, AppendRequest, RollbackRequest, TermEditRequest, AssembleRequest,
        ChapterRequest, ChunkRequest, SnapshotAssembleRequest, CheckRequest, AcceptRequest, JudgeRequest, ScanRequest,
        EmbeddingModelRequest, RefreshRequest, SuggestRequest, DedupeRequest, SourceImportRequest, SourceFile
    )),
    modifiers(&Security, &Shared),
    security(("bearer" = [])),
)]
struct Api;

struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// What the operations share, declared once here and added to each by [`Shared`]:
/// the book of a `{book}` path and its 404 (unless the route names more that may be
/// missing), the bearer token's 401, the 403 of a token bound to a party (which of
/// the two depends on `PARTY_ROUTES`), the 409 of every operation that takes an
/// `expected_head` (in its query or its body), and on the routes of
/// `KEYED_ROUTES` the `Idempotency-Key` header and its 422. So the document says of
/// auth and idempotency exactly what the router's lists decide.
#[utoipa::path(post, path = "/shared",
    params(
        ("book" = String, Path, description = "Book name", pattern = "^[a-z0-9][a-z0-9_-]{0,63}$", example = "wuchuan"),
        ("Idempotency-Key" = Option<String>, Header, description = "A retry with the same key and request appends nothing and gets the first answer"),
    ),
    responses(
        (status = 401, description = "Missing or wrong bearer token", body = ProblemBody, content_type = "application/problem+json",
            headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token reads as a party, and this operation reads the book's full view", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "expected_head is not the head; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "Idempotency-Key reused with a different request", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn shared() {}

/// The 403 of a route a party may use ([`shared`]'s is that of every other route).
#[utoipa::path(get, path = "/shared/party",
    responses(
        (status = 403, description = "The token reads as a party other than the Lorebank-Party header names", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn shared_party() {}

/// Whether the JSON of a schema has a member `name` under some `properties`.
fn names_member(schema: &serde_json::Value, name: &str) -> bool {
    match schema {
        serde_json::Value::Object(members) => {
            members.get("properties").and_then(|properties| properties.get(name)).is_some()
                || members.values().any(|value| names_member(value, name))
        }
        serde_json::Value::Array(items) => items.iter().any(|item| names_member(item, name)),
        _ => false,
    }
}

/// The route that creates a book (the one `{book}` route that never answers 404).
const CREATE: (&str, &str) = ("PUT", "/v1/books/{book}");

/// Adds [`shared`]'s parameters and responses to every operation: the book first
/// after the headers a route declares before it, the `Idempotency-Key` last.
struct Shared;

impl utoipa::Modify for Shared {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::ParameterIn;
        use utoipa::Path as _;
        let shared = __path_shared::operation();
        let party = __path_shared_party::operation();
        let parameter =
            |name: &str| shared.parameters.iter().flatten().find(|parameter| parameter.name == name).cloned();
        let (book, key) = (parameter("book"), parameter("Idempotency-Key"));
        let response = |operation: &utoipa::openapi::path::Operation, status: &str| {
            operation.responses.responses.get(status).cloned()
        };
        let schemas = openapi.components.as_ref().map(|components| components.schemas.clone()).unwrap_or_default();
        // Whether an operation takes an `expected_head`, as a parameter or a member of
        // its JSON body (the body's schema read as JSON, so any nesting counts).
        let takes_expected_head = |operation: &utoipa::openapi::path::Operation| {
            let in_parameters =
                operation.parameters.iter().flatten().any(|parameter| parameter.name == "expected_head");
            let in_body = operation.request_body.iter().flat_map(|body| body.content.values()).any(|content| {
                let schema = match &content.schema {
                    Some(utoipa::openapi::RefOr::Ref(reference)) => {
                        let name = reference.ref_location.rsplit('/').next().unwrap_or_default();
                        schemas.get(name).and_then(|schema| serde_json::to_value(schema).ok())
                    }
                    Some(schema) => serde_json::to_value(schema).ok(),
                    None => None,
                };
                schema.is_some_and(|schema| names_member(&schema, "expected_head"))
            });
            in_parameters || in_body
        };
        for (path, item) in openapi.paths.paths.iter_mut() {
            let operations =
                [("GET", &mut item.get), ("PUT", &mut item.put), ("POST", &mut item.post), ("PATCH", &mut item.patch)];
            for (method, operation) in operations {
                let Some(operation) = operation else { continue };
                let parameters = operation.parameters.get_or_insert_with(Vec::new);
                let in_a_book = path.contains("{book}");
                if in_a_book {
                    let at =
                        parameters.iter().take_while(|parameter| parameter.parameter_in == ParameterIn::Header).count();
                    parameters.splice(at..at, book.clone());
                }
                let route = (method, path.as_str());
                let keyed = super::KEYED_ROUTES.contains(&route);
                if keyed {
                    parameters.extend(key.clone());
                }
                if parameters.is_empty() {
                    operation.parameters = None;
                }
                let conflicts = takes_expected_head(operation);
                let responses = &mut operation.responses.responses;
                let forbidden = if super::PARTY_ROUTES.contains(&route) {
                    response(&party, "403")
                } else {
                    response(&shared, "403")
                };
                let statuses = [
                    ("401", response(&shared, "401")),
                    ("403", forbidden),
                    // Every route in a book answers 404 for a book that is not there, but the
                    // one that creates it.
                    ("404", (in_a_book && route != CREATE).then(|| response(&shared, "404")).flatten()),
                    ("409", conflicts.then(|| response(&shared, "409")).flatten()),
                    ("422", keyed.then(|| response(&shared, "422")).flatten()),
                ];
                for (status, answer) in statuses {
                    if let Some(answer) = answer {
                        responses.entry(status.to_owned()).or_insert(answer);
                    }
                }
            }
        }
    }
}

/// A book name: `[a-z0-9][a-z0-9_-]{0,63}`.
const BOOK: &str = "book";

// The examples of path parameters name the example book as `scripts/contract.sh` and
// the pipeline example (examples/pipeline) prepare it: book `wuchuan`, term `T-1`,
// chapter 1, and the receipt of its chunk 1 (tests/pipeline_example.rs checks that
// the receipt is that one).

#[utoipa::path(get, path = "/v1/status", tag = "server",
    responses(
        (status = 200, description = "Open books, limits and memory", body = Object),
    ))]
fn status() {}

#[utoipa::path(get, path = "/v1/books", tag = "server",
    responses(
        (status = 200, description = "The books of the library", body = Object),
    ))]
fn list_books() {}

#[utoipa::path(get, path = "/v1/books/{book}", tag = "books",
    responses(
        (status = 200, description = "Head, chain hash, snapshot ID, and the book's languages at the head (`source_lang`, `target_lang`: BCP 47 tags, declared or by default)", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
        (status = 503, description = "The book is held by another process", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying"))),
    ))]
fn book_info() {}

#[utoipa::path(put, path = "/v1/books/{book}", tag = "books",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
    ),
    request_body = CreateBook,
    responses(
        (status = 201, description = "Created, with its first batch (the config, and a `languages_set` when a language was named), its profile, fold table and languages (`source_lang`, `target_lang`)", body = Object),
        (status = 200, description = "A retry with the same Idempotency-Key after the first answer was forgotten: from the book's marker, `first`, `head` and `hash`", body = Object,
            headers(("Idempotent-Replayed" = String, description = "`true`"))),
        (status = 400, description = "Invalid name, body, profile or language tag (`source_lang`, `target_lang`: the problem's `at` names it); nothing was created", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "The book exists", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body over the limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn create_book() {}

#[utoipa::path(post, path = "/v1/books/{book}/events", tag = "writes",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("actor" = Option<String>, Query, description = "With an NDJSON body (one event body per line, as `lorebank apply`): who makes the change"),
        ("source" = Option<String>, Query, description = "With an NDJSON body: provenance for every event"),
        ("expected_head" = Option<u64>, Query, description = "With an NDJSON body: append only if the head is still this"),
        ("replace" = Option<bool>, Query, description = "With an NDJSON body: a term put that replaces a term and drops fields of it is meant, so no warning names them"),
        ("file" = Option<String>, Query, description = "With an NDJSON body: the name errors and default sources (`FILE:LINE`) give its lines (default `body`)"),
    ),
    request_body(content(
        (AppendRequest = "application/json"),
        (String = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "Appended (or every event was a no-op)", body = Object,
            headers(("Idempotent-Replayed" = String, description = "`true` when this is the answer of an earlier request with the same Idempotency-Key"))),
        (status = 400, description = "A bad event, named by its index or line; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Too many events or body over the limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn append() {}

#[utoipa::path(get, path = "/v1/books/{book}/events", tag = "reads",
    params(
        ("from" = Option<u64>, Query, description = "First seq (default 1); past the head is 400"),
        ("to" = Option<u64>, Query, description = "Last seq (default the head); past the head is 400"),
        ("limit" = Option<u64>, Query, description = "Events in this page (default and most: the server's page size)"),
    ),
    responses(
        (status = 200, description = "NDJSON, one event per line, streamed; header Lorebank-Next-From names the next page", body = String, content_type = "application/x-ndjson",
            headers(("Lorebank-Next-From" = u64, description = "The `from` of the next page, when events remain after this one"))),
        (status = 400, description = "Bad range", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn log() {}

#[utoipa::path(get, path = "/v1/books/{book}/glossary", tag = "reads",
    params(
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
        ("chapter" = Option<u32>, Query, description = "Only records active at this chapter (the spoiler gate)"),
        ("as_of" = Option<u64>, Query, description = "Revision (default the head)"),
    ),
    responses(
        (status = 200, description = "The active glossary", body = Object),
        (status = 400, description = "Bad chapter or revision", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn glossary() {}

#[utoipa::path(get, path = "/v1/books/{book}/terms/{id}", tag = "reads",
    params(
        ("id" = String, Path, description = "Term id, T-<number>", example = "T-1"),
        ("as_of" = Option<u64>, Query, description = "Revision (default the head)"),
    ),
    responses(
        (status = 200, description = "Every event about the term", body = Object),
        (status = 400, description = "Bad id or revision", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or term", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn term_show() {}

#[utoipa::path(patch, path = "/v1/books/{book}/terms/{id}", tag = "writes",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("id" = String, Path, description = "Term id, T-<number>", example = "T-1"),
    ),
    request_body = TermEditRequest,
    responses(
        (status = 200, description = "The new version appended", body = Object),
        (status = 400, description = "Bad field, unknown or retired term, or nothing to change", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn term_edit() {}

#[utoipa::path(get, path = "/v1/books/{book}/snapshot", tag = "reads",
    params(
        ("as_of" = Option<u64>, Query, description = "Revision (default the head)"),
    ),
    responses(
        (status = 200, description = "The snapshot ID", body = Object),
        (status = 400, description = "Bad revision", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn snapshot() {}

#[utoipa::path(get, path = "/v1/books/{book}/diff", tag = "reads",
    params(
        ("from" = u64, Query, description = "The earlier revision"),
        ("to" = Option<u64>, Query, description = "The later revision (default the head)"),
    ),
    responses(
        (status = 200, description = "Records added, removed and changed field by field", body = Object),
        (status = 400, description = "Bad revision", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn diff() {}

#[utoipa::path(post, path = "/v1/books/{book}/rollback", tag = "writes",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
    ),
    request_body = RollbackRequest,
    responses(
        (status = 200, description = "Compensating events appended", body = Object),
        (status = 400, description = "Bad revision", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn rollback() {}

#[utoipa::path(post, path = "/v1/books/{book}/verify", tag = "reads",
    responses(
        (status = 200, description = "ok true, or ok false naming the first damaged event or object", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn verify() {}

#[utoipa::path(post, path = "/v1/books/{book}/rebuild", tag = "writes",
    responses(
        (status = 200, description = "Derived caches dropped and rebuilt", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn rebuild() {}

#[utoipa::path(post, path = "/v1/books/{book}/assemble", tag = "chunks",
    params(
        ("hits" = Option<bool>, Query, description = "`false` leaves the hit list out of the answer (the receipt still records every hit): for a pipeline that only wants the context"),
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
    ),
    request_body = AssembleRequest,
    responses(
        (status = 200, description = "The context, hits, injected entries and receipt", body = Object),
        (status = 400, description = "Bad chapter, chunk key, text or previous receipt", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or previous receipt", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn assemble() {}

#[utoipa::path(post, path = "/v1/books/{book}/chapters/{chapter}/assemble", tag = "chunks",
    params(
        ("hits" = Option<bool>, Query, description = "`false` leaves the hit list out of the answer (the receipt still records every hit): for a pipeline that only wants the context"),
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
        ("chapter" = u32, Path, description = "Chapter; chapters start at 1", minimum = 1, example = 1),
    ),
    request_body = ChapterRequest,
    responses(
        (status = 200, description = "Every chunk's assembly and receipt, recorded in one group commit", body = Object),
        (status = 400, description = "Bad chapter, chunk or previous receipt", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or previous receipt", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Too many chunks", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn assemble_chapter() {}

#[utoipa::path(get, path = "/v1/books/{book}/receipts/{id}", tag = "chunks",
    params(
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
        ("id" = String, Path, description = "Receipt id or a prefix of at least 8 hex digits", example = "70210ee8d906d4d844a70e47da064b0b285f7598d9bd9715158e92b999ef4632"),
    ),
    responses(
        (status = 200, description = "The receipt with its input and output texts", body = Object),
        (status = 400, description = "Not a receipt id, or an ambiguous prefix", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or receipt", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn receipt() {}

#[utoipa::path(post, path = "/v1/books/{book}/receipts/{id}/replay", tag = "chunks",
    params(
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
        ("id" = String, Path, description = "Receipt id or a prefix of at least 8 hex digits", example = "70210ee8d906d4d844a70e47da064b0b285f7598d9bd9715158e92b999ef4632"),
    ),
    responses(
        (status = 200, description = "The context assembled again; identical says whether it matches the recorded bytes", body = Object),
        (status = 400, description = "Not a receipt id, or an ambiguous prefix", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or receipt", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn replay_receipt() {}

#[utoipa::path(post, path = "/v1/books/{book}/replay", tag = "chunks",
    params(
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
    ),
    request_body = SnapshotAssembleRequest,
    responses(
        (status = 200, description = "The chunk assembled against a past snapshot", body = Object),
        (status = 400, description = "Bad snapshot, chapter or text; or a snapshot the book does not have", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn replay_snapshot() {}

#[utoipa::path(get, path = "/v1/books/{book}/audit", tag = "chunks",
    params(
        ("chapter" = u32, Query, description = "The chapter; chapters start at 1", minimum = 1),
    ),
    responses(
        (status = 200, description = "Every recorded chunk of the chapter explained", body = Object),
        (status = 400, description = "Bad chapter", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn audit() {}

#[utoipa::path(get, path = "/v1/books/{book}/impact", tag = "chunks",
    params(
        ("since" = Option<u64>, Query, description = "Compare with the snapshot at this revision"),
        ("term" = Option<String>, Query, description = "Only chunks where this term's line changes"),
    ),
    responses(
        (status = 200, description = "Recorded chunks whose context would differ under the head", body = Object),
        (status = 400, description = "Bad revision or term", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn impact() {}

#[utoipa::path(post, path = "/v1/books/{book}/impact", tag = "chunks",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who would make the change, `kind:name` (default `tool:api`): a governed book decides the batch for this actor"),
        ("actor" = Option<String>, Query, description = "With an NDJSON body: who would make the change"),
        ("source" = Option<String>, Query, description = "With an NDJSON body: provenance for every event"),
        ("expected_head" = Option<u64>, Query, description = "With an NDJSON body: decide only if the head is still this (409 otherwise)"),
        ("replace" = Option<bool>, Query, description = "With an NDJSON body: accepted as for an append; a what-if writes nothing, so it changes nothing"),
        ("file" = Option<String>, Query, description = "With an NDJSON body: the name errors give its lines (default `body`)"),
    ),
    request_body(content(
        (AppendRequest = "application/json"),
        (String = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "What the batch would do, nothing written: the chunks whose context would change, with the lines each would lose and gain, and the snapshot the batch would make", body = Object),
        (status = 400, description = "A bad event, named by its index or line, or a batch the head refuses", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`expected_head` is not the head", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Too many events or body over the limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn impact_with() {}

#[utoipa::path(get, path = "/v1/books/{book}/names/lint", tag = "reads",
    responses(
        (status = 200, description = "Every active character and place term whose rendering differs from the standard transcription of its source (Palladius for a Chinese book, Polivanov for Japanese kana), with the standard's form and the first differing syllable; exceptions and sources the standard cannot read listed apart (docs/names.md)", body = Object),
        (status = 400, description = "A query parameter (the route takes none)", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn names_lint() {}

#[utoipa::path(post, path = "/v1/books/{book}/import", tag = "writes",
    params(
        ("format" = Option<String>, Query, description = "galtransl, sakura, sakura-text, linguagacha, linguagacha-xlsx, ainiee, ainiee-xlsx, sillytavern, novelai, omegat, omegat-csv, tbx or tbx-2008 (both TBX names read TBX 2008 and TBX v3); detected from `file` and the content when left out", example = "galtransl"),
        ("file" = Option<String>, Query, description = "The file's name: for detection, errors and every event's source (`FILE:LINE`); default `upload`", example = "glossary.txt"),
        ("strict" = Option<bool>, Query, description = "Refuse the import (400, nothing written) if any entry would be skipped, any key shared between entries or any field lost"),
        ("dry_run" = Option<bool>, Query, description = "Report what the import would do; write nothing"),
        ("actor" = Option<String>, Query, description = "Who imports (default `import:<tool>`)"),
        ("expected_head" = Option<u64>, Query, description = "Import only if the head is still this"),
        ("source_lang" = Option<String>, Query, description = "Language of the source text in this file, for TBX language sections: a BCP 47 tag in canonical case (default: the book's)", example = "en"),
        ("target_lang" = Option<String>, Query, description = "Language of the renderings in this file, for TBX language sections: a BCP 47 tag in canonical case (default: the book's)", example = "es"),
    ),
    request_body(content((String = "application/octet-stream")), description = "The glossary file's bytes"),
    responses(
        (status = 200, description = "The import report: imported, updated, unchanged, skipped (with reasons), keys shared between entries (collisions, with both places and what was done) and lost fields (docs/formats.md)", body = Object),
        (status = 400, description = "A bad file, named by line, entry or uid and field; a bad language tag; or --strict and something would be lost or a key shared; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body over the limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn import() {}

#[utoipa::path(get, path = "/v1/books/{book}/export", tag = "reads",
    params(
        ("Lorebank-Party" = Option<String>, Header, description = "With a token bound to no party (or no token): read as this declared party, given only what is released to it (docs/governance.md); with a party's token, that party or nothing"),
        ("format" = String, Query, description = "galtransl, sakura, sakura-text, linguagacha, linguagacha-xlsx, ainiee, ainiee-xlsx, sillytavern, novelai, omegat, omegat-csv, tbx (TBX-Basic 2019) or tbx-2008 (TBX-Basic 2008, which translate-toolkit, Weblate and OmegaT read); profile (the profile's compact form) or tmx (a TMX 1.4b memory of the recorded chunks and their checked translations)", example = "sillytavern"),
        ("chapter" = Option<u32>, Query, description = "Only what a translator of this chapter may see (the spoiler gate); with tmx, only the chunks of this chapter", minimum = 1),
        ("as_of" = Option<u64>, Query, description = "Revision (default the head); not with tmx"),
        ("target_lang" = Option<String>, Query, description = "Language of the renderings, for TBX, and of the translations, for TMX (default: the book's target language, at the revision exported for TBX); a BCP 47 tag in canonical case"),
    ),
    responses(
        (status = 200, description = "The file, in the format's media type",
            content(
                (String = "text/plain; charset=utf-8"),
                (String = "text/csv; charset=utf-8"),
                (Object = "application/json"),
                (String = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
                (String = "application/x-tbx+xml"),
                (String = "application/x-tmx+xml"),
            ),
            headers(
                ("Lorebank-Revision" = u64, description = "The revision exported"),
                ("Lorebank-Snapshot" = String, description = "Its snapshot ID"),
                ("Lorebank-Lost" = String, description = "Fields the format cannot hold, as `field=count, …` (empty when nothing is lost; not sent with tmx)"),
                ("Lorebank-Export" = String, description = "The report `export --json` prints (without `output`), as JSON with every non-ASCII character escaped"),
            )),
        (status = 400, description = "Bad format, chapter, revision or target_lang (not a BCP 47 tag in canonical case), or a translation memory over TMX_TEXT_BYTES_MAX", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn export() {}

#[utoipa::path(post, path = "/v1/books/{book}/receipts/{id}/check", tag = "chunks",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("id" = String, Path, description = "Receipt id or a prefix of at least 8 hex digits", example = "70210ee8d906d4d844a70e47da064b0b285f7598d9bd9715158e92b999ef4632"),
    ),
    request_body = CheckRequest,
    responses(
        (status = 200, description = "The post-check: per injected term its verdict (rendered, missing, wrong_rendering, unverifiable), counts, forms found and gender flags; stored beside the receipt unless record is false", body = Object),
        (status = 400, description = "Not a receipt id, an ambiguous prefix, or a bad body", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or receipt", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn check() {}

#[utoipa::path(get, path = "/v1/books/{book}/review", tag = "review",
    params(
        ("owner" = Option<String>, Query, description = "Only the records this party owns (own or by the book's default)"),
    ),
    responses(
        (status = 200, description = "Open candidates (most sighted first) and flagged records, each with its owner and owner role", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn review_list() {}

#[utoipa::path(get, path = "/v1/books/{book}/review/{id}", tag = "review",
    params(
        ("id" = String, Path, description = "A candidate (`C-…`) or a flagged record (`T-…`, `R-…`)", example = "C-1"),
    ),
    responses(
        (status = 200, description = "The item of the review queue, as one item of `GET …/review`", body = Object),
        (status = 400, description = "Invalid book name or record id", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book, or the queue does not hold the item", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn review_item() {}

#[utoipa::path(post, path = "/v1/books/{book}/review/{id}/accept", tag = "review",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("id" = String, Path, description = "A candidate (`C-…`) or a record (`T-…`)", example = "T-10"),
    ),
    request_body = AcceptRequest,
    responses(
        (status = 200, description = "Accepted: for a candidate, its term and the verdict in one batch", body = Object),
        (status = 400, description = "Unknown candidate or record, no rendering, or a bad body; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn review_accept() {}

#[utoipa::path(post, path = "/v1/books/{book}/review/{id}/reject", tag = "review",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("id" = String, Path, description = "A candidate (`C-…`) or a record (`T-…`)", example = "T-10"),
    ),
    request_body = JudgeRequest,
    responses(
        (status = 200, description = "The verdict written", body = Object),
        (status = 400, description = "Unknown candidate or record, or a bad reason code; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn review_reject() {}

#[utoipa::path(post, path = "/v1/books/{book}/review/{id}/verify", tag = "review",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("id" = String, Path, description = "A candidate (`C-…`) or a record (`T-…`)", example = "T-10"),
    ),
    request_body = JudgeRequest,
    responses(
        (status = 200, description = "The verdict written", body = Object),
        (status = 400, description = "Unknown candidate or record, or a bad reason code; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn review_verify() {}

#[utoipa::path(post, path = "/v1/books/{book}/chapters/{chapter}/scan", tag = "review",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("chapter" = u32, Path, description = "The chapter; chapters start at 1", minimum = 1, example = 1),
    ),
    request_body = ScanRequest,
    responses(
        (status = 200, description = "Name-like spans no record covers, each with the candidate proposed (or given new evidence)", body = Object),
        (status = 400, description = "Bad chapter or body, or a book whose profile has no name cues", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn scan() {}

#[utoipa::path(get, path = "/v1/books/{book}/profile", tag = "governance",
    responses(
        (status = 200, description = "The level of the additive memory profile the book reaches, and every requirement with the records that fail it", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn profile_check() {}

#[utoipa::path(get, path = "/v1/books/{book}/coverage", tag = "governance",
    params(
        ("chapter" = Option<u32>, Query, description = "Only the recorded chunks of this chapter", minimum = 1),
    ),
    responses(
        (status = 200, description = "Expected concepts no record covers, and occurrences in recorded chunks with nothing injected for them", body = Object),
        (status = 400, description = "Bad chapter", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn coverage() {}

#[utoipa::path(post, path = "/v1/books/{book}/expected", tag = "governance",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("format" = Option<String>, Query, description = "Read the body as this glossary format (each entry's source surface); default: a cast list, one surface per line, optionally a tab and a kind"),
        ("file" = Option<String>, Query, description = "The file's name, for sources and errors"),
        ("dry_run" = Option<bool>, Query, description = "Report what would be registered; write nothing"),
        ("actor" = Option<String>, Query, description = "Who registers (default `import:cast-list`)"),
        ("source" = Option<String>, Query, description = "Provenance for every concept (default: each entry's place in the file)"),
        ("expected_head" = Option<u64>, Query, description = "Append only if the head is still this"),
    ),
    request_body(content((String = "application/octet-stream")), description = "The cast list or glossary file"),
    responses(
        (status = 200, description = "Concepts registered and already registered, in one atomic batch", body = Object),
        (status = 400, description = "A bad file or concept, named by its line; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body over the limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn expect_import() {}

#[utoipa::path(get, path = "/v1/books/{book}/source", tag = "source",
    responses(
        (status = 200, description = "The chapters that have source text, in chapter order: chapter, title, text (its blake3), bytes, chars, seq (the event that set it)", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn source_list() {}

#[utoipa::path(post, path = "/v1/books/{book}/source", tag = "source",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none (default `tool:api`)"),
    ),
    request_body = SourceImportRequest,
    responses(
        (status = 200, description = "Each file's chapter (the first run of ASCII digits in its name's stem), set in one atomic batch or unchanged", body = Object),
        (status = 400, description = "A file without a chapter number, two files of one chapter, an empty text or a bad field, named; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body, a text or the files together over their limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn source_import() {}

#[utoipa::path(get, path = "/v1/books/{book}/source/{chapter}", tag = "source",
    params(
        ("chapter" = u32, Path, description = "The chapter; chapters start at 1", minimum = 1, example = 1),
    ),
    responses(
        (status = 200, description = "The chapter's text (`content`, byte for byte as stored) with what the list says of it", body = Object),
        (status = 400, description = "Bad chapter", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn source_show() {}

#[utoipa::path(put, path = "/v1/books/{book}/source/{chapter}", tag = "source",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none (default `tool:api`)"),
        ("chapter" = u32, Path, description = "The chapter; chapters start at 1", minimum = 1, example = 1),
        ("title" = Option<String>, Query, description = "The chapter's title (none when left out)"),
        ("actor" = Option<String>, Query, description = "Who sets it, `kind:name`"),
        ("source" = Option<String>, Query, description = "Provenance (default `source add`)"),
        ("expected_head" = Option<u64>, Query, description = "Append only if the head is still this"),
    ),
    request_body(content((String = "text/plain")), description = "The chapter's text, UTF-8 (a leading byte order mark is dropped; line ends are kept)"),
    responses(
        (status = 200, description = "The chapter set, or unchanged when the same text and title were there", body = Object),
        (status = 400, description = "Bad chapter, title or query, or a text that is empty or not UTF-8 (named by line and byte); nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body or text over its limit", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn source_put() {}
// The reads of the audit page (`/ui/`, docs/ui.md): each page's JSON twin.

#[utoipa::path(get, path = "/v1/books/{book}/overview", tag = "audit",
    responses(
        (status = 200, description = "The book at a glance: head, snapshot ID, counts, chapters with recorded chunks, terms, the latest events and the outcome of a full verify (the book page)", body = Object),
        (status = 400, description = "Invalid book name or a query parameter", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn overview() {}

#[utoipa::path(get, path = "/v1/books/{book}/events/{seq}", tag = "audit",
    params(
        ("seq" = u64, Path, description = "The event's seq; events start at 1", minimum = 1, example = 1),
    ),
    responses(
        (status = 200, description = "One event, in the form of `log --json` (the event page)", body = Object),
        (status = 400, description = "Not a seq, or seq 0", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book, or a seq after the head", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn event() {}

#[utoipa::path(get, path = "/v1/books/{book}/chapters/{chapter}/audit", tag = "audit",
    params(
        ("chapter" = u32, Path, description = "Chapter; chapters start at 1", minimum = 1, example = 1),
    ),
    responses(
        (status = 200, description = "Every recorded chunk of the chapter explained: the audit's entries plus the chunk's text and context, every hit with its decision, the event that put its version and its staleness at the head, and whether the chunk replays byte for byte (the chapter page)", body = Object),
        (status = 400, description = "Bad chapter", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn chapter_audit() {}

#[utoipa::path(get, path = "/v1/books/{book}/terms/{id}/timeline", tag = "audit",
    params(
        ("id" = String, Path, description = "Term id, T-<number>", example = "T-1"),
    ),
    responses(
        (status = 200, description = "The term's bi-temporal history: versions with the revisions each was current, stretches of revisions with the window assembly applied (after supersession), aliases, verdicts and the recorded chunks that hit it (the term page)", body = Object),
        (status = 400, description = "Not a term id", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "No such book or term", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn timeline() {}

#[utoipa::path(get, path = "/v1/books/{book}/rollback/preview", tag = "audit",
    params(
        ("to" = u64, Query, description = "The revision a rollback would return to", minimum = 1, example = 1),
    ),
    responses(
        (status = 200, description = "What a rollback to the revision would append and change, and the snapshot ID the head would then have; nothing is written (the rollback preview page)", body = Object),
        (status = 400, description = "No revision, revision 0, the head itself or a revision after it", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn rollback_preview() {}

#[utoipa::path(get, path = "/v1/books/{book}/review/queue", tag = "audit",
    responses(
        (status = 200, description = "The review queue with every item's evidence cut out of its recorded chunk (the review page)", body = Object),
        (status = 400, description = "Invalid book name or a query parameter", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn review_queue() {}

#[utoipa::path(get, path = "/v1/books/{book}/records", tag = "audit",
    params(
        ("q" = Option<String>, Query, description = "Text found in a term's source or alias (folded with the book's profile) or its rendering (any case)"),
        ("kind" = Option<String>, Query, description = "Only terms of this kind"),
        ("owner" = Option<String>, Query, description = "Only terms this party owns (own or by default)"),
        ("status" = Option<String>, Query, description = "approved, auto or draft"),
        ("flagged" = Option<bool>, Query, description = "Only terms the latest check of a recorded chunk flagged (true) or not (false)"),
        ("sort" = Option<String>, Query, description = "id (default), src, dst, kind, status, owner or injected; ties by id"),
        ("order" = Option<String>, Query, description = "asc (default) or desc"),
        ("page" = Option<u64>, Query, description = "The page, from 1 (default 1); past the last, no rows", minimum = 1),
        ("per_page" = Option<u64>, Query, description = "Rows a page, 1 to 500 (default 100)", minimum = 1, maximum = 500),
    ),
    responses(
        (status = 200, description = "One page of the book's active terms with window, status, verdict, owner, how many recorded chunks injected each and whether a check flagged it (the glossary page)", body = Object),
        (status = 400, description = "A bad parameter, named in `at`", body = ProblemBody, content_type = "application/problem+json"),
    ))]
fn records() {}

// The embedding routes read and write the book's full view (never a party's), and
// need the server's model files and the ONNX Runtime library: without them they
// answer 503 `embedding-unavailable` (so does a book another process holds).

#[utoipa::path(get, path = "/v1/books/{book}/embedding", tag = "embedding",
    responses(
        (status = 200, description = "The book's embedding model (or null) and how many active terms have fresh, missing and stale vectors; needs no model", body = Object),
        (status = 400, description = "Invalid book name", body = ProblemBody, content_type = "application/problem+json"),
        (status = 503, description = "The book is held by another process", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying"))),
    ))]
fn embedding_status() {}

#[utoipa::path(put, path = "/v1/books/{book}/embedding", tag = "embedding",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
    ),
    request_body = EmbeddingModelRequest,
    responses(
        (status = 200, description = "The identity of the server's model files, read with these options, recorded as the book's embedding model (`embedding_model_set`; no write when unchanged); vectors of another model are now stale", body = Object),
        (status = 400, description = "A bad body, or options the model files do not fit (an output it lacks, another dim); nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 503, description = "Embedding cannot run here (the server has no --embed-model, or no ONNX Runtime library), or the book is held by another process; nothing was written", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying"))),
    ))]
fn embedding_set_model() {}

#[utoipa::path(post, path = "/v1/books/{book}/embedding/refresh", tag = "embedding",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "Terms embedded and kept, stale vector entries dropped; no event is written", body = Object),
        (status = 400, description = "A bad body, a book without an embedding model, or server model files that are not the book's model", body = ProblemBody, content_type = "application/problem+json"),
        (status = 503, description = "Embedding cannot run here (no --embed-model, or no ONNX Runtime library), or the book is held by another process", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying"))),
    ))]
fn embedding_refresh() {}

#[utoipa::path(post, path = "/v1/books/{book}/chapters/{chapter}/suggest", tag = "embedding",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
        ("chapter" = u32, Path, description = "The chapter; chapters start at 1", minimum = 1, example = 1),
    ),
    request_body = SuggestRequest,
    responses(
        (status = 200, description = "Name-like spans no term covers, each with the nearest term of the chapter and its score, and the low-trust candidates proposed (possible aliases)", body = Object),
        (status = 400, description = "Bad chapter or body, a book without a model or a language, stale vectors (refresh first), or server model files that are not the book's model; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 503, description = "Embedding cannot run here (no --embed-model, or no ONNX Runtime library), or the book is held by another process; nothing was written", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying"))),
    ))]
fn suggest() {}

#[utoipa::path(post, path = "/v1/books/{book}/dedupe", tag = "embedding",
    params(
        ("Lorebank-Actor" = Option<String>, Header, description = "Who calls, `kind:name`: the actor when the write names none and its use case has no actor of its own (default `tool:api`)"),
    ),
    request_body = DedupeRequest,
    responses(
        (status = 200, description = "Pairs of terms that are probably one entity, best first, and the low-trust candidates proposed for them", body = Object),
        (status = 400, description = "A bad body, a book without a model, stale vectors (refresh first), or server model files that are not the book's model; nothing was written", body = ProblemBody, content_type = "application/problem+json"),
        (status = 503, description = "Embedding cannot run here (no --embed-model, or no ONNX Runtime library), or the book is held by another process; nothing was written", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying"))),
    ))]
fn dedupe() {}
