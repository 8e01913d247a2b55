//! The audit page: server-rendered HTML under `/ui/`, served by `lorebank serve`
//! beside the API (docs/ui.md).
//!
//! An adapter like the API: every page parses its request, makes one Book call
//! through the same read the page's JSON twin uses (`crate::http::audit`), and
//! renders the result with maud, which escapes every value it is given. The review
//! buttons are HTML forms that make the same Book calls as the API's review routes.
//!
//! Security: no JavaScript at all, a Content-Security-Policy that allows none (and
//! styles only from `/ui/static/`), a CSRF token in every form bound to the browser
//! (a keyed hash, under a per-server random key, of a random value the browser holds
//! in an HttpOnly, SameSite=Strict cookie), checked with the request's origin on
//! every POST, and, when the server has a bearer token, the same token behind a login
//! form that sets an HttpOnly, SameSite=Strict session cookie (a keyed hash of the
//! token under a per-server random key), or the bearer header.

pub mod html;
pub mod jobs;
pub mod pages;
pub mod svg;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use subtle::ConstantTimeEq;

use crate::http::problem::Problem;
use crate::http::routes::Server;

/// The policy of every `/ui/` answer: nothing runs, nothing loads from elsewhere,
/// forms post only here, and no page can be framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The session cookie set by the login form.
pub const SESSION_COOKIE: &str = "lorebank_ui";

/// The cookie that names the browser to the CSRF check: 64 hex digits drawn by the
/// server, set on the first page a browser gets.
pub const BROWSER_COOKIE: &str = "lorebank_csrf";

/// blake3 `derive_key` context of the session cookie's value.
const SESSION_CONTEXT: &str = "lorebank 2026 ui session v1";

/// The stylesheet, compiled into the binary.
const STYLESHEET: &str = include_str!("ui.css");

/// The page icon (so a browser asks for no `/favicon.ico`).
const ICON: &str = include_str!("icon.svg");

/// The per-server secrets of the UI, drawn once when the server starts (the only
/// random numbers the server draws; nothing hashed into a book depends on them).
pub struct Keys {
    /// The key a browser's CSRF token is derived with from its cookie.
    csrf: [u8; 32],
    /// The key the session cookie's value is derived with.
    session: [u8; 32],
    /// The key browser cookies are drawn with, and how many were drawn.
    browsers: [u8; 32],
    n_browsers: AtomicU64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Keys {
    /// Draws new keys from the operating system.
    pub fn generate() -> Result<Keys, String> {
        let mut bytes = [0u8; 96];
        getrandom::fill(&mut bytes).map_err(|error| format!("cannot draw the UI's keys: {error}"))?;
        let key = |at: usize| -> [u8; 32] { bytes[at..at + 32].try_into().unwrap_or([0; 32]) };
        Ok(Keys { csrf: key(0), session: key(32), browsers: key(64), n_browsers: AtomicU64::new(0) })
    }

    /// A new browser cookie value: 64 hex digits no one without the server's keys
    /// can foresee (a keyed hash of a counter).
    fn new_browser(&self) -> String {
        let n = self.n_browsers.fetch_add(1, Ordering::Relaxed);
        hex(blake3::keyed_hash(&self.browsers, &n.to_le_bytes()).as_bytes())
    }

    /// The CSRF token of the forms served to the browser whose cookie is `browser`.
    fn csrf(&self, browser: &Browser) -> String {
        hex(blake3::keyed_hash(&self.csrf, browser.cookie.as_bytes()).as_bytes())
    }

    /// Whether `given` is the CSRF token of `browser` (constant time).
    fn csrf_holds(&self, browser: &Browser, given: &str) -> bool {
        bool::from(given.as_bytes().ct_eq(self.csrf(browser).as_bytes()))
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
pub fn router(server: &Arc<Server>, keys: Arc<Keys>) -> Router<Arc<Server>> {
    let pages = Router::new()
        .route("/ui", get(pages::library))
        .route("/ui/", get(pages::library))
        .route("/ui/books/{book}", get(pages::book))
        .route("/ui/books/{book}/chapters/{chapter}", get(pages::chapter))
        .route("/ui/books/{book}/terms/{id}", get(pages::term))
        .route("/ui/books/{book}/terms/{id}/edit", post(pages::term_write))
        .route("/ui/books/{book}/terms/{id}/actions/{action}", post(pages::term_action))
        .route("/ui/books/{book}/events/{seq}", get(pages::event))
        .route("/ui/books/{book}/diff", get(pages::diff))
        .route("/ui/books/{book}/rollback", get(pages::rollback).post(pages::rollback_write))
        .route("/ui/books/{book}/review", get(pages::review))
        .route("/ui/books/{book}/glossary", get(pages::glossary))
        .route("/ui/books/{book}/glossary/new", post(pages::term_new))
        .route("/ui/books/{book}/summaries", get(pages::summaries))
        .route("/ui/books/{book}/summaries/put", post(pages::summary_write))
        .route("/ui/books/{book}/rules", get(pages::rules))
        .route("/ui/books/{book}/rules/put", post(pages::rule_write))
        .route("/ui/books/{book}/import", get(pages::import_page).post(pages::import_write))
        .route("/ui/books/{book}/verify", post(pages::verify_write))
        .route("/ui/books/{book}/jobs/{id}", get(pages::job))
        .route("/ui/books/{book}/review/{id}/{action}", post(pages::review_write))
        .route("/ui/logout", post(pages::logout))
        .route_layer(middleware::from_fn_with_state(Arc::clone(server), gate));
    let forms = Router::new()
        .route("/ui/login", get(pages::login_form).post(pages::login))
        .merge(pages)
        .route_layer(middleware::from_fn(browser));
    Router::new()
        .route("/ui/static/ui.css", get(stylesheet))
        .route("/ui/static/icon.svg", get(icon))
        .merge(forms)
        .layer(middleware::from_fn(secure))
        .layer(Extension(keys))
        .layer(Extension(Arc::new(jobs::Jobs::default())))
}

/// The browser a page is served to, as its [`BROWSER_COOKIE`] names it: the CSRF
/// token of its forms is derived from it, so a page served to one browser is no key
/// for another.
#[derive(Clone)]
pub struct Browser {
    cookie: String,
    keys: Arc<Keys>,
}

impl Browser {
    /// The CSRF token of the forms served to this browser.
    pub fn csrf(&self) -> String {
        self.keys.csrf(self)
    }

    /// Whether `given` is this browser's CSRF token (constant time).
    pub fn csrf_holds(&self, given: &str) -> bool {
        self.keys.csrf_holds(self, given)
    }
}

/// Names the browser of every page and form: the value of its cookie, or a new one,
/// set on the answer. The handlers get it as an extension.
async fn browser(Extension(keys): Extension<Arc<Keys>>, mut request: Request, next: Next) -> Response {
    let known = cookie(request.headers(), BROWSER_COOKIE)
        .filter(|value| value.len() == 64 && value.bytes().all(|byte| byte.is_ascii_hexdigit()))
        .map(str::to_owned);
    let (browser, new) = match known {
        Some(cookie) => (Browser { cookie, keys }, false),
        None => (Browser { cookie: keys.new_browser(), keys }, true),
    };
    request.extensions_mut().insert(browser.clone());
    let mut response = next.run(request).await;
    if new {
        let cookie = format!("{BROWSER_COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict", browser.cookie);
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
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
    // Not `no-referrer`: under it a browser sends `Origin: null` with a page's own
    // forms, which the origin check refuses. `same-origin` still tells no other site
    // which page linked to it.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
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
pub fn authorized(server: &Server, keys: &Keys, headers: &HeaderMap) -> bool {
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
        let expected = keys.session_value(token);
        matched |= session.is_some_and(|given| bool::from(given.as_bytes().ct_eq(expected.as_bytes())));
    }
    matched
}

/// The `Set-Cookie` value that logs a client in with `token`.
fn session_cookie(browser: &Browser, token: &[u8]) -> String {
    format!("{SESSION_COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict", browser.keys.session_value(token))
}

/// The `Set-Cookie` value that logs a client out.
fn expired_cookie() -> &'static str {
    "lorebank_ui=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0"
}

/// Pages need the server's auth: a page asked for without it sends the browser to
/// the login form (which comes back here), a form posted without it is refused.
async fn gate(
    State(server): State<Arc<Server>>,
    Extension(keys): Extension<Arc<Keys>>,
    request: Request,
    next: Next,
) -> Response {
    if authorized(&server, &keys, request.headers()) {
        // Every page reads the book's full view: the same rule as the API's.
        let refused = match crate::http::asked_party(request.headers()) {
            Ok(None) => None,
            Ok(Some(_)) => Some(crate::http::party_refused(request.method().as_str(), request.uri().path())),
            Err(problem) => Some(problem),
        };
        if let Some(problem) = refused {
            return html::error_page(&problem).into_response();
        }
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
/// never another host. The path is normalised as a browser resolves it (`.` and
/// `..` segments, `%2e` spelled either way, are resolved) before it is judged, so
/// `/ui/../v1/books` is no way out; anything else goes to `/ui/`.
pub fn safe_next(next: Option<&str>) -> String {
    let fallback = || "/ui/".to_owned();
    let Some(next) = next else { return fallback() };
    let (path, query) = match next.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (next, None),
    };
    let lower = path.to_ascii_lowercase();
    if !path.starts_with('/')
        || path.contains("//")
        || path.contains('\\')
        // An encoded slash or backslash is one to whoever decodes it.
        || lower.contains("%2f")
        || lower.contains("%5c")
        || !next.bytes().all(|b| b.is_ascii_graphic())
    {
        return fallback();
    }
    let mut segments: Vec<&str> = Vec::new();
    let mut ends_in_dot = false;
    for segment in path[1..].split('/') {
        ends_in_dot = true;
        match segment.to_ascii_lowercase().replace("%2e", ".").as_str() {
            "." => {}
            ".." => {
                segments.pop();
            }
            _ => {
                segments.push(segment);
                ends_in_dot = false;
            }
        }
    }
    if ends_in_dot {
        segments.push("");
    }
    let normal = format!("/{}", segments.join("/"));
    if normal != "/ui" && !normal.starts_with("/ui/") {
        return fallback();
    }
    match query {
        Some(query) => format!("{normal}?{query}"),
        None => normal,
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

    #[test]
    fn a_login_resolves_dot_segments_before_it_judges_the_path() {
        for escaping in [
            "/ui/../v1/books",
            "/ui/%2e%2e/v1/books",
            "/ui/%2E%2e/v1/books",
            "/ui/.%2E/v1/books",
            "/ui/books/../../v1/books?x=1",
            "/ui/./../v1",
            "/ui/..",
            "/ui/%2fv1",
            "/ui/%5Cv1",
        ] {
            assert_eq!(safe_next(Some(escaping)), "/ui/", "{escaping}");
        }
        assert_eq!(safe_next(Some("/ui/books/a/../b?x=..")), "/ui/books/b?x=..");
        assert_eq!(safe_next(Some("/ui/books/./a")), "/ui/books/a");
        assert_eq!(safe_next(Some("/ui/books/..")), "/ui/");
        assert_eq!(safe_next(Some("/ui/books/%E7%81%AF")), "/ui/books/%E7%81%AF");
    }
}
