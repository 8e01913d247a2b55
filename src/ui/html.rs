//! The pages as maud templates. Every value reaches the page through a maud splice,
//! which escapes it; nothing is marked pre-escaped. Classes and `data-` attributes
//! say what each element shows (a hit's disposition, a stretch's revisions), so the
//! stylesheet colours them and the browser test reads them.

use super::pages::{ActionForm, RuleForm, SummaryForm, TermForm};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use book::assemble::{Disposition, Reason};
use book::chunks::Staleness;
use book::explain::{ChapterAudit, ExplainedChunk, ExplainedHit, Outcome};
use book::overview::Overview;
use book::preview::RollbackPreview;
use book::queue::ReviewQueue;
use book::reads::Diff;
use book::records::{RecordsPage, RecordsQuery, RecordsSort};
use book::review::{offered_reason, ReviewItem};
use book::timeline::Timeline;
use ledger_model::*;
use maud::{html, Markup, DOCTYPE};
use projections::Provenance;
use serde_json::Value;

use crate::http::problem::Problem;
use crate::render::text::{describe, utc, word};

/// What every page's frame needs: the CSRF token for its forms, and whether the
/// server has a login to log out of.
pub struct Chrome {
    pub csrf: String,
    pub logout: bool,
}

/// An HTML page with its status.
pub struct Page {
    pub status: StatusCode,
    pub markup: Markup,
}

impl Page {
    pub fn ok(markup: Markup) -> Page {
        Page { status: StatusCode::OK, markup }
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        (self.status, [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")], self.markup.into_string())
            .into_response()
    }
}

fn book_url(book: &str) -> String {
    format!("/ui/books/{book}")
}

fn term_url(book: &str, id: impl std::fmt::Display) -> String {
    format!("/ui/books/{book}/terms/{id}")
}

fn event_url(book: &str, seq: u64) -> String {
    format!("/ui/books/{book}/events/{seq}")
}

fn chapter_url(book: &str, chapter: u32) -> String {
    format!("/ui/books/{book}/chapters/{chapter}")
}

/// The anchor of a recorded chunk on its chapter page: its receipt's id, short.
fn receipt_anchor(receipt: Hash32) -> String {
    format!("r-{}", &receipt.to_hex()[..16])
}

/// A term's id from its number in a receipt, for links.
fn term_id(number: u32) -> String {
    format!("T-{number}")
}

/// `n` and a noun, plural when `n` is not 1 (a noun in -y after a consonant takes
/// -ies: summary, summaries).
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    match noun.strip_suffix('y').filter(|stem| !stem.ends_with(['a', 'e', 'o', 'u'])) {
        Some(stem) => format!("{n} {stem}ies"),
        None => format!("{n} {noun}s"),
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(16)]
}

/// The frame of every page: the trail back to the library, the JSON twin, the title.
pub fn layout(chrome: &Chrome, title: &str, trail: &[(String, String)], twin: Option<&str>, body: Markup) -> Markup {
    page_layout(chrome, title, trail, twin, false, body)
}

/// [`layout`], of a page that asks the browser to load it again each second while
/// what it shows is under way (`<meta http-equiv="refresh">`: no script, which the
/// Content-Security-Policy does not govern).
fn page_layout(
    chrome: &Chrome,
    title: &str,
    trail: &[(String, String)],
    twin: Option<&str>,
    refresh: bool,
    body: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if refresh { meta http-equiv="refresh" content="1"; }
                title { (title) " · lorebank" }
                link rel="icon" type="image/svg+xml" href="/ui/static/icon.svg";
                link rel="stylesheet" href="/ui/static/ui.css";
            }
            body {
                header.top {
                    nav.trail {
                        a href="/ui/" { "lorebank" }
                        @for (href, label) in trail {
                            span.sep { " › " }
                            a href=(href) { (label) }
                        }
                    }
                    div.tools {
                        @if let Some(twin) = twin {
                            a.twin href=(twin) title="The same data from the HTTP API" { "JSON" }
                        }
                        @if chrome.logout {
                            form.inline method="post" action="/ui/logout" {
                                input type="hidden" name="csrf" value=(chrome.csrf);
                                button type="submit" { "Log out" }
                            }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    (body)
                }
                footer {
                    "lorebank " (env!("CARGO_PKG_VERSION")) " · audit pages; a page's JSON link is the same data from the API"
                }
            }
        }
    }
}

/// A problem as a page with its status.
pub fn error_page(problem: &Problem) -> Page {
    let chrome = Chrome { csrf: String::new(), logout: false };
    let title = format!("{} {}", problem.status.as_u16(), problem.status.canonical_reason().unwrap_or("Error"));
    let body = html! {
        p.problem data-type=(problem.kind) { (problem.detail) }
        p { a href="/ui/" { "Back to the library" } }
    };
    Page { status: problem.status, markup: layout(&chrome, &title, &[], None, body) }
}

fn provenance(book: &str, by: &Provenance) -> Markup {
    html! {
        span.provenance {
            a.event href=(event_url(book, by.seq.0)) { "#" (by.seq.0) }
            " " span.actor { (by.actor) }
            " · " span.source { (by.source) }
            " · " time { (utc(by.recorded_at_ms)) }
        }
    }
}

fn event_row(book: &str, event: &Event) -> Markup {
    html! {
        tr {
            td { a.event href=(event_url(book, event.seq.0)) { "#" (event.seq.0) } }
            td { time { (utc(event.content.recorded_at_ms)) } }
            td.actor { (event.content.actor) }
            td.source { (event.content.source) }
            td { (describe(&event.content.body)) }
        }
    }
}

fn events_table(book: &str, events: &[Event]) -> Markup {
    html! {
        table.events {
            thead { tr { th { "event" } th { "recorded" } th { "actor" } th { "source" } th { "what" } } }
            tbody { @for event in events { (event_row(book, event)) } }
        }
    }
}

fn staleness(book: &str, stale: &Staleness) -> Markup {
    match stale {
        Staleness::Current => html! { span.stale.current { "current" } },
        Staleness::Revised(seq) => html! {
            span.stale.revised { "revised at " a href=(event_url(book, *seq)) { "#" (seq) } }
        },
        Staleness::Retired => html! { span.stale.retired { "retired" } },
    }
}

// ----- the library and the book -----

pub fn library(chrome: &Chrome, books: &[String]) -> Markup {
    let body = html! {
        @if books.is_empty() {
            p { "No books in this library yet." }
        } @else {
            ul.books { @for name in books { li { a href=(book_url(name)) { (name) } } } }
        }
    };
    layout(chrome, "Library", &[], Some("/v1/books"), body)
}

pub fn book(chrome: &Chrome, name: &str, overview: &Overview) -> Markup {
    let state = &overview.state;
    let counts = &overview.counts;
    let head = overview.head.seq.0;
    let body = html! {
        section.summary {
            dl.facts {
                dt { "head" } dd data-head=(head) { "revision " (head) " · chain " code { (short(&overview.head.hash.to_hex())) } }
                dt { "snapshot" } dd { code.snapshot { (overview.snapshot.to_string()) } }
                dt { "verify" }
                dd {
                    @match &overview.verify {
                        Ok(report) => span.verify.ok data-verify="ok" {
                            "ok: " (report.n_events) " events, " (report.n_blobs) " blobs, " (report.n_documents) " receipts and documents checked"
                        },
                        Err(error) => span.verify.bad data-verify="damaged" { (error.to_string()) },
                    }
                }
                dt { "records" }
                dd {
                    (counts.terms) " active terms, " (counts.terms_retired) " retired, "
                    a href=(format!("{}/summaries", book_url(name))) data-summaries { (counts.summaries) " summaries" } ", "
                    a href=(format!("{}/rules", book_url(name))) data-rules { "rules" } ", "
                    a href=(format!("{}/review", book_url(name))) { (counts.candidates_open) " open candidates" }
                    " · " a href=(format!("{}/glossary", book_url(name))) data-glossary { "search and sort the glossary" }
                    " · " a href=(format!("{}/import", book_url(name))) { "import a file" }
                }
                dt { "verify again" }
                dd {
                    form.inline.verify-job method="post" action=(format!("{}/verify", book_url(name))) {
                        input type="hidden" name="csrf" value=(chrome.csrf);
                        button type="submit" { "Verify as a job" }
                        " with its progress on a page of its own"
                    }
                }
            }
        }
        section {
            h2 { "Chapters" }
            @if overview.chapters.is_empty() {
                p { "No chunk has been recorded yet." }
            } @else {
                ul.chapters {
                    @for (chapter, n_chunks, n_receipts) in &overview.chapters {
                        li { a href=(chapter_url(name, *chapter)) { "chapter " (chapter) } " · " (n_chunks) " chunks, " (n_receipts) " receipts" }
                    }
                }
            }
        }
        section.forms {
            h2 { "Compare and roll back" }
            form method="get" action=(format!("{}/diff", book_url(name))) {
                label { "Diff from revision " input type="number" name="from" min="1" max=(head) value=(head.saturating_sub(1).max(1)) required; }
                label { " to " input type="number" name="to" min="1" max=(head) value=(head); }
                button type="submit" { "Show diff" }
            }
            form method="get" action=(format!("{}/rollback", book_url(name))) {
                label { "Preview a rollback to revision " input type="number" name="to" min="1" max=(head) value=(head.saturating_sub(1).max(1)) required; }
                button type="submit" { "Preview" }
            }
        }
        section {
            h2 { "Terms" }
            table.terms {
                thead { tr { th { "id" } th { "source" } th { "rendering" } th { "status" } th { "window" } th { "version" } } }
                tbody {
                    @for term in state.terms().values() {
                        tr.retired[term.retired] {
                            td { a href=(term_url(name, term.put.id)) { (term.put.id) } }
                            td.src lang="zh" { (term.put.src) }
                            td.dst { (term.put.dst) }
                            td { (word(&term.put.status)) @if term.retired { " · retired" } }
                            td { (term.put.window) }
                            td { a.event href=(event_url(name, term.put_by.seq.0)) { "#" (term.put_by.seq.0) } }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Recent events" }
            (events_table(name, &overview.recent))
        }
    };
    layout(chrome, name, &[(book_url(name), name.to_owned())], Some(&format!("/v1/books/{name}/overview")), body)
}

// ----- the chapter audit -----

/// How a hit fared ([`Outcome`], decided by the service) as a class and words.
fn outcome(hit: &ExplainedHit) -> (&'static str, String) {
    let reason = hit.hit.reason.map(|reason| word(&reason)).unwrap_or_default();
    match hit.outcome() {
        Outcome::Spoiler => ("spoiler", "rejected: spoiler (its window starts later)".into()),
        Outcome::Rejected => ("rejected", format!("rejected: {reason}")),
        Outcome::Budget => ("budget", "rejected: budget (did not fit the token budget)".into()),
        Outcome::Confirmed => ("confirmed", "confirmed".into()),
        Outcome::Ambiguous if hit.hit.reason == Some(Reason::SenseCollision) => {
            ("ambiguous", "ambiguous: sense collision".into())
        }
        Outcome::Ambiguous => ("ambiguous", format!("ambiguous: {reason}")),
        Outcome::NotInjected => ("rejected", "not injected".into()),
    }
}

/// The chunk's text with every hit marked, each span linked to the version of its
/// best-faring record, and a badge per record the span hit.
fn highlighted(book: &str, chunk: &ExplainedChunk) -> Markup {
    let text = chunk.input.as_str();
    let mut pieces: Vec<Markup> = Vec::new();
    let mut at = 0usize;
    for ((start, end), hits) in chunk.marked_spans() {
        let class = outcome(hits[0]).0;
        let terms: Vec<String> = hits.iter().map(|hit| format!("T-{}", hit.hit.term)).collect();
        let best = hits[0];
        let title =
            hits.iter().map(|hit| format!("T-{}: {}", hit.hit.term, outcome(hit).1)).collect::<Vec<_>>().join("; ");
        pieces.push(html! { (&text[at..start]) });
        pieces.push(html! {
            mark class=(format!("hit {class}")) data-terms=(terms.join(" ")) data-disposition=(class) title=(title) {
                a href=(format!("{}#v{}", term_url(book, term_id(best.hit.term)), best.hit.version)) { (&text[start..end]) }
                sup.badges {
                    @for hit in &hits {
                        @let (class, label) = outcome(hit);
                        a class=(format!("badge {class}")) data-term=(format!("T-{}", hit.hit.term)) data-outcome=(class)
                            href=(format!("{}#v{}", term_url(book, term_id(hit.hit.term)), hit.hit.version)) title=(label) {
                            "T-" (hit.hit.term)
                        }
                    }
                }
            }
        });
        at = end;
    }
    pieces.push(html! { (&text[at..]) });
    html! { div.chunk-text lang="zh" { @for piece in &pieces { (piece) } } }
}

fn chunk_card(book: &str, chunk: &ExplainedChunk) -> Markup {
    let audited = &chunk.audited;
    let receipt = &audited.receipt;
    let id = audited.id.to_hex();
    html! {
        section.chunk id=(receipt_anchor(audited.id)) data-chunk=(receipt.chunk_key) data-receipt=(id) {
            h2 {
                "Chunk " (receipt.chunk_key)
                @if chunk.replay.identical {
                    span.replay.ok data-replay="identical" { "replay: byte-identical" }
                } @else {
                    span.replay.bad data-replay="differs" data-first-difference=[chunk.replay.first_difference] {
                        "replay differs at byte " (chunk.replay.first_difference.map_or_else(|| "?".into(), |at| at.to_string()))
                    }
                }
            }
            p.receipt-line {
                "receipt " a href=(format!("/v1/books/{book}/receipts/{id}")) { code { (short(&id)) } }
                " · assembled at revision " (receipt.revision.0)
                " · snapshot " code { (short(&receipt.snapshot.to_hex())) }
                " · " (receipt.retrieval.n_exact_hits) " confirmed, " (receipt.retrieval.n_ambiguous) " ambiguous, "
                (receipt.retrieval.n_spoiler_blocked) " spoilers blocked, " (receipt.retrieval.n_budget_evicted) " over budget"
            }
            div.pair {
                div {
                    h3 { "Chunk text" }
                    (highlighted(book, chunk))
                }
                div {
                    h3 { "Injected context" }
                    pre.context { (chunk.output) }
                }
            }
            h3 { "Hits" }
            @if chunk.hits.is_empty() {
                p { "No glossary key occurs in this chunk." }
            } @else {
                table.hits {
                    thead { tr { th { "surface" } th { "record" } th { "decision" } th { "version (the event that put it)" } th { "at the head" } } }
                    tbody {
                        @for hit in &chunk.hits {
                            @let (class, label) = outcome(hit);
                            tr class=(class) data-term=(format!("T-{}", hit.hit.term)) {
                                td.src lang="zh" { (hit.hit.text) }
                                td {
                                    a href=(format!("{}#v{}", term_url(book, term_id(hit.hit.term)), hit.hit.version)) { "T-" (hit.hit.term) }
                                    @if let Some(version) = &hit.version { " " span.dst { (version.put.dst) } }
                                }
                                td { span class=(format!("decision {class}")) { (label) } }
                                td {
                                    @match &hit.version {
                                        Some(version) => (provenance(book, &version.by)),
                                        None => "unknown",
                                    }
                                }
                                td { (staleness(book, &hit.stale)) }
                            }
                        }
                    }
                }
            }
            h3 { "Injected entries" }
            @if audited.injected.is_empty() {
                p { "Nothing was injected." }
            } @else {
                table.injected {
                    thead { tr { th { "record" } th { "how" } th { "version" } th { "at the head" } th { "owner" } } }
                    tbody {
                        @for entry in &audited.injected {
                            tr {
                                td {
                                    a href=(format!("{}#v{}", term_url(book, term_id(entry.entry.term)), entry.entry.version)) { "T-" (entry.entry.term) }
                                    " " span.src lang="zh" { (entry.src) } " → " span.dst { (entry.dst) }
                                }
                                td { (word(&entry.entry.via)) @if entry.entry.unverified { " · unverified" } }
                                td { (provenance(book, &entry.put_by)) }
                                td { (staleness(book, &entry.stale)) }
                                td { (owner(&entry.owner, &entry.owner_role)) }
                            }
                        }
                    }
                }
            }
            @if !audited.rules.is_empty() {
                h3 { "Rules" }
                table.rules {
                    thead { tr { th { "rule" } th { "decision" } th { "text" } th { "version" } th { "owner" } } }
                    tbody {
                        @for rule in &audited.rules {
                            @let injected = rule.rule.disposition != Disposition::Rejected;
                            tr data-rule=(format!("R-{}", rule.rule.rule)) {
                                td { code { "R-" (rule.rule.rule) } }
                                td {
                                    @if injected { span.decision.confirmed { "injected" } }
                                    @else { span.decision.rejected { "left out" } }
                                    @if let Some(reason) = &rule.rule.reason { " · " (word(reason)) }
                                }
                                td { (rule.text) }
                                td { (provenance(book, &rule.put_by)) }
                                td { (owner(&rule.owner, &None)) }
                            }
                        }
                    }
                }
            }
            @if !receipt.examples.is_empty() {
                h3 { "Examples shown" }
                table.examples {
                    thead { tr { th { "record" } th { "source sentence" } th { "its checked translation" } th { "from" } } }
                    tbody {
                        @for example in &receipt.examples {
                            tr data-example=(format!("T-{}", example.term)) {
                                td { a href=(term_url(book, term_id(example.term))) { "T-" (example.term) } }
                                td.src lang="zh" { (example.source) }
                                td.dst { (example.target) }
                                td {
                                    a href=(format!("{}/chapters/{}#{}", book_url(book), example.chapter, receipt_anchor(example.receipt))) {
                                        "chapter " (example.chapter)
                                    }
                                    " · check " code { (short(&example.check.to_hex())) }
                                }
                            }
                        }
                    }
                }
            }
            @if !audited.checks.is_empty() {
                h3 { "Post-checks" }
                @for (check_id, stored) in &audited.checks {
                    table.checks data-check=(check_id.to_hex()) {
                        caption { "check " code { (short(&check_id.to_hex())) } " of translation " code { (short(&stored.translation_hash.to_hex())) } " (rules " (stored.check.rules_version) ")" }
                        thead { tr { th { "record" } th { "verdict" } th { "in the source" } th { "rendered" } th { "agreement flags" } } }
                        tbody {
                            @for item in &stored.check.items {
                                @let verdict = word(&item.verdict);
                                tr class=(format!("check {verdict}")) {
                                    td { a href=(term_url(book, term_id(item.term))) { "T-" (item.term) } }
                                    td { (verdict) @if item.review { " · review" } }
                                    td { (item.source_count) }
                                    td { (item.found_count) }
                                    td { (item.agreement.len()) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

pub fn chapter(chrome: &Chrome, name: &str, audit: &ChapterAudit) -> Markup {
    let position = audit.chapters.iter().position(|chapter| *chapter == audit.chapter);
    let previous = audit.chapters.iter().rev().find(|chapter| **chapter < audit.chapter);
    let next = audit.chapters.iter().find(|chapter| **chapter > audit.chapter);
    let body = html! {
        p.lead {
            "Every recorded chunk of chapter " (audit.chapter) " (its latest receipt), explained at the head, revision "
            (audit.head.0) " (snapshot " code { (short(&audit.snapshot.to_string())) } ")."
        }
        nav.chapters {
            @if let Some(previous) = previous { a rel="prev" href=(chapter_url(name, *previous)) { "← chapter " (previous) } }
            @if let Some(next) = next { a rel="next" href=(chapter_url(name, *next)) { "chapter " (next) " →" } }
        }
        (legend())
        @if audit.chunks.is_empty() {
            p { "No chunk of chapter " (audit.chapter) " has been recorded." @if position.is_none() && !audit.chapters.is_empty() { " Chapters with recorded chunks are listed on the book's page." } }
        }
        @for chunk in &audit.chunks { (chunk_card(name, chunk)) }
    };
    let title = format!("Chapter {}", audit.chapter);
    let trail = [(book_url(name), name.to_owned()), (chapter_url(name, audit.chapter), title.clone())];
    layout(chrome, &title, &trail, Some(&format!("/v1/books/{name}/chapters/{}/audit", audit.chapter)), body)
}

fn legend() -> Markup {
    html! {
        p.legend {
            "Hits: "
            mark.hit.confirmed { "confirmed" } " "
            mark.hit.ambiguous { "ambiguous (unreviewed, flagged or a sense collision)" } " "
            mark.hit.budget { "rejected: budget" } " "
            mark.hit.spoiler { "rejected: spoiler" } " "
            mark.hit.rejected { "rejected: other" }
        }
    }
}

// ----- the term -----

/// A field of a put as its JSON form shows it.
fn field_text(put: &TermPut, field: &str) -> String {
    match serde_json::to_value(put).ok().and_then(|value| value.get(field).cloned()) {
        None | Some(Value::Null) => "—".into(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

impl TermForm {
    /// The form filled with version `put`, read at revision `head`.
    fn of(put: &TermPut, head: u64) -> TermForm {
        let gender = put.gender.map(|gender| field_text(&TermPut { gender: Some(gender), ..put.clone() }, "gender"));
        TermForm {
            src: put.src.clone(),
            dst: put.dst.clone(),
            sense: put.sense.clone().unwrap_or_default(),
            kind: put.kind.clone().unwrap_or_default(),
            gender: gender.unwrap_or_default(),
            decl: put.decl.join(", "),
            note: put.note.clone().unwrap_or_default(),
            since: put.window.since.to_string(),
            until: put.window.until.map(|until| until.to_string()).unwrap_or_default(),
            status: field_text(put, "status"),
            priority: put.priority.to_string(),
            actor: String::new(),
            source: String::new(),
            expected_head: head.to_string(),
            step: String::new(),
            id: String::new(),
        }
    }

    /// The new-term form's fields: an empty approved term in every chapter, read at
    /// revision `head`.
    fn new_term(head: u64) -> TermForm {
        TermForm {
            since: "1".to_owned(),
            status: "approved".to_owned(),
            priority: "0".to_owned(),
            expected_head: head.to_string(),
            ..TermForm::default()
        }
    }
}

/// A form the book (or the form's own parse) refused: what was said, and the input
/// of the form it names, when it names one. The form is shown again with what was
/// typed, the message beside that input.
pub struct Refusal {
    /// The input named (`dst`, `until`), one of the form's.
    pub input: Option<String>,
    /// Why, as the book or the form said it.
    pub message: String,
}

impl Refusal {
    /// The id of the message beside `input`, when the refusal names it.
    fn names(refusal: Option<&Refusal>, input: &str) -> Option<String> {
        refusal.filter(|refusal| refusal.input.as_deref() == Some(input)).map(|_| format!("error-{input}"))
    }
}

/// The message of a refused form that names none of its inputs, at its top; when it
/// names one, a line saying so (the message is beside the input).
fn refusal_lead(refusal: Option<&Refusal>) -> Markup {
    html! {
        @if let Some(refusal) = refusal {
            @match &refusal.input {
                Some(input) => p.problem.refused data-refused=(input) { "Nothing was written: the form was refused at " code { (input) } " (see below)." },
                None => p.problem.refused data-refused="" { "Nothing was written: " (refusal.message) },
            }
        }
    }
}

/// The message beside input `input`, when the refusal names it.
fn refusal_at(refusal: Option<&Refusal>, input: &str) -> Markup {
    html! {
        @if let (Some(id), Some(refusal)) = (Refusal::names(refusal, input), refusal) {
            " " span.field-error id=(id) data-field=(input) { (refusal.message) }
        }
    }
}

/// A text input of a form, labelled, with its refusal beside it.
fn text_input(label: &str, field: &str, value: &str, size: u32, refusal: Option<&Refusal>) -> Markup {
    let error = Refusal::names(refusal, field);
    html! {
        label { (label) " " input type="text" name=(field) value=(value) size=(size)
            aria-invalid=[error.as_ref().map(|_| "true")] aria-describedby=[error.as_deref()] autofocus[error.is_some()]; }
        (refusal_at(refusal, field)) " "
    }
}

/// A number input of a form (a chapter when `min` is 1), labelled, with its refusal
/// beside it.
fn number_input(
    label: &str,
    field: &str,
    value: &str,
    (min, required, placeholder): (Option<&str>, bool, Option<&str>),
    refusal: Option<&Refusal>,
) -> Markup {
    let error = Refusal::names(refusal, field);
    html! {
        label { (label) " " input type="number" name=(field) min=[min] value=(value) required[required] placeholder=[placeholder]
            aria-invalid=[error.as_ref().map(|_| "true")] aria-describedby=[error.as_deref()] autofocus[error.is_some()]; }
        (refusal_at(refusal, field)) " "
    }
}

/// A select of a form, labelled, `chosen` selected, with its refusal beside it.
fn select_input(label: &str, field: &str, options: &[(&str, &str)], chosen: &str, refusal: Option<&Refusal>) -> Markup {
    let error = Refusal::names(refusal, field);
    html! {
        label { (label) " "
            select name=(field) aria-invalid=[error.as_ref().map(|_| "true")] aria-describedby=[error.as_deref()] autofocus[error.is_some()] {
                @for (value, shown) in options { option value=(value) selected[chosen == *value] { (shown) } }
            }
        }
        (refusal_at(refusal, field)) " "
    }
}

/// A term's edit form: every field `term edit` takes here, filled as given, the actor
/// and source of the write, the head it was read at (a save after another editor's
/// write is refused), Preview (nothing written) and Save. Works without JavaScript.
fn term_edit_form(chrome: &Chrome, name: &str, id: RecordId, fields: &TermForm, refusal: Option<&Refusal>) -> Markup {
    term_form(chrome, &format!("{}/edit", term_url(name, id)), "Edit", fields, false, refusal)
}

/// The form of a term's fields, posting to `action`: the edit form, or with `with_id`
/// the new-term form (its id may be left to the book); a refused form names its
/// input.
fn term_form(
    chrome: &Chrome,
    action: &str,
    heading: &str,
    fields: &TermForm,
    with_id: bool,
    refusal: Option<&Refusal>,
) -> Markup {
    let text = |label: &str, field: &str, value: &str, size: u32| text_input(label, field, value, size, refusal);
    let genders = [("", "none"), ("m", "m"), ("f", "f"), ("n", "n"), ("pl", "pl")];
    let statuses = [("approved", "approved"), ("auto", "auto"), ("draft", "draft")];
    html! {
        section.edit {
            h2 { (heading) }
            form.edit method="post" action=(action) {
                input type="hidden" name="csrf" value=(chrome.csrf);
                input type="hidden" name="expected_head" value=(fields.expected_head);
                (refusal_lead(refusal))
                @if with_id {
                    @let error = Refusal::names(refusal, "id");
                    label { "id " input type="text" name="id" value=(fields.id) size="6" placeholder="next free"
                        aria-invalid=[error.as_ref().map(|_| "true")] aria-describedby=[error.as_deref()] autofocus[error.is_some()]; }
                    (refusal_at(refusal, "id")) " "
                }
                (text("source", "src", &fields.src, 12))
                (text("rendering", "dst", &fields.dst, 24))
                (text("sense", "sense", &fields.sense, 10))
                (text("kind", "kind", &fields.kind, 10))
                (select_input("gender", "gender", &genders, &fields.gender, refusal))
                br;
                (text("declension (comma-separated)", "decl", &fields.decl, 40))
                br;
                (text("note", "note", &fields.note, 60))
                br;
                (number_input("chapters from", "since", &fields.since, (Some("1"), true, None), refusal))
                (number_input("to", "until", &fields.until, (Some("1"), false, Some("open")), refusal))
                (select_input("status", "status", &statuses, &fields.status, refusal))
                (number_input("priority", "priority", &fields.priority, (None, false, None), refusal))
                br;
                (text("as", "actor", &fields.actor, 16))
                (text("event source", "source", &fields.source, 16))
                button type="submit" name="step" value="preview" { "Preview" } " "
                button type="submit" name="step" value="save" { "Save" }
            }
        }
    }
}

/// A refused term form again, as typed, with the refusal beside the input it names:
/// the edit form of term `id`, or the new-term form when `id` is `None`.
pub fn term_form_refused(
    chrome: &Chrome,
    name: &str,
    id: Option<RecordId>,
    fields: &TermForm,
    refusal: &Refusal,
) -> Markup {
    let (title, trail, form) = match id {
        Some(id) => (
            format!("Edit {id}"),
            vec![(book_url(name), name.to_owned()), (term_url(name, id), id.to_string())],
            term_edit_form(chrome, name, id, fields, Some(refusal)),
        ),
        None => (
            "New term".to_owned(),
            vec![(book_url(name), name.to_owned()), (format!("{}/glossary", book_url(name)), "glossary".to_owned())],
            term_form(chrome, &format!("{}/glossary/new", book_url(name)), "New term", fields, true, Some(refusal)),
        ),
    };
    layout(chrome, &title, &trail, None, form)
}

/// A term action's form, `fields` filled in, posting `step` (`preview` or `save`); a
/// refused form names its input.
fn action_form(
    chrome: &Chrome,
    name: &str,
    id: RecordId,
    action: &str,
    fields: &ActionForm,
    visible: Markup,
    (button, refusal): (&str, Option<&Refusal>),
) -> Markup {
    html! {
        form.action method="post" action=(format!("{}/actions/{action}", term_url(name, id))) data-action=(action) {
            input type="hidden" name="csrf" value=(chrome.csrf);
            input type="hidden" name="expected_head" value=(fields.expected_head);
            (visible)
            (text_input("as", "actor", &fields.actor, 14, refusal))
            (text_input("event source", "source", &fields.source, 14, refusal))
            button type="submit" name="step" value="preview" { "Preview" } " "
            button type="submit" name="step" value="save" { (button) }
        }
    }
}

/// The inputs an editor fills in of term action `action` (`fields` as typed), each
/// with the refusal beside it when it names that input.
fn action_inputs(id: RecordId, action: &str, fields: &ActionForm, refusal: Option<&Refusal>) -> Markup {
    let kinds = [("variant", "variant"), ("nickname", "nickname"), ("title", "title"), ("reading", "reading")];
    html! {
        (refusal_lead(refusal))
        @match action {
            "revive" => { "Bring " (id) " back with its last version. " },
            "review" => { "Mark " (id) " reviewed: the " code { "accept" } " verdict, its status approved. " },
            "alias-add" => {
                (text_input("new alias", "surface", &fields.surface, 12, refusal))
                (select_input("kind", "kind", &kinds, &fields.kind, refusal))
                (number_input("chapters from", "since", &fields.since, (Some("1"), false, None), refusal))
                (number_input("to", "until", &fields.until, (Some("1"), false, None), refusal))
            },
            "alias-remove" => {
                input type="hidden" name="surface" value=(fields.surface);
                "Alias " span lang="zh" { (fields.surface) } ": "
                (refusal_at(refusal, "surface"))
            },
            _ => { (text_input("retire, because", "reason", &fields.reason, 24, refusal)) },
        }
    }
}

/// The term page's other forms: retire (or revive a retired term), add an alias, and
/// remove each active alias.
fn term_action_forms(chrome: &Chrome, name: &str, id: RecordId, retired: bool, timeline: &Timeline) -> Markup {
    let fields = ActionForm { expected_head: timeline.head.0.to_string(), ..ActionForm::default() };
    let active: Vec<&str> = timeline
        .aliases
        .iter()
        .filter(|alias| alias.removed.is_none())
        .map(|alias| alias.alias.surface.as_str())
        .collect();
    let form = |action: &str, fields: &ActionForm, button: &str| {
        action_form(chrome, name, id, action, fields, action_inputs(id, action, fields, None), (button, None))
    };
    html! {
        section.actions {
            h2 { "Aliases and retirement" }
            @if retired {
                (form("revive", &fields, "Revive"))
            } @else {
                (form("alias-add", &fields, "Add alias"))
                @for surface in &active {
                    (form("alias-remove", &ActionForm { surface: (*surface).to_owned(), ..fields.clone() }, "Remove alias"))
                }
                (form("retire", &fields, "Retire"))
            }
        }
        @if !retired {
            section.actions.review {
                h2 { "Review" }
                (form("review", &fields, "Mark reviewed"))
            }
        }
    }
}

/// A refused term action's form again, as typed, with the refusal beside the input
/// it names.
pub fn action_refused(
    chrome: &Chrome,
    name: &str,
    id: RecordId,
    action: &str,
    fields: &ActionForm,
    refusal: &Refusal,
) -> Markup {
    let button = match action {
        "revive" => "Revive",
        "review" => "Mark reviewed",
        "alias-add" => "Add alias",
        "alias-remove" => "Remove alias",
        _ => "Retire",
    };
    let body = html! {
        section.actions {
            (action_form(chrome, name, id, action, fields, action_inputs(id, action, fields, Some(refusal)), (button, Some(refusal))))
        }
    };
    let trail = [(book_url(name), name.to_owned()), (term_url(name, id), id.to_string())];
    layout(chrome, &format!("{id}: {action}"), &trail, None, body)
}

/// What a term action would do, nothing written: the events, the snapshot it would
/// make, the chunks it would re-open, and the form again to save it.
pub fn action_preview(
    chrome: &Chrome,
    name: &str,
    id: RecordId,
    action: &str,
    fields: &ActionForm,
    what_if: &book::chunks::WhatIf,
) -> Markup {
    let submitted = &what_if.written.submitted;
    let hidden = html! {
        @for (field, value) in [("reason", &fields.reason), ("surface", &fields.surface), ("kind", &fields.kind), ("since", &fields.since), ("until", &fields.until)] {
            @if !value.is_empty() { input type="hidden" name=(field) value=(value); }
        }
    };
    let body = html! {
        p.lead data-written="false" {
            @if submitted.decision.events.is_empty() { "It changes nothing. " }
            @else { "It would append " (count(submitted.decision.events.len(), "event")) ". " }
            "Nothing has been written."
        }
        @for warning in what_if.written.all_warnings() { p.problem { (warning) } }
        ol.plan { @for event in &submitted.decision.events { li { (describe(&event.body)) } } }
        (snapshots(what_if))
        (reopened_list(name, &what_if.chunks))
        (action_form(chrome, name, id, action, fields, hidden, ("Save", None)))
    };
    let trail = [
        (book_url(name), name.to_owned()),
        (term_url(name, id), id.to_string()),
        (format!("{}/actions/{action}", term_url(name, id)), format!("{action} preview")),
    ];
    layout(chrome, &format!("{id}: {action} preview"), &trail, None, body)
}

/// What a new term would do, nothing written: its put, the snapshot it would make, the
/// recorded chunks it would re-open, and the form again to save it.
pub fn new_term_preview(
    chrome: &Chrome,
    name: &str,
    fields: &TermForm,
    put: &TermPut,
    what_if: &book::chunks::WhatIf,
) -> Markup {
    let submitted = &what_if.written.submitted;
    let action = format!("{}/glossary/new", book_url(name));
    let body = html! {
        p.lead data-written="false" { "It would append " (count(submitted.decision.events.len(), "event")) ". Nothing has been written." }
        @for warning in what_if.written.all_warnings() { p.problem { (warning) } }
        ol.plan { li { (describe(&Body::TermPut(put.clone()))) } }
        (snapshots(what_if))
        (reopened_list(name, &what_if.chunks))
        (term_form(chrome, &action, "New term", fields, true, None))
    };
    let trail = [
        (book_url(name), name.to_owned()),
        (format!("{}/glossary", book_url(name)), "glossary".to_owned()),
        (action.clone(), "new term preview".to_owned()),
    ];
    layout(chrome, "New term: preview", &trail, None, body)
}

/// The snapshot a what-if was decided at and the one it would make.
fn snapshots(what_if: &book::chunks::WhatIf) -> Markup {
    html! {
        dl.facts {
            dt { "snapshot now" } dd { code { (what_if.head_snapshot.to_string()) } }
            dt { "snapshot after" } dd { code { (what_if.written.submitted.snapshot.to_string()) } }
        }
    }
}

/// What the put of a summary or a rule would do, nothing written: the fields it
/// changes (`changed`), or the whole put when it makes a new record (`new`), the
/// warnings, the snapshot it would make, the recorded chunks it would re-open, and
/// `form` to save it. `record` is the kind's name and its page (`("Rule", "rules")`).
#[allow(clippy::too_many_arguments, reason = "a preview is made of all of them")]
fn put_preview(
    chrome: &Chrome,
    name: &str,
    (noun, page): (&str, &str),
    id: RecordId,
    new: Option<Body>,
    changed: &[(String, String, String)],
    what_if: &book::chunks::WhatIf,
    form: Markup,
) -> Markup {
    let submitted = &what_if.written.submitted;
    let body = html! {
        p.lead data-written="false" {
            @if submitted.decision.events.is_empty() { "The put changes nothing. " }
            @else { "It would append " (count(submitted.decision.events.len(), "event")) ". " }
            "Nothing has been written."
        }
        @for warning in what_if.written.all_warnings() { p.problem { (warning) } }
        h2 { "What it changes" }
        @if let Some(new) = &new {
            p data-changed="new" { "A new " (noun.to_lowercase()) ": " (describe(new)) }
        } @else {
            @if changed.is_empty() { p { "No field." } }
            ul.changes data-changed=(changed.len()) {
                @for (field, before, after) in changed {
                    li { code { (field) } ": " del { (before) } " → " ins { (after) } }
                }
            }
        }
        (snapshots(what_if))
        (reopened_list(name, &what_if.chunks))
        section.edit { (form) }
    };
    let trail = [
        (book_url(name), name.to_owned()),
        (format!("{}/{page}", book_url(name)), page.to_owned()),
        (format!("{}/{page}/put", book_url(name)), format!("{id} preview")),
    ];
    layout(chrome, &format!("{noun} {id}: preview"), &trail, None, body)
}

/// The recorded chunks a change would re-open, each with the context lines it would
/// lose and gain, linked to their chapter.
fn reopened_list(name: &str, chunks: &[book::chunks::Reopened]) -> Markup {
    html! {
        h2 { "Chunks it would re-open" }
        @if chunks.is_empty() {
            p data-reopened="0" { "No recorded chunk would get a different context." }
        } @else {
            p data-reopened=(chunks.len()) { (chunks.len()) " recorded chunk(s) would get a different context: the ones to translate again." }
            ul.reopened {
                @for reopened in chunks {
                    @let chunk = &reopened.chunk;
                    li {
                        a href=(chapter_url(name, chunk.chapter)) { "chapter " (chunk.chapter) } ", chunk " code { (chunk.chunk_key) }
                        @for line in &reopened.removed { div.removed { "− " code { (line) } } }
                        @for line in &reopened.added { div.added { "+ " code { (line) } } }
                    }
                }
            }
        }
    }
}

/// What a term's edit would do, nothing written: the fields it changes, the recorded
/// chunks it would re-open, the snapshot it would make, and the form again to save it.
pub fn term_preview(
    chrome: &Chrome,
    name: &str,
    id: RecordId,
    fields: &TermForm,
    current: &TermPut,
    put: &TermPut,
    what_if: &book::chunks::WhatIf,
) -> Markup {
    let changed = book::timeline::changed_fields(current, put);
    let submitted = &what_if.written.submitted;
    let body = html! {
        p.lead data-written="false" {
            @if submitted.decision.events.is_empty() { "The edit changes nothing. " }
            @else { "The edit would append " (count(submitted.decision.events.len(), "event")) ". " }
            "Nothing has been written."
        }
        @for warning in what_if.written.all_warnings() { p.problem { (warning) } }
        h2 { "What it changes" }
        @if changed.is_empty() { p { "No field." } }
        ul.changes data-changed=(changed.len()) {
            @for field in &changed {
                li { code { (field) } ": " del { (field_text(current, field)) } " → " ins { (field_text(put, field)) } }
            }
        }
        (snapshots(what_if))
        (reopened_list(name, &what_if.chunks))
        (term_edit_form(chrome, name, id, fields, None))
    };
    let trail = [
        (book_url(name), name.to_owned()),
        (term_url(name, id), id.to_string()),
        (format!("{}/edit", term_url(name, id)), "edit preview".to_owned()),
    ];
    layout(chrome, &format!("Edit {id}: preview"), &trail, None, body)
}

// ----- summaries -----

/// How a summary's scope is typed (`summary put --scope`): `chapter:N`, `arc:A-B` or
/// `book`.
fn scope_text(scope: Scope) -> String {
    match scope {
        Scope::Chapter(chapter) => format!("chapter:{chapter}"),
        Scope::Arc { from, to } => format!("arc:{from}-{to}"),
        Scope::Book => "book".to_owned(),
    }
}

impl SummaryForm {
    /// The form filled with version `put`, read at revision `head`.
    fn of(put: &SummaryPut, head: u64) -> SummaryForm {
        SummaryForm {
            id: put.id.to_string(),
            scope: scope_text(put.scope),
            text: put.text.clone(),
            visible_from: put.visible_from.map(|chapter| chapter.to_string()).unwrap_or_default(),
            expected_head: head.to_string(),
            ..SummaryForm::default()
        }
    }
}

/// A summary's form (`new`: the new-summary form, whose id may be left to the book):
/// its scope, the first chapter it may be shown at, its text, the actor and source
/// of the write and the head it was read at, Preview and Save; a refused form names
/// its input.
fn summary_form(chrome: &Chrome, name: &str, fields: &SummaryForm, new: bool, refusal: Option<&Refusal>) -> Markup {
    let error = Refusal::names(refusal, "text");
    html! {
        form.summary method="post" action=(format!("{}/summaries/put", book_url(name))) data-summary=(fields.id) {
            input type="hidden" name="csrf" value=(chrome.csrf);
            input type="hidden" name="expected_head" value=(fields.expected_head);
            (refusal_lead(refusal))
            @if new {
                @let error = Refusal::names(refusal, "id");
                label { "id " input type="text" name="id" value=(fields.id) size="6" placeholder="next free"
                    aria-invalid=[error.as_ref().map(|_| "true")] aria-describedby=[error.as_deref()] autofocus[error.is_some()]; }
                (refusal_at(refusal, "id")) " "
            } @else {
                input type="hidden" name="id" value=(fields.id);
            }
            (text_input("scope (chapter:N, arc:A-B or book)", "scope", &fields.scope, 12, refusal))
            (number_input("shown from chapter", "visible_from", &fields.visible_from, (Some("1"), false, Some("after it")), refusal))
            br;
            label { "text" br;
                textarea name="text" rows="3" cols="90" aria-invalid=[error.as_ref().map(|_| "true")]
                    aria-describedby=[error.as_deref()] autofocus[error.is_some()] { (fields.text) }
            }
            (refusal_at(refusal, "text"))
            br;
            (text_input("as", "actor", &fields.actor, 16, refusal))
            (text_input("event source", "source", &fields.source, 16, refusal))
            button type="submit" name="step" value="preview" { "Preview" } " "
            button type="submit" name="step" value="save" { "Save" }
        }
    }
}

/// The summaries page: every active summary at the head, each with its form, and a
/// form for a new one.
pub fn summaries(chrome: &Chrome, name: &str, glossary: &book::reads::Glossary) -> Markup {
    let head = glossary.state.revision().0;
    let active = glossary.state.visible_summaries(None);
    let body = html! {
        p.lead {
            (count(active.len(), "active summary")) " at revision " (head) ". Each is put whole, as "
            code { "summary put" } " puts it; a preview shows what it changes and the recorded chunks it would re-open."
        }
        @for summary in &active {
            section.summary-record id=(summary.put.id) {
                h2 { (summary.put.id) " · " (scope_text(summary.put.scope)) }
                p.help { "Put by " (provenance(name, &summary.put_by)) "." }
                (summary_form(chrome, name, &SummaryForm::of(&summary.put, head), false, None))
            }
        }
        section.edit {
            h2 { "New summary" }
            (summary_form(chrome, name, &SummaryForm { scope: "book".to_owned(), expected_head: head.to_string(), ..SummaryForm::default() }, true, None))
        }
    };
    let trail = [(book_url(name), name.to_owned()), (format!("{}/summaries", book_url(name)), "summaries".to_owned())];
    layout(chrome, "Summaries", &trail, Some(&format!("/v1/books/{name}/glossary")), body)
}

/// The fields of a record's put that `put` changes from `current`, each as its JSON
/// form shows it: (field, old, new).
fn put_changes<T: serde::Serialize>(current: &T, put: &T) -> Vec<(String, String, String)> {
    let fields = |put: &T| match serde_json::to_value(put) {
        Ok(Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    let (before, after) = (fields(current), fields(put));
    let text = |value: Option<&Value>| match value {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    after
        .keys()
        .filter(|field| before.get(*field) != after.get(*field))
        .map(|field| (field.clone(), text(before.get(field)), text(after.get(field))))
        .collect()
}

/// What a summary's put would do, nothing written: the fields it changes (or the new
/// summary), the warnings, the snapshot it would make, the recorded chunks it would
/// re-open, and the form again to save it.
pub fn summary_preview(
    chrome: &Chrome,
    name: &str,
    fields: &SummaryForm,
    current: Option<&SummaryPut>,
    put: &SummaryPut,
    what_if: &book::chunks::WhatIf,
) -> Markup {
    let changed = current.map(|current| put_changes(current, put)).unwrap_or_default();
    let new = current.is_none().then(|| Body::SummaryPut(put.clone()));
    let form = summary_form(chrome, name, &SummaryForm { id: put.id.to_string(), ..fields.clone() }, false, None);
    put_preview(chrome, name, ("Summary", "summaries"), put.id, new, &changed, what_if, form)
}

/// A refused summary form again, as typed, with the refusal beside the input it
/// names.
pub fn summary_refused(chrome: &Chrome, name: &str, fields: &SummaryForm, refusal: &Refusal) -> Markup {
    let new = fields.id.trim().is_empty() || refusal.input.as_deref() == Some("id");
    let body = html! { section.edit { (summary_form(chrome, name, fields, new, Some(refusal))) } };
    let trail = [(book_url(name), name.to_owned()), (format!("{}/summaries", book_url(name)), "summaries".to_owned())];
    layout(chrome, "Summary", &trail, None, body)
}

// ----- rules -----

impl RuleForm {
    /// The form filled with version `put`, read at revision `head`.
    fn of(put: &RulePut, head: u64) -> RuleForm {
        RuleForm {
            id: put.id.to_string(),
            text: put.text.clone(),
            applies_to: book::service::selectors_text(&put.applies_to),
            does_not_apply_to: match &put.does_not_apply_to {
                None => String::new(),
                Some(none) if none.is_empty() => "none".to_owned(),
                Some(selectors) => book::service::selectors_text(selectors),
            },
            since: put.window.since.to_string(),
            until: put.window.until.map(|until| until.to_string()).unwrap_or_default(),
            status: serde_json::to_value(put.status)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default(),
            priority: put.priority.to_string(),
            expected_head: head.to_string(),
            ..RuleForm::default()
        }
    }
}

/// A rule's form (`new`: the new-rule form, whose id may be left to the book): its
/// text, selectors, window, status and priority, the actor and source of the write
/// and the head it was read at, Preview and Save; a refused form names its input.
fn rule_form(chrome: &Chrome, name: &str, fields: &RuleForm, new: bool, refusal: Option<&Refusal>) -> Markup {
    let error = Refusal::names(refusal, "text");
    let statuses = [("approved", "approved"), ("auto", "auto"), ("draft", "draft")];
    html! {
        form.rule method="post" action=(format!("{}/rules/put", book_url(name))) data-rule=(fields.id) {
            input type="hidden" name="csrf" value=(chrome.csrf);
            input type="hidden" name="expected_head" value=(fields.expected_head);
            (refusal_lead(refusal))
            @if new {
                @let error = Refusal::names(refusal, "id");
                label { "id " input type="text" name="id" value=(fields.id) size="6" placeholder="next free"
                    aria-invalid=[error.as_ref().map(|_| "true")] aria-describedby=[error.as_deref()] autofocus[error.is_some()]; }
                (refusal_at(refusal, "id")) " "
            } @else {
                input type="hidden" name="id" value=(fields.id);
            }
            label { "text" br;
                textarea name="text" rows="2" cols="90" aria-invalid=[error.as_ref().map(|_| "true")]
                    aria-describedby=[error.as_deref()] autofocus[error.is_some()] { (fields.text) }
            }
            (refusal_at(refusal, "text"))
            br;
            (text_input("applies to", "applies_to", &fields.applies_to, 40, refusal))
            br;
            (text_input("does not apply to (empty: not declared; none)", "does_not_apply_to", &fields.does_not_apply_to, 30, refusal))
            br;
            (number_input("chapters from", "since", &fields.since, (Some("1"), true, None), refusal))
            (number_input("to", "until", &fields.until, (Some("1"), false, Some("open")), refusal))
            (select_input("status", "status", &statuses, &fields.status, refusal))
            (number_input("priority", "priority", &fields.priority, (None, false, None), refusal))
            br;
            (text_input("as", "actor", &fields.actor, 16, refusal))
            (text_input("event source", "source", &fields.source, 16, refusal))
            button type="submit" name="step" value="preview" { "Preview" } " "
            button type="submit" name="step" value="save" { "Save" }
        }
    }
}

/// The rules page: every active rule at the head, each with its form, and a form for
/// a new one.
pub fn rules(chrome: &Chrome, name: &str, glossary: &book::reads::Glossary) -> Markup {
    let head = glossary.state.revision().0;
    let active = glossary.state.active_rules(None);
    let new = RuleForm {
        since: "1".to_owned(),
        status: "approved".to_owned(),
        priority: "0".to_owned(),
        expected_head: head.to_string(),
        ..RuleForm::default()
    };
    let body = html! {
        p.lead {
            (count(active.len(), "active rule")) " at revision " (head) ". Selectors are comma-separated: "
            code { "kind:NAME" } ", a record id (" code { "T-12" } "), " code { "chapters:A-B" } " or " code { "chapters:A-" } ", "
            code { "dialogue" } ", " code { "narration" } ". A put keeps the rule's owner, owner role and release list."
        }
        @for rule in &active {
            section.rule-record id=(rule.put.id) {
                h2 { (rule.put.id) }
                p.help { "Put by " (provenance(name, &rule.put_by)) "." }
                (rule_form(chrome, name, &RuleForm::of(&rule.put, head), false, None))
            }
        }
        section.edit {
            h2 { "New rule" }
            (rule_form(chrome, name, &new, true, None))
        }
    };
    let trail = [(book_url(name), name.to_owned()), (format!("{}/rules", book_url(name)), "rules".to_owned())];
    layout(chrome, "Rules", &trail, Some(&format!("/v1/books/{name}/glossary")), body)
}

/// What a rule's put would do, nothing written: the fields it changes (or the new
/// rule), the snapshot it would make, the recorded chunks it would re-open, and the
/// form again to save it.
pub fn rule_preview(
    chrome: &Chrome,
    name: &str,
    fields: &RuleForm,
    current: Option<&RulePut>,
    put: &RulePut,
    what_if: &book::chunks::WhatIf,
) -> Markup {
    let changed = current.map(|current| put_changes(current, put)).unwrap_or_default();
    let new = current.is_none().then(|| Body::RulePut(put.clone()));
    let form = rule_form(chrome, name, &RuleForm { id: put.id.to_string(), ..fields.clone() }, false, None);
    put_preview(chrome, name, ("Rule", "rules"), put.id, new, &changed, what_if, form)
}

/// A refused rule form again, as typed, with the refusal beside the input it names.
pub fn rule_refused(chrome: &Chrome, name: &str, fields: &RuleForm, refusal: &Refusal) -> Markup {
    let new = fields.id.trim().is_empty() || refusal.input.as_deref() == Some("id");
    let body = html! { section.edit { (rule_form(chrome, name, fields, new, Some(refusal))) } };
    let trail = [(book_url(name), name.to_owned()), (format!("{}/rules", book_url(name)), "rules".to_owned())];
    layout(chrome, "Rule", &trail, None, body)
}

/// Rows of a report list shown before "and N more".
const REPORT_SHOWN: usize = 50;

/// The import page: upload a glossary file of any supported format for a dry run.
pub fn import(chrome: &Chrome, name: &str) -> Markup {
    let action = format!("{}/import", book_url(name));
    let body = html! {
        p.lead { "Upload a glossary file of another tool. The dry run shows what the import would do and the recorded chunks it would re-open; nothing is written until you confirm." }
        form.import method="post" action=(action) enctype="multipart/form-data" {
            input type="hidden" name="csrf" value=(chrome.csrf);
            label { "file " input type="file" name="file" required; } " "
            label { "format "
                select name="format" {
                    option value="" { "detect" }
                    @for format in formats::Format::ALL { option value=(format.name()) { (format.name()) } }
                }
            } " "
            label { input type="checkbox" name="strict"; " strict (refuse any loss)" } " "
            label { "as " input type="text" name="actor" size="16" placeholder="import:TOOL"; } " "
            button type="submit" name="step" value="preview" { "Dry run" }
        }
    };
    let trail = [(book_url(name), name.to_owned()), (action.clone(), "import".to_owned())];
    layout(chrome, "Import", &trail, None, body)
}

fn job_trail(job: &crate::ui::jobs::Job) -> [(String, String); 2] {
    [
        (book_url(&job.book), job.book.clone()),
        (format!("{}/jobs/{}", book_url(&job.book), job.id), format!("job {}", job.id)),
    ]
}

/// Where a running job is among the steps of its work: their names, the one under
/// way, what it has done so far in words, and as a count (done, total) when it has one.
struct Steps {
    names: &'static [&'static str],
    at: usize,
    words: Option<String>,
    bar: Option<(u64, u64)>,
}

const IMPORT_STEPS: [&str; 4] =
    ["Fold the book's state", "Read the file", "Decide what each entry does", "Write one batch"];
const VERIFY_STEPS: [&str; 3] = ["Check the stored objects", "Fold every event", "Check every recorded receipt"];

fn job_steps(progress: &crate::ui::jobs::Progress) -> Steps {
    use crate::ui::jobs::Progress;
    use book::{ImportPhase, VerifyPhase};
    let step = |names: &'static [&'static str], at: usize, words: Option<String>, bar: Option<(u64, u64)>| Steps {
        names,
        at,
        words,
        bar,
    };
    match *progress {
        Progress::Starting => step(&[], 0, None, None),
        Progress::Import(ImportPhase::Folding { done, total }) => {
            step(&IMPORT_STEPS, 0, Some(format!("{done} of {total} events")), Some((done, total)))
        }
        Progress::Import(ImportPhase::Reading { bytes }) => {
            step(&IMPORT_STEPS, 1, Some(format!("{bytes} bytes")), None)
        }
        Progress::Import(ImportPhase::Deciding { entries, summaries }) => {
            step(&IMPORT_STEPS, 2, Some(format!("{entries} entries, {summaries} summaries")), None)
        }
        Progress::Import(ImportPhase::Writing { events }) => {
            step(&IMPORT_STEPS, 3, Some(format!("{events} events")), None)
        }
        Progress::Verify(VerifyPhase::Objects) => step(&VERIFY_STEPS, 0, None, None),
        Progress::Verify(VerifyPhase::Events { done, total }) => {
            step(&VERIFY_STEPS, 1, Some(format!("{done} of {total} events")), Some((done, total)))
        }
        Progress::Verify(VerifyPhase::Receipts { done, total }) => {
            step(&VERIFY_STEPS, 2, Some(format!("{done} of {total} receipts")), Some((done as u64, total as u64)))
        }
    }
}

/// The page of a job under way: what it does, the step it is at and how far, and
/// the steps before and after; it loads itself again each second.
pub fn job_running(chrome: &Chrome, job: &crate::ui::jobs::Job, progress: &crate::ui::jobs::Progress) -> Markup {
    let Steps { names, at, words, bar } = job_steps(progress);
    let body = html! {
        p.lead data-job-state="running" {
            "Under way: " (crate::ui::jobs::describe(&job.work)) ", started " time { (utc(job.started_ms)) } ". "
            "This page loads itself again each second until the job ends, then shows its outcome."
        }
        @if names.is_empty() {
            p data-phase="starting" { "Waiting for the book." }
        } @else {
            ol.steps {
                @for (n, name) in names.iter().enumerate() {
                    @if n == at {
                        li.current aria-current="step" data-phase=(n) {
                            strong { (name) } @if let Some(words) = &words { ": " (words) }
                            @if let Some((done, total)) = bar {
                                " " progress value=(done) max=(total.max(1)) { (done) " of " (total) }
                            }
                        }
                    } @else if n < at {
                        li.done { (name) " ✓" }
                    } @else {
                        li { (name) }
                    }
                }
            }
        }
        p { a href=(format!("{}/jobs/{}", book_url(&job.book), job.id)) { "Load this page again" } }
    };
    page_layout(chrome, &format!("Job {}", job.id), &job_trail(job), None, true, body)
}

/// The page of a verify that has ended: what `lorebank verify` says.
pub fn verified(
    chrome: &Chrome,
    job: &crate::ui::jobs::Job,
    verified: &Result<ledger::VerifyReport, String>,
) -> Markup {
    let body = html! {
        p.lead data-job-state="ended" {
            (crate::ui::jobs::describe(&job.work)) ", started " time { (utc(job.started_ms)) } ": "
            @match verified {
                Ok(report) => span.verify.ok data-verify="ok" {
                    "ok: " (report.n_events) " events, " (report.n_blobs) " blobs, " (report.n_documents) " receipts and documents checked"
                },
                Err(error) => span.verify.bad data-verify="damaged" { (error) },
            }
        }
        p { a href=(book_url(&job.book)) { "The book" } }
    };
    layout(chrome, &format!("Job {}: verify", job.id), &job_trail(job), None, body)
}

/// An import's report, from its dry run (with the chunks it would re-open and the
/// confirmation, which carries the same file) or from the import itself.
pub fn import_report(
    chrome: &Chrome,
    name: &str,
    report: &book::ImportReport,
    dry_run: bool,
    bytes: &[u8],
    strict: bool,
    actor: Option<&str>,
) -> Markup {
    use base64::Engine as _;
    let action = format!("{}/import", book_url(name));
    let placed = |title: &str, list: &[book::interchange::Placed]| {
        html! {
            @if !list.is_empty() {
                h3 { (title) " (" (list.len()) ")" }
                ul.placed {
                    @for placed in list.iter().take(REPORT_SHOWN) {
                        li { a href=(term_url(name, placed.id)) { (placed.id) } " " span lang="zh" { (placed.src) } " (" (placed.at.to_string()) ")"
                            @if !placed.fields.is_empty() { ": " (placed.fields.join(", ")) } }
                    }
                    @if list.len() > REPORT_SHOWN { li { "… and " (list.len() - REPORT_SHOWN) " more" } }
                }
            }
        }
    };
    let body = html! {
        p.lead data-written=(report.written) data-dry-run=(dry_run) {
            (report.file) " (" (report.format.name()) @if report.detected { ", detected" } ") as " code { (report.actor) } ": "
            (report.imported.len()) " imported, " (report.updated.len()) " updated, " (report.unchanged.len()) " unchanged, "
            (report.skipped.len()) " skipped, " (report.collisions.len()) " shared key(s), " (report.n_lost()) " field(s) lost. "
            @if dry_run { "A dry run: nothing has been written." }
            @else if report.written { "Imported: head " (report.revision.0) "." }
            @else { "Nothing to write: every entry is already in the book." }
        }
        dl.facts {
            dt { "events" } dd data-events=(report.n_events) { (report.n_events) }
            dt { @if dry_run { "snapshot it would make" } @else { "snapshot" } } dd { code { (report.snapshot.to_string()) } }
        }
        (placed("New", &report.imported))
        (placed("Updated", &report.updated))
        @if !report.skipped.is_empty() {
            h3 { "Skipped (" (report.skipped.len()) ")" }
            ul { @for skipped in report.skipped.iter().take(REPORT_SHOWN) { li { (skipped.at.to_string()) ": " (skipped.reason) } } }
        }
        @if !report.collisions.is_empty() {
            h3 { "Shared keys (" (report.collisions.len()) ")" }
            ul { @for collision in report.collisions.iter().take(REPORT_SHOWN) { li { (collision.at.to_string()) ": " (collision.to_string()) } } }
        }
        @if !report.lost.is_empty() {
            h3 { "Lost fields" }
            ul { @for group in &report.lost { li { (group.what) " ×" (group.at.len()) } } }
        }
        @if !report.notices.is_empty() {
            h3 { "Notices" }
            ul { @for notice in &report.notices { li { (notice.what) } } }
        }
        @if dry_run {
            (reopened_list(name, &report.reopened))
            @if report.n_events > 0 {
                form.import method="post" action=(action) enctype="multipart/form-data" {
                    input type="hidden" name="csrf" value=(chrome.csrf);
                    input type="hidden" name="name" value=(report.file);
                    input type="hidden" name="content" value=(base64::engine::general_purpose::STANDARD.encode(bytes));
                    input type="hidden" name="format" value=(report.format.name());
                    @if strict { input type="hidden" name="strict" value="on"; }
                    @if let Some(actor) = actor { input type="hidden" name="actor" value=(actor); }
                    input type="hidden" name="expected_head" value=(report.revision.0);
                    button type="submit" name="step" value="import" { "Import" }
                    " against revision " (report.revision.0) ": if the book changes first, nothing is written."
                }
            }
        } @else {
            p { a href=(format!("{}/glossary", book_url(name))) { "The glossary" } " · " a href=(action.clone()) { "Import another file" } }
        }
    };
    let trail = [(book_url(name), name.to_owned()), (action.clone(), "import".to_owned())];
    layout(chrome, if dry_run { "Import: dry run" } else { "Import" }, &trail, None, body)
}

/// How a name's rendering stands against the standard transcription (`names lint`).
fn name_standard(check: &book::standard::NameCheck) -> Markup {
    use book::standard::NameCheck;
    html! {
        @match check {
            NameCheck::Standard => p.standard data-standard="standard" { span.verify.ok { "✓" } " The rendering is the standard transcription of the name." },
            NameCheck::Deviates(found) | NameCheck::Exception(found) => {
                @let exception = matches!(check, NameCheck::Exception(_));
                p.standard data-standard=(if exception { "exception" } else { "deviates" }) {
                    @if exception { "A deliberate exception (accepted as " code { "name_exception" } "): " }
                    @else { span.verify.bad { "≠" } " " }
                    "the standard transcription is " strong { (found.expected) }
                    @if let Some(syllable) = &found.syllable {
                        " (it writes " code { (syllable.russian) } " for " span lang="zh" { (syllable.source) } ", read " (syllable.reading) ")"
                    }
                    "."
                }
            }
            NameCheck::Unchecked(why) => p.standard data-standard="unchecked" { "Not checked against the standard: " (why) "." },
        }
    }
}

pub fn term(chrome: &Chrome, name: &str, timeline: &Timeline) -> Markup {
    let id = timeline.id;
    let current = timeline.versions.last();
    let retired = timeline.stretches.last().is_some_and(|stretch| stretch.retired);
    let title = match current {
        Some(version) => format!("{id} {} → {}", version.put.src, version.put.dst),
        None => id.to_string(),
    };
    let body = html! {
        p.lead {
            @if retired { span.badge.retired { "retired" } " " }
            (count(timeline.versions.len(), "version")) ", " (count(timeline.events.len(), "event")) ", "
            (count(timeline.marks.len(), "recorded chunk")) " hit it; read at revision " (timeline.head.0) "."
        }
        @if let Some(check) = &timeline.standard { (name_standard(check)) }
        @if let (Some(version), false) = (current, retired) {
            (term_edit_form(chrome, name, id, &TermForm::of(&version.put, timeline.head.0), None))
        }
        @if current.is_some() {
            (term_action_forms(chrome, name, id, retired, timeline))
        }
        section {
            h2 { "Timeline" }
            p.help {
                "Chapters across (story time), revisions down (editorial time). Each rectangle is a version of "
                (id) " in the chapters assembly applied it in, during the revisions it was in force; a hatched part is a "
                "window a successor cut off (supersession), grey is retired. Dots are recorded chunks at the revision "
                "they were assembled at: filled if the term was injected."
            }
            div.chart { (super::svg::timeline(name, timeline)) }
        }
        section {
            h2 { "Versions" }
            table.versions {
                thead { tr { th { "version" } th { "event" } th { "change" } th { "window" } th { "in force" } } }
                tbody {
                    @for (index, version) in timeline.versions.iter().enumerate() {
                        @let previous = index.checked_sub(1).map(|index| &timeline.versions[index]);
                        tr id=(format!("v{}", version.by.seq.0)) data-version=(version.by.seq.0) {
                            td { "v" (index + 1) }
                            td { (provenance(name, &version.by)) }
                            td {
                                @match previous {
                                    None => {
                                        "put " span.src lang="zh" { (version.put.src) } " → " span.dst { (version.put.dst) }
                                        @if let Some(note) = &version.put.note { br; span.note { (note) } }
                                    }
                                    Some(previous) => {
                                        @if version.changed.is_empty() { "no field changed" }
                                        ul.changes {
                                            @for field in &version.changed {
                                                li {
                                                    code { (field) } ": "
                                                    del { (field_text(&previous.put, field)) } " → "
                                                    ins { (field_text(&version.put, field)) }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                            td { (version.put.window) @if let Some(old) = version.put.supersedes { br; "supersedes " a href=(term_url(name, old)) { (old) } } }
                            td {
                                "r" (version.by.seq.0) "–"
                                @match version.until { Some(until) => { "r" (until.0 - 1) }, None => "head" }
                            }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Aliases" }
            @if timeline.aliases.is_empty() {
                p { "No aliases." }
            } @else {
                table.aliases {
                    thead { tr { th { "surface" } th { "kind" } th { "window" } th { "added" } th { "removed" } } }
                    tbody {
                        @for alias in &timeline.aliases {
                            tr.removed[alias.removed.is_some()] {
                                td.src lang="zh" { (alias.alias.surface) }
                                td { (word(&alias.alias.kind)) }
                                td { @match alias.alias.window { Some(window) => (window), None => "the term's" } }
                                td { (provenance(name, &alias.added)) }
                                td { @match &alias.removed { Some(by) => (provenance(name, by)), None => "—" } }
                            }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Verdicts" }
            @if timeline.verdicts.is_empty() {
                p { "No editorial verdict." }
            } @else {
                table.verdicts {
                    thead { tr { th { "verdict" } th { "reason" } th { "note" } th { "event" } } }
                    tbody {
                        @for (verdict, by) in &timeline.verdicts {
                            tr {
                                td { (word(&verdict.verdict)) }
                                td { code { (verdict.reason) } }
                                td.note { (verdict.note.as_deref().unwrap_or("—")) }
                                td { (provenance(name, by)) }
                            }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Dispositions in recorded chunks" }
            @if timeline.marks.is_empty() {
                p { "No recorded chunk hit or injected " (id) "." }
            } @else {
                table.marks {
                    thead { tr { th { "chunk" } th { "assembled at" } th { "version" } th { "decision" } th { "injected" } } }
                    tbody {
                        @for mark in &timeline.marks {
                            tr.old[!mark.latest] {
                                td { a href=(format!("{}#{}", chapter_url(name, mark.chapter), receipt_anchor(mark.receipt))) { "chapter " (mark.chapter) ", chunk " (mark.chunk_key) } @if !mark.latest { " (recorded again since)" } }
                                td { "r" (mark.revision.0) }
                                td { @if mark.version > 0 { a.event href=(event_url(name, mark.version)) { "#" (mark.version) } } }
                                td {
                                    @match mark.hit {
                                        Some((disposition, reason)) => { (word(&disposition)) @if let Some(reason) = reason { ": " (word(&reason)) } },
                                        None => "not hit",
                                    }
                                }
                                td { @match mark.injected { Some(via) => (word(&via)), None => "no" } }
                            }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Events" }
            (events_table(name, &timeline.events))
        }
    };
    let trail = [(book_url(name), name.to_owned()), (term_url(name, id), id.to_string())];
    layout(chrome, &title, &trail, Some(&format!("/v1/books/{name}/terms/{id}/timeline")), body)
}

// ----- one event -----

pub fn event(chrome: &Chrome, name: &str, event: &Event, head: Seq) -> Markup {
    let body_json = serde_json::to_string_pretty(&event.content.body).unwrap_or_default();
    let record = event.content.body.record();
    let body = html! {
        dl.facts {
            dt { "what" } dd { (describe(&event.content.body)) }
            dt { "actor" } dd.actor { (event.content.actor) }
            dt { "source" } dd.source { (event.content.source) }
            dt { "recorded" } dd { time { (utc(event.content.recorded_at_ms)) } }
            dt { "chain hash" } dd { code { (event.hash.to_hex()) } }
            dt { "previous" } dd { code { (event.prev.to_hex()) } }
            dt { "schema" } dd { (event.schema) }
            @if let Some(record) = record.filter(|record| record.kind() == RecordKind::Term) {
                dt { "record" } dd { a href=(term_url(name, record)) { (record) } }
            }
        }
        h2 { "Body" }
        pre.json { (body_json) }
        nav.chapters {
            @if event.seq.0 > 1 { a rel="prev" href=(event_url(name, event.seq.0 - 1)) { "← #" (event.seq.0 - 1) } }
            @if event.seq < head { a rel="next" href=(event_url(name, event.seq.0 + 1)) { "#" (event.seq.0 + 1) " →" } }
        }
    };
    let title = format!("Event {}", event.seq.0);
    let trail = [(book_url(name), name.to_owned()), (event_url(name, event.seq.0), title.clone())];
    layout(chrome, &title, &trail, Some(&format!("/v1/books/{name}/events/{}", event.seq.0)), body)
}

// ----- diff and rollback -----

fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn diff_tables(name: &str, diff: &Diff) -> Markup {
    let value = crate::render::json::diff(&diff.old, &diff.new, &diff.records, &diff.config);
    let list = |key: &str| value[key].as_array().cloned().unwrap_or_default();
    let (added, removed, changed, config) = (list("added"), list("removed"), list("changed"), list("config"));
    let link = |id: &Value| -> Markup {
        let text = value_text(id);
        match text.parse::<RecordId>() {
            Ok(id) if id.kind() == RecordKind::Term => html! { a href=(term_url(name, id)) { (id) } },
            _ => html! { (text) },
        }
    };
    html! {
        @if added.is_empty() && removed.is_empty() && changed.is_empty() && config.is_empty() {
            p.nothing { "No record differs." }
        }
        @if !added.is_empty() {
            h3 { "Added" }
            ul.added { @for id in &added { li { (link(id)) } } }
        }
        @if !removed.is_empty() {
            h3 { "Removed" }
            ul.removed { @for id in &removed { li { (link(id)) } } }
        }
        @if !changed.is_empty() || !config.is_empty() {
            h3 { "Changed" }
            table.diff {
                thead { tr { th { "record" } th { "field" } th { "before" } th { "after" } } }
                tbody {
                    @for record in &changed {
                        @for field in record["fields"].as_array().cloned().unwrap_or_default() {
                            tr data-record=(value_text(&record["id"])) {
                                td { (link(&record["id"])) }
                                td { code { (value_text(&field["field"])) } }
                                td { del { (value_text(&field["old"])) } }
                                td { ins { (value_text(&field["new"])) } }
                            }
                        }
                    }
                    @for field in &config {
                        tr {
                            td { "config" }
                            td { code { "config" } }
                            td { del { (value_text(&field["old"])) } }
                            td { ins { (value_text(&field["new"])) } }
                        }
                    }
                }
            }
        }
    }
}

/// The query string of a glossary listing, `page` replaced: what a pager link or
/// the JSON twin asks (empty filters left out).
fn records_href(query: &RecordsQuery, page: usize) -> String {
    let status = query.status.map(|status| match status {
        Status::Approved => "approved",
        Status::Auto => "auto",
        Status::Draft => "draft",
    });
    let flagged = query.flagged.map(|flagged| if flagged { "true" } else { "false" });
    let pairs: Vec<(&str, String)> = [
        ("q", query.text.clone()),
        ("kind", query.kind.clone()),
        ("owner", query.owner.clone()),
        ("status", status.map(str::to_owned)),
        ("flagged", flagged.map(str::to_owned)),
        ("sort", Some(query.sort.name().to_owned()).filter(|sort| sort != "id")),
        ("order", query.descending.then(|| "desc".to_owned())),
        ("page", Some(page.to_string())),
        ("per_page", Some(query.per_page.to_string())),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value?)))
    .collect();
    serde_urlencoded::to_string(pairs).unwrap_or_default()
}

/// The editor's glossary: every active term, searched, filtered, sorted and paged.
pub fn glossary(chrome: &Chrome, name: &str, records: &RecordsPage) -> Markup {
    let action = format!("{}/glossary", book_url(name));
    let query = &records.query;
    let selected = |value: &str, current: Option<&str>| current == Some(value);
    let status = query.status.map(|status| match status {
        Status::Approved => "approved",
        Status::Auto => "auto",
        Status::Draft => "draft",
    });
    let flagged = query.flagged.map(|flagged| if flagged { "true" } else { "false" });
    let body = html! {
        form.records method="get" action=(action) {
            label { "Find " input type="search" name="q" value=[query.text.as_deref()] placeholder="source, alias or rendering"; } " "
            label { "kind " input type="text" name="kind" size="10" value=[query.kind.as_deref()]; } " "
            label { "owner " input type="text" name="owner" size="14" value=[query.owner.as_deref()]; } " "
            label { "status "
                select name="status" {
                    option value="" { "any" }
                    @for value in ["approved", "auto", "draft"] { option value=(value) selected[selected(value, status)] { (value) } }
                }
            } " "
            label { "checks "
                select name="flagged" {
                    option value="" { "any" }
                    option value="true" selected[selected("true", flagged)] { "flagged" }
                    option value="false" selected[selected("false", flagged)] { "not flagged" }
                }
            } " "
            label { "sort by "
                select name="sort" {
                    @for (value, _) in RecordsSort::NAMES { option value=(value) selected[value == query.sort.name()] { (value) } }
                }
            } " "
            label { "order "
                select name="order" {
                    option value="asc" selected[!query.descending] { "ascending" }
                    option value="desc" selected[query.descending] { "descending" }
                }
            } " "
            label { "per page " input type="number" name="per_page" min="1" max=(ledger_model::limits::input::RECORDS_PER_PAGE_MAX) value=(query.per_page); } " "
            button type="submit" { "Show" }
        }
        p.lead data-matching=(records.n_matching) {
            (records.n_matching) " of " (count(records.n_terms, "active term")) " match; page " (query.page) " of " (records.n_pages())
            ", read at revision " (records.revision.0) "."
        }
        table.records {
            thead { tr { th { "id" } th { "source" } th { "rendering" } th { "kind" } th { "window" } th { "status" } th { "owner" } th { "injected" } th { "checks" } } }
            tbody {
                @for row in &records.rows {
                    tr data-record=(row.id) {
                        td { a href=(term_url(name, row.id)) { (row.id) } }
                        td.src lang="zh" {
                            (row.src)
                            @if let Some(sense) = &row.sense { " " span.sense { "(" (sense) ")" } }
                            @if !row.aliases.is_empty() { br; span.aliases lang="zh" { (row.aliases.join(", ")) } }
                        }
                        td.dst { (row.dst) }
                        td { (row.kind.as_deref().unwrap_or("")) }
                        td { @match row.window { Some(window) => (window), None => "none" } }
                        td {
                            (format!("{:?}", row.status).to_lowercase())
                            @if let Some(verdict) = row.verdict { " · " (format!("{verdict:?}").to_lowercase()) }
                        }
                        td { (row.owner.as_deref().unwrap_or("")) }
                        td data-injected=(row.n_injected) { (row.n_injected) }
                        td { @if row.flagged { span.verify.bad data-flagged="true" { "flagged" } } }
                    }
                }
            }
        }
        (term_form(chrome, &format!("{action}/new"), "New term", &TermForm::new_term(records.revision.0), true, None))
        nav.pages {
            @if query.page > 1 { a rel="prev" href=(format!("{action}?{}", records_href(query, query.page - 1))) { "← previous" } }
            " "
            @if query.page < records.n_pages() { a rel="next" href=(format!("{action}?{}", records_href(query, query.page + 1))) { "next →" } }
        }
    };
    let twin = format!("/v1/books/{name}/records?{}", records_href(query, query.page));
    let trail = [(book_url(name), name.to_owned()), (action.clone(), "glossary".to_owned())];
    layout(chrome, "Glossary", &trail, Some(&twin), body)
}

fn revision_form(action: &str, fields: &[(&str, &str, Option<u64>)], button: &str) -> Markup {
    html! {
        form.revisions method="get" action=(action) {
            @for (label, field, value) in fields {
                label { (label) " " input type="number" name=(field) min="1" value=[value]; } " "
            }
            button type="submit" { (button) }
        }
    }
}

pub fn diff(chrome: &Chrome, name: &str, from: Option<u64>, to: Option<u64>, diff: Option<&Diff>) -> Markup {
    let action = format!("{}/diff", book_url(name));
    let shown_to = diff.map(|diff| diff.new.revision().0).or(to);
    let body = html! {
        (revision_form(&action, &[("from revision", "from", from), ("to revision", "to", shown_to)], "Show diff"))
        @if let Some(diff) = diff {
            p.lead { "Records that differ from revision " (diff.old.revision().0) " to revision " (diff.new.revision().0) "." }
            (diff_tables(name, diff))
        }
    };
    let twin = from.map(|from| match to {
        Some(to) => format!("/v1/books/{name}/diff?from={from}&to={to}"),
        None => format!("/v1/books/{name}/diff?from={from}"),
    });
    let trail = [(book_url(name), name.to_owned()), (action.clone(), "diff".to_owned())];
    layout(chrome, "Diff", &trail, twin.as_deref(), body)
}

pub fn rollback(chrome: &Chrome, name: &str, to: Option<u64>, preview: Option<&RollbackPreview>) -> Markup {
    let action = format!("{}/rollback", book_url(name));
    let body = html! {
        (revision_form(&action, &[("roll back to revision", "to", to)], "Preview"))
        @if let Some(preview) = preview {
            @let equal = preview.snapshot_after == preview.snapshot_target;
            p.lead data-written="false" {
                "A rollback to revision " (preview.plan.to.0) " at the head, revision " (preview.plan.head.0)
                ", would append these " (preview.plan.bodies.len()) " events. Nothing has been written."
            }
            dl.facts {
                dt { "head snapshot" } dd { code { (preview.snapshot_head.to_string()) } }
                dt { "snapshot of revision " (preview.plan.to.0) } dd { code { (preview.snapshot_target.to_string()) } }
                dt { "snapshot after the rollback" }
                dd {
                    code { (preview.snapshot_after.to_string()) }
                    @if equal { " " span.verify.ok data-same-snapshot="true" { "= revision " (preview.plan.to.0) "'s" } }
                    @else { " " span.verify.bad data-same-snapshot="false" { "differs from revision " (preview.plan.to.0) "'s" } }
                }
            }
            h2 { "Events it would append" }
            ol.plan { @for body in &preview.plan.bodies { li { (describe(body)) } } }
            h2 { "What would change" }
            (diff_tables(name, &preview.diff))
            (reopened_list(name, &preview.reopened))
            form.rollback method="post" action=(action) {
                input type="hidden" name="csrf" value=(chrome.csrf);
                input type="hidden" name="to" value=(preview.plan.to.0);
                input type="hidden" name="expected_head" value=(preview.plan.head.0);
                label { "because " input type="text" name="reason" size="30"; } " "
                label { "as " input type="text" name="actor" size="14" placeholder="human:editor"; } " "
                button type="submit" { "Roll back to revision " (preview.plan.to.0) }
            }
            p.help {
                "The same from the command line: " code { "lorebank rollback --to " (preview.plan.to.0) } ", or " code { "POST /v1/books/" (name) "/rollback" }
                " with the expected head " (preview.plan.head.0) ". If the book changes before you press the button, nothing is written."
            }
        }
    };
    let twin = to.map(|to| format!("/v1/books/{name}/rollback/preview?to={to}"));
    let trail = [(book_url(name), name.to_owned()), (action.clone(), "rollback preview".to_owned())];
    layout(chrome, "Rollback preview", &trail, twin.as_deref(), body)
}

// ----- the review queue -----

/// What the last review form wrote, shown above the queue.
pub struct Notice {
    pub action: String,
    pub id: String,
    pub head: u64,
}

pub fn review(chrome: &Chrome, name: &str, queue: &ReviewQueue, notice: Option<&Notice>, actor: &str) -> Markup {
    let body = html! {
        form.reviewer method="get" action=(format!("{}/review", book_url(name))) {
            label { "Review as " input type="text" name="as" value=(actor) size="18" required; }
            " "
            button type="submit" { "Set" }
            span.help { " the actor every verdict below is written by (" code { "kind:name" } ")" }
        }
        @if let Some(notice) = notice {
            p.notice data-done=(notice.action) { (notice.id) ": " (notice.action) " written; the head is now revision " (notice.head) "." }
        }
        p.lead { (count(queue.entries.len(), "item")) " at revision " (queue.head.0) ": open candidates (most sighted first), then flagged records." }
        @if queue.entries.is_empty() { p { "Nothing to review." } }
        @for entry in &queue.entries {
            @let id = entry.item.id();
            section.item id=(format!("item-{id}")) data-id=(id.to_string()) {
                @match &entry.item {
                    ReviewItem::Candidate { proposed, sightings } => {
                        h2 { (id) " " span.src lang="zh" { (proposed.surface) } }
                        p {
                            "candidate from " (word(&proposed.origin)) " (trust " (word(&proposed.trust))
                            @if let Some(score) = proposed.score { ", score " span.score { (embed::Score::from_millionths(score).to_string()) } }
                            "), sighted " (sightings) " times"
                            @if let Some(dst) = &proposed.suggested_dst { "; suggested rendering " span.dst { (dst) } }
                            @match (proposed.related, proposed.duplicate) {
                                (Some(related), Some(duplicate)) => {
                                    "; " a href=(term_url(name, duplicate)) { (duplicate) } " may be the same entity as "
                                    a href=(term_url(name, related)) { (related) } " (accepting merges nothing)"
                                }
                                (Some(related), None) => {
                                    "; close to " a href=(term_url(name, related)) { (related) } " (accepting adds it as an alias)"
                                }
                                _ => {}
                            }
                        }
                    }
                    ReviewItem::Flagged { put, why, owner, owner_role } => {
                        h2 { a href=(term_url(name, put.id)) { (id) } " " span.src lang="zh" { (put.src) } " → " span.dst { (put.dst) } }
                        p {
                            "flagged: " code { (why) }
                            @if let Some(owner) = owner {
                                "; ask " code.owner { (owner) }
                                @if let Some(role) = owner_role { " (" (role) ")" }
                            }
                        }
                    }
                    ReviewItem::FlaggedRule { put, why, owner, owner_role } => {
                        h2 { (id) " rule: " span.rule { (put.text) } }
                        p {
                            "flagged: " code { (why) }
                            @if let Some(owner) = owner {
                                "; ask " code.owner { (owner) }
                                @if let Some(role) = owner_role { " (" (role) ")" }
                            }
                        }
                    }
                }
                @if !entry.evidence.is_empty() {
                    ul.evidence {
                        @for evidence in &entry.evidence {
                            li {
                                @let href = match &evidence.context {
                                    Some(context) => format!("{}#{}", chapter_url(name, evidence.chapter), receipt_anchor(context.receipt)),
                                    None => chapter_url(name, evidence.chapter),
                                };
                                a href=(href) { "chapter " (evidence.chapter) ", chunk " (evidence.chunk_key) }
                                " (" (evidence.cue) "): "
                                @match &evidence.context {
                                    Some(context) => span.in-context lang="zh" { "…" (context.before) mark.span { (context.span) } (context.after) "…" },
                                    None => span.no-context { "characters " (evidence.chars.0) "–" (evidence.chars.1) " (the chunk is not recorded with this text)" },
                                }
                            }
                        }
                    }
                }
                div.actions {
                    @let action = |verb: &str| format!("{}/review/{id}/{verb}", book_url(name));
                    form.accept method="post" action=(action("accept")) {
                        input type="hidden" name="csrf" value=(chrome.csrf);
                        @match &entry.item {
                            // Accepting a candidate close to a term makes no new term.
                            ReviewItem::Candidate { proposed, .. } if proposed.related.is_some() => {}
                            ReviewItem::Candidate { proposed, .. } => {
                                label { "rendering " input type="text" name="dst" value=[proposed.suggested_dst.as_deref()] required; }
                                label { " gender "
                                    select name="gender" {
                                        option value="" { "—" }
                                        option value="m" { "m" } option value="f" { "f" } option value="n" { "n" } option value="pl" { "pl" }
                                    }
                                }
                                label { " kind " input type="text" name="kind" size="10"; }
                            }
                            ReviewItem::Flagged { put, .. } => {
                                label { "rendering " input type="text" name="dst" value=(put.dst); }
                            }
                            // A rule has no rendering: accepting approves it.
                            ReviewItem::FlaggedRule { .. } => {}
                        }
                        input type="hidden" name="actor" value=(actor);
                        " "
                        button.accept type="submit" { "Accept" }
                    }
                    form.judge method="post" action=(action("reject")) {
                        input type="hidden" name="csrf" value=(chrome.csrf);
                        input type="hidden" name="actor" value=(actor);
                        label { "reason " input type="text" name="reason" size="14" value=(offered_reason(&entry.item, Verdict::Reject)); }
                        " "
                        button.reject type="submit" { "Reject" }
                    }
                    form.judge method="post" action=(action("verify")) {
                        input type="hidden" name="csrf" value=(chrome.csrf);
                        input type="hidden" name="actor" value=(actor);
                        input type="hidden" name="reason" value=(offered_reason(&entry.item, Verdict::Verify));
                        button.verify type="submit" { "Verify" }
                    }
                }
            }
        }
    };
    let url = format!("{}/review", book_url(name));
    let trail = [(book_url(name), name.to_owned()), (url, "review".to_owned())];
    layout(chrome, "Review queue", &trail, Some(&format!("/v1/books/{name}/review/queue")), body)
}

// ----- login -----

pub fn login(chrome: &Chrome, next: &str, failed: bool) -> Markup {
    let body = html! {
        @if failed { p.problem data-type="unauthorized" { "That is not this server's token." } }
        p { "This server needs a bearer token of its " code { "--token-file" } " that reads the full view (one without a party)." }
        form.login method="post" action="/ui/login" {
            input type="hidden" name="csrf" value=(chrome.csrf);
            input type="hidden" name="next" value=(next);
            label { "token " input type="password" name="token" autocomplete="current-password" required autofocus; }
            " "
            button type="submit" { "Log in" }
        }
    };
    layout(&Chrome { csrf: chrome.csrf.clone(), logout: false }, "Log in", &[], None, body)
}

/// Whom to ask about a record, or a dash.
fn owner(owner: &Option<String>, role: &Option<String>) -> Markup {
    html! {
        @match owner {
            Some(owner) => {
                code.owner { (owner) }
                @if let Some(role) = role { " (" (role) ")" }
            }
            None => "—",
        }
    }
}
