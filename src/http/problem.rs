//! Errors as RFC 9457 problem details (`application/problem+json`), one stable
//! `type` per class: the classes of the CLI's exit codes, and the few only a server
//! has (docs/http.md lists them).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use book::{BookError, ErrorClass};
use serde::Serialize;

/// The media type of a problem.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// One failed request.
#[derive(Debug)]
pub struct Problem {
    pub status: StatusCode,
    /// The write was stale in a replicated library (another node wrote first, and
    /// nothing of it was written): the server runs the request again.
    pub stale: bool,
    /// The class: `invalid`, `not-found`, `conflict`, `corrupted`, `io`, `busy`,
    /// `too-large`, `timeout`, `unauthorized`, `method-not-allowed`,
    /// `embedding-unavailable`, and the proxy's `chunk-not-found`,
    /// `upstream-unavailable`, `upstream-timeout`.
    pub kind: &'static str,
    pub detail: String,
    /// The event, line or field the problem names, when it names one.
    pub at: Option<String>,
    /// The field of the request a refused write names, as the book names it
    /// (`term_put.window.until`, [`BookError::field`]), for a form to point at; not
    /// part of the answer's body.
    pub field: Option<String>,
}

/// The body of a problem (the OpenAPI schema `Problem`).
#[derive(Serialize, utoipa::ToSchema)]
pub struct ProblemBody {
    /// `urn:lorebank:problem:<class>`, stable per class.
    #[serde(rename = "type")]
    pub kind: String,
    /// The class in words.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong, naming the field, line or event.
    pub detail: String,
    /// The event, line or field named, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The CLI's exit code for the same failure, when the class has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
}

fn title(kind: &str) -> &'static str {
    match kind {
        "invalid" => "Invalid request; nothing was written",
        "not-found" => "No such resource",
        "conflict" => "Conflict with the book's current state; nothing was written",
        "corrupted" => "The book failed an integrity check",
        "io" => "The book's storage failed",
        "busy" => "The book or the server is busy; retry later",
        "unavailable" => {
            "The library's replicated log did not answer in time; retry (a write with the same Idempotency-Key)"
        }
        "too-large" => "The request is over a limit",
        "timeout" => "The request took longer than the server's limit",
        "unauthorized" => "A valid bearer token is required",
        "forbidden" => "Not allowed for this caller; nothing was written",
        "method-not-allowed" => "Method not allowed on this resource",
        "embedding-unavailable" => "Embedding cannot run on this server; nothing was written",
        "chunk-not-found" => "No chunk of the book's source text was found in the request; nothing was sent upstream",
        "upstream-unavailable" => "The upstream model server could not be reached; nothing was recorded",
        "upstream-timeout" => "The upstream model server did not answer in time; nothing was recorded",
        _ => "Error",
    }
}

fn exit_code(kind: &str) -> Option<u8> {
    match kind {
        "io" => Some(1),
        "invalid" | "not-found" | "too-large" | "forbidden" | "embedding-unavailable" => Some(2),
        "corrupted" => Some(3),
        "conflict" => Some(5),
        _ => None,
    }
}

impl Problem {
    pub fn new(status: StatusCode, kind: &'static str, detail: impl Into<String>) -> Problem {
        Problem { status, kind, detail: detail.into(), at: None, field: None, stale: false }
    }

    pub fn invalid(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, "invalid", detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::NOT_FOUND, "not-found", detail)
    }

    /// A request body over the server's limit (`--body-limit`), of `limit` bytes when
    /// the caller knows it; otherwise the router's middleware (`serve::declared`)
    /// names the limit in the answer.
    pub fn body_too_large(limit: Option<usize>) -> Problem {
        let detail = match limit {
            Some(limit) => format!("{BODY_TOO_LARGE} of {limit} bytes (--body-limit)"),
            None => BODY_TOO_LARGE.to_owned(),
        };
        Problem::new(StatusCode::PAYLOAD_TOO_LARGE, "too-large", detail)
    }

    pub fn at(mut self, at: impl Into<String>) -> Problem {
        self.at = Some(at.into());
        self
    }
}

impl From<BookError> for Problem {
    fn from(error: BookError) -> Problem {
        let detail = error.to_string();
        let field = error.field();
        let at = match &error {
            BookError::RejectedAt { label, .. } => Some(label.clone()),
            BookError::InvalidField { field, .. } => Some((*field).to_owned()),
            _ => None,
        };
        let stale = matches!(
            &error,
            BookError::Append(ledger::AppendError::Gate(refusal)) if refusal.kind == ledger::GateRefusalKind::Stale
        ) || matches!(&error, BookError::Append(ledger::AppendError::NotAtHead { .. }));
        let (status, kind) = match &error {
            BookError::NoBook(_) => (StatusCode::NOT_FOUND, "not-found"),
            BookError::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "too-large"),
            BookError::Append(ledger::AppendError::Gate(refusal))
                if refusal.kind == ledger::GateRefusalKind::Unavailable =>
            {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            BookError::NotFound { .. } => (StatusCode::NOT_FOUND, "not-found"),
            BookError::Open(ledger::OpenError::Exists { .. }) => (StatusCode::CONFLICT, "conflict"),
            BookError::Open(ledger::OpenError::Busy { .. } | ledger::OpenError::InUse { .. }) => {
                (StatusCode::SERVICE_UNAVAILABLE, "busy")
            }
            _ => match error.class() {
                ErrorClass::Invalid => (StatusCode::BAD_REQUEST, "invalid"),
                ErrorClass::Conflict => (StatusCode::CONFLICT, "conflict"),
                ErrorClass::Corrupt => (StatusCode::INTERNAL_SERVER_ERROR, "corrupted"),
                ErrorClass::Storage => (StatusCode::INTERNAL_SERVER_ERROR, "io"),
                // Replays answer 200 with `identical: false`; this is never produced.
                ErrorClass::ReplayMismatch => (StatusCode::CONFLICT, "mismatch"),
            },
        };
        Problem { status, kind, detail, at, field, stale }
    }
}

impl From<suggest::SuggestError> for Problem {
    fn from(error: suggest::SuggestError) -> Problem {
        match error {
            suggest::SuggestError::Book(error) => error.into(),
            error if error.is_unavailable() => {
                Problem::new(StatusCode::SERVICE_UNAVAILABLE, "embedding-unavailable", error.to_string())
            }
            error => match error.class() {
                ErrorClass::Storage => Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "io", error.to_string()),
                _ => Problem::invalid(error.to_string()),
            },
        }
    }
}
const BODY_TOO_LARGE: &str = "the request body is over the server's limit";

/// Marks the answer to a body over the limit that does not name the limit yet (a
/// response extension `serve::declared` looks for; never sent).
#[derive(Clone, Copy, Debug)]
pub struct BodyTooLarge;

/// Marks the answer of a stale write in a replicated library (a response extension
/// `cluster::replicated` looks for; never sent).
#[derive(Clone, Copy, Debug)]
pub struct Stale;

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let stale = self.stale;
        let unnamed = self.status == StatusCode::PAYLOAD_TOO_LARGE && self.detail == BODY_TOO_LARGE;
        let body = ProblemBody {
            kind: format!("urn:lorebank:problem:{}", self.kind),
            title: title(self.kind).to_owned(),
            status: self.status.as_u16(),
            detail: self.detail,
            at: self.at,
            exit_code: exit_code(self.kind),
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let mut response = (self.status, bytes).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if stale {
            response.extensions_mut().insert(Stale);
        }
        if unnamed {
            response.extensions_mut().insert(BodyTooLarge);
        }
        response
    }
}
