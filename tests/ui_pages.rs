//! The audit pages over HTTP, byte by byte (the browser test, `ui_browser`, drives
//! them in Chromium): every page answers HTML with the security headers, no script,
//! style attribute or event handler, and a JSON twin that answers; hostile record
//! fields are escaped; bad input is a precise 4xx page; a review form writes only
//! with this server's CSRF token and from its own origin; and with `--token-file`
//! the pages need the login, whose cookie opens the pages and nothing under `/v1`.

#[path = "common/serve.rs"]
mod serve;

#[path = "common/audit_book.rs"]
mod audit_book;

use serde_json::Value;
use serve::{Reply, Server};

const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; \
base-uri 'none'";

fn library() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    (dir, server)
}

/// The browser cookie the tests' pages and forms go with (the CSRF token of a page
/// is bound to it).
const BROWSER: &str = "lorebank_csrf=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

/// Another browser's cookie.
const OTHER_BROWSER: &str = "lorebank_csrf=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A page: 200, HTML, with the security headers.
fn page(server: &Server, path: &str) -> String {
    let reply = server.send("GET", path, &[("Cookie", BROWSER)], b"");
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    headers_hold(&reply, path);
    reply.text()
}

fn headers_hold(reply: &Reply, path: &str) {
    assert_eq!(reply.header("content-type"), Some("text/html; charset=utf-8"), "{path}");
    assert_eq!(reply.header("content-security-policy"), Some(CSP), "{path}");
    assert_eq!(reply.header("x-frame-options"), Some("DENY"), "{path}");
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"), "{path}");
    assert_eq!(reply.header("referrer-policy"), Some("same-origin"), "{path}");
    assert_eq!(reply.header("cache-control"), Some("no-store"), "{path}");
}

/// The attribute names of every tag in `html` (a small scanner: enough for markup
/// maud writes, where `<` in text is always escaped).
fn attribute_names(html: &str) -> Vec<String> {
    let mut names = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or("");
        let mut rest = tag.split_once(char::is_whitespace).map_or("", |(_, rest)| rest);
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic()) {
            rest = &rest[start..];
            let end = rest.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(rest.len());
            names.push(rest[..end].to_ascii_lowercase());
            rest = &rest[end..];
            if let Some(value) = rest.strip_prefix("=\"") {
                rest = value.split_once('"').map_or("", |(_, after)| after);
            }
        }
    }
    names
}

/// The `href` of the page's JSON link.
fn twin(html: &str) -> Option<String> {
    let at = html.find("class=\"twin\" href=\"")? + "class=\"twin\" href=\"".len();
    Some(html[at..].split('"').next()?.replace("&amp;", "&"))
}

/// The CSRF token of the page's forms.
fn csrf(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").expect("a form with a CSRF token") + "name=\"csrf\" value=\"".len();
    html[at..at + 64].to_owned()
}

/// Posts a form from the tests' browser (its cookie, unless `extra` sends one).
fn form(server: &Server, path: &str, fields: &[(&str, &str)], extra: &[(&str, &str)]) -> Reply {
    let body = serde_urlencoded::to_string(fields).unwrap();
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    if !extra.iter().any(|(name, _)| name.eq_ignore_ascii_case("cookie")) {
        headers.push(("Cookie", BROWSER));
    }
    headers.extend_from_slice(extra);
    server.send("POST", path, &headers, body.as_bytes())
}

#[test]
fn every_page_is_html_with_the_security_headers_no_script_and_a_json_twin() {
    let (_dir, server) = library();
    let bundled = audit_book::bundled(&server);
    let paths = [
        "/ui/".to_owned(),
        "/ui".to_owned(),
        "/ui/books/wuchuan".to_owned(),
        "/ui/books/wuchuan/chapters/1".to_owned(),
        "/ui/books/wuchuan/chapters/6".to_owned(),
        "/ui/books/wuchuan/chapters/40".to_owned(),
        "/ui/books/wuchuan/terms/T-2".to_owned(),
        "/ui/books/wuchuan/terms/T-7".to_owned(),
        "/ui/books/wuchuan/events/1".to_owned(),
        format!("/ui/books/wuchuan/diff?from={}&to={}", bundled.before, bundled.revised),
        format!("/ui/books/wuchuan/diff?from={}", bundled.before),
        format!("/ui/books/wuchuan/rollback?to={}", bundled.revised),
        "/ui/books/wuchuan/review".to_owned(),
        "/ui/books/wuchuan/glossary".to_owned(),
        "/ui/books/wuchuan/glossary?q=%E9%9C%A7&sort=injected&order=desc&per_page=3&page=2".to_owned(),
        "/ui/books/wuchuan/summaries".to_owned(),
        "/ui/books/wuchuan/rules".to_owned(),
    ];
    for path in &paths {
        let html = page(&server, path);
        assert!(html.starts_with("<!DOCTYPE html>"), "{path}");
        let names = attribute_names(&html);
        assert!(!names.is_empty(), "{path}: the scanner found no attributes");
        for name in &names {
            assert!(name != "style" && !name.starts_with("on"), "{path}: attribute {name}");
        }
        assert!(!html.contains("<script"), "{path}");
        let twin = twin(&html).unwrap_or_else(|| panic!("{path}: no JSON twin"));
        let answer = server.get(&twin);
        assert_eq!(answer.status, 200, "{path}: {twin}: {}", answer.text());
        assert_eq!(answer.header("content-type"), Some("application/json"), "{twin}");
    }
    // The forms alone, before anything is asked.
    for path in ["/ui/books/wuchuan/diff", "/ui/books/wuchuan/rollback"] {
        assert!(page(&server, path).contains("<form"), "{path}");
    }
    let css = server.get("/ui/static/ui.css");
    assert_eq!(css.status, 200);
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert!(!css.text().contains("@import") && !css.text().contains("http"), "the stylesheet loads nothing else");
}

#[test]
fn markup_in_records_sources_and_chunks_is_escaped_on_every_page() {
    let (_dir, server) = library();
    audit_book::hostile(&server);
    for path in [
        "",
        "/terms/T-1",
        "/chapters/1",
        "/events/2",
        "/events/4",
        "/diff?from=2&to=4",
        "/review",
        "/glossary?q=%3Cscript%3E%3Cimg",
        "/summaries",
    ] {
        let path = format!("/ui/books/hostile{path}");
        let html = page(&server, &path);
        for raw in ["<script", "<img", "<b ", "</td></tr></table>"] {
            assert!(!html.contains(raw), "{path}: {raw} unescaped");
        }
    }
    let term = page(&server, "/ui/books/hostile/terms/T-1");
    assert!(term.contains("&lt;script&gt;alert('dst')&lt;/script&gt;Ночной фонарь"), "{term}");
    assert!(term.contains("&lt;img src=x onerror=alert('note')&gt; &amp; &quot;quoted&quot;"), "{term}");
    let chapter = page(&server, "/ui/books/hostile/chapters/1");
    assert!(chapter.contains("&lt;b onmouseover=alert(1)&gt;"), "{chapter}");
    // The timeline's tooltips are text too.
    assert!(term.contains("<title>version 1 (event 2) «&lt;script&gt;"), "{term}");
}

#[test]
fn bad_input_is_a_precise_4xx_page_and_never_a_panic() {
    let (_dir, server) = library();
    let bundled = audit_book::bundled(&server);
    let head = bundled.head;
    let cases = [
        ("/ui/books/Wuchuan".to_owned(), 400, "book name"),
        ("/ui/books/nobook".to_owned(), 404, "no book named nobook"),
        ("/ui/books/wuchuan/chapters/0".to_owned(), 400, "chapters start at 1"),
        ("/ui/books/wuchuan/chapters/x".to_owned(), 400, "path (chapter)"),
        ("/ui/books/wuchuan/terms/X-1".to_owned(), 400, "invalid record id"),
        ("/ui/books/wuchuan/terms/S-1".to_owned(), 400, "is not a term"),
        ("/ui/books/wuchuan/terms/T-99".to_owned(), 404, "no events about T-99"),
        ("/ui/books/wuchuan/events/0".to_owned(), 400, "events start at 1"),
        (format!("/ui/books/wuchuan/events/{}", head + 1), 404, "the head is"),
        (format!("/ui/books/wuchuan/rollback?to={head}"), 400, "is the head"),
        ("/ui/books/wuchuan/rollback?to=0".to_owned(), 400, "revisions start at 1"),
        (format!("/ui/books/wuchuan/rollback?to={}", head + 5), 400, "after the head"),
        ("/ui/books/wuchuan/diff?from=1&to=99999".to_owned(), 400, "after the head"),
        ("/ui/books/wuchuan/diff?from=x".to_owned(), 400, "not a non-negative integer"),
        ("/ui/books/wuchuan?x=1".to_owned(), 400, "not known here"),
        ("/ui/books/wuchuan/review?done=accept".to_owned(), 400, "go together"),
        ("/ui/books/wuchuan/nothing".to_owned(), 404, "no route"),
    ];
    for (path, status, detail) in cases {
        let reply = server.get(&path);
        assert_eq!(reply.status, status, "{path}: {}", reply.text());
        headers_hold(&reply, &path);
        let html = reply.text();
        assert!(html.contains(detail), "{path}: {detail:?} not in {html}");
    }
    let reply = server.send("DELETE", "/ui/books/wuchuan", &[], b"");
    assert_eq!(reply.status, 405);
    headers_hold(&reply, "DELETE /ui/books/wuchuan");
    assert_eq!(server.info("wuchuan")["head"], head, "a page wrote something");
}

#[test]
fn a_review_form_writes_only_with_this_servers_token_from_its_own_origin() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let html = page(&server, "/ui/books/wuchuan/review");
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let reject = "/ui/books/wuchuan/review/C-1/reject";
    let other = "f".repeat(64);
    let refused = [
        (form(&server, reject, &[("csrf", &other), ("reason", "not_a_name")], &[]), 403),
        // No token, or two, is no token: 403, as docs/ui.md says, not a bad form.
        (form(&server, reject, &[("reason", "not_a_name")], &[]), 403),
        (form(&server, reject, &[("csrf", &token), ("csrf", &token), ("reason", "not_a_name")], &[]), 403),
        (form(&server, reject, &[("csrf", &token), ("reason", "x")], &[("Origin", "http://evil.example")]), 403),
        // `null` is no origin of this server (a sandboxed frame, a data: page).
        (form(&server, reject, &[("csrf", &token), ("reason", "not_a_name")], &[("Origin", "null")]), 403),
        // The token is this browser's: another browser, or none, cannot use it.
        (form(&server, reject, &[("csrf", &token), ("reason", "not_a_name")], &[("Cookie", OTHER_BROWSER)]), 403),
        (form(&server, reject, &[("csrf", &token), ("reason", "not_a_name")], &[("Cookie", "lorebank_ui=1")]), 403),
        (form(&server, reject, &[("csrf", &token), ("reason", "a"), ("reason", "b")], &[]), 400),
        (form(&server, reject, &[("csrf", &token), ("verdict", "reject")], &[]), 400),
        (form(&server, "/ui/books/wuchuan/review/C-1/delete", &[("csrf", &token)], &[]), 404),
        (form(&server, "/ui/books/wuchuan/review/X-1/reject", &[("csrf", &token)], &[]), 400),
        (form(&server, "/ui/books/wuchuan/review/C-99/accept", &[("csrf", &token), ("dst", "x")], &[]), 400),
        (form(&server, "/ui/books/wuchuan/review/C-1/accept", &[("csrf", &token), ("gender", "x")], &[]), 400),
        (form(&server, reject, &[("csrf", &token), ("reason", "Not A Code")], &[]), 400),
    ];
    for (reply, status) in refused {
        assert_eq!(reply.status, status, "{}", reply.text());
        headers_hold(&reply, reject);
    }
    assert_eq!(server.info("wuchuan")["head"], head, "a refused form wrote something");

    // From this page, with its token: written, and back to the queue.
    let origin = format!("http://{}", server.addr);
    let reply = form(
        &server,
        reject,
        &[("csrf", &token), ("reason", "not_a_name"), ("actor", "human:anna")],
        &[("Origin", &origin)],
    );
    assert_eq!(reply.status, 303, "{}", reply.text());
    let location = reply.header("location").unwrap();
    assert_eq!(location, format!("/ui/books/wuchuan/review?done=reject&id=C-1&head={}&as=human%3Aanna", head + 1));
    let notice = page(&server, location);
    assert!(notice.contains("C-1: reject written"), "{notice}");
    // The page goes on writing as the reviewer it was asked for.
    let n_forms = notice.matches("name=\"csrf\"").count();
    assert_eq!(notice.matches("name=\"actor\" value=\"human:anna\"").count(), n_forms, "every review form");
    let log = server.log("wuchuan");
    let last = log.last().unwrap();
    assert_eq!(last["actor"], "human:anna");
    assert_eq!(last["source"], "ui:review");
    assert_eq!(last["body"]["disposition_set"]["verdict"], "reject");
    // An accepted candidate leads to its new term's page.
    let accepted = server.get("/v1/books/wuchuan/review/queue").ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "candidate")
        .map(|item| item["id"].as_str().unwrap().to_owned());
    if let Some(candidate) = accepted {
        let path = format!("/ui/books/wuchuan/review/{candidate}/accept");
        let reply = form(&server, &path, &[("csrf", &token), ("dst", "Кто-то"), ("gender", "m")], &[]);
        assert_eq!(reply.status, 303, "{}", reply.text());
        let location = reply.header("location").unwrap().to_owned();
        assert!(location.starts_with("/ui/books/wuchuan/terms/T-"), "{location}");
        assert!(page(&server, &location).contains("Кто-то"));
    }
}

#[test]
fn with_a_token_file_the_pages_need_the_login_and_its_cookie_opens_nothing_else() {
    let root = tempfile::tempdir().unwrap();
    let books = root.path().join("books");
    std::fs::create_dir(&books).unwrap();
    let token = "ui-token-of-some-length";
    std::fs::write(root.path().join("token"), format!("{token}\n")).unwrap();
    let token_file = root.path().join("token");
    let mut server = Server::start(&books, &["--token-file", token_file.to_str().unwrap()]);
    server.token = Some(token.to_owned());
    server.create("a");
    server.token = None;

    // A page without auth sends the browser to the login form, which comes back.
    let reply = server.get("/ui/books/a/review");
    assert_eq!(reply.status, 303);
    assert_eq!(reply.header("location"), Some("/ui/login?next=%2Fui%2Fbooks%2Fa%2Freview"));
    let login = page(&server, "/ui/login?next=%2Fui%2Fbooks%2Fa%2Freview");
    let csrf = csrf(&login);
    assert!(login.contains("name=\"next\" value=\"/ui/books/a/review\""), "{login}");
    // The stylesheet and the login form are public; posting a form is not.
    assert_eq!(server.get("/ui/static/ui.css").status, 200);
    let reply = form(&server, "/ui/books/a/review/C-1/reject", &[("csrf", &csrf)], &[]);
    assert_eq!(reply.status, 401, "{}", reply.text());
    // Nor is starting a job, or a job's page.
    let reply = form(&server, "/ui/books/a/verify", &[("csrf", &csrf)], &[]);
    assert_eq!(reply.status, 401, "{}", reply.text());
    let reply = server.get("/ui/books/a/jobs/1");
    assert_eq!(reply.status, 303);
    assert_eq!(reply.header("location"), Some("/ui/login?next=%2Fui%2Fbooks%2Fa%2Fjobs%2F1"));

    let wrong =
        form(&server, "/ui/login", &[("csrf", &csrf), ("token", "not-the-token-at-all"), ("next", "/ui/books/a")], &[]);
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_none());
    let stale = form(&server, "/ui/login", &[("csrf", &"0".repeat(64)), ("token", token), ("next", "/ui/")], &[]);
    assert_eq!(stale.status, 403);
    // The public login page's token is its browser's: no key for another browser.
    let elsewhere = form(
        &server,
        "/ui/login",
        &[("csrf", &csrf), ("token", token), ("next", "/ui/")],
        &[("Cookie", OTHER_BROWSER)],
    );
    assert_eq!(elsewhere.status, 403, "{}", elsewhere.text());
    assert!(elsewhere.header("set-cookie").is_none_or(|cookie| !cookie.starts_with("lorebank_ui=")));
    // Dot segments, plain or percent-encoded, lead nowhere outside /ui/.
    for next in ["/ui/../v1/books", "/ui/%2e%2e/v1/books", "/ui/.%2E/v1/books"] {
        let reply = form(&server, "/ui/login", &[("csrf", &csrf), ("token", token), ("next", next)], &[]);
        assert_eq!((reply.status, reply.header("location")), (303, Some("/ui/")), "{next}");
    }
    // Back only into the UI, never elsewhere.
    let right =
        form(&server, "/ui/login", &[("csrf", &csrf), ("token", token), ("next", "https://evil.example/")], &[]);
    assert_eq!(right.status, 303);
    assert_eq!(right.header("location"), Some("/ui/"));
    let cookie = right.header("set-cookie").unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/ui"),
        "{cookie}"
    );
    assert!(!cookie.contains(token), "the cookie carries the token itself");
    let session = cookie.split(';').next().unwrap().to_owned();

    let with_cookie = |path: &str| server.send("GET", path, &[("Cookie", &session)], b"");
    assert_eq!(with_cookie("/ui/books/a").status, 200);
    let page = with_cookie("/ui/books/a").text();
    assert!(page.contains("action=\"/ui/logout\""), "a logged-in page offers to log out");
    // The cookie is no bearer token: /v1 still needs the header.
    assert_eq!(with_cookie("/v1/books").status, 401);
    let forged = server.send("GET", "/ui/books/a", &[("Cookie", "lorebank_ui=00")], b"");
    assert_eq!(forged.status, 303);
    // The bearer header opens the pages too.
    let bearer = format!("Bearer {token}");
    assert_eq!(server.send("GET", "/ui/books/a", &[("Authorization", &bearer)], b"").status, 200);

    let out = server.send(
        "POST",
        "/ui/logout",
        &[("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", &format!("{session}; {BROWSER}"))],
        format!("csrf={csrf}").as_bytes(),
    );
    assert_eq!(out.status, 303);
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
}

#[test]
fn the_pages_follow_the_apis_rules_for_the_party_header_and_confine_the_login_redirect() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    // Every page reads the full view: a party header is refused as on the API's
    // full-view routes, not ignored.
    for party in ["vendor:acme", "not a party"] {
        let api = server.send("GET", "/v1/books/wuchuan/overview", &[("Lorebank-Party", party)], b"");
        let problem = api.problem(400, "invalid");
        assert_eq!(problem["at"], "Lorebank-Party");
        for path in ["/ui/books/wuchuan", "/ui/books/wuchuan/review", "/ui/"] {
            let reply = server.send("GET", path, &[("Lorebank-Party", party), ("Cookie", BROWSER)], b"");
            assert_eq!(reply.status, 400, "{path} as {party}: {}", reply.text());
            headers_hold(&reply, path);
            assert!(reply.text().contains("Lorebank-Party"), "{}", reply.text());
        }
    }
    let html = page(&server, "/ui/books/wuchuan/review");
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].clone();
    let reply = form(
        &server,
        "/ui/books/wuchuan/review/C-1/reject",
        &[("csrf", &token), ("reason", "not_a_name")],
        &[("Lorebank-Party", "vendor:acme")],
    );
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert_eq!(server.info("wuchuan")["head"], head, "a refused form wrote something");

    // Without a token file the login form sends the browser straight back, only
    // ever into /ui/.
    for (next, location) in [
        ("%2Fui%2F..%2Fv1%2Fbooks", "/ui/"),
        ("/ui/%2e%2e/v1/books", "/ui/"),
        ("/ui/books/wuchuan/../wuchuan/review", "/ui/books/wuchuan/review"),
    ] {
        let reply = server.send("GET", &format!("/ui/login?next={next}"), &[("Cookie", BROWSER)], b"");
        assert_eq!((reply.status, reply.header("location")), (303, Some(location)), "{next}");
    }

    // A page sets the browser's cookie once; its forms carry the token of that cookie.
    let fresh = server.get("/ui/books/wuchuan/review");
    let cookie = fresh.header("set-cookie").expect("a first page names the browser").to_owned();
    assert!(cookie.starts_with("lorebank_csrf=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let browser = cookie.split(';').next().unwrap().to_owned();
    let again = server.send("GET", "/ui/books/wuchuan/review", &[("Cookie", &browser)], b"");
    assert!(again.header("set-cookie").is_none(), "a known browser gets no new cookie");
    assert_eq!(csrf(&again.text()), csrf(&fresh.text()));
    assert_ne!(csrf(&fresh.text()), token, "two browsers share a token");
}

/// The escaping invariant at its source: the templates insert nothing unescaped and
/// write no script, handler or style attribute of their own.
#[test]
fn the_templates_mark_nothing_pre_escaped_and_write_no_script() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    let mut n_files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display();
        n_files += 1;
        if path.extension().is_some_and(|ext| ext == "rs") {
            assert!(!text.contains("PreEscaped"), "{name}: PreEscaped inserts markup unescaped");
            assert!(!text.contains("script {") && !text.contains(" style="), "{name}");
        }
        assert!(!text.contains("<script") && !text.contains("javascript:"), "{name}");
    }
    assert!(n_files >= 5, "{n_files} files in src/ui");
}

#[test]
fn the_chapter_page_names_each_injected_records_owner_and_the_rules_given_with_their_decision() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for step in ["1-senses.jsonl", "2-governance.jsonl"] {
        let text = std::fs::read_to_string(root.join("examples/wuchuan/governance").join(step)).unwrap();
        let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
        server.append_lines("wuchuan", &format!("actor=human:editor&source={step}"), &lines).ok();
    }
    let before = page(&server, "/ui/books/wuchuan/chapters/3");
    assert!(!before.contains("data-rule="), "no receipt of chapter 3 names a rule yet");
    audit_book::record(&server, "wuchuan", 3, &audit_book::chunks(3));
    let chapter = page(&server, "/ui/books/wuchuan/chapters/3");
    // Chunk 3-1 has dialogue and is given R-1; the letter (3-2) is not.
    assert_eq!(chapter.matches("data-rule=\"R-1\"").count(), 1, "{chapter}");
    assert!(chapter.contains("В репликах Гу Ханьчуань"), "{chapter}");
    // A character's owner is the names editor by default, anything else the chief editor.
    assert!(chapter.contains("<code class=\"owner\">human:names-editor</code> (names editor)"), "{chapter}");
    assert!(chapter.contains("<code class=\"owner\">human:editors</code> (chief editor)"), "{chapter}");
}

#[test]
fn an_embedding_candidate_shows_its_score_and_term_and_accepting_it_adds_an_alias_without_a_rendering() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let lines = [
        r#"{"candidate_proposed":{"id":"C-90","surface":"照儿","evidence":"ch1/1@3-5 near T-1","origin":"embedding","trust":"low","score":912345,"related":"T-1"}}"#,
        r#"{"candidate_proposed":{"id":"C-91","surface":"雾川","origin":"embedding","trust":"low","score":950000,"related":"T-7","duplicate":"T-8"}}"#,
    ];
    server.append_lines("wuchuan", "actor=tool:embed&source=suggest", &lines).ok();
    let html = page(&server, "/ui/books/wuchuan/review");
    assert!(html.contains("score <span class=\"score\">0.912345</span>"), "{html}");
    assert!(
        html.contains("close to <a href=\"/ui/books/wuchuan/terms/T-1\">T-1</a> (accepting adds it as an alias)"),
        "{html}"
    );
    assert!(html.contains("may be the same entity as <a href=\"/ui/books/wuchuan/terms/T-7\">T-7</a>"), "{html}");
    // The forms of C-90 and C-91 ask for no rendering.
    let form_of = |id: &str| {
        let start = html.find(&format!("action=\"/ui/books/wuchuan/review/{id}/accept\"")).unwrap();
        html[start..start + html[start..].find("</form>").unwrap()].to_owned()
    };
    for id in ["C-90", "C-91"] {
        assert!(!form_of(id).contains("name=\"dst\""), "{id}: {}", form_of(id));
    }
    let token = csrf(&html);
    let reply = form(&server, "/ui/books/wuchuan/review/C-90/accept", &[("csrf", &token)], &[]);
    assert_eq!(reply.status, 303, "{}", reply.text());
    let log = server.log("wuchuan");
    let written: Vec<&Value> = log.iter().rev().take(2).map(|event| &event["body"]).collect();
    assert_eq!(written[1]["alias_added"]["id"], "T-1", "{written:?}");
    assert_eq!(written[1]["alias_added"]["surface"], "照儿", "{written:?}");
    assert_eq!(written[0]["disposition_set"]["target"], "C-90", "{written:?}");
}

#[test]
fn a_rollback_preview_lists_the_recorded_chunks_it_would_reopen() {
    let (_dir, server) = library();
    let bundled = audit_book::bundled(&server);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    // Back to before the two revisions: the chunks that name the revised terms change.
    let twin = server.get(&format!("/v1/books/wuchuan/rollback/preview?to={}", bundled.before)).ok();
    let reopened = twin["reopened"].as_array().unwrap_or_else(|| panic!("{twin}"));
    assert!(!reopened.is_empty(), "{twin}");
    for chunk in reopened {
        let changed = chunk["removed"].as_array().unwrap().len() + chunk["added"].as_array().unwrap().len();
        assert!(changed > 0, "a re-opened chunk changes a line: {chunk}");
    }
    let html = page(&server, &format!("/ui/books/wuchuan/rollback?to={}", bundled.before));
    assert!(html.contains(&format!("data-reopened=\"{}\"", reopened.len())), "{html}");
    assert_eq!(
        html.matches("<div class=\"removed\">").count() + html.matches("<div class=\"added\">").count(),
        reopened
            .iter()
            .map(|c| c["removed"].as_array().unwrap().len() + c["added"].as_array().unwrap().len())
            .sum::<usize>()
    );
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a preview wrote something");
}

#[test]
fn a_name_page_says_how_its_rendering_stands_against_the_standard() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    // 沈照 -> Шэнь Чжао is Palladius; 雾川, a place translated by meaning, is not; 长明灯 is
    // an object, not a name.
    for (term, status) in [("T-1", Some("standard")), ("T-7", Some("deviates")), ("T-9", None)] {
        let html = page(&server, &format!("/ui/books/wuchuan/terms/{term}"));
        let twin = server.get(&format!("/v1/books/wuchuan/terms/{term}/timeline")).ok();
        assert_eq!(twin["standard"]["status"].as_str(), status, "{term}: {}", twin["standard"]);
        match status {
            Some(status) => assert!(html.contains(&format!("data-standard=\"{status}\"")), "{term}"),
            None => assert!(!html.contains("data-standard"), "{term}"),
        }
    }
    let twin = server.get("/v1/books/wuchuan/terms/T-7/timeline").ok();
    assert_eq!(twin["standard"]["deviation"]["expected"], "Учуань", "{}", twin["standard"]);
}

#[test]
fn the_glossarys_counts_follow_the_chunks_recorded_and_checks_filed_after_a_listing() {
    let (dir, server) = library();
    let bundled = audit_book::bundled(&server);
    let listing = |server: &Server| server.get("/v1/books/wuchuan/records?per_page=500").ok()["records"].clone();
    let injected = |records: &Value| -> u64 {
        records.as_array().unwrap().iter().map(|record| record["n_injected"].as_u64().unwrap()).sum()
    };
    let flagged = |records: &Value| -> usize {
        records.as_array().unwrap().iter().filter(|record| record["flagged"] == true).count()
    };
    let before = listing(&server);
    // Chapter 1's chunks recorded again as chapter 7's, and a translation of the first
    // chunk that renders nothing checked: the latest check of that chunk now finds every
    // term it injected missing.
    audit_book::record(&server, "wuchuan", 7, &audit_book::chunks(1));
    let check = serde_json::json!({ "translation": "—", "actor": "tool:postcheck" });
    server.post(&format!("/v1/books/wuchuan/receipts/{}/check", bundled.first_receipt), &check).ok();
    let after = listing(&server);
    assert!(injected(&after) > injected(&before), "{after}");
    assert!(flagged(&after) > flagged(&before), "{after}");
    // What a server that never listed the book before answers.
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{stderr}");
    let fresh = Server::start(dir.path(), &[]);
    assert_eq!(listing(&fresh), after);
}

#[test]
fn the_glossary_page_searches_filters_sorts_and_pages_as_its_twin() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let all = server.get("/v1/books/wuchuan/records?per_page=500").ok();
    let n_terms = all["n_terms"].as_u64().unwrap();
    assert_eq!(all["n_matching"], n_terms, "{all}");
    let ids: Vec<&str> = all["records"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_by_key(|id| id[2..].parse::<u32>().unwrap());
    assert_eq!(ids, sorted, "by id by default");
    // A traditional spelling finds the simplified source; a rendering is found in any case.
    let lamp = server.get("/v1/books/wuchuan/records?q=%E9%95%B7%E6%98%8E%E7%87%88").ok();
    let found: Vec<&str> = lamp["records"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(found, ["T-9"], "長明燈: {lamp}");
    let by_dst = server.get("/v1/books/wuchuan/records?q=%D0%A8%D0%AD%D0%9D%D0%AC").ok();
    assert_eq!(by_dst["records"][0]["id"], "T-1", "ШЭНЬ: {by_dst}");
    // Filters hold together; the check of chapter 1 flagged a term left out.
    let characters = server.get("/v1/books/wuchuan/records?kind=character&per_page=500").ok();
    assert!(characters["records"].as_array().unwrap().iter().all(|r| r["kind"] == "character"), "{characters}");
    let flagged = server.get("/v1/books/wuchuan/records?flagged=true").ok();
    assert!(flagged["n_matching"].as_u64().unwrap() >= 1, "{flagged}");
    assert!(flagged["records"].as_array().unwrap().iter().all(|r| r["flagged"] == true), "{flagged}");
    // Sorted by how many recorded chunks injected each, most first, and paged.
    let top = server.get("/v1/books/wuchuan/records?sort=injected&order=desc&per_page=2").ok();
    let counts: Vec<u64> =
        all["records"].as_array().unwrap().iter().map(|r| r["n_injected"].as_u64().unwrap()).collect();
    assert_eq!(top["records"][0]["n_injected"], *counts.iter().max().unwrap(), "{top}");
    assert_eq!(top["n_pages"], n_terms.div_ceil(2), "{top}");
    let second = server.get("/v1/books/wuchuan/records?sort=injected&order=desc&per_page=2&page=2").ok();
    assert_ne!(second["records"][0]["id"], top["records"][0]["id"]);
    let past = server.get(&format!("/v1/books/wuchuan/records?page={}", n_terms + 1)).ok();
    assert_eq!(past["records"], serde_json::json!([]));
    // The page shows the twin's rows, in its order, and links to the next page.
    let html = page(&server, "/ui/books/wuchuan/glossary?sort=injected&order=desc&per_page=2");
    let rows: Vec<&str> = html.split("data-record=\"").skip(1).map(|rest| &rest[..rest.find('"').unwrap()]).collect();
    let twin: Vec<&str> = top["records"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(rows, twin);
    assert!(
        html.contains(
            "rel=\"next\" href=\"/ui/books/wuchuan/glossary?sort=injected&amp;order=desc&amp;page=2&amp;per_page=2\""
        ),
        "{html}"
    );
    // Bad parameters are named.
    for (query, at) in [
        ("sort=nothing", "sort"),
        ("page=0", "page"),
        ("per_page=501", "per_page"),
        ("status=done", "status"),
        ("x=1", "x"),
    ] {
        let problem = server.get(&format!("/v1/books/wuchuan/records?{query}")).problem(400, "invalid");
        assert_eq!(problem["at"], at, "{query}: {problem}");
        let reply = server.get(&format!("/ui/books/wuchuan/glossary?{query}"));
        assert_eq!(reply.status, 400, "{query}");
    }
}

/// The fields of a term's edit form as the term page fills them (every input and
/// the selected option of every select), without the CSRF token and the buttons.
fn edit_fields(html: &str) -> Vec<(String, String)> {
    let form = &html[html.find("<form class=\"edit\"").expect("an edit form")..];
    let form = &form[..form.find("</form>").unwrap()];
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[at..].split('"').next()?.replace("&amp;", "&").replace("&quot;", "\""))
    };
    let mut fields = Vec::new();
    for input in form.split("<input").skip(1) {
        let tag = &input[..input.find('>').unwrap()];
        let name = attribute(tag, "name").unwrap();
        if name != "csrf" {
            fields.push((name, attribute(tag, "value").unwrap_or_default()));
        }
    }
    for select in form.split("<select").skip(1) {
        let name = attribute(&select[..select.find('>').unwrap()], "name").unwrap();
        let options = &select[..select.find("</select>").unwrap()];
        let chosen = options
            .split("<option")
            .skip(1)
            .find(|option| option[..option.find('>').unwrap()].contains(" selected"))
            .and_then(|option| attribute(&option[..option.find('>').unwrap()], "value"))
            .unwrap_or_default();
        fields.push((name, chosen));
    }
    fields
}

#[test]
fn a_term_is_edited_in_the_browser_after_a_preview_of_what_it_would_reopen() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let path = "/ui/books/wuchuan/terms/T-7";
    let html = page(&server, path);
    let token = csrf(&html);
    let mut fields = edit_fields(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    assert!(fields.contains(&("expected_head".to_owned(), head.to_string())), "{fields:?}");
    assert!(fields.contains(&("dst".to_owned(), "Мглистая река".to_owned())), "{fields:?}");
    let set = |fields: &mut Vec<(String, String)>, name: &str, value: &str| {
        fields.retain(|(field, _)| field != name);
        fields.push((name.to_owned(), value.to_owned()));
    };
    set(&mut fields, "dst", "Туманная река");
    set(&mut fields, "actor", "human:anna");
    set(&mut fields, "source", "style-review-2");
    let post = |fields: &[(String, String)], step: &str, token: &str| {
        let mut all: Vec<(&str, &str)> = fields.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        all.push(("csrf", token));
        all.push(("step", step));
        form(&server, &format!("{path}/edit"), &all, &[])
    };
    // Preview: what changes, the chunks it would re-open; nothing written.
    let preview = post(&fields, "preview", &token);
    assert_eq!(preview.status, 200, "{}", preview.text());
    let text = preview.text();
    assert!(text.contains("data-changed=\"1\""), "{text}");
    assert!(text.contains("<del>Мглистая река</del> → <ins>Туманная река</ins>"), "{text}");
    let reopened: usize = text.split("data-reopened=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(reopened > 0, "chapters that mention 雾川 are re-opened: {text}");
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a preview wrote something");
    // A bad field is named; a form without this browser's token is refused.
    let mut bad = fields.clone();
    set(&mut bad, "since", "first");
    let refused = post(&bad, "save", &token);
    assert_eq!(refused.status, 400);
    assert!(refused.text().contains("since"), "{}", refused.text());
    assert_eq!(post(&fields, "save", &"f".repeat(64)).status, 403);
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head);
    // Save: one term_put, as the editor typed it.
    let saved = post(&fields, "save", &token);
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(saved.header("location"), Some(path));
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 1);
    let event = server.get(&format!("/v1/books/wuchuan/events/{}", head + 1)).ok();
    assert_eq!(event["body"]["term_put"]["dst"], "Туманная река", "{event}");
    assert_eq!((event["actor"].as_str(), event["source"].as_str()), (Some("human:anna"), Some("style-review-2")));
    // A second editor's form, read before that write, does not overwrite it.
    let stale = post(&fields, "save", &token);
    assert_eq!(stale.status, 409, "{}", stale.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 1);
}

/// A `multipart/form-data` body of `fields` and, when given, one file part.
fn multipart(fields: &[(&str, &str)], file: Option<(&str, &str)>) -> (String, Vec<u8>) {
    let boundary = "lorebank-test-boundary";
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"));
    }
    if let Some((file_name, content)) = file {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: text/plain\r\n\r\n{content}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    (format!("multipart/form-data; boundary={boundary}"), body.into_bytes())
}

/// Follows a form's `303` to its job's page on `book` and loads it until the job has
/// ended (each page seen under way refreshes itself and names the step it is at);
/// the last answer, and whether the job was seen under way.
fn follow_job_seen(server: &Server, book: &str, started: &Reply) -> (Reply, bool) {
    assert_eq!(started.status, 303, "{}", started.text());
    let location = started.header("location").expect("a job's page").to_owned();
    let prefix = format!("/ui/books/{book}/jobs/");
    let id = location.strip_prefix(&prefix).unwrap_or_else(|| panic!("{location}"));
    assert!(id.parse::<u64>().is_ok(), "{location}");
    let mut seen_running = false;
    for _ in 0..3_000 {
        let reply = server.send("GET", &location, &[("Cookie", BROWSER)], b"");
        headers_hold(&reply, &location);
        let text = reply.text();
        if !text.contains("data-job-state=\"running\"") {
            assert!(!text.contains("http-equiv=\"refresh\""), "an ended job's page refreshes: {text}");
            return (reply, seen_running);
        }
        seen_running = true;
        assert_eq!(reply.status, 200, "{text}");
        assert!(text.contains("<meta http-equiv=\"refresh\" content=\"1\">"), "{text}");
        assert!(text.contains("aria-current=\"step\"") || text.contains("data-phase=\"starting\""), "{text}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("job {location} did not end in a minute");
}

fn follow_job(server: &Server, book: &str, started: &Reply) -> Reply {
    follow_job_seen(server, book, started).0
}

#[test]
fn a_file_is_imported_by_upload_after_a_dry_run_of_what_it_would_reopen() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let path = "/ui/books/wuchuan/import";
    let token = csrf(&page(&server, path));
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let post = |fields: &[(&str, &str)], file: Option<(&str, &str)>| {
        let (content_type, body) = multipart(fields, file);
        server.send("POST", path, &[("Content-Type", &content_type), ("Cookie", BROWSER)], &body)
    };
    let dictionary = "雾川\tТуманная река\n孤岛\tОдинокий остров\n";
    // The dry run: the report, the chunks the rename re-opens; nothing written.
    let dry = post(&[("csrf", &token), ("step", "preview"), ("format", "")], Some(("g.txt", dictionary)));
    assert_eq!(dry.status, 200, "{}", dry.text());
    let html = dry.text();
    assert!(html.contains("data-dry-run=\"true\""), "{html}");
    assert!(html.contains("1 imported, 1 updated"), "{html}");
    let reopened: usize = html.split("data-reopened=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(reopened > 0, "{html}");
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a dry run wrote something");
    // The confirmation carries the same file and the head it was made at.
    let confirm = &html[html.rfind("<form class=\"import\"").unwrap()..];
    let hidden = |name: &str| -> String {
        let at =
            confirm.find(&format!("name=\"{name}\" value=\"")).unwrap_or_else(|| panic!("{name}")) + name.len() + 15;
        confirm[at..].split('"').next().unwrap().to_owned()
    };
    let fields = [
        ("csrf", hidden("csrf")),
        ("name", hidden("name")),
        ("content", hidden("content")),
        ("format", hidden("format")),
        ("expected_head", hidden("expected_head")),
        ("step", "import".to_owned()),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(name, value)| (*name, value.as_str())).collect();
    assert_eq!(fields[4].1, head.to_string());
    // Refused: another browser's token, a form that is no multipart, no file.
    let foreign = [("csrf", "f".repeat(64))];
    let foreign: Vec<(&str, &str)> = foreign.iter().map(|(name, value)| (*name, value.as_str())).collect();
    assert_eq!(post(&foreign, Some(("g.txt", dictionary))).status, 403);
    assert_eq!(form(&server, path, &[("csrf", &token), ("step", "preview")], &[]).status, 400);
    assert_eq!(post(&[("csrf", &token), ("step", "preview")], None).status, 400);
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head);
    // Another editor writes first: the confirmation is refused, nothing written.
    let other = serde_json::json!({ "events": [{ "term_put": { "id": "T-90", "src": "远山", "dst": "Дальние горы" } }], "actor": "human:other" });
    server.post("/v1/books/wuchuan/events", &other).ok();
    let head = head + 1;
    // The confirmation starts a job; the job ends refused, its page the refusal.
    let refused = follow_job(&server, "wuchuan", &post(&fields, None));
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert!(refused.text().contains("data-type=\"conflict\""), "{}", refused.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head);
    // A new dry run at the new head, confirmed: the import as the dry run said, as
    // the CLI would write it.
    let dry = post(&[("csrf", &token), ("step", "preview")], Some(("g.txt", dictionary))).text();
    assert!(dry.contains("1 imported, 1 updated, 0 unchanged"), "{dry}");
    let marker = "name=\"expected_head\" value=\"";
    let at = dry.find(marker).unwrap() + marker.len();
    let expected = dry[at..].split('"').next().unwrap().to_owned();
    assert_eq!(expected, head.to_string());
    let mut fields = fields.clone();
    fields[4].1 = &expected;
    let done = follow_job(&server, "wuchuan", &post(&fields, None));
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains("data-written=\"true\""), "{}", done.text());
    // The report the dry run promised.
    assert!(done.text().contains("1 imported, 1 updated, 0 unchanged"), "{}", done.text());
    // Two events in one batch: the new term and the update.
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 2);
    let event = server.get(&format!("/v1/books/wuchuan/events/{}", head + 1)).ok();
    assert_eq!(
        (event["actor"].as_str(), event["source"].as_str()),
        (Some("import:galtransl"), Some("g.txt:1")),
        "{event}"
    );
    // The same file again changes nothing, and writes nothing.
    let again =
        follow_job(&server, "wuchuan", &post(&[("csrf", &token), ("step", "import")], Some(("g.txt", dictionary))));
    assert!(again.text().contains("Nothing to write"), "{}", again.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 2);
}

#[test]
fn one_job_runs_on_a_book_at_a_time_and_its_page_is_only_that_books() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    server.create("other");
    let token = csrf(&page(&server, "/ui/books/wuchuan"));
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    // A file large enough that its import is still under way when the next form
    // comes: 20,000 new terms in one batch.
    let dictionary: String = (0..20_000).map(|n| format!("词{n}\tслово {n}\n")).collect();
    let (content_type, body) = multipart(&[("csrf", &token), ("step", "import")], Some(("big.txt", &dictionary)));
    let import =
        server.send("POST", "/ui/books/wuchuan/import", &[("Content-Type", &content_type), ("Cookie", BROWSER)], &body);
    assert_eq!(import.status, 303, "{}", import.text());
    // While it runs, a second job on the book is refused, and says which runs.
    let verify = |extra: &[(&str, &str)]| form(&server, "/ui/books/wuchuan/verify", &[("csrf", &token)], extra);
    let busy = verify(&[]);
    assert_eq!(busy.status, 409, "{}", busy.text());
    headers_hold(&busy, "/ui/books/wuchuan/verify");
    let location = import.header("location").unwrap().to_owned();
    assert!(busy.text().contains(&location), "{}", busy.text());
    // Another book's job may run beside it.
    let beside = form(&server, "/ui/books/other/verify", &[("csrf", &token)], &[]);
    assert_eq!(beside.status, 303, "{}", beside.text());
    let beside_location = beside.header("location").unwrap().to_owned();
    let (done, seen_running) = follow_job_seen(&server, "wuchuan", &import);
    assert!(seen_running, "the import ended before its page was asked for: make the file larger");
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains("data-written=\"true\""), "{}", done.text());
    assert!(done.text().contains("20000 imported, 0 updated"), "{}", done.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 20_000);
    // A job's page is its book's only; an unknown job is 404, a job id that is no
    // number 400.
    let job_id = location.rsplit('/').next().unwrap();
    for (path, status) in [
        (format!("/ui/books/other/jobs/{job_id}"), 404),
        ("/ui/books/wuchuan/jobs/999".to_owned(), 404),
        (beside_location.replace("/other/", "/wuchuan/"), 404),
        ("/ui/books/nobook/jobs/1".to_owned(), 404),
        ("/ui/books/wuchuan/jobs/x".to_owned(), 400),
    ] {
        let reply = server.send("GET", &path, &[("Cookie", BROWSER)], b"");
        assert_eq!(reply.status, status, "{path}: {}", reply.text());
        headers_hold(&reply, &path);
    }
    // Once it has ended, the next job starts: a verify, which ends as `verify` says.
    let verified = follow_job(&server, "wuchuan", &verify(&[]));
    assert_eq!(verified.status, 200, "{}", verified.text());
    assert!(verified.text().contains("data-verify=\"ok\""), "{}", verified.text());
    let n_events = server.verified("wuchuan")["n_events"].as_u64().unwrap();
    assert!(verified.text().contains(&format!("ok: {n_events} events")), "{}", verified.text());
    // The verify form is refused as every form is: no token, another browser's,
    // another origin, an unknown field; and for a book that is not there.
    let foreign = "f".repeat(64);
    for (fields, extra, status) in [
        (vec![], vec![], 403),
        (vec![("csrf", foreign.as_str())], vec![], 403),
        (vec![("csrf", token.as_str())], vec![("Cookie", OTHER_BROWSER)], 403),
        (vec![("csrf", token.as_str())], vec![("Origin", "http://evil.example")], 403),
        (vec![("csrf", token.as_str()), ("step", "x")], vec![], 400),
    ] {
        let reply = form(&server, "/ui/books/wuchuan/verify", &fields, &extra);
        assert_eq!(reply.status, status, "{fields:?} {extra:?}: {}", reply.text());
    }
    assert_eq!(form(&server, "/ui/books/nobook/verify", &[("csrf", &token)], &[]).status, 404);
    let other = follow_job(&server, "other", &beside);
    assert!(other.text().contains("data-verify=\"ok\""), "{}", other.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 20_000);
}

#[test]
fn aliases_are_added_and_removed_and_a_term_retired_and_revived_from_its_page() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let path = "/ui/books/wuchuan/terms/T-1";
    let html = page(&server, path);
    let token = csrf(&html);
    assert!(html.contains("data-action=\"alias-remove\""), "an active alias has its remove form");
    let head = || server.info("wuchuan")["head"].as_u64().unwrap();
    let act = |id: &str, action: &str, fields: &[(&str, &str)], step: &str, expected: u64| {
        let expected = expected.to_string();
        let mut all = fields.to_vec();
        all.extend([("csrf", token.as_str()), ("step", step), ("expected_head", expected.as_str())]);
        form(&server, &format!("/ui/books/wuchuan/terms/{id}/actions/{action}"), &all, &[])
    };
    // Removing 阿照 re-opens the chunks that name 沈照 only by it; a preview writes nothing.
    let at = head();
    let preview = act("T-1", "alias-remove", &[("surface", "阿照")], "preview", at);
    assert_eq!(preview.status, 200, "{}", preview.text());
    let reopened: usize =
        preview.text().split("data-reopened=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(reopened > 0, "{}", preview.text());
    assert_eq!(head(), at);
    // An alias added, as the editor typed it; then the removal.
    let added =
        act("T-1", "alias-add", &[("surface", "照儿"), ("kind", "nickname"), ("actor", "human:anna")], "save", at);
    assert_eq!(added.status, 303, "{}", added.text());
    let event = server.get(&format!("/v1/books/wuchuan/events/{}", at + 1)).ok();
    assert_eq!(event["body"]["alias_added"]["surface"], "照儿", "{event}");
    assert_eq!(event["actor"], "human:anna", "{event}");
    assert_eq!(act("T-1", "alias-remove", &[("surface", "阿照")], "save", at + 1).status, 303);
    // A form read before those writes is refused.
    assert_eq!(act("T-1", "alias-add", &[("surface", "小照")], "save", at).status, 409);
    // Retire and revive: the revived term is back with its last version.
    assert_eq!(act("T-10", "retire", &[("reason", "merged into T-6")], "save", at + 2).status, 303);
    let retired = server.get("/v1/books/wuchuan/terms/T-10/timeline").ok();
    assert!(retired["stretches"].as_array().unwrap().last().unwrap()["retired"] == true, "{retired}");
    let page_retired = page(&server, "/ui/books/wuchuan/terms/T-10");
    assert!(page_retired.contains("data-action=\"revive\""), "a retired term has its revive form");
    assert_eq!(act("T-10", "retire", &[], "save", at + 3).status, 400);
    assert_eq!(act("T-10", "revive", &[], "save", at + 3).status, 303);
    let revived = server.get("/v1/books/wuchuan/glossary").ok();
    assert!(revived["terms"].as_array().unwrap().iter().any(|term| term["id"] == "T-10"), "{revived}");
    assert_eq!(act("T-10", "explode", &[], "save", at + 4).status, 404);
    assert_eq!(
        act("T-1", "alias-add", &[("surface", "照")], "save", at + 4).status,
        400,
        "a key shorter than min_key_chars"
    );
    assert_eq!(head(), at + 4);
}

#[test]
fn a_new_term_is_written_from_the_glossary_page_after_a_preview() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let html = page(&server, "/ui/books/wuchuan/glossary");
    let token = csrf(&html);
    let mut fields = edit_fields(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    assert!(fields.contains(&("expected_head".to_owned(), head.to_string())), "{fields:?}");
    for (name, value) in [("src", "渔船"), ("dst", "рыбацкие лодки"), ("kind", "object"), ("source", "glossary-pass-3")]
    {
        fields.retain(|(field, _)| field != name);
        fields.push((name.to_owned(), value.to_owned()));
    }
    let post = |fields: &[(String, String)], step: &str| {
        let mut all: Vec<(&str, &str)> = fields.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        all.extend([("csrf", token.as_str()), ("step", step)]);
        form(&server, "/ui/books/wuchuan/glossary/new", &all, &[])
    };
    // Chapter 2 mentions 渔船: the preview lists its chunk; nothing written.
    let preview = post(&fields, "preview");
    assert_eq!(preview.status, 200, "{}", preview.text());
    assert!(preview.text().contains("+ <code>渔船 -&gt; рыбацкие лодки #object</code>"), "{}", preview.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head);
    let saved = post(&fields, "save");
    assert_eq!(saved.status, 303, "{}", saved.text());
    let location = saved.header("location").unwrap().to_owned();
    let id = location.rsplit('/').next().unwrap().to_owned();
    let term = server.get(&format!("/v1/books/wuchuan/terms/{id}")).ok();
    let event = server.get(&format!("/v1/books/wuchuan/events/{}", head + 1)).ok();
    assert_eq!(event["body"]["term_put"]["id"], id.as_str(), "{event}");
    assert_eq!(event["body"]["term_put"]["dst"], "рыбацкие лодки", "{event}");
    assert_eq!((event["actor"].as_str(), event["source"].as_str()), (Some("human:editor"), Some("glossary-pass-3")));
    assert!(term.to_string().contains("渔船"), "{term}");
    // An id the book has is refused; so is a form read before the write.
    let mut taken = fields.clone();
    taken.retain(|(field, _)| field != "id");
    taken.push(("id".to_owned(), "T-1".to_owned()));
    let refused = post(&taken, "save");
    assert_eq!(refused.status, 400);
    assert!(refused.text().contains("T-1 exists"), "{}", refused.text());
    fields.retain(|(field, _)| field != "src");
    fields.push(("src".to_owned(), "远山".to_owned()));
    assert_eq!(post(&fields, "save").status, 409);
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 1);
}

#[test]
fn a_previewed_rollback_is_confirmed_from_its_page_against_the_head_it_was_previewed_at() {
    let (_dir, server) = library();
    let bundled = audit_book::bundled(&server);
    let html = page(&server, &format!("/ui/books/wuchuan/rollback?to={}", bundled.revised));
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let target = server.get(&format!("/v1/books/wuchuan/snapshot?as_of={}", bundled.revised)).ok()["snapshot"].clone();
    let (to, expected) = (bundled.revised.to_string(), head.to_string());
    let fields = [
        ("csrf", token.as_str()),
        ("to", to.as_str()),
        ("expected_head", expected.as_str()),
        ("reason", "keep the new names"),
    ];
    // Another write first: the rollback previewed is no longer the one that would be appended.
    let other = serde_json::json!({ "events": [{ "term_put": { "id": "T-90", "src": "远山", "dst": "Дальние горы" } }], "actor": "human:other" });
    server.post("/v1/books/wuchuan/events", &other).ok();
    assert_eq!(form(&server, "/ui/books/wuchuan/rollback", &fields, &[]).status, 409);
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 1);
    // Previewed again at the new head and confirmed: the head lands on the target's snapshot.
    let expected = (head + 1).to_string();
    let fields = [
        ("csrf", token.as_str()),
        ("to", to.as_str()),
        ("expected_head", expected.as_str()),
        ("reason", "keep the new names"),
    ];
    let done = form(&server, "/ui/books/wuchuan/rollback", &fields, &[]);
    assert_eq!(done.status, 303, "{}", done.text());
    let now = server.get("/v1/books/wuchuan/snapshot").ok();
    assert_eq!(now["snapshot"], target, "{now}");
    let marker = server.get(&format!("/v1/books/wuchuan/events/{}", now["revision"])).ok();
    assert_eq!(marker["body"]["rollback_marker"]["reason"], "keep the new names", "{marker}");
    assert_eq!(marker["actor"], "human:editor", "{marker}");
}

/// The tag (`<input …>` or `<select …>`) of the input named `name` in `html`.
fn input_tag<'h>(html: &'h str, name: &str) -> &'h str {
    let at = html.find(&format!(" name=\"{name}\"")).unwrap_or_else(|| panic!("no input {name}: {html}"));
    let start = html[..at].rfind('<').unwrap();
    &html[start..start + html[start..].find('>').unwrap()]
}

/// The message a refused form shows beside input `name`.
fn message_beside(html: &str, name: &str) -> String {
    let marker = format!("id=\"error-{name}\"");
    let at = html.find(&marker).unwrap_or_else(|| panic!("no message beside {name}: {html}"));
    let text = &html[at..];
    text[text.find('>').unwrap() + 1..text.find("</span>").unwrap()].to_owned()
}

/// The input is marked invalid and described by the message beside it.
fn marked_invalid(html: &str, name: &str) {
    let tag = input_tag(html, name);
    assert!(tag.contains("aria-invalid=\"true\""), "{tag}");
    assert!(tag.contains(&format!("aria-describedby=\"error-{name}\"")), "{tag}");
}

#[test]
fn a_refused_edit_is_the_form_again_as_typed_with_the_message_beside_the_field_it_names() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let path = "/ui/books/wuchuan/terms/T-7";
    let html = page(&server, path);
    let token = csrf(&html);
    let fields = edit_fields(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let set = |fields: &mut Vec<(String, String)>, name: &str, value: &str| {
        fields.retain(|(field, _)| field != name);
        fields.push((name.to_owned(), value.to_owned()));
    };
    let post = |fields: &[(String, String)], step: &str| {
        let mut all: Vec<(&str, &str)> = fields.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        all.extend([("csrf", token.as_str()), ("step", step)]);
        form(&server, &format!("{path}/edit"), &all, &[])
    };
    let typed = |html: &str, name: &str| -> String {
        edit_fields(html).into_iter().find(|(field, _)| field == name).map(|(_, value)| value).unwrap_or_default()
    };
    // A window that ends before it starts: the book's rule names `term_put.window.until`.
    let mut window = fields.clone();
    set(&mut window, "since", "5");
    set(&mut window, "until", "3");
    set(&mut window, "note", "a note typed before the mistake");
    set(&mut window, "actor", "human:anna");
    for step in ["preview", "save"] {
        let reply = post(&window, step);
        assert_eq!(reply.status, 400, "{step}: {}", reply.text());
        headers_hold(&reply, path);
        let html = reply.text();
        for (name, value) in
            [("since", "5"), ("until", "3"), ("note", "a note typed before the mistake"), ("actor", "human:anna")]
        {
            assert_eq!(typed(&html, name), value, "{step}: {name} as typed");
        }
        assert_eq!(typed(&html, "expected_head"), head.to_string(), "{step}");
        marked_invalid(&html, "until");
        assert!(message_beside(&html, "until").contains("before it starts at chapter 5"), "{html}");
        assert!(!input_tag(&html, "since").contains("aria-invalid"), "only the named field is marked");
        assert!(html.contains("data-refused=\"until\""), "{html}");
    }
    // An empty rendering: the book's rule names `term_put.dst`.
    let mut empty = fields.clone();
    set(&mut empty, "dst", "");
    set(&mut empty, "source", "style-review-2");
    let reply = post(&empty, "save");
    assert_eq!(reply.status, 400, "{}", reply.text());
    let html = reply.text();
    marked_invalid(&html, "dst");
    assert!(message_beside(&html, "dst").contains("must not be empty"), "{html}");
    assert_eq!(typed(&html, "source"), "style-review-2");
    // A field the form itself cannot read is named the same way.
    let mut priority = fields.clone();
    set(&mut priority, "priority", "high");
    let html = post(&priority, "preview").text();
    marked_invalid(&html, "priority");
    assert!(message_beside(&html, "priority").contains("not an integer"), "{html}");
    // The form again is a form to fix and save: corrected, it saves.
    set(&mut window, "until", "9");
    assert_eq!(post(&window, "save").status, 303);
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 1, "only the corrected save is written");
    // A form read before that write is a conflict, as before.
    assert_eq!(post(&window, "save").status, 409);
}

#[test]
fn a_refused_new_term_or_alias_is_its_form_again_with_the_message_beside_the_field() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    let html = page(&server, "/ui/books/wuchuan/glossary");
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let mut fields = edit_fields(&html);
    for (name, value) in [("src", "渔船"), ("dst", ""), ("kind", "object")] {
        fields.retain(|(field, _)| field != name);
        fields.push((name.to_owned(), value.to_owned()));
    }
    let mut all: Vec<(&str, &str)> = fields.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    all.extend([("csrf", token.as_str()), ("step", "preview")]);
    let reply = form(&server, "/ui/books/wuchuan/glossary/new", &all, &[]);
    assert_eq!(reply.status, 400, "{}", reply.text());
    let html = reply.text();
    marked_invalid(&html, "dst");
    assert!(message_beside(&html, "dst").contains("must not be empty"), "{html}");
    assert!(input_tag(&html, "src").contains("value=\"渔船\""), "{html}");
    // An alias whose window ends before it starts.
    let expected = head.to_string();
    let alias = [
        ("surface", "照儿"),
        ("kind", "nickname"),
        ("since", "4"),
        ("until", "2"),
        ("csrf", token.as_str()),
        ("step", "save"),
        ("expected_head", expected.as_str()),
    ];
    let reply = form(&server, "/ui/books/wuchuan/terms/T-1/actions/alias-add", &alias, &[]);
    assert_eq!(reply.status, 400, "{}", reply.text());
    let html = reply.text();
    marked_invalid(&html, "until");
    assert!(message_beside(&html, "until").contains("before it starts"), "{html}");
    assert!(input_tag(&html, "surface").contains("value=\"照儿\""), "{html}");
    assert!(html.contains("<option value=\"nickname\" selected>"), "{html}");
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "nothing written");
}

/// The CLI on book file `book`, which must succeed.
fn cli(book: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new(serve::BIN)
        .arg("--book")
        .arg(book)
        .args(args)
        .env_remove("LOREBANK_BOOK")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// The last event of `book` as (body, actor, source): what the same step, taken in
/// the browser and with the CLI, must write alike.
fn last_event(server: &Server, book: &str) -> (Value, Value, Value) {
    let head = server.info(book)["head"].as_u64().unwrap();
    let event = server.get(&format!("/v1/books/{book}/events/{head}")).ok();
    (event["body"].clone(), event["actor"].clone(), event["source"].clone())
}

/// A twin of the bundled book's glossary in file `twin.lorebank` of the library, made
/// with the CLI (the server opens it only to read its log).
fn glossary_twin(dir: &std::path::Path) -> std::path::PathBuf {
    let twin = dir.join("twin.lorebank");
    let glossary = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/wuchuan/glossary.jsonl");
    cli(&twin, &["init", "--profile", "zh", "--actor", "human:editor"]);
    cli(&twin, &["apply", glossary.to_str().unwrap(), "--actor", "import:example"]);
    twin
}

#[test]
fn a_summary_is_revised_and_a_new_one_written_from_the_summaries_page_as_the_cli_writes_them() {
    let (dir, server) = library();
    audit_book::bundled(&server);
    let path = "/ui/books/wuchuan/summaries";
    let html = page(&server, path);
    assert_eq!(twin(&html).as_deref(), Some("/v1/books/wuchuan/glossary"));
    assert!(html.contains("data-summary=\"S-1\"") && html.contains("data-summary=\"S-2\""), "{html}");
    assert!(html.contains("active summaries at revision"), "{html}");
    assert!(page(&server, "/ui/books/wuchuan").contains("/ui/books/wuchuan/summaries"), "the book page links it");
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let expected = head.to_string();
    let text = "Юный Шэнь Чжао из Секты Фонаря на Туманной реке ищет негасимую лампаду.";
    let post = |fields: &[(&str, &str)], step: &str| {
        let mut all = fields.to_vec();
        all.extend([("csrf", token.as_str()), ("step", step)]);
        form(&server, "/ui/books/wuchuan/summaries/put", &all, &[])
    };
    let revised = [
        ("id", "S-1"),
        ("scope", "book"),
        ("visible_from", ""),
        ("text", text),
        ("actor", "human:anna"),
        ("source", "summary-pass-2"),
        ("expected_head", expected.as_str()),
    ];
    // The preview: the text changed, the chunks the book summary reaches; nothing written.
    let preview = post(&revised, "preview");
    assert_eq!(preview.status, 200, "{}", preview.text());
    let html = preview.text();
    assert!(html.contains("data-changed=\"1\""), "{html}");
    assert!(html.contains(&format!("<ins>{text}</ins>")), "{html}");
    let reopened: usize = html.split("data-reopened=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(reopened > 0, "the book's summary is in every recorded chunk's context: {html}");
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a preview wrote something");
    // Refused: an empty text, a scope that is none; each beside its field, nothing written.
    let mut empty = revised;
    empty[3].1 = "";
    let reply = post(&empty, "save");
    assert_eq!(reply.status, 400, "{}", reply.text());
    marked_invalid(&reply.text(), "text");
    assert!(message_beside(&reply.text(), "text").contains("must not be empty"), "{}", reply.text());
    let mut scope = revised;
    scope[1].1 = "chapters 1-3";
    let reply = post(&scope, "preview");
    assert_eq!(reply.status, 400, "{}", reply.text());
    marked_invalid(&reply.text(), "scope");
    assert!(input_tag(&reply.text(), "scope").contains("value=\"chapters 1-3\""), "as typed");
    assert!(message_beside(&reply.text(), "scope").contains("arc:A-B"), "{}", reply.text());
    // A form without this browser's token is refused before anything is read.
    let other = "f".repeat(64);
    let mut foreign: Vec<(&str, &str)> = revised.to_vec();
    foreign.extend([("csrf", other.as_str()), ("step", "save")]);
    assert_eq!(form(&server, "/ui/books/wuchuan/summaries/put", &foreign, &[]).status, 403);
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head);
    // Saved: one summary_put, as `summary put` writes it with the same arguments.
    let saved = post(&revised, "save");
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(saved.header("location"), Some("/ui/books/wuchuan/summaries#S-1"));
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 1);
    let revised_event = last_event(&server, "wuchuan");
    assert!(revised_event.0["summary_put"].is_object(), "{revised_event:?}");
    // The twin: the same steps with the CLI (the server reads its log only at the end).
    let twin = glossary_twin(dir.path());
    let cli_put = ["summary", "put", "--id", "S-1", "--scope", "book", "--text", text];
    cli(&twin, &[&cli_put[..], &["--actor", "human:anna", "--source", "summary-pass-2"]].concat());
    // A second editor's form, read before that write, does not overwrite it.
    assert_eq!(post(&revised, "save").status, 409);
    // A new summary, its id left to the book: the next free one, as typed.
    let expected = (head + 1).to_string();
    let new = [
        ("id", ""),
        ("scope", "arc:1-2"),
        ("visible_from", "3"),
        ("text", "Шэнь Чжао покидает Туманную реку."),
        ("expected_head", expected.as_str()),
    ];
    let preview = post(&new, "preview");
    assert_eq!(preview.status, 200, "{}", preview.text());
    assert!(preview.text().contains("data-changed=\"new\""), "{}", preview.text());
    assert!(preview.text().contains("name=\"id\" value=\"S-3\""), "the save puts the id previewed");
    let saved = post(&new, "save");
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(saved.header("location"), Some("/ui/books/wuchuan/summaries#S-3"));
    let cli_new = ["summary", "put", "--id", "S-3", "--scope", "arc:1-2", "--visible-from", "3", "--text", new[3].1];
    cli(&twin, &[&cli_new[..], &["--actor", "human:editor"]].concat());
    let twin_head = server.info("twin")["head"].as_u64().unwrap();
    let twin_event = |seq: u64| {
        let event = server.get(&format!("/v1/books/twin/events/{seq}")).ok();
        (event["body"].clone(), event["actor"].clone(), event["source"].clone())
    };
    assert_eq!(revised_event, twin_event(twin_head - 1), "the revision, as `summary put` writes it");
    assert_eq!(last_event(&server, "wuchuan"), twin_event(twin_head), "the new summary, as `summary put` writes it");
    assert!(page(&server, path).contains("data-summary=\"S-3\""), "the new summary is listed");
}

#[test]
fn a_term_is_marked_reviewed_from_its_page_as_review_accept_writes_it() {
    let (dir, server) = library();
    audit_book::bundled(&server);
    // T-10 is back at status auto after the bundled rollback: the queue flags it.
    let path = "/ui/books/wuchuan/terms/T-10";
    let html = page(&server, path);
    assert!(html.contains("data-action=\"review\""), "an active term has its Mark reviewed form");
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let expected = head.to_string();
    let post = |step: &str, token: &str, expected: &str| {
        let fields = [
            ("actor", "human:anna"),
            ("source", "review-2"),
            ("csrf", token),
            ("step", step),
            ("expected_head", expected),
        ];
        form(&server, &format!("{path}/actions/review"), &fields, &[])
    };
    // The preview: the term approved and the verdict, the chunks that now get it confirmed.
    let preview = post("preview", &token, &expected);
    assert_eq!(preview.status, 200, "{}", preview.text());
    let html = preview.text();
    assert!(html.contains("It would append 2 events"), "{html}");
    let reopened: usize = html.split("data-reopened=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(reopened > 0, "{html}");
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a preview wrote something");
    assert_eq!(post("save", &"f".repeat(64), &expected).status, 403);
    // Saved: the events `review accept` writes, as the editor typed the actor and source.
    let saved = post("save", &token, &expected);
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(saved.header("location"), Some(path));
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head + 2);
    let event = |book: &str, seq: u64| {
        let event = server.get(&format!("/v1/books/{book}/events/{seq}")).ok();
        (event["body"].clone(), event["actor"].clone(), event["source"].clone())
    };
    let written = [event("wuchuan", head + 1), event("wuchuan", head + 2)];
    assert_eq!(written[0].0["term_put"]["status"], "approved", "{written:?}");
    assert_eq!(written[1].0["disposition_set"]["verdict"], "accept", "{written:?}");
    let twin = glossary_twin(dir.path());
    cli(&twin, &["review", "accept", "T-10", "--actor", "human:anna", "--source", "review-2"]);
    let twin_head = server.info("twin")["head"].as_u64().unwrap();
    assert_eq!(written, [event("twin", twin_head - 1), event("twin", twin_head)], "as the CLI writes them");
    // The queue no longer flags it; a form read before the write is refused.
    let queue = server.get("/v1/books/wuchuan/review/queue").ok();
    assert!(!queue.to_string().contains("\"T-10\""), "{queue}");
    assert_eq!(post("save", &token, &expected).status, 409);
}

#[test]
fn a_rule_is_written_and_revised_from_the_rules_page_as_apply_writes_it() {
    let (dir, server) = library();
    audit_book::bundled(&server);
    // Rules are rendered from render format 2 on.
    let format_2 = serde_json::json!({ "config_set": {
        "assembly": { "token_budget": 400, "sticky_chunks": 2, "min_key_chars": 2, "render_format": 2, "token_estimator": 1 },
        "profile": { "name": "zh" },
    } });
    server.post("/v1/books/wuchuan/events", &serde_json::json!({ "events": [format_2], "actor": "human:editor" })).ok();
    let path = "/ui/books/wuchuan/rules";
    let html = page(&server, path);
    assert_eq!(twin(&html).as_deref(), Some("/v1/books/wuchuan/glossary"));
    assert!(page(&server, "/ui/books/wuchuan").contains("/ui/books/wuchuan/rules"), "the book page links it");
    let token = csrf(&html);
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let post = |fields: &[(&str, &str)], step: &str| {
        let mut all = fields.to_vec();
        all.extend([("csrf", token.as_str()), ("step", step)]);
        form(&server, "/ui/books/wuchuan/rules/put", &all, &[])
    };
    let text = "Обращения в диалогах — на «вы».";
    let expected = head.to_string();
    let mut new = vec![
        ("id", ""),
        ("text", text),
        ("applies_to", "dialogue, kind:character"),
        ("does_not_apply_to", "none"),
        ("since", "1"),
        ("until", ""),
        ("status", "approved"),
        ("priority", "2"),
        ("actor", "human:anna"),
        ("source", "style-guide-1"),
        ("expected_head", expected.as_str()),
    ];
    // The preview: the new rule, numbered; nothing written.
    let preview = post(&new, "preview");
    assert_eq!(preview.status, 200, "{}", preview.text());
    assert!(preview.text().contains("data-changed=\"new\""), "{}", preview.text());
    assert!(preview.text().contains("name=\"id\" value=\"R-1\""), "the save puts the id previewed");
    assert!(preview.text().contains("data-reopened=\""), "{}", preview.text());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a preview wrote something");
    // Refused beside their field: no selector (the book's rule), a word that is none.
    for (applies_to, message) in
        [("", "at least one selector"), ("kind:character, speech", "speech&quot; is not a selector")]
    {
        new[2].1 = applies_to;
        let reply = post(&new, "save");
        assert_eq!(reply.status, 400, "{}", reply.text());
        marked_invalid(&reply.text(), "applies_to");
        assert!(message_beside(&reply.text(), "applies_to").contains(message), "{}", reply.text());
        assert!(reply.text().contains(text), "the text as typed");
    }
    new[2].1 = "dialogue, kind:character";
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head);
    let saved = post(&new, "save");
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(saved.header("location"), Some("/ui/books/wuchuan/rules#R-1"));
    let created = last_event(&server, "wuchuan");
    // The rule's form on the page, filled as written; revised: its priority and window.
    let html = page(&server, path);
    assert!(html.contains("data-rule=\"R-1\""), "{html}");
    assert!(input_tag(&html, "applies_to").contains("value=\"dialogue, kind:character\""), "{html}");
    let expected = (head + 1).to_string();
    let revised = [
        ("id", "R-1"),
        ("text", text),
        ("applies_to", "dialogue, kind:character"),
        ("does_not_apply_to", "none"),
        ("since", "2"),
        ("until", "40"),
        ("status", "approved"),
        ("priority", "5"),
        ("actor", "human:anna"),
        ("source", "style-guide-1"),
        ("expected_head", expected.as_str()),
    ];
    let preview = post(&revised, "preview");
    assert!(preview.text().contains("data-changed=\"2\""), "window and priority: {}", preview.text());
    assert_eq!(post(&revised, "save").status, 303);
    assert_eq!(post(&revised, "save").status, 409, "a form read before that write");
    let revised = last_event(&server, "wuchuan");
    // The twin: the same rule written with `apply`, one line each.
    let twin = glossary_twin(dir.path());
    let config = dir.path().join("format-2.jsonl");
    std::fs::write(&config, format!("{format_2}\n")).unwrap();
    cli(&twin, &["apply", config.to_str().unwrap(), "--actor", "human:editor"]);
    let rule = |since: u32, until: Option<u32>, priority: i32| {
        serde_json::json!({ "rule_put": {
            "id": "R-1", "text": text, "applies_to": ["dialogue", { "kind": "character" }],
            "does_not_apply_to": [], "window": { "since": since, "until": until },
            "status": "approved", "priority": priority,
        } })
    };
    for (n, line) in [rule(1, None, 2), rule(2, Some(40), 5)].iter().enumerate() {
        let file = dir.path().join(format!("rule-{n}.jsonl"));
        std::fs::write(&file, format!("{line}\n")).unwrap();
        cli(&twin, &["apply", file.to_str().unwrap(), "--actor", "human:anna", "--source", "style-guide-1"]);
    }
    let twin_head = server.info("twin")["head"].as_u64().unwrap();
    let twin_event = |seq: u64| {
        let event = server.get(&format!("/v1/books/twin/events/{seq}")).ok();
        (event["body"].clone(), event["actor"].clone(), event["source"].clone())
    };
    assert_eq!(created, twin_event(twin_head - 1), "the new rule, as apply writes it");
    assert_eq!(revised, twin_event(twin_head), "the revision, as apply writes it");
}

#[test]
fn the_chapter_page_shows_the_examples_a_chunk_was_given_and_where_they_come_from() {
    let (_dir, server) = library();
    audit_book::bundled(&server);
    // Chapter 2, chunk 2 translated with the lamp rendered (declined) and checked.
    let recorded = audit_book::record(&server, "wuchuan", 2, &audit_book::chunks(2));
    let receipt = recorded["chunks"][1]["receipt"].as_str().unwrap().to_owned();
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let translation = std::fs::read_to_string(root.join("examples/wuchuan/review/02-2.ru.txt")).unwrap();
    let check = serde_json::json!({ "translation": translation, "actor": "tool:postcheck" });
    server.post(&format!("/v1/books/wuchuan/receipts/{receipt}/check"), &check).ok();
    let format_3 = [r#"{"config_set":{"assembly":{"render_format":3}}}"#];
    server.append_lines("wuchuan", "actor=human:editor&source=format-3", &format_3).ok();
    let chapter_3 = audit_book::record(&server, "wuchuan", 3, &audit_book::chunks(3));
    let first = &chapter_3["chunks"][0];
    assert_eq!(first["examples"][0]["term"], "T-9", "{first}");
    // The receipt's JSON twin holds the pair and where it comes from.
    let id = first["receipt"].as_str().unwrap();
    let stored = server.get(&format!("/v1/books/wuchuan/receipts/{id}")).ok();
    assert_eq!(stored["examples"][0]["receipt"], receipt.as_str(), "{stored}");
    assert!(stored["examples"][0]["target"].as_str().unwrap().contains("негасимую лампаду"), "{stored}");
    let page = page(&server, "/ui/books/wuchuan/chapters/3");
    // Both chunks name the lamp (3-2 in traditional characters): each shows it.
    assert_eq!(page.matches("data-example=\"T-9\"").count(), 2, "{page}");
    assert!(page.contains("сначала иди охранять негасимую лампаду."), "{page}");
    assert!(page.contains("href=\"/ui/books/wuchuan/chapters/2#"), "{page}");
}
