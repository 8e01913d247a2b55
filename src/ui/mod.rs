//! The audit page: server-rendered HTML under `/ui/`, served by `lorebank serve`
//! beside the API (docs/ui.md).
//!
//! An adapter like the API: every page parses its request, makes one Book call
//! through the same read the page's JSON twin uses (`crate::serve::audit`), and
//! renders the result with maud, which escapes every value it is given. The review
//! buttons are HTML forms that make the same Book calls as the API's review routes.
//!
//! Security: no JavaScript at all, a Content-Security-Policy that allows none (and
//! styles only from `/ui/static/`), a per-server random CSRF token in every form,
//! checked on every POST, and, when the server has a bearer token, the same token
//! behind a login form that sets an HttpOnly, SameSite=Strict session cookie (a
//! keyed hash of the token under a per-server random key), or the bearer header.

pub mod html;
pub mod pages;
pub mod svg;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use subtle::ConstantTimeEq;

use crate::serve::problem::Problem;
use crate::serve::routes::Server;

/// The policy of every `/ui/` answer: nothing runs, nothing loads from elsewhere,
/// forms post only here, and no page can be framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The session cookie set by the login form.
pub const SESSION_COOKIE: &str = "lorebank_ui";

/// blake3 `derive_key` context of the session cookie's value.
const SESSION_CONTEXT: &str = "lorebank 2026 ui session v1";

/// The stylesheet, compiled into the binary.
const STYLESHEET: &str = include_str!("ui.css");

/// The page icon (so a browser asks for no `/favicon.ico`).
const ICON: &str = include_str!("icon.svg");

/// The per-server secrets of the UI, drawn once when the server starts (the only
/// random numbers the server draws; nothing hashed into a book depends on them).
pub struct Keys {
    /// The CSRF token every form carries (64 hex digits).
    csrf: String,
    /// The key the session cookie's value is derived with.
    session: [u8; 32],
}

impl Keys {
    /// Draws new keys from the operating system.
    pub fn generate() -> Result<Keys, String> {
        let mut bytes = [0u8; 64];
        getrandom::fill(&mut bytes).map_err(|error| format!("cannot draw the UI's keys: {error}"))?;
        let csrf = bytes[..32].iter().map(|byte| format!("{byte:02x}")).collect();
        let mut session = [0u8; 32];
        session.copy_from_slice(&bytes[32..]);
        Ok(Keys { csrf, session })
    }

    /// The CSRF token forms carry.
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Whether `given` is this server's CSRF token (constant time).
    pub fn csrf_holds(&self, given: &str) -> bool {
        bool::from(given.as_bytes().ct_eq(self.csrf.as_bytes()))
    }

    /// The session cookie's value for a client that showed `token`.
    fn session_value(&self, token: &[u8]) -> String {
        let mut key_material = self.session.to_vec();
        key_material.extend_from_slice(token);
        blake3::derive_key(SESSION_CONTEXT, &key_material).iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

/// Every `/ui/` route: the login form and the stylesheet for anyone, the pages
/// behind the server's auth, every answer with the security headers.
pub fn router(server: Arc<Server>) -> Router<Arc<Server>> {
    let pages = Router::new()
        .route("/ui", get(pages::library))
        .route("/ui/", get(pages::library))
        .route("/ui/books/{book}", get(pages::book))
        .route("/ui/books/{book}/chapters/{chapter}", get(pages::chapter))
        .route("/ui/books/{book}/terms/{id}", get(pages::term))
        .route("/ui/books/{book}/events/{seq}", get(pages::event))
        .route("/ui/books/{book}/diff", get(pages::diff))
        .route("/ui/books/{book}/rollback", get(pages::rollback))
        .route("/ui/books/{book}/review", get(pages::review))
        .route("/ui/books/{book}/review/{id}/{action}", post(pages::review_write))
        .route("/ui/logout", post(pages::logout))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&server), gate));
    Router::new()
        .route("/ui/login", get(pages::login_form).post(pages::login))
        .route("/ui/static/ui.css", get(stylesheet))
        .route("/ui/static/icon.svg", get(icon))
        .merge(pages)
        .layer(middleware::from_fn(secure))
}

async fn stylesheet() -> Response {
    let mut response = STYLESHEET.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/css; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
    response
}

async fn icon() -> Response {
    let mut response = ICON.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/svg+xml"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
    response
}

/// The security headers of every `/ui/` answer.
async fn secure(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    add_security_headers(response.headers_mut());
    response
}

/// Adds the security headers of a `/ui/` answer (the router's fallbacks use it too).
pub fn add_security_headers(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        // Pages carry the CSRF token and the book's contents.
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// A problem under `/ui/` (an unknown path or method) as a page.
pub fn problem_page(problem: &Problem) -> Response {
    let mut response = html::error_page(problem).into_response();
    add_security_headers(response.headers_mut());
    response
}

/// The value of cookie `name` in the request's `Cookie` headers.
fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The tokens that open the pages: those bound to no party. The pages show a book's
/// full view, so a token that reads as a party opens none of them.
pub fn full_view_tokens(server: &Server) -> impl Iterator<Item = &[u8]> {
    server.tokens.iter().filter(|token| token.party.is_none()).map(|token| token.secret.as_slice())
}

/// Whether the request carries the server's auth: no token set, a bearer token of the
/// full view, or the session cookie the login form set with one.
pub fn authorized(server: &Server, headers: &HeaderMap) -> bool {
    if server.tokens.is_empty() {
        return true;
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, given)| given.trim_start().as_bytes());
    let session = cookie(headers, SESSION_COOKIE);
    // Every token is compared, so the time taken does not say which matched.
    let mut matched = false;
    for token in full_view_tokens(server) {
        matched |= bearer.is_some_and(|given| bool::from(given.ct_eq(token)));
        let expected = server.ui.session_value(token);
        matched |= session.is_some_and(|given| bool::from(given.as_bytes().ct_eq(expected.as_bytes())));
    }
    matched
}

/// The `Set-Cookie` value that logs a client in with `token`.
fn session_cookie(server: &Server, token: &[u8]) -> String {
    format!("{SESSION_COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict", server.ui.session_value(token))
}

/// The `Set-Cookie` value that logs a client out.
fn expired_cookie() -> &'static str {
    "lorebank_ui=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0"
}

/// Pages need the server's auth: a page asked for without it sends the browser to
/// the login form (which comes back here), a form posted without it is refused.
async fn gate(State(server): State<Arc<Server>>, request: Request, next: Next) -> Response {
    if authorized(&server, request.headers()) {
        return next.run(request).await;
    }
    if request.method() == Method::GET || request.method() == Method::HEAD {
        let here = request.uri().path_and_query().map_or("/ui/", |path| path.as_str()).to_owned();
        let query = serde_urlencoded::to_string([("next", here)]).unwrap_or_default();
        return redirect(&format!("/ui/login?{query}"));
    }
    let problem = Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", "log in first: this server needs its token");
    html::error_page(&problem).into_response()
}

/// A `303 See Other` to `location` (a path of this server).
pub fn redirect(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// Where a login may send the browser back to: a path under `/ui/` of this server,
/// never another host.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if (path == "/ui" || path.starts_with("/ui/"))
                && !path.contains("//")
                && !path.contains('\\')
                && path.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            path.to_owned()
        }
        _ => "/ui/".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn a_login_only_sends_the_browser_back_into_the_ui() {
        assert_eq!(safe_next(Some("/ui/books/a?x=1")), "/ui/books/a?x=1");
        assert_eq!(safe_next(Some("/ui")), "/ui");
        for bad in
            ["https://evil.example/", "//evil.example/ui/", "/ui//evil", "/v1/books", "/ui/\\evil", "/ui/a b", ""]
        {
            assert_eq!(safe_next(Some(bad)), "/ui/", "{bad}");
        }
        assert_eq!(safe_next(None), "/ui/");
    }
}
