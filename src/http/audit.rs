//! The reads of the audit page (`/ui/`, the `ui` module) and their JSON twins under
//! `/v1`: each read parses its request and makes one Book call; the JSON handler and
//! the HTML page both call it, so a page and its twin always show the same result.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use book::explain::ChapterAudit;
use book::overview::Overview;
use book::preview::RollbackPreview;
use book::queue::ReviewQueue;
use book::reads::Diff;
use book::records::{RecordsPage, RecordsQuery, RecordsSort};
use book::timeline::Timeline;
use book::BookError;
use ledger_model::*;

use super::problem::Problem;
use super::routes::{book_and, book_name, chapter_number, ok, on_book, record_id, Query, Server, Shared};

/// Events an overview lists.
pub const OVERVIEW_RECENT: u64 = 20;

pub(crate) async fn overview(server: Arc<Server>, name: String) -> Result<Overview, Problem> {
    on_book(server, name, move |open| Ok(open.lock().overview(OVERVIEW_RECENT)?)).await
}

pub(crate) async fn chapter(server: Arc<Server>, name: String, chapter: u32) -> Result<ChapterAudit, Problem> {
    let chapter = chapter_number(chapter, "chapter")?;
    on_book(server, name, move |open| Ok(open.lock().chapter_audit(chapter)?)).await
}

/// A term's timeline; a term without events is not found (as `GET …/terms/{id}`).
pub(crate) async fn timeline(server: Arc<Server>, name: String, id: &str) -> Result<Timeline, Problem> {
    let id = record_id(id, "id")?;
    on_book(server, name, move |open| Ok(open.lock().term_timeline(id)?)).await
}

/// One event by seq, with the head: 400 for 0, 404 past the head.
pub(crate) async fn event(server: Arc<Server>, name: String, seq: u64) -> Result<(Event, Seq), Problem> {
    on_book(server, name, move |open| {
        open.lock().event(Seq(seq)).map_err(|error| match error {
            BookError::Invalid(_) => Problem::from(error).at("seq"),
            error => error.into(),
        })
    })
    .await
}

/// The revision `to` of a rollback preview, from the query (`to`, required).
pub(crate) fn preview_target(query: &Query) -> Result<Seq, Problem> {
    let to = query.number::<u64>("to")?.ok_or_else(|| Problem::invalid("query parameter to: required").at("to"))?;
    if to == 0 {
        return Err(Problem::invalid("query parameter to: revisions start at 1").at("to"));
    }
    Ok(Seq(to))
}

pub(crate) async fn preview(server: Arc<Server>, name: String, to: Seq) -> Result<RollbackPreview, Problem> {
    on_book(server, name, move |open| Ok(open.lock().rollback_preview(to)?)).await
}

/// The difference from revision `from` to `to` (the head when `None`).
pub(crate) async fn diff(server: Arc<Server>, name: String, from: u64, to: Option<u64>) -> Result<Diff, Problem> {
    on_book(server, name, move |open| Ok(open.lock().diff_until(Seq(from), to.map(Seq))?)).await
}

/// The query parameters of the editor's glossary listing.
pub(crate) const RECORDS_PARAMS: &[&str] =
    &["q", "kind", "owner", "status", "flagged", "sort", "order", "page", "per_page"];

/// The listing a query asks for (`q`, `kind`, `owner`, `status`, `flagged`, `sort`,
/// `order`, `page`, `per_page`); an empty text parameter is no filter, as a form
/// sends it.
pub(crate) fn records_query(query: &Query) -> Result<RecordsQuery, Problem> {
    let text = |name: &str| query.text(name).map(str::trim).filter(|text| !text.is_empty()).map(str::to_owned);
    let status = match text("status").as_deref() {
        None => None,
        Some("approved") => Some(Status::Approved),
        Some("auto") => Some(Status::Auto),
        Some("draft") => Some(Status::Draft),
        Some(other) => {
            return Err(Problem::invalid(format!("query parameter status: {other:?} is not approved, auto or draft"))
                .at("status"))
        }
    };
    let flagged = match text("flagged").as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(
                Problem::invalid(format!("query parameter flagged: {other:?} is not true or false")).at("flagged")
            )
        }
    };
    let sort = match text("sort") {
        None => RecordsSort::Id,
        Some(name) => RecordsSort::named(&name).ok_or_else(|| {
            let known: Vec<&str> = RecordsSort::NAMES.iter().map(|(name, _)| *name).collect();
            Problem::invalid(format!("query parameter sort: {name:?} is not one of {}", known.join(", "))).at("sort")
        })?,
    };
    let descending = match text("order").as_deref() {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(other) => {
            return Err(Problem::invalid(format!("query parameter order: {other:?} is not asc or desc")).at("order"))
        }
    };
    let defaults = RecordsQuery::default();
    let page = query.number::<usize>("page")?.unwrap_or(defaults.page);
    if page == 0 {
        return Err(Problem::invalid("query parameter page: pages start at 1").at("page"));
    }
    let per_page = query.number::<usize>("per_page")?.unwrap_or(defaults.per_page);
    if !(1..=ledger_model::limits::input::RECORDS_PER_PAGE_MAX).contains(&per_page) {
        return Err(Problem::invalid(format!(
            "query parameter per_page: {per_page} is not 1 to {}",
            ledger_model::limits::input::RECORDS_PER_PAGE_MAX
        ))
        .at("per_page"));
    }
    Ok(RecordsQuery {
        text: text("q"),
        kind: text("kind"),
        owner: text("owner"),
        status,
        flagged,
        sort,
        descending,
        page,
        per_page,
    })
}

pub(crate) async fn records(server: Arc<Server>, name: String, query: RecordsQuery) -> Result<RecordsPage, Problem> {
    on_book(server, name, move |open| Ok(open.lock().records(query)?)).await
}

pub(crate) async fn queue(server: Arc<Server>, name: String) -> Result<ReviewQueue, Problem> {
    on_book(server, name, move |open| Ok(open.lock().review_queue()?)).await
}

// ----- the JSON twins -----

pub async fn overview_json(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    Query::parse(raw, &[])?;
    let overview = overview(server, name.clone()).await?;
    ok(crate::render::json::overview(&name, &overview))
}

pub async fn chapter_json(
    State(server): Shared,
    path: Result<Path<(String, u32)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let (name, number) = book_and::<u32>(path, "chapter")?;
    Query::parse(raw, &[])?;
    ok(crate::render::json::chapter_audit(&chapter(server, name, number).await?))
}

pub async fn timeline_json(
    State(server): Shared,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let (name, id) = book_and::<String>(path, "term id")?;
    Query::parse(raw, &[])?;
    ok(crate::render::json::timeline(&timeline(server, name, &id).await?))
}

pub async fn event_json(
    State(server): Shared,
    path: Result<Path<(String, u64)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let (name, seq) = book_and::<u64>(path, "seq")?;
    Query::parse(raw, &[])?;
    let (event, _) = event(server, name, seq).await?;
    ok(crate::render::json::event(&event))
}

pub async fn preview_json(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let to = preview_target(&Query::parse(raw, &["to"])?)?;
    ok(crate::render::json::rollback_preview(&preview(server, name, to).await?))
}

pub async fn records_json(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    let query = records_query(&Query::parse(raw, RECORDS_PARAMS)?)?;
    ok(crate::render::json::records(&records(server, name, query).await?))
}

pub async fn queue_json(
    State(server): Shared,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let name = book_name(path)?;
    Query::parse(raw, &[])?;
    ok(crate::render::json::review_queue(&queue(server, name).await?))
}
