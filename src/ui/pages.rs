//! The handlers of the audit pages: parse, one Book call (the same read as the
//! page's JSON twin, `crate::http::audit`), render. Errors are pages with the
//! status the API would answer. The review forms check the CSRF token and the
//! request's origin, then make the Book call the API's review routes make.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use ledger_model::*;
use serde::Deserialize;

use super::html::{self, Chrome, Notice, Page};
use super::jobs::{self, Job, Jobs, Outcome, Progress, Work};
use super::Browser;
use crate::http::audit;
use crate::http::problem::Problem;
use crate::http::routes::{
    blocking, body_bytes, book_and, book_name, in_library, on_book, record_id, write_options, Query, Server, Shared,
};

/// The source of every write a review form makes.
pub const FORM_SOURCE: &str = "ui:review";

/// The actor the review page's forms write as, unless the page is asked `?as=`.
pub const DEFAULT_REVIEWER: &str = "human:reviewer";

/// The actor a term's edit form writes as, unless the editor types another.
pub const DEFAULT_EDITOR: &str = "human:editor";

/// A failed page: the problem the API would answer, as HTML.
pub struct PageError(Problem);

impl From<Problem> for PageError {
    fn from(problem: Problem) -> PageError {
        PageError(problem)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        html::error_page(&self.0).into_response()
    }
}

type PageResult = Result<Response, PageError>;

fn chrome(server: &Server, browser: &Browser) -> Chrome {
    Chrome { csrf: browser.csrf(), logout: !server.tokens.is_empty() }
}

fn page(markup: maud::Markup) -> PageResult {
    Ok(Page::ok(markup).into_response())
}

pub async fn library(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    let library = Arc::clone(&server);
    let names = blocking(move || Ok(server.library.list()?)).await.map_err(|problem| in_library(&library, problem))?;
    page(html::library(&chrome, &names))
}

pub async fn book(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = book_name(path)?;
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    let overview = audit::overview(server, name.clone()).await?;
    page(html::book(&chrome, &name, &overview))
}

pub async fn chapter(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<(String, u32)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let (name, chapter) = book_and::<u32>(path, "chapter")?;
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    let audit = audit::chapter(server, name.clone(), chapter).await?;
    page(html::chapter(&chrome, &name, &audit))
}

pub async fn term(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let (name, id) = book_and::<String>(path, "term id")?;
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    let timeline = audit::timeline(server, name.clone(), &id).await?;
    page(html::term(&chrome, &name, &timeline))
}

pub async fn event(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<(String, u64)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let (name, seq) = book_and::<u64>(path, "seq")?;
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    let (event, head) = audit::event(server, name.clone(), seq).await?;
    page(html::event(&chrome, &name, &event, head))
}

pub async fn diff(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = book_name(path)?;
    let query = Query::parse(raw, &["from", "to"])?;
    let (from, to) = (query.number::<u64>("from")?, query.number::<u64>("to")?);
    let chrome = chrome(&server, &browser);
    // Without `from` the page is the form alone.
    let Some(from) = from else { return page(html::diff(&chrome, &name, None, to, None)) };
    let diff = audit::diff(server, name.clone(), from, to).await?;
    page(html::diff(&chrome, &name, Some(from), to, Some(&diff)))
}

pub async fn glossary(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = book_name(path)?;
    let query = audit::records_query(&Query::parse(raw, audit::RECORDS_PARAMS)?)?;
    let chrome = chrome(&server, &browser);
    let records = audit::records(server, name.clone(), query).await?;
    page(html::glossary(&chrome, &name, &records))
}

pub async fn rollback(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = book_name(path)?;
    let query = Query::parse(raw, &["to"])?;
    let chrome = chrome(&server, &browser);
    if query.text("to").is_none() {
        return page(html::rollback(&chrome, &name, None, None));
    }
    let to = audit::preview_target(&query)?;
    let preview = audit::preview(server, name.clone(), to).await?;
    page(html::rollback(&chrome, &name, Some(to.0), Some(&preview)))
}

pub async fn review(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = book_name(path)?;
    let query = Query::parse(raw, &["done", "id", "head", "as"])?;
    let actor = query.text("as").map_or(DEFAULT_REVIEWER, str::trim).to_owned();
    let notice = match (query.text("done"), query.text("id"), query.number::<u64>("head")?) {
        (Some(action), Some(id), Some(head)) if ["accept", "reject", "verify"].contains(&action) => {
            Some(Notice { action: action.to_owned(), id: record_id(id, "id")?.to_string(), head })
        }
        (None, None, None) => None,
        _ => return Err(Problem::invalid("query parameters done, id and head go together").into()),
    };
    let chrome = chrome(&server, &browser);
    let queue = audit::queue(server, name.clone()).await?;
    page(html::review(&chrome, &name, &queue, notice.as_ref(), &actor))
}

/// The fields of a review form besides its CSRF token; a field left empty is not
/// given.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewForm {
    actor: Option<String>,
    dst: Option<String>,
    gender: Option<String>,
    kind: Option<String>,
    note: Option<String>,
    reason: Option<String>,
}

fn given(field: Option<String>) -> Option<String> {
    field.map(|text| text.trim().to_owned()).filter(|text| !text.is_empty())
}

/// Whether a posted form comes from a page this server served to this browser: it
/// carries exactly one CSRF token (`tokens`), this browser's, and, when the browser
/// says where it posts from, this origin; else 403.
fn posted_here(headers: &HeaderMap, browser: &Browser, tokens: &[&str]) -> Result<(), Problem> {
    let forbidden = |detail: &str| Problem::new(StatusCode::FORBIDDEN, "forbidden", detail.to_owned());
    match tokens {
        [] => return Err(forbidden("the form carries no CSRF token: reload the page and try again")),
        [token] if browser.csrf_holds(token) => {}
        [_] => {
            return Err(forbidden(
                "the form's CSRF token is not this browser's for this server: reload the page and try again",
            ))
        }
        _ => return Err(forbidden("the form carries its CSRF token more than once")),
    }
    check_origin(headers).map_err(|detail| forbidden(&detail))
}

/// Checks that a posted form comes from a page this server served to this browser,
/// then parses its other fields (`application/x-www-form-urlencoded`). The form must
/// carry exactly one `csrf` field, holding the CSRF token of the browser's cookie,
/// and, when the browser says where it posts from, come from this origin: else 403,
/// before any other field is looked at. A field given twice is 400.
fn form<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    browser: &Browser,
    body: Result<Bytes, BytesRejection>,
) -> Result<T, Problem> {
    let bytes = body_bytes(body)?;
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_bytes(&bytes).map_err(|error| Problem::invalid(format!("form: {error}")))?;
    let tokens: Vec<&str> = pairs.iter().filter(|(name, _)| name == "csrf").map(|(_, value)| value.as_str()).collect();
    posted_here(headers, browser, &tokens)?;
    let mut fields = serde_json::Map::new();
    for (name, value) in pairs.into_iter().filter(|(name, _)| name != "csrf") {
        if fields.contains_key(&name) {
            return Err(Problem::invalid(format!("form field {name:?} is given twice")).at(name));
        }
        fields.insert(name, serde_json::Value::String(value));
    }
    serde_json::from_value(serde_json::Value::Object(fields))
        .map_err(|error| Problem::invalid(format!("form: {error}")))
}

/// A form must come from this origin when the browser says where it posts from.
/// `Origin: null` (a sandboxed frame, a `data:` page, a redirect across origins) is
/// no page of this server.
fn check_origin(headers: &HeaderMap) -> Result<(), String> {
    let Some(origin) = headers.get(header::ORIGIN) else { return Ok(()) };
    let origin = origin.to_str().unwrap_or("");
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok());
    let from = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    match (from, host) {
        (Some(from), Some(host)) if from == host => Ok(()),
        _ => Err(format!("the form was posted from another origin ({origin:?}), not from this server's pages")),
    }
}

fn gender(text: Option<String>) -> Result<Option<Gender>, Problem> {
    given(text)
        .map(|text| {
            serde_json::from_value(serde_json::Value::String(text.clone()))
                .map_err(|_| Problem::invalid(format!("gender: {text:?} is not m, f, n or pl")).at("gender"))
        })
        .transpose()
}

/// The book, record and action of a form's path (`…/review/{id}/{action}`,
/// `…/terms/{id}/actions/{action}`): a bad book name or record id is 400.
fn book_record_action(
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<(String, RecordId, String), Problem> {
    let Path((name, id, action)) =
        path.map_err(|rejection| Problem::invalid(format!("path: {}", rejection.body_text())))?;
    book::library::check_name(&name).map_err(Problem::from)?;
    Ok((name, record_id(&id, "id")?, action))
}

pub async fn review_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<(String, String, String)>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let (name, id, action) = book_record_action(path)?;
    let verdict = match action.as_str() {
        "accept" => None,
        "reject" => Some(Verdict::Reject),
        "verify" => Some(Verdict::Verify),
        other => return Err(Problem::not_found(format!("no review action {other:?}: accept, reject or verify")).into()),
    };
    let fields: ReviewForm = form(&headers, &browser, body)?;
    let actor = given(fields.actor).unwrap_or_else(|| DEFAULT_REVIEWER.to_owned());
    let write = write_options(book::Actor::Named(actor.clone()), Some(FORM_SOURCE.to_owned()), None);
    let gender = gender(fields.gender)?;
    let (dst, kind, note, reason) = (given(fields.dst), given(fields.kind), given(fields.note), given(fields.reason));
    let book = name.clone();
    let (head, term) = on_book(server, name, move |open| {
        let mut book = open.lock();
        let written = match verdict {
            None => {
                let acceptance = book::review::Acceptance { dst, gender, kind, note, term: None };
                book.review_accept(id, &acceptance, &write)?
            }
            Some(verdict) => {
                let reason = reason.unwrap_or_else(|| book::review::default_reason(verdict).to_owned());
                book.review_judge(id, verdict, &reason, note, &write)?
            }
        };
        let decision = &written.submitted.decision;
        // An accepted candidate becomes a new term: its page is where to go next.
        let term = decision.events.iter().find_map(|event| match &event.body {
            Body::TermPut(put) if id.kind() == RecordKind::Candidate => Some(put.id),
            _ => None,
        });
        Ok((written.submitted.revision.0, term))
    })
    .await?;
    let location = match term {
        Some(term) => format!("/ui/books/{book}/terms/{term}"),
        None => {
            let query = [("done", action), ("id", id.to_string()), ("head", head.to_string()), ("as", actor)];
            format!("/ui/books/{book}/review?{}", serde_urlencoded::to_string(query).unwrap_or_default())
        }
    };
    Ok(super::redirect(&location))
}

/// A term's edit form: every field of the form, as typed (an empty optional field
/// clears it), the write's actor and source, the head the form was read at, and the
/// step: `preview` (nothing written) or `save`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TermForm {
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub sense: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub gender: String,
    #[serde(default)]
    pub decl: String,
    #[serde(default)]
    pub note: String,
    pub since: String,
    #[serde(default)]
    pub until: String,
    pub status: String,
    pub priority: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub source: String,
    pub expected_head: String,
    pub step: String,
    /// The new-term form's id (empty: the next free one); the edit form has none.
    #[serde(default)]
    pub id: String,
}

impl TermForm {
    /// The edit the form asks for: every field it shows, as `term edit` would set it.
    fn edit(&self) -> Result<book::TermEdit, Problem> {
        let clearable = |text: &str| Some(Some(text.trim().to_owned()).filter(|text| !text.is_empty()));
        let number = |name: &str, text: &str| -> Result<u32, Problem> {
            text.trim()
                .parse()
                .map_err(|_| Problem::invalid(format!("{name}: {text:?} is not a chapter number")).at(name))
        };
        let until = match self.until.trim() {
            "" => None,
            text => Some(number("until", text)?),
        };
        let status =
            serde_json::from_value(serde_json::Value::String(self.status.trim().to_owned())).map_err(|_| {
                Problem::invalid(format!("status: {:?} is not approved, auto or draft", self.status)).at("status")
            })?;
        let priority =
            self.priority.trim().parse().map_err(|_| {
                Problem::invalid(format!("priority: {:?} is not an integer", self.priority)).at("priority")
            })?;
        Ok(book::TermEdit {
            src: Some(self.src.trim().to_owned()),
            dst: Some(self.dst.trim().to_owned()),
            sense: clearable(&self.sense),
            kind: clearable(&self.kind),
            gender: Some(gender(Some(self.gender.clone()))?),
            decl: Some(
                self.decl.split(',').map(str::trim).filter(|form| !form.is_empty()).map(str::to_owned).collect(),
            ),
            note: clearable(&self.note),
            since: Some(number("since", &self.since)?),
            until: Some(until),
            status: Some(status),
            priority: Some(priority),
            ..book::TermEdit::default()
        })
    }
}

/// A term's edit form posted: `step=preview` shows what the edit would change, the
/// recorded chunks it would re-open and the snapshot it would make, writing nothing;
/// `step=save` writes it against the head the form was read at (another editor's
/// write in between is a conflict, 409), then shows the term. Validated by the rules
/// of `term edit`; an error names the field.
pub async fn term_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<(String, String)>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let (name, id) = book_and::<String>(path, "term id")?;
    let fields: TermForm = form(&headers, &browser, body)?;
    let id = record_id(&id, "id")?;
    let chrome = chrome(&server, &browser);
    let written = term_write_step(server, &chrome, &name, id, &fields).await;
    written.or_else(|problem| {
        // The edit form has no id input: its id is the page's.
        let inputs = &TERM_INPUTS[1..];
        refused(problem, inputs, |refusal| html::term_form_refused(&chrome, &name, Some(id), &fields, refusal))
    })
}

async fn term_write_step(
    server: Arc<Server>,
    chrome: &Chrome,
    name: &str,
    id: RecordId,
    fields: &TermForm,
) -> Result<Response, Problem> {
    let edit = fields.edit()?;
    let write = editor_write(&fields.actor, &fields.source, &fields.expected_head)?;
    match fields.step.as_str() {
        "preview" => {
            let (current, put, what_if) =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().term_edit_what_if(id, &edit, &write)?))
                    .await?;
            Ok(Page::ok(html::term_preview(chrome, name, id, fields, &current, &put, &what_if)).into_response())
        }
        "save" => {
            on_book(server, name.to_owned(), move |open| Ok(open.lock().term_edit(id, &edit, &write)?)).await?;
            Ok(super::redirect(&format!("/ui/books/{name}/terms/{id}")))
        }
        other => Err(Problem::invalid(format!("step: {other:?} is not preview or save")).at("step")),
    }
}

/// The inputs of the new-term form; the edit form's are the same without the first,
/// `id`.
const TERM_INPUTS: &[&str] = &[
    "id", "src", "dst", "sense", "kind", "gender", "decl", "note", "since", "until", "status", "priority", "actor",
    "source",
];

/// The input of a form a problem names, when it is one of `inputs`: the book's field
/// with the event's kind, a window's and a list's index left out
/// (`term_put.window.until` is `until`, `term_put.decl[1]` is `decl`), or else the
/// field the form's own parse named.
fn input_of(problem: &Problem, inputs: &[&str]) -> Option<String> {
    let named = match &problem.field {
        Some(path) => {
            let path = path.split_once('.').map_or(path.as_str(), |(_, rest)| rest);
            let path = path.strip_prefix("window.").unwrap_or(path);
            path.split(['.', '[']).next().unwrap_or(path).to_owned()
        }
        None => problem.at.clone()?,
    };
    inputs.contains(&named.as_str()).then_some(named)
}

/// A form's write refused as invalid (400: a field the editor can fix, or a rule of
/// the book): the form again, as typed, with the message beside the input it names
/// (`render`); any other failure (a conflict, 409; a missing book) is its error page.
fn refused(problem: Problem, inputs: &[&str], render: impl FnOnce(&html::Refusal) -> maud::Markup) -> PageResult {
    if problem.status != StatusCode::BAD_REQUEST {
        return Err(problem.into());
    }
    let refusal = html::Refusal { input: input_of(&problem, inputs), message: problem.detail };
    let mut page = Page::ok(render(&refusal));
    page.status = StatusCode::BAD_REQUEST;
    Ok(page.into_response())
}

/// The rollback form of a preview (`POST /ui/books/{book}/rollback`): the revision,
/// the head the preview was made at, a reason, the actor and source typed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RollbackForm {
    to: String,
    expected_head: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    actor: String,
    #[serde(default)]
    source: String,
}

/// A previewed rollback confirmed: the Book call `rollback` and `POST …/rollback`
/// make, against the head the preview was made at (409 when the book changed in
/// between, so a rollback is never appended that was not the one previewed), then
/// the book's page.
pub async fn rollback_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let name = book_name(path)?;
    let fields: RollbackForm = form(&headers, &browser, body)?;
    let to: u64 = fields
        .to
        .trim()
        .parse()
        .map_err(|_| Problem::invalid(format!("to: {:?} is not a revision", fields.to)).at("to"))?;
    let write = editor_write(&fields.actor, &fields.source, &fields.expected_head)?;
    let reason = given(Some(fields.reason));
    let book = name.clone();
    on_book(server, name, move |open| Ok(open.lock().rollback(Seq(to), reason, &write)?)).await?;
    Ok(super::redirect(&format!("/ui/books/{book}")))
}

/// The write of an editor's form: the actor typed (default [`DEFAULT_EDITOR`]), the
/// source typed (default: the use case's), against the head the form was read at.
fn editor_write(actor: &str, source: &str, expected_head: &str) -> Result<book::WriteOptions, Problem> {
    let expected = expected_head.trim().parse::<u64>().map_err(|_| {
        Problem::invalid(format!("expected_head: {expected_head:?} is not a revision")).at("expected_head")
    })?;
    let actor = given(Some(actor.to_owned())).unwrap_or_else(|| DEFAULT_EDITOR.to_owned());
    Ok(write_options(book::Actor::Named(actor), given(Some(source.to_owned())), Some(expected)))
}

/// The new-term form posted (`/ui/books/{book}/glossary/new`): `step=preview` shows
/// the put, the snapshot it would make and the chunks it would re-open, writing
/// nothing; `step=save` puts it against the head the form was read at, then shows the
/// new term.
pub async fn term_new(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let name = book_name(path)?;
    let fields: TermForm = form(&headers, &browser, body)?;
    let chrome = chrome(&server, &browser);
    let written = term_new_step(server, &chrome, &name, &fields).await;
    written.or_else(|problem| {
        refused(problem, TERM_INPUTS, |refusal| html::term_form_refused(&chrome, &name, None, &fields, refusal))
    })
}

async fn term_new_step(
    server: Arc<Server>,
    chrome: &Chrome,
    name: &str,
    fields: &TermForm,
) -> Result<Response, Problem> {
    let id = given(Some(fields.id.clone())).map(|id| record_id(&id, "id")).transpose()?;
    let edit = fields.edit()?;
    let write = editor_write(&fields.actor, &fields.source, &fields.expected_head)?;
    match fields.step.as_str() {
        "preview" => {
            let (put, what_if) =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().term_create_what_if(id, &edit, &write)?))
                    .await?;
            Ok(Page::ok(html::new_term_preview(chrome, name, fields, &put, &what_if)).into_response())
        }
        "save" => {
            let written =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().term_create(id, &edit, &write)?)).await?;
            let created = written.submitted.decision.events.iter().find_map(|event| match &event.body {
                Body::TermPut(put) => Some(put.id),
                _ => None,
            });
            let location = match created {
                Some(id) => format!("/ui/books/{name}/terms/{id}"),
                None => format!("/ui/books/{name}/glossary"),
            };
            Ok(super::redirect(&location))
        }
        other => Err(Problem::invalid(format!("step: {other:?} is not preview or save")).at("step")),
    }
}

/// The fields of a term's action forms (retire, revive, add or remove an alias): the
/// action's own (`reason`; `surface`, `kind`, `since`, `until`), the write's actor
/// and source, the head the page was read at, and the step: `preview` or `save`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionForm {
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub surface: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub since: String,
    #[serde(default)]
    pub until: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub source: String,
    pub expected_head: String,
    pub step: String,
}

impl ActionForm {
    /// The action `name` with this form's fields.
    fn action(&self, name: &str) -> Result<book::TermAction, Problem> {
        let chapter = |field: &str, text: &str| -> Result<Option<u32>, Problem> {
            match text.trim() {
                "" => Ok(None),
                text => text
                    .parse()
                    .map(Some)
                    .map_err(|_| Problem::invalid(format!("{field}: {text:?} is not a chapter number")).at(field)),
            }
        };
        Ok(match name {
            "retire" => book::TermAction::Retire { reason: given(Some(self.reason.clone())) },
            "revive" => book::TermAction::Revive,
            "alias-add" => {
                let kind = match self.kind.trim() {
                    "" | "variant" => AliasKind::Variant,
                    "nickname" => AliasKind::Nickname,
                    "title" => AliasKind::Title,
                    "reading" => AliasKind::Reading,
                    other => {
                        return Err(Problem::invalid(format!(
                            "kind: {other:?} is not variant, nickname, title or reading"
                        ))
                        .at("kind"))
                    }
                };
                let window = match (chapter("since", &self.since)?, chapter("until", &self.until)?) {
                    (None, None) => None,
                    (since, until) => Some(Window { since: since.unwrap_or(1), until }),
                };
                book::TermAction::AliasAdd { surface: self.surface.trim().to_owned(), kind, window }
            }
            "alias-remove" => book::TermAction::AliasRemove { surface: self.surface.clone() },
            other => return Err(Problem::not_found(format!("no term action {other:?}"))),
        })
    }
}

/// A term's action form posted (`…/terms/{id}/retire`, `revive`, `alias-add`,
/// `alias-remove`): `step=preview` shows the events it would append, the snapshot it
/// would make and the chunks it would re-open, writing nothing; `step=save` writes
/// them against the head the form was read at (409 when another write came first).
pub async fn term_action(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<(String, String, String)>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let (name, id, action_name) = book_record_action(path)?;
    let fields: ActionForm = form(&headers, &browser, body)?;
    let chrome = chrome(&server, &browser);
    let again = |problem: Problem| {
        let inputs = ["surface", "kind", "since", "until", "reason", "actor", "source"];
        refused(problem, &inputs, |refusal| html::action_refused(&chrome, &name, id, &action_name, &fields, refusal))
    };
    let action = match action_name.as_str() {
        "review" => Act::Review,
        _ => match fields.action(&action_name) {
            Ok(action) => Act::Term(action),
            Err(problem) => return again(problem),
        },
    };
    let written = term_action_step(Arc::clone(&server), &chrome, &name, id, (&action_name, action), &fields).await;
    written.or_else(again)
}

/// What a term's action form asks for: one of [`book::TermAction`], or `review`, the
/// accept verdict `review accept` writes ([`book::Book::review_accept`]: the term
/// approved and marked reviewed).
enum Act {
    Term(book::TermAction),
    Review,
}

async fn term_action_step(
    server: Arc<Server>,
    chrome: &Chrome,
    name: &str,
    id: RecordId,
    (action_name, action): (&str, Act),
    fields: &ActionForm,
) -> Result<Response, Problem> {
    let write = editor_write(&fields.actor, &fields.source, &fields.expected_head)?;
    let acceptance = book::review::Acceptance::default();
    match fields.step.as_str() {
        "preview" => {
            let what_if = on_book(server, name.to_owned(), move |open| match action {
                Act::Term(action) => Ok(open.lock().term_action_what_if(id, &action, &write)?),
                Act::Review => Ok(open.lock().review_accept_what_if(id, &acceptance, &write)?),
            })
            .await?;
            Ok(Page::ok(html::action_preview(chrome, name, id, action_name, fields, &what_if)).into_response())
        }
        "save" => {
            on_book(server, name.to_owned(), move |open| match action {
                Act::Term(action) => Ok(open.lock().term_action(id, &action, &write)?),
                Act::Review => Ok(open.lock().review_accept(id, &acceptance, &write)?),
            })
            .await?;
            Ok(super::redirect(&format!("/ui/books/{name}/terms/{id}")))
        }
        other => Err(Problem::invalid(format!("step: {other:?} is not preview or save")).at("step")),
    }
}

/// The summaries page: every active summary at the head with its form, and a form
/// for a new one; the read of its JSON twin, `GET /v1/books/{book}/glossary`.
pub async fn summaries(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    glossary_page(server, browser, path, raw, html::summaries).await
}

/// A page of the head's glossary for the full view (no query): the summaries and
/// rules pages.
async fn glossary_page(
    server: Arc<Server>,
    browser: Browser,
    path: Result<Path<String>, PathRejection>,
    raw: Option<String>,
    render: fn(&Chrome, &str, &book::reads::Glossary) -> maud::Markup,
) -> PageResult {
    let name = book_name(path)?;
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    let glossary =
        on_book(server, name.clone(), move |open| Ok(open.lock().glossary(&book::Reader::Full, None, None)?)).await?;
    page(render(&chrome, &name, &glossary))
}

/// A summary's form: its id (empty on the new-summary form: the next free number),
/// scope (`chapter:N`, `arc:A-B` or `book`), text and first chapter shown, as typed;
/// the write's actor and source, the head the form was read at, and the step:
/// `preview` or `save`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryForm {
    #[serde(default)]
    pub id: String,
    pub scope: String,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub visible_from: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub source: String,
    pub expected_head: String,
    pub step: String,
}

impl SummaryForm {
    /// The summary's id (none: the next free) and the fields `summary put` takes.
    fn put(&self) -> Result<(Option<RecordId>, book::SummaryFields), Problem> {
        let id = given(Some(self.id.clone())).map(|id| record_id(&id, "id")).transpose()?;
        let scope = book::service::parse_scope(self.scope.trim())?;
        let visible_from = match self.visible_from.trim() {
            "" => None,
            text => Some(text.parse().map_err(|_| {
                Problem::invalid(format!("visible_from: {text:?} is not a chapter number")).at("visible_from")
            })?),
        };
        Ok((id, book::SummaryFields { scope, text: self.text.trim().to_owned(), visible_from }))
    }
}

/// A summary's form posted (`/ui/books/{book}/summaries/put`): `step=preview` shows
/// what the put would change, the snapshot it would make and the chunks it would
/// re-open, writing nothing (`Book::summary_put_what_if`); `step=save` puts it
/// against the head the form was read at (`Book::summary_put`, 409 when another
/// write came first), then shows the summaries. A refused form comes back as typed.
pub async fn summary_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let name = book_name(path)?;
    let fields: SummaryForm = form(&headers, &browser, body)?;
    let chrome = chrome(&server, &browser);
    let written = summary_step(server, &chrome, &name, &fields).await;
    written.or_else(|problem| {
        let inputs = ["id", "scope", "text", "visible_from", "actor", "source"];
        refused(problem, &inputs, |refusal| html::summary_refused(&chrome, &name, &fields, refusal))
    })
}

async fn summary_step(
    server: Arc<Server>,
    chrome: &Chrome,
    name: &str,
    fields: &SummaryForm,
) -> Result<Response, Problem> {
    let (id, put) = fields.put()?;
    let write = editor_write(&fields.actor, &fields.source, &fields.expected_head)?;
    match fields.step.as_str() {
        "preview" => {
            let (current, summary, what_if) =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().summary_put_what_if(id, &put, &write)?))
                    .await?;
            let preview = html::summary_preview(chrome, name, fields, current.as_ref(), &summary, &what_if);
            Ok(Page::ok(preview).into_response())
        }
        "save" => {
            let written =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().summary_put(id, &put, &write)?)).await?;
            let put = written.submitted.decision.events.iter().find_map(|event| match &event.body {
                Body::SummaryPut(put) => Some(put.id.to_string()),
                _ => None,
            });
            Ok(super::redirect(&format!("/ui/books/{name}/summaries#{}", put.unwrap_or_default())))
        }
        other => Err(Problem::invalid(format!("step: {other:?} is not preview or save")).at("step")),
    }
}

/// The rules page: every active rule at the head with its form, and a form for a
/// new one; the read of its JSON twin, `GET /v1/books/{book}/glossary`.
pub async fn rules(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    glossary_page(server, browser, path, raw, html::rules).await
}

/// A rule's form: its id (empty on the new-rule form: the next free number), text,
/// selectors (`applies_to`, `does_not_apply_to`, as `book::service::parse_selectors`
/// reads them; `does_not_apply_to` empty is not declared, `none` declares none),
/// window, status and priority, as typed; the write's actor and source, the head the
/// form was read at, and the step: `preview` or `save`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleForm {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub applies_to: String,
    #[serde(default)]
    pub does_not_apply_to: String,
    pub since: String,
    #[serde(default)]
    pub until: String,
    pub status: String,
    pub priority: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub source: String,
    pub expected_head: String,
    pub step: String,
}

impl RuleForm {
    /// The rule's id (none: the next free) and the fields of its put.
    fn put(&self) -> Result<(Option<RecordId>, book::RuleFields), Problem> {
        let id = given(Some(self.id.clone())).map(|id| record_id(&id, "id")).transpose()?;
        let number = |name: &str, text: &str| -> Result<u32, Problem> {
            text.trim()
                .parse()
                .map_err(|_| Problem::invalid(format!("{name}: {text:?} is not a chapter number")).at(name))
        };
        let until = match self.until.trim() {
            "" => None,
            text => Some(number("until", text)?),
        };
        let status =
            serde_json::from_value(serde_json::Value::String(self.status.trim().to_owned())).map_err(|_| {
                Problem::invalid(format!("status: {:?} is not approved, auto or draft", self.status)).at("status")
            })?;
        let priority =
            self.priority.trim().parse().map_err(|_| {
                Problem::invalid(format!("priority: {:?} is not an integer", self.priority)).at("priority")
            })?;
        let does_not_apply_to = match self.does_not_apply_to.trim() {
            "" => None,
            "none" => Some(Vec::new()),
            text => Some(book::service::parse_selectors(text, "does_not_apply_to")?),
        };
        Ok((
            id,
            book::RuleFields {
                text: self.text.trim().to_owned(),
                applies_to: book::service::parse_selectors(&self.applies_to, "applies_to")?,
                does_not_apply_to,
                window: Window { since: number("since", &self.since)?, until },
                status,
                priority,
            },
        ))
    }
}

/// A rule's form posted (`/ui/books/{book}/rules/put`): `step=preview` shows what the
/// put would change, the snapshot it would make and the chunks it would re-open,
/// writing nothing (`Book::rule_put_what_if`); `step=save` puts it against the head
/// the form was read at (`Book::rule_put`, 409 when another write came first), then
/// shows the rules. A refused form comes back as typed.
pub async fn rule_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let name = book_name(path)?;
    let fields: RuleForm = form(&headers, &browser, body)?;
    let chrome = chrome(&server, &browser);
    let written = rule_step(server, &chrome, &name, &fields).await;
    written.or_else(|problem| {
        let inputs = [
            "id",
            "text",
            "applies_to",
            "does_not_apply_to",
            "since",
            "until",
            "status",
            "priority",
            "actor",
            "source",
        ];
        refused(problem, &inputs, |refusal| html::rule_refused(&chrome, &name, &fields, refusal))
    })
}

async fn rule_step(server: Arc<Server>, chrome: &Chrome, name: &str, fields: &RuleForm) -> Result<Response, Problem> {
    let (id, put) = fields.put()?;
    let write = editor_write(&fields.actor, &fields.source, &fields.expected_head)?;
    match fields.step.as_str() {
        "preview" => {
            let (current, rule, what_if) =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().rule_put_what_if(id, &put, &write)?))
                    .await?;
            Ok(Page::ok(html::rule_preview(chrome, name, fields, current.as_ref(), &rule, &what_if)).into_response())
        }
        "save" => {
            let written =
                on_book(server, name.to_owned(), move |open| Ok(open.lock().rule_put(id, &put, &write)?)).await?;
            let put = written.submitted.decision.events.iter().find_map(|event| match &event.body {
                Body::RulePut(put) => Some(put.id.to_string()),
                _ => None,
            });
            Ok(super::redirect(&format!("/ui/books/{name}/rules#{}", put.unwrap_or_default())))
        }
        other => Err(Problem::invalid(format!("step: {other:?} is not preview or save")).at("step")),
    }
}

/// The import page: a form that uploads a glossary file of any supported format.
pub async fn import_page(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = book_name(path)?;
    Query::parse(raw, &[])?;
    let chrome = chrome(&server, &browser);
    page(html::import(&chrome, &name))
}

/// The fields of an import form (`multipart/form-data`): the file (`file`, or, from
/// a dry run's confirmation, `content` in base64 with its `name`), `format` (empty:
/// detected), `strict`, `actor`, `expected_head` (the confirmation's), and the step:
/// `preview` (a dry run) or `import`.
#[derive(Default)]
struct ImportForm {
    name: String,
    bytes: Vec<u8>,
    format: Option<formats::Format>,
    strict: bool,
    actor: Option<String>,
    expected_head: Option<u64>,
    step: String,
}

async fn import_form(
    headers: &HeaderMap,
    browser: &Browser,
    mut multipart: axum::extract::Multipart,
) -> Result<ImportForm, Problem> {
    let bad = |detail: String| Problem::invalid(format!("form: {detail}"));
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut file: Option<(String, Vec<u8>)> = None;
    while let Some(field) = multipart.next_field().await.map_err(|error| bad(error.body_text()))? {
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" {
            if file.is_some() {
                return Err(Problem::invalid("form field \"file\" is given twice").at("file"));
            }
            let file_name = field.file_name().unwrap_or("upload").to_owned();
            let bytes = field.bytes().await.map_err(|error| bad(error.body_text()))?;
            file = Some((file_name, bytes.to_vec()));
        } else {
            let text = field.text().await.map_err(|error| bad(error.body_text()))?;
            texts.push((name, text));
        }
    }
    let tokens: Vec<&str> = texts.iter().filter(|(name, _)| name == "csrf").map(|(_, value)| value.as_str()).collect();
    posted_here(headers, browser, &tokens)?;
    let mut form = ImportForm::default();
    let mut content: Option<String> = None;
    let mut seen = std::collections::BTreeSet::new();
    for (name, text) in texts.into_iter().filter(|(name, _)| name != "csrf") {
        if !seen.insert(name.clone()) {
            return Err(Problem::invalid(format!("form field {name:?} is given twice")).at(name));
        }
        match name.as_str() {
            "name" => form.name = text,
            "content" => content = Some(text),
            "format" if text.trim().is_empty() => {}
            "format" => {
                form.format = Some(formats::Format::from_name(text.trim()).ok_or_else(|| {
                    Problem::invalid(format!("format: unknown format {:?}", text.trim())).at("format")
                })?)
            }
            "strict" => form.strict = matches!(text.as_str(), "on" | "true"),
            "actor" => form.actor = given(Some(text)),
            "expected_head" => {
                form.expected_head = Some(text.trim().parse().map_err(|_| {
                    Problem::invalid(format!("expected_head: {text:?} is not a revision")).at("expected_head")
                })?)
            }
            "step" => form.step = text,
            other => return Err(Problem::invalid(format!("form field {other:?} is not known here")).at(other)),
        }
    }
    match (file, content) {
        (Some((name, bytes)), None) if !bytes.is_empty() || !name.is_empty() => {
            form.name = name;
            form.bytes = bytes;
        }
        (None, Some(content)) => {
            use base64::Engine as _;
            form.bytes = base64::engine::general_purpose::STANDARD
                .decode(content.trim())
                .map_err(|error| Problem::invalid(format!("content: not base64: {error}")).at("content"))?;
        }
        (Some(_), Some(_)) => {
            return Err(Problem::invalid("form: a file and a content, only one may be sent").at("file"))
        }
        _ => return Err(Problem::invalid("file: choose a glossary file to import").at("file")),
    }
    if form.name.trim().is_empty() {
        form.name = "upload".to_owned();
    }
    Ok(form)
}

/// An import form posted: `step=preview` makes the dry run and shows its report, the
/// chunks the import would re-open and a confirmation that carries the same file;
/// `step=import` imports it (against the head the dry run was made at, when the
/// confirmation names it) and shows the report. The same Book call as `import` and
/// `POST …/import`.
pub async fn import_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    Extension(jobs): Extension<Arc<Jobs>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    multipart: Result<axum::extract::Multipart, axum::extract::multipart::MultipartRejection>,
) -> PageResult {
    let name = book_name(path)?;
    let multipart = multipart.map_err(|rejection| Problem::invalid(format!("form: {}", rejection.body_text())))?;
    let form = import_form(&headers, &browser, multipart).await?;
    let dry_run = match form.step.as_str() {
        "preview" => true,
        "import" => false,
        other => return Err(Problem::invalid(format!("step: {other:?} is not preview or import")).at("step").into()),
    };
    let options = book::ImportOptions {
        format: form.format,
        strict: form.strict,
        dry_run,
        actor: form.actor.clone(),
        expect_head: form.expected_head.map(Seq),
        recorded_at_ms: crate::http::routes::now_ms(),
        source_lang: None,
        target_lang: None,
    };
    let chrome = chrome(&server, &browser);
    let (file, bytes) = (form.name.clone(), form.bytes.clone());
    if !dry_run {
        // The import itself is a job: the browser follows it on its page.
        let job = start_job(&server, &jobs, &name, Work::Import { file: file.clone() }).await?;
        run_job(server, Arc::clone(&job), move |open, job| {
            match open
                .lock()
                .import_with_progress(&file, &bytes, &options, |phase| job.advance(Progress::Import(phase)))
            {
                Ok(report) => Ok(Outcome::Imported(Box::new(report))),
                Err(error) => Err(error.into()),
            }
        });
        return Ok(super::redirect(&job_url(&name, job.id)));
    }
    let report = on_book(server, name.clone(), move |open| Ok(open.lock().import(&file, &bytes, &options)?)).await?;
    page(html::import_report(&chrome, &name, &report, dry_run, &form.bytes, form.strict, form.actor.as_deref()))
}

// ----- jobs -----

fn job_url(book: &str, id: u64) -> String {
    format!("/ui/books/{book}/jobs/{id}")
}

/// Starts a job of `work` on book `name`, which must exist (404 else): 409 when a
/// job runs on it.
async fn start_job(server: &Arc<Server>, jobs: &Jobs, name: &str, work: Work) -> Result<Arc<Job>, Problem> {
    on_book(Arc::clone(server), name.to_owned(), |_| Ok(())).await?;
    jobs.start(name, work, crate::http::routes::now_ms())
}

/// Runs `work` on the job's book on the blocking pool, outside any request, and
/// ends the job with its outcome, or with the problem it failed with (a request
/// would have answered the same). A job whose work panics ends as failed.
fn run_job(
    server: Arc<Server>,
    job: Arc<Job>,
    work: impl FnOnce(&book::library::OpenBook, &Job) -> Result<Outcome, Problem> + Send + 'static,
) {
    struct Ending(Arc<Job>);
    impl Drop for Ending {
        fn drop(&mut self) {
            // Only when the work did not end the job: it panicked.
            if matches!(*self.0.state(), jobs::State::Running(_)) {
                self.0.end(Outcome::Failed(Problem::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "io",
                    "the job's worker failed".to_owned(),
                )));
            }
        }
    }
    tokio::task::spawn_blocking(move || {
        let ending = Ending(Arc::clone(&job));
        let outcome = server.library.open(&job.book).map_err(Problem::from).and_then(|open| work(&open, &job));
        job.end(outcome.unwrap_or_else(|problem| Outcome::Failed(in_library(&server, problem))));
        drop(ending);
    });
}

/// The verify form posted (`/ui/books/{book}/verify`): starts a verify of the book
/// as a job, and sends the browser to its page.
pub async fn verify_write(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    Extension(jobs): Extension<Arc<Jobs>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let name = book_name(path)?;
    let _: VerifyForm = form(&headers, &browser, body)?;
    let job = start_job(&server, &jobs, &name, Work::Verify).await?;
    run_job(server, Arc::clone(&job), |open, job| {
        let verified = open.lock().verify_with_progress(|phase| job.advance(Progress::Verify(phase)));
        Ok(Outcome::Verified(verified.map_err(|error| error.to_string())))
    });
    Ok(super::redirect(&job_url(&name, job.id)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyForm {}

/// A job's page (`/ui/books/{book}/jobs/{id}`): what it does and how far it is,
/// refreshing itself each second while it runs; when it has ended, what a request
/// would have answered: an import's report, a verify's outcome, or the problem it
/// was refused with (with its status).
pub async fn job(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    Extension(jobs): Extension<Arc<Jobs>>,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let (name, id) = book_and::<String>(path, "job id")?;
    Query::parse(raw, &[])?;
    let id: u64 = id.parse().map_err(|_| Problem::invalid(format!("job id: {id:?} is not a number")).at("id"))?;
    let job = jobs.get(&name, id)?;
    let chrome = chrome(&server, &browser);
    let state = job.state();
    match &*state {
        jobs::State::Running(progress) => page(html::job_running(&chrome, &job, progress)),
        jobs::State::Ended(Outcome::Imported(report)) => {
            page(html::import_report(&chrome, &name, report, false, &[], false, None))
        }
        jobs::State::Ended(Outcome::Verified(verified)) => page(html::verified(&chrome, &job, verified)),
        jobs::State::Ended(Outcome::Failed(problem)) => Ok(html::error_page(problem).into_response()),
    }
}

// ----- login and logout -----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginForm {
    token: String,
    next: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogoutForm {}

pub async fn login_form(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let query = Query::parse(raw, &["next"])?;
    let next = super::safe_next(query.text("next"));
    if server.tokens.is_empty() {
        // Nothing to log in to.
        return Ok(super::redirect(&next));
    }
    page(html::login(&chrome(&server, &browser), &next, false))
}

pub async fn login(
    State(server): Shared,
    Extension(browser): Extension<Browser>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let fields: LoginForm = form(&headers, &browser, body)?;
    let next = super::safe_next(fields.next.as_deref());
    if server.tokens.is_empty() {
        return Ok(super::redirect(&next));
    }
    use subtle::ConstantTimeEq;
    let given = fields.token.trim().as_bytes();
    let mut matched = None;
    for token in super::full_view_tokens(&server) {
        if bool::from(given.ct_eq(token)) {
            matched = Some(token.to_vec());
        }
    }
    let Some(token) = matched else {
        // A wrong token, or one that reads as a party: the pages show the full view.
        let mut page = Page::ok(html::login(&chrome(&server, &browser), &next, true));
        page.status = StatusCode::UNAUTHORIZED;
        return Ok(page.into_response());
    };
    let mut response = super::redirect(&next);
    if let Ok(cookie) = HeaderValue::from_str(&super::session_cookie(&browser, &token)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

pub async fn logout(
    Extension(browser): Extension<Browser>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> PageResult {
    let LogoutForm {} = form(&headers, &browser, body)?;
    let mut response = super::redirect("/ui/login");
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_static(super::expired_cookie()));
    Ok(response)
}
