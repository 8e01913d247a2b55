//! The audit page in a real browser: starts `lorebank serve` on a free loopback
//! port with the bundled book built through its API (tests/common/audit_book.rs),
//! starts Debian's chromedriver on another, and drives headless Chromium through
//! WebDriver (a small client over the shared HTTP/1.1 test client). It loads every
//! page, checks what each shows against its JSON twin (the highlighted hits and
//! their dispositions, the timeline's rectangles and markers, the replay status, the
//! diff, the rollback preview), accepts a candidate with the review page's button and
//! sees it injected in the next assembly, loads a book whose records carry script and
//! finds none in the page, and fails on any console error (chromedriver's
//! `goog:loggingPrefs` log, read after every page; a probe page first proves that an
//! error does reach it).
//!
//! A second case is the editor's desk: the demo's editing steps (two terms revised
//! after a preview, a rollback confirmed from its preview, a candidate accepted, a
//! dictionary imported by upload after its dry run), then the book's summary revised
//! and a term marked reviewed, each after a preview, done in the browser on one book
//! and with the CLI on a twin, and the two logs compared event for event (bodies,
//! actors, sources).
//!
//! `LOREBANK_UI_SCREENSHOTS=1` also writes a 1280×900 screenshot of every page to
//! `docs/ui/` (the README shows them); without it the screenshots are taken and
//! checked, not written. A harness = false target: it owns child processes, which it
//! ends (chromedriver with its browser as a process group) when it finishes, fails,
//! or runs past its deadline.

#[path = "common/serve.rs"]
mod serve;

#[path = "common/audit_book.rs"]
mod audit_book;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use serve::Server;
use test_support::harness::Harness;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The whole test must finish within this, or its processes are ended and it fails.
const DEADLINE: Duration = Duration::from_secs(300);
/// The window, and so every screenshot.
const WIDTH: u64 = 1280;
const HEIGHT: u64 = 900;
/// The W3C WebDriver key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Process groups to end at the deadline (each child leads its own).
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn kill_group(pid: u32) {
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).stderr(Stdio::null()).status();
}

fn main() {
    let name = "the_audit_pages_in_headless_chromium";
    let desk = "the_editors_desk_in_headless_chromium";
    let mut harness = Harness::new(&[name, desk]);
    if harness.selected().is_empty() {
        return harness.finish();
    }
    std::thread::spawn(|| {
        std::thread::sleep(DEADLINE);
        eprintln!("ui_browser: still running after {} s; ending its processes", DEADLINE.as_secs());
        for pid in CHILDREN.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).iter() {
            kill_group(*pid);
        }
        std::process::exit(1);
    });
    harness.run(name, || {
        let started = Instant::now();
        let n_checks = audit_pages_in_a_browser();
        eprintln!("ui_browser: {n_checks} checks in {:.1} s", started.elapsed().as_secs_f64());
    });
    harness.run(desk, || {
        let started = Instant::now();
        editors_desk_in_a_browser();
        eprintln!("ui_browser: the editor's desk in {:.1} s", started.elapsed().as_secs_f64());
    });
    harness.finish();
}

/// A server over a library folder (`books`) in a temporary folder, its process ended
/// at the deadline with the others.
fn served_library() -> (tempfile::TempDir, PathBuf, Server) {
    let dir = tempfile::tempdir().unwrap();
    let books = dir.path().join("books");
    std::fs::create_dir(&books).unwrap();
    let server = Server::start(&books, &[]);
    CHILDREN.lock().unwrap().push(server.pid());
    (dir, books, server)
}

// ----- the editor's desk -----

/// The CLI on book file `book`, which must succeed; its stdout.
fn cli(book: &Path, args: &[&str]) -> String {
    let output =
        Command::new(serve::BIN).arg("--book").arg(book).args(args).env_remove("LOREBANK_BOOK").output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Every event of a book after revision `from`, as (body, actor, source): what two
/// books that took the same steps must hold alike (not when, not the chain).
fn events_after(server: &Server, book: &str, from: u64) -> Vec<(Value, String, String)> {
    let reply = server.get(&format!("/v1/books/{book}/events?from={}", from + 1));
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply
        .text()
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            (
                event["body"].clone(),
                event["actor"].as_str().unwrap().to_owned(),
                event["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The demo's editing steps done in the browser on one book (revise two terms with
/// a preview, roll back from the preview page, accept a candidate, import a dictionary
/// by upload), the same steps done with the CLI on a twin book, and the two logs
/// compared: the same bodies, actors and sources, event for event.
fn editors_desk_in_a_browser() {
    let (dir, books, server) = served_library();
    let base = format!("http://{}", server.addr);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let glossary = root.join("examples/wuchuan/glossary.jsonl");
    let chapter_6 = dir.path().join("06-1.txt");
    std::fs::copy(root.join("examples/wuchuan/review/06-1.txt"), &chapter_6).unwrap();
    // Two books alike: "desk" for the browser, "twin" for the CLI (a file of the same
    // library, which the server never opens).
    let twin = books.join("twin.lorebank");
    for book in [books.join("desk.lorebank"), twin.clone()] {
        cli(&book, &["init", "--profile", "zh", "--actor", "human:editor"]);
        cli(&book, &["apply", glossary.to_str().unwrap(), "--actor", "import:example"]);
        let text = chapter_6.to_str().unwrap();
        cli(&book, &["scan", "--chapter", "6", "--chunk", "1", "--text", text, "--actor", "tool:names"]);
    }
    // The browser's book has recorded chunks, so a change shows the ones it re-opens
    // (receipts are no events: the logs stay comparable).
    for chapter in 1..=2 {
        audit_book::record(&server, "desk", chapter, &audit_book::chunks(chapter));
    }
    let before = server.info("desk")["head"].as_u64().unwrap();
    let candidate = server.get("/v1/books/desk/review").ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["surface"] == "林晚")
        .expect("林晚 is proposed")["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let driver = Driver::start();
    let mut session = driver.session(&dir.path().join("chromium-profile"));
    let field = |form: &Element<'_>, name: &str, value: &str| {
        let input = form.one_within(&format!("[name=\"{name}\"]"));
        input.clear();
        input.type_text(value);
    };
    // Revise two terms, each previewed first: the preview names the chunks... and writes nothing.
    for (id, dst, decl, approve) in [
        ("T-10", "Секта Фонаря", "Секты Фонаря, Секте Фонаря", true),
        ("T-7", "Туманная река", "Туманной реки, Туманную реку", false),
    ] {
        session.go(&format!("{base}/ui/books/desk/terms/{id}"));
        let form = session.one("form.edit");
        field(&form, "dst", dst);
        field(&form, "decl", decl);
        if approve {
            form.one_within("select[name=\"status\"] option[value=\"approved\"]").click();
        }
        field(&form, "actor", "human:editor");
        field(&form, "source", "review-1");
        let head = server.info("desk")["head"].as_u64().unwrap();
        let page = session.url();
        form.one_within("button[value=\"preview\"]").click();
        let preview = session.left(&page);
        assert!(session.title().contains("preview"), "{}", session.title());
        assert_eq!(session.one("p.lead").attr("data-written").as_deref(), Some("false"));
        assert_eq!(server.info("desk")["head"].as_u64().unwrap(), head, "a preview wrote something");
        let reopened: usize = session.one("[data-reopened]").attr("data-reopened").unwrap().parse().unwrap();
        assert!(reopened > 0, "{id}: the chapters that name it are re-opened");
        session.no_console_errors("edit preview");
        if id == "T-7" {
            session.screenshot("edit-preview");
        }
        session.one("form.edit button[value=\"save\"]").click();
        let saved = session.left(&preview);
        assert!(saved.ends_with(&format!("/terms/{id}")), "{saved}");
        assert_eq!(server.info("desk")["head"].as_u64().unwrap(), head + 1);
    }
    // A window that ends before it starts: the form comes back as typed, the message
    // beside the field, which has the focus; nothing is written.
    session.go(&format!("{base}/ui/books/desk/terms/T-7"));
    let form = session.one("form.edit");
    field(&form, "since", "12");
    field(&form, "until", "3");
    let head = server.info("desk")["head"].as_u64().unwrap();
    let page = session.url();
    form.one_within("button[value=\"preview\"]").click();
    session.left(&page);
    session.shows("form.edit [aria-invalid=\"true\"]");
    let focused = session.call(
        "POST",
        "/execute/sync",
        Some(&json!({ "script": "return document.activeElement.getAttribute('aria-invalid')", "args": [] })),
    );
    assert_eq!(focused, "true", "the field the refusal names has the focus");
    assert_eq!(server.info("desk")["head"].as_u64().unwrap(), head, "a refused preview wrote something");
    // The browser logs the page's 400 as an error; nothing else.
    for (level, message) in session.log() {
        assert!(level != "SEVERE" || message.contains("status of 400"), "refused edit: console {level}: {message}");
    }
    session.screenshot("edit-refused");
    cli(
        &twin,
        &[
            "term",
            "edit",
            "T-10",
            "--dst",
            "Секта Фонаря",
            "--decl",
            "Секты Фонаря,Секте Фонаря",
            "--status",
            "approved",
            "--actor",
            "human:editor",
            "--source",
            "review-1",
        ],
    );
    cli(
        &twin,
        &[
            "term",
            "edit",
            "T-7",
            "--dst",
            "Туманная река",
            "--decl",
            "Туманной реки,Туманную реку",
            "--actor",
            "human:editor",
            "--source",
            "review-1",
        ],
    );

    // Roll back from the preview page.
    session.go(&format!("{base}/ui/books/desk/rollback?to={before}"));
    let form = session.one("form.rollback");
    field(&form, "reason", "keep the published names");
    field(&form, "actor", "human:editor");
    let page = session.url();
    form.one_within("button").click();
    let landed = session.left(&page);
    assert!(landed.ends_with("/ui/books/desk"), "{landed}");
    let target = server.get(&format!("/v1/books/desk/snapshot?as_of={before}")).ok()["snapshot"].clone();
    assert_eq!(server.get("/v1/books/desk/snapshot").ok()["snapshot"], target);
    cli(
        &twin,
        &["rollback", "--to", &before.to_string(), "--reason", "keep the published names", "--actor", "human:editor"],
    );

    // Accept the candidate from the review page, as the editor.
    session.go(&format!("{base}/ui/books/desk/review?as=human:editor"));
    let item = session.one(&format!("section.item[data-id=\"{candidate}\"]"));
    let form = item.one_within("form.accept");
    field(&form, "dst", "Линь Вань");
    form.one_within("select[name=\"gender\"] option[value=\"f\"]").click();
    field(&form, "kind", "character");
    let page = session.url();
    form.one_within("button.accept").click();
    let landed = session.left(&page);
    assert!(landed.contains("/ui/books/desk/terms/T-"), "{landed}");
    cli(
        &twin,
        &[
            "review",
            "accept",
            &candidate,
            "--dst",
            "Линь Вань",
            "--gender",
            "f",
            "--kind",
            "character",
            "--actor",
            "human:editor",
            "--source",
            "ui:review",
        ],
    );

    // Import a dictionary by upload: the dry run, then the import.
    let dictionary = dir.path().join("dict.txt");
    std::fs::write(&dictionary, "孤岛\tОдинокий остров\n雾川\tТуманная река\n").unwrap();
    session.go(&format!("{base}/ui/books/desk/import"));
    let form = session.one("form.import");
    form.one_within("input[name=\"file\"]").type_text(dictionary.to_str().unwrap());
    form.one_within("button").click();
    session.shows("p.lead[data-dry-run]");
    assert_eq!(
        session.one("p.lead").attr("data-dry-run").as_deref(),
        Some("true"),
        "{}: {}",
        session.title(),
        session.one("main").text()
    );
    // The rename of 雾川 back re-opens the chunks that name it.
    let reopened: usize = session.one("[data-reopened]").attr("data-reopened").unwrap().parse().unwrap();
    assert!(reopened > 0, "{}", session.one("main").text());
    session.screenshot("import-dry-run");
    session.one("form.import button[value=\"import\"]").click();
    // The import runs as a job: its page shows the report when it has ended.
    let job = session.shows("p.lead[data-dry-run=\"false\"]");
    assert!(job.starts_with(&format!("{base}/ui/books/desk/jobs/")), "{job}");
    assert_eq!(session.one("p.lead").attr("data-written").as_deref(), Some("true"));
    session.no_console_errors("import");
    cli(&twin, &["import", dictionary.to_str().unwrap()]);

    // A large import, into a book of its own, shows its progress while it runs.
    server.create("large");
    let large = dir.path().join("large.txt");
    std::fs::write(&large, (0..20_000).map(|n| format!("词{n}\tслово {n}\n")).collect::<String>()).unwrap();
    session.go(&format!("{base}/ui/books/large/import"));
    let form = session.one("form.import");
    form.one_within("input[name=\"file\"]").type_text(large.to_str().unwrap());
    form.one_within("button").click();
    session.shows("p.lead[data-dry-run=\"true\"]");
    session.one("form.import button[value=\"import\"]").click();
    session.shows("p.lead[data-job-state=\"running\"]");
    session.screenshot("job");
    assert!(session.url().starts_with(&format!("{base}/ui/books/large/jobs/")), "{}", session.url());
    // It loads itself again until the job has ended.
    session.shows("p.lead[data-dry-run=\"false\"]");
    assert_eq!(session.one("p.lead").attr("data-written").as_deref(), Some("true"));
    session.no_console_errors("a job");

    // Revise the book's summary from the summaries page, previewed first.
    let summary = "Юный Шэнь Чжао из Секты Фонаря ищет негасимую лампаду.";
    session.go(&format!("{base}/ui/books/desk/summaries"));
    let form = session.one("form.summary[data-summary=\"S-1\"]");
    field(&form, "text", summary);
    field(&form, "actor", "human:editor");
    field(&form, "source", "summary-1");
    let head = server.info("desk")["head"].as_u64().unwrap();
    let page = session.url();
    form.one_within("button[value=\"preview\"]").click();
    let preview = session.left(&page);
    assert_eq!(session.one("p.lead").attr("data-written").as_deref(), Some("false"));
    assert_eq!(session.one("ul.changes").attr("data-changed").as_deref(), Some("1"));
    assert_eq!(server.info("desk")["head"].as_u64().unwrap(), head, "a preview wrote something");
    session.no_console_errors("summary preview");
    session.one("form.summary button[value=\"save\"]").click();
    let saved = session.left(&preview);
    assert!(saved.ends_with("/summaries#S-1"), "{saved}");
    session.go(&format!("{base}/ui/books/desk/summaries"));
    session.screenshot("summaries");
    cli(
        &twin,
        &[
            "summary",
            "put",
            "--id",
            "S-1",
            "--scope",
            "book",
            "--text",
            summary,
            "--actor",
            "human:editor",
            "--source",
            "summary-1",
        ],
    );

    // The rules page: a form per rule and one for a new rule (filled, not sent).
    session.go(&format!("{base}/ui/books/desk/rules"));
    let form = session.one("form.rule[data-rule=\"\"]");
    field(&form, "text", "Обращения к старшим в Секте Фонаря — на «вы».");
    field(&form, "applies_to", "kind:character, dialogue");
    session.no_console_errors("rules");
    session.screenshot("rules");

    // Mark T-10 reviewed from its page, previewed first.
    session.go(&format!("{base}/ui/books/desk/terms/T-10"));
    let form = session.one("form[data-action=\"review\"]");
    field(&form, "actor", "human:editor");
    field(&form, "source", "review-2");
    let page = session.url();
    form.one_within("button[value=\"preview\"]").click();
    let preview = session.left(&page);
    assert_eq!(session.one("p.lead").attr("data-written").as_deref(), Some("false"));
    session.one("form[data-action=\"review\"] button[value=\"save\"]").click();
    let saved = session.left(&preview);
    assert!(saved.ends_with("/terms/T-10"), "{saved}");
    session.no_console_errors("mark reviewed");
    cli(&twin, &["review", "accept", "T-10", "--actor", "human:editor", "--source", "review-2"]);

    // The two logs hold the same events: bodies, actors and sources.
    let in_browser = events_after(&server, "desk", before);
    let with_cli = events_after(&server, "twin", before);
    assert!(in_browser.len() >= 9, "{in_browser:?}");
    assert_eq!(in_browser, with_cli);

    session.quit();
    drop(driver);
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{stderr}");
}

// ----- a WebDriver client -----

/// `chromedriver` on a free loopback port, in a process group of its own so that
/// ending it ends the browser it started.
struct Driver {
    child: Child,
    addr: String,
}

impl Driver {
    fn start() -> Driver {
        for tool in [CHROMIUM, CHROMEDRIVER] {
            assert!(Path::new(tool).exists(), "{tool} is missing: run scripts/setup.sh (chromium, chromium-driver)");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        use std::os::unix::process::CommandExt as _;
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        CHILDREN.lock().unwrap().push(child.id());
        let driver = Driver { child, addr: format!("127.0.0.1:{port}") };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok((200, reply)) = exchange(&driver.addr, "GET", "/status", b"") {
                if serde_json::from_slice::<Value>(&reply).is_ok_and(|status| status["value"]["ready"] == true) {
                    return driver;
                }
            }
            assert!(Instant::now() < deadline, "chromedriver did not become ready");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A new browser session: headless Chromium with a fresh profile, the flags this
    /// machine's closed network needs, the fixed window, and the browser log on.
    fn session(&self, profile: &Path) -> Session {
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=en-US",
                    format!("--user-data-dir={}", profile.display()),
                    format!("--window-size={WIDTH},{HEIGHT}"),
                ],
            },
            "goog:loggingPrefs": { "browser": "ALL" },
        }}});
        let value = call(&self.addr, "POST", "/session", Some(&capabilities));
        let id = value["sessionId"].as_str().expect("a session id").to_owned();
        let session = Session { addr: self.addr.clone(), id, open: true };
        // The viewport itself is the fixed size (the window's frame varies).
        let metrics = json!({ "cmd": "Emulation.setDeviceMetricsOverride", "params": {
            "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": false,
        }});
        session.call("POST", "/goog/cdp/execute", Some(&metrics));
        session
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 exchange with chromedriver, which keeps the connection open after
/// its answer: the body is read to its `Content-Length`.
fn exchange(addr: &str, method: &str, path: &str, body: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
    use std::io::{Read as _, Write as _};
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 65536];
    loop {
        if let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            let status: u16 = head.split(' ').nth(1).and_then(|code| code.parse().ok()).ok_or_else(|| bad("status"))?;
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|length| length.trim().parse().ok())
                .ok_or_else(|| bad("no content-length"))?;
            if bytes.len() >= end + 4 + length {
                return Ok((status, bytes[end + 4..end + 4 + length].to_vec()));
            }
        }
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            return Err(bad("connection closed before the end of the answer"));
        }
        bytes.extend_from_slice(&buffer[..n]);
    }
}

/// One WebDriver command; its `value`. A WebDriver error fails the test.
fn call(addr: &str, method: &str, path: &str, body: Option<&Value>) -> Value {
    let bytes = body.map(|body| body.to_string().into_bytes()).unwrap_or_default();
    let (status, reply) =
        exchange(addr, method, path, &bytes).unwrap_or_else(|error| panic!("{method} {path}: {error}"));
    let answer: Value = serde_json::from_slice(&reply)
        .unwrap_or_else(|error| panic!("{method} {path}: {error}: {}", String::from_utf8_lossy(&reply)));
    assert_eq!(status, 200, "{method} {path}: {answer}");
    answer["value"].clone()
}

struct Session {
    addr: String,
    id: String,
    open: bool,
}

impl Session {
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        call(&self.addr, method, &format!("/session/{}{path}", self.id), body)
    }

    fn go(&self, url: &str) {
        self.call("POST", "/url", Some(&json!({ "url": url })));
    }

    fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().unwrap().to_owned()
    }

    /// Waits (bounded) for a navigation a click started to land somewhere else than
    /// `from`; the URL it landed on.
    /// Waits until a loaded page has an element matching `css` (after a click that
    /// posts a form to the URL the page is on), and returns the page's URL.
    fn shows(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = self.call(
                "POST",
                "/execute/sync",
                Some(&json!({ "script": "return document.readyState", "args": [] })),
            );
            if ready == "complete" && !self.all(css).is_empty() {
                return self.url();
            }
            assert!(Instant::now() < deadline, "no {css} after a click");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn left(&self, from: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let url = self.url();
            let ready = self.call(
                "POST",
                "/execute/sync",
                Some(&json!({ "script": "return document.readyState", "args": [] })),
            );
            if url != from && ready == "complete" {
                return url;
            }
            assert!(Instant::now() < deadline, "still on {from} after a click");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn title(&self) -> String {
        self.call("GET", "/title", None).as_str().unwrap().to_owned()
    }

    fn all(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.call("POST", "/elements", Some(&json!({ "using": "css selector", "value": css })));
        found
            .as_array()
            .unwrap()
            .iter()
            .map(|element| Element { session: self, id: element[ELEMENT].as_str().unwrap().to_owned() })
            .collect()
    }

    fn one(&self, css: &str) -> Element<'_> {
        let mut found = self.all(css);
        assert_eq!(found.len(), 1, "{css} on {}: {} elements", self.url(), found.len());
        found.remove(0)
    }

    /// The browser log since the last read: every entry, as (level, message).
    fn log(&self) -> Vec<(String, String)> {
        let entries = self.call("POST", "/se/log", Some(&json!({ "type": "browser" })));
        entries
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| (entry["level"].as_str().unwrap_or("").to_owned(), entry["message"].to_string()))
            .collect()
    }

    /// Fails on any console error since the last read (warnings are printed).
    fn no_console_errors(&self, page: &str) {
        for (level, message) in self.log() {
            assert_ne!(level, "SEVERE", "{page}: console error: {message}");
            eprintln!("ui_browser: {page}: console {level}: {message}");
        }
    }

    /// The page as PNG: checked to be the window's size, and written to `docs/ui/`
    /// when `LOREBANK_UI_SCREENSHOTS` is set.
    fn screenshot(&self, name: &str) {
        let data = self.call("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}: not a PNG");
        // IHDR's width and height, in network byte order as PNG stores them.
        let number = |bytes: &[u8]| bytes.iter().fold(0u32, |n, byte| n << 8 | u32::from(*byte));
        let (width, height) = (number(&png[16..20]), number(&png[20..24]));
        assert_eq!((u64::from(width), u64::from(height)), (WIDTH, HEIGHT), "{name}: screenshot size");
        if std::env::var_os("LOREBANK_UI_SCREENSHOTS").is_some() {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/ui");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
        }
    }

    fn quit(&mut self) {
        if std::mem::take(&mut self.open) {
            self.call("DELETE", "", None);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.open {
            let _ = exchange(&self.addr, "DELETE", &format!("/session/{}", self.id), b"");
        }
    }
}

struct Element<'s> {
    session: &'s Session,
    id: String,
}

impl Element<'_> {
    fn attr(&self, name: &str) -> Option<String> {
        self.session.call("GET", &format!("/element/{}/attribute/{name}", self.id), None).as_str().map(str::to_owned)
    }

    fn property(&self, name: &str) -> Value {
        self.session.call("GET", &format!("/element/{}/property/{name}", self.id), None)
    }

    fn text(&self) -> String {
        self.session.call("GET", &format!("/element/{}/text", self.id), None).as_str().unwrap().to_owned()
    }

    fn click(&self) {
        self.session.call("POST", &format!("/element/{}/click", self.id), Some(&json!({})));
    }

    fn clear(&self) {
        self.session.call("POST", &format!("/element/{}/clear", self.id), Some(&json!({})));
    }

    fn type_text(&self, text: &str) {
        self.session.call("POST", &format!("/element/{}/value", self.id), Some(&json!({ "text": text })));
    }

    fn within(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.session.call(
            "POST",
            &format!("/element/{}/elements", self.id),
            Some(&json!({ "using": "css selector", "value": css })),
        );
        found
            .as_array()
            .unwrap()
            .iter()
            .map(|element| Element { session: self.session, id: element[ELEMENT].as_str().unwrap().to_owned() })
            .collect()
    }
}

// ----- the test -----

/// The class the chapter page gives a hit, by the documented rule (docs/ui.md):
/// rejected as a spoiler, rejected otherwise, left out by the budget, confirmed or
/// ambiguous.
fn expected_outcome(hit: &Value) -> &'static str {
    let injected = hit["injected"] == true;
    match (hit["disposition"].as_str().unwrap(), hit["reason"].as_str()) {
        ("rejected", Some("spoiler_window")) => "spoiler",
        ("rejected", _) => "rejected",
        _ if !injected && hit["evicted"] == true => "budget",
        ("confirmed", _) if injected => "confirmed",
        ("ambiguous", _) if injected => "ambiguous",
        _ => "rejected",
    }
}

/// Checks a chapter page against its JSON twin; returns the checks made.
fn check_chapter(session: &Session, server: &Server, base: &str, chapter: u32) -> usize {
    let twin = server.get(&format!("/v1/books/wuchuan/chapters/{chapter}/audit")).ok();
    session.go(&format!("{base}/ui/books/wuchuan/chapters/{chapter}"));
    let mut n_checks = 0;
    let chunks = twin["chunks"].as_array().unwrap();
    assert_eq!(session.all("section.chunk").len(), chunks.len(), "chapter {chapter}: chunks");
    for chunk in chunks {
        let receipt = chunk["receipt"].as_str().unwrap();
        let card = session.one(&format!("section.chunk[data-receipt=\"{receipt}\"]"));
        // Every hit is a badge with the disposition its twin gives it.
        let mut expected: Vec<(String, String)> = chunk["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| (hit["term"].as_str().unwrap().to_owned(), expected_outcome(hit).to_owned()))
            .collect();
        let mut shown: Vec<(String, String)> = card
            .within("mark.hit a.badge")
            .iter()
            .map(|badge| (badge.attr("data-term").unwrap(), badge.attr("data-outcome").unwrap()))
            .collect();
        expected.sort();
        shown.sort();
        assert_eq!(shown, expected, "chapter {chapter}, receipt {receipt}: highlighted hits");
        // Each mark's text is a surface its twin recorded.
        let recorded: Vec<&str> =
            chunk["hits"].as_array().unwrap().iter().map(|hit| hit["text"].as_str().unwrap()).collect();
        for surface in card.within("mark.hit > a:first-child").iter().map(Element::text) {
            assert!(recorded.contains(&surface.as_str()), "chapter {chapter}: {surface} is not a hit of {recorded:?}");
        }
        let replay = card.one_within("[data-replay]");
        let identical = chunk["replay"]["identical"] == true;
        assert_eq!(replay.attr("data-replay").as_deref(), Some(if identical { "identical" } else { "differs" }));
        assert!(identical, "chapter {chapter}: the bundled book replays byte for byte");
        // The injected context is beside the text.
        assert_eq!(card.one_within("pre.context").text().trim(), chunk["output"].as_str().unwrap().trim());
        n_checks += expected.len() + 3;
    }
    session.no_console_errors(&format!("chapter {chapter}"));
    n_checks
}

impl Element<'_> {
    fn one_within(&self, css: &str) -> Element<'_> {
        let mut found = self.within(css);
        assert_eq!(found.len(), 1, "{css}: {} elements", found.len());
        found.remove(0)
    }
}

fn audit_pages_in_a_browser() -> usize {
    let (dir, _books, server) = served_library();
    let base = format!("http://{}", server.addr);
    let bundled = audit_book::bundled(&server);
    audit_book::hostile(&server);

    let driver = Driver::start();
    let profile = dir.path().join("chromium-profile");
    let mut session = driver.session(&profile);
    let mut n_checks = 0;

    // The console log works: a page that logs an error is caught.
    session.go("data:text/html,<p>probe</p><script>console.error('ui_browser probe')</script>");
    let probe = session.log();
    assert!(
        probe.iter().any(|(level, message)| level == "SEVERE" && message.contains("ui_browser probe")),
        "the browser log does not show console errors: {probe:?}"
    );

    // The library.
    session.go(&format!("{base}/ui/"));
    let listed: Vec<String> = session.all("ul.books a").iter().map(Element::text).collect();
    assert_eq!(listed, ["hostile", "wuchuan"]);
    session.no_console_errors("library");
    session.screenshot("library");

    // The book: head, snapshot, verify, chapters.
    session.one("ul.books a[href=\"/ui/books/wuchuan\"]").click();
    assert_eq!(session.left(&format!("{base}/ui/")), format!("{base}/ui/books/wuchuan"));
    let overview = server.get("/v1/books/wuchuan/overview").ok();
    assert_eq!(session.one("[data-head]").attr("data-head"), Some(bundled.head.to_string()));
    assert_eq!(session.one("code.snapshot").text(), overview["snapshot"].as_str().unwrap());
    assert_eq!(session.one("[data-verify]").attr("data-verify").as_deref(), Some("ok"));
    let chapters: Vec<String> = session.all("ul.chapters a").iter().map(Element::text).collect();
    assert_eq!(chapters, ["chapter 1", "chapter 2", "chapter 3", "chapter 4", "chapter 5", "chapter 6"]);
    assert_eq!(session.all("table.events tbody tr").len(), overview["recent"].as_array().unwrap().len());
    n_checks += 5;
    session.no_console_errors("book");
    session.screenshot("book");

    // Every chapter: its hits highlighted by disposition, its replay status.
    for chapter in 1..=6 {
        n_checks += check_chapter(&session, &server, &base, chapter);
    }
    // Chapter 1: 沈照 confirmed, the unreviewed 灯宗 ambiguous, and the later 顾寒川
    // (T-4, from chapter 4) blocked as a spoiler on the span the mentor T-2 takes.
    session.go(&format!("{base}/ui/books/wuchuan/chapters/1"));
    assert!(!session.all("mark.hit.confirmed[data-terms~=\"T-1\"]").is_empty());
    assert!(!session.all("mark.hit.ambiguous[data-terms~=\"T-10\"]").is_empty());
    assert!(!session.all("a.badge.spoiler[data-term=\"T-4\"]").is_empty());
    assert!(!session.all("mark.hit.confirmed[data-terms~=\"T-2\"][data-terms~=\"T-4\"]").is_empty());
    // The post-check of chunk 1 is listed under it.
    let first = session.one(&format!("section.chunk[data-receipt=\"{}\"]", bundled.first_receipt));
    assert_eq!(first.within("table.checks").len(), 1);
    n_checks += 5;
    session.no_console_errors("chapter 1 again");
    session.screenshot("chapter");

    // A term's timeline: one rectangle per stretch of its twin, at its revisions and
    // chapters; supersession and the chunks that hit it.
    for id in ["T-2", "T-7"] {
        let twin = server.get(&format!("/v1/books/wuchuan/terms/{id}/timeline")).ok();
        session.go(&format!("{base}/ui/books/wuchuan/terms/{id}"));
        let rects = session.all("svg.timeline rect.stretch");
        let stretches = twin["stretches"].as_array().unwrap();
        assert_eq!(rects.len(), stretches.len(), "{id}: rectangles");
        for (rect, stretch) in rects.iter().zip(stretches) {
            assert_eq!(rect.attr("data-from"), Some(stretch["from"].to_string()), "{id}");
            assert_eq!(rect.attr("data-until"), stretch["until"].as_u64().map(|until| until.to_string()), "{id}");
            assert_eq!(rect.attr("data-version"), Some(stretch["version"].to_string()), "{id}");
            assert_eq!(rect.attr("data-since"), Some(stretch["effective"]["since"].to_string()), "{id}");
            assert_eq!(
                rect.attr("data-until-chapter"),
                stretch["effective"]["until"].as_u64().map(|until| until.to_string()),
                "{id}"
            );
            assert_eq!(rect.attr("data-superseded-by"), stretch["superseded_by"].as_str().map(str::to_owned), "{id}");
            n_checks += 6;
        }
        let marks = twin["marks"].as_array().unwrap();
        assert_eq!(session.all("svg.timeline circle.mark").len(), marks.len(), "{id}: markers");
        let injected = marks.iter().filter(|mark| !mark["injected"].is_null()).count();
        assert_eq!(session.all("svg.timeline circle.mark.injected").len(), injected, "{id}: injected markers");
        assert_eq!(session.all("table.versions tr[data-version]").len(), twin["versions"].as_array().unwrap().len());
        n_checks += 3;
        session.no_console_errors(id);
    }
    // T-2 (the mentor) is superseded by T-4 from T-4's put on; T-7 was renamed and
    // rolled back: three versions, three rectangles.
    session.go(&format!("{base}/ui/books/wuchuan/terms/T-2"));
    assert_eq!(session.all("svg.timeline rect.stretch[data-superseded-by=\"T-4\"]").len(), 1);
    assert_eq!(session.all("svg.timeline rect.stretch").len(), 2);
    session.screenshot("term-superseded");
    session.go(&format!("{base}/ui/books/wuchuan/terms/T-7"));
    assert_eq!(session.all("svg.timeline rect.stretch").len(), 3);
    assert_eq!(session.all("table.versions tr[data-version]").len(), 3);
    session.screenshot("term");
    n_checks += 4;
    session.no_console_errors("T-7");

    // An event, linked from the term page.
    session.one(&format!("table.versions tr[data-version] a.event[href$=\"/events/{}\"]", bundled.revised)).click();
    let here = format!("{base}/ui/books/wuchuan/terms/T-7");
    assert_eq!(session.left(&here), format!("{base}/ui/books/wuchuan/events/{}", bundled.revised));
    assert!(session.title().starts_with(&format!("Event {}", bundled.revised)));
    session.no_console_errors("event");
    session.screenshot("event");

    // The diff of the revisions, from the book page's form.
    session.go(&format!("{base}/ui/books/wuchuan"));
    let form = session.one("section.forms form[action$=\"/diff\"]");
    let from = form.one_within("input[name=\"from\"]");
    from.clear();
    from.type_text(&bundled.before.to_string());
    let to = form.one_within("input[name=\"to\"]");
    to.clear();
    to.type_text(&bundled.revised.to_string());
    assert_eq!(from.property("value"), json!(bundled.before.to_string()));
    form.one_within("button").click();
    assert_eq!(
        session.left(&format!("{base}/ui/books/wuchuan")),
        format!("{base}/ui/books/wuchuan/diff?from={}&to={}", bundled.before, bundled.revised)
    );
    let twin = server.get(&format!("/v1/books/wuchuan/diff?from={}&to={}", bundled.before, bundled.revised)).ok();
    let n_fields: usize =
        twin["changed"].as_array().unwrap().iter().map(|c| c["fields"].as_array().unwrap().len()).sum();
    assert_eq!(session.all("table.diff tbody tr").len(), n_fields);
    let records: Vec<String> =
        session.all("table.diff tbody tr").iter().filter_map(|row| row.attr("data-record")).collect();
    assert!(records.contains(&"T-7".to_owned()) && records.contains(&"T-10".to_owned()), "{records:?}");
    n_checks += 3;
    session.no_console_errors("diff");
    session.screenshot("diff");

    // A rollback preview writes nothing, and lands on the target's snapshot.
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    session.go(&format!("{base}/ui/books/wuchuan/rollback?to={}", bundled.revised));
    assert_eq!(session.one("[data-same-snapshot]").attr("data-same-snapshot").as_deref(), Some("true"));
    let twin = server.get(&format!("/v1/books/wuchuan/rollback/preview?to={}", bundled.revised)).ok();
    assert_eq!(session.all("ol.plan li").len(), twin["events"].as_array().unwrap().len());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), head, "a preview wrote something");
    n_checks += 3;
    session.no_console_errors("rollback preview");
    session.screenshot("rollback");

    // The review queue: evidence in context, then the buttons.
    session.go(&format!("{base}/ui/books/wuchuan/review"));
    let queue = server.get("/v1/books/wuchuan/review/queue").ok();
    assert_eq!(session.all("section.item").len(), queue["items"].as_array().unwrap().len());
    let candidate =
        queue["items"].as_array().unwrap().iter().find(|item| item["surface"] == "林晚").expect("林晚 is proposed")
            ["id"]
            .as_str()
            .unwrap()
            .to_owned();
    let item = session.one(&format!("section.item[data-id=\"{candidate}\"]"));
    let spans: Vec<String> = item.within("ul.evidence .in-context mark.span").iter().map(Element::text).collect();
    assert!(!spans.is_empty() && spans.iter().all(|span| span == "林晚"), "{spans:?}");
    // T-9 was flagged by the post-check: its hits are its evidence.
    let flagged = session.one("section.item[data-id=\"T-9\"]");
    assert!(!flagged.within("ul.evidence .in-context").is_empty());
    n_checks += 3;
    session.no_console_errors("review");
    session.screenshot("review");

    // Verify T-9 with its button: back to the queue, the verdict written.
    flagged.one_within("form[action$=\"/verify\"] button").click();
    let landed = session.left(&format!("{base}/ui/books/wuchuan/review"));
    assert!(landed.starts_with(&format!("{base}/ui/books/wuchuan/review?done=verify&id=T-9")), "{landed}");
    assert_eq!(session.one("p.notice").attr("data-done").as_deref(), Some("verify"));
    let history = server.get("/v1/books/wuchuan/terms/T-9").ok();
    let last = history["versions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["body"]["disposition_set"]["verdict"], "verify", "{last}");
    assert_eq!(last["actor"], "human:reviewer");
    assert_eq!(last["source"], "ui:review");
    n_checks += 4;
    session.no_console_errors("review after verify");

    // Accept 林晚 with its button: a new term, and the next assembly injects it.
    let before_accept = server.info("wuchuan")["head"].as_u64().unwrap();
    let item = session.one(&format!("section.item[data-id=\"{candidate}\"]"));
    let form = item.one_within("form.accept");
    let dst = form.one_within("input[name=\"dst\"]");
    dst.clear();
    dst.type_text("Линь Вань");
    form.one_within("select[name=\"gender\"] option[value=\"f\"]").click();
    form.one_within("button.accept").click();
    let url = session.left(&landed);
    let term = url.rsplit('/').next().unwrap().to_owned();
    assert!(url.starts_with(&format!("{base}/ui/books/wuchuan/terms/T-")), "{url}");
    assert!(session.title().contains("林晚") && session.title().contains("Линь Вань"), "{}", session.title());
    assert_eq!(server.info("wuchuan")["head"].as_u64().unwrap(), before_accept + 2, "a term and its verdict");
    session.no_console_errors("accepted term");
    let assembled =
        server.post("/v1/books/wuchuan/assemble", &json!({ "chapter": 6, "chunk": "1", "text": bundled.chapter_6 }));
    let assembled = assembled.ok();
    assert!(
        assembled["injected"].as_array().unwrap().iter().any(|entry| entry["term"] == term.as_str()),
        "{assembled}"
    );
    n_checks += check_chapter(&session, &server, &base, 6);
    assert!(!session.all(&format!("mark.hit.confirmed[data-terms~=\"{term}\"]")).is_empty());
    n_checks += 5;

    // Markup and script in a book's records are shown as text, never run.
    for page in ["", "/terms/T-1", "/chapters/1", "/events/2", "/diff?from=2&to=4", "/review"] {
        session.go(&format!("{base}/ui/books/hostile{page}"));
        assert!(session.all("script").is_empty(), "{page}: a script element");
        assert!(session.all("img").is_empty(), "{page}: an img element");
        assert!(session.all("b").is_empty(), "{page}: a b element from the chunk text");
        session.no_console_errors(&format!("hostile{page}"));
        n_checks += 3;
    }
    session.go(&format!("{base}/ui/books/hostile/terms/T-1"));
    assert!(session.title().contains(audit_book::HOSTILE_DST), "{}", session.title());
    let change = session.all("table.versions ul.changes li").iter().map(Element::text).collect::<Vec<_>>().join("\n");
    assert!(
        change.contains(audit_book::HOSTILE_NOTE) && change.contains("<script>alert('edited')</script>"),
        "{change}"
    );
    assert!(session.all("span.source").iter().any(|source| source.text() == audit_book::HOSTILE_SOURCE));
    assert_eq!(session.all("svg.timeline rect.stretch.retired").len(), 1);
    session.go(&format!("{base}/ui/books/hostile/chapters/1"));
    let text = session.one("div.chunk-text").text();
    assert!(text.contains("<script>alert('text')</script>") && text.contains("<b onmouseover=alert(1)>"), "{text}");
    n_checks += 5;
    session.no_console_errors("hostile chapter");

    session.quit();
    drop(driver);
    let (status, stderr) = server.terminate();
    assert!(status.success(), "{stderr}");
    n_checks
}
