//! Every input the CLI reads goes through its limit (`ledger_model::limits::input`,
//! docs/operations.md "Limits"): a file at the limit is read, one byte past it is
//! refused before it is read, and an endless input (`/dev/zero`, as a file or as
//! standard input) is refused after one byte past the limit, exit 2 naming the limit,
//! the book untouched. The server refuses a streamed body one byte past its limit
//! with 413 naming it, and a workbook that would inflate past the XLSX limits with
//! 413 (a cell past the sheet with 400), without touching the book.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Book;
use ledger_model::limits::input::{CHUNK_BYTES_MAX, EVENTS_FILE_BYTES_MAX, GLOSSARY_FILE_BYTES_MAX};
use serve::{term_line, Server};

/// Where the input goes in a command's arguments.
const FILE: &str = "{FILE}";

/// Every CLI reader of a file or standard input: its arguments, and the limit it
/// reads through.
fn readers() -> Vec<(Vec<&'static str>, &'static str, usize)> {
    vec![
        (vec!["apply", FILE], "EVENTS_FILE_BYTES_MAX", EVENTS_FILE_BYTES_MAX),
        (vec!["import", FILE], "GLOSSARY_FILE_BYTES_MAX", GLOSSARY_FILE_BYTES_MAX),
        (
            vec!["import", "--dry-run", "--format", "linguagacha-xlsx", FILE],
            "GLOSSARY_FILE_BYTES_MAX",
            GLOSSARY_FILE_BYTES_MAX,
        ),
        (vec!["expect", "import", FILE], "GLOSSARY_FILE_BYTES_MAX", GLOSSARY_FILE_BYTES_MAX),
        (vec!["assemble", "--chapter", "1", "--chunk", "c1", "--text", FILE], "CHUNK_BYTES_MAX", CHUNK_BYTES_MAX),
        (
            vec!["scan", "--chapter", "1", "--chunk", "c1", "--dry-run", "--text", FILE],
            "CHUNK_BYTES_MAX",
            CHUNK_BYTES_MAX,
        ),
        (vec!["check", "--receipt", "00000000", "--translation", FILE], "CHUNK_BYTES_MAX", CHUNK_BYTES_MAX),
        (
            vec!["replay", "--snapshot", "00000000", "--chapter", "1", "--text", FILE],
            "CHUNK_BYTES_MAX",
            CHUNK_BYTES_MAX,
        ),
    ]
}

fn with_input<'a>(args: &[&'a str], input: &'a str) -> Vec<&'a str> {
    args.iter().map(|arg| if *arg == FILE { input } else { arg }).collect()
}

/// A sparse file of `len` zero bytes (no disk spent).
fn zeros(dir: &Path, name: &str, len: usize) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().set_len(len as u64).unwrap();
    path
}

/// Runs `args` on `book` with standard input from `stdin`; exit code, stderr and
/// seconds taken.
fn run(book: &Book, args: &[&str], stdin: Option<&Path>) -> (Option<i32>, String, f64) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(&book.path)
        .args(args)
        .env_remove("LOREBANK_BOOK")
        .env("LOREBANK_ACTOR", "human:test")
        .stdin(match stdin {
            Some(path) => Stdio::from(std::fs::File::open(path).unwrap()),
            None => Stdio::null(),
        })
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned(), started.elapsed().as_secs_f64())
}

#[test]
fn an_endless_input_is_refused_one_byte_past_the_limit() {
    let book = Book::new();
    let head = book.head();
    for (args, limit, max) in readers() {
        for (input, stdin) in [("/dev/zero", None), ("-", Some(Path::new("/dev/zero")))] {
            let args = with_input(&args, input);
            let (code, stderr, seconds) = run(&book, &args, stdin);
            assert_eq!(code, Some(2), "{args:?}: {stderr}");
            let name = if input == "-" { "stdin" } else { input };
            assert!(stderr.contains(&format!("{name}: over the limit {limit} of {max} bytes")), "{args:?}: {stderr}");
            assert!(seconds < 20.0, "{args:?} took {seconds:.1} s");
        }
    }
    assert_eq!(book.head(), head);
}

#[test]
fn a_file_at_the_limit_is_read_and_one_byte_past_it_is_refused_unread() {
    let book = Book::new();
    let head = book.head();
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for (args, limit, max) in readers() {
        let past = zeros(dir.path(), &format!("past-{limit}"), max + 1);
        let (code, stderr, seconds) = run(&book, &with_input(&args, &past.display().to_string()), None);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("over the limit {limit} of {max} bytes")), "{args:?}: {stderr}");
        assert!(seconds < 5.0, "{args:?} read the file it refuses: {seconds:.1} s");
        // At the limit, once per limit: read whole, then refused for what it holds
        // (NUL bytes are no events and name no receipt) or read to nothing (a
        // glossary of no entries), never refused for its size.
        if !seen.contains(&limit) && args[0] != "assemble" && args[0] != "scan" && args[0] != "replay" {
            seen.push(limit);
            let at = zeros(dir.path(), &format!("at-{limit}"), max);
            let (code, stderr, _) = run(&book, &with_input(&args, &at.display().to_string()), None);
            assert!(matches!(code, Some(0 | 2)), "{args:?}: {stderr}");
            assert!(!stderr.contains("over the limit"), "{args:?} at the limit: {stderr}");
        }
    }
    assert_eq!(seen, ["EVENTS_FILE_BYTES_MAX", "GLOSSARY_FILE_BYTES_MAX", "CHUNK_BYTES_MAX"]);
    assert_eq!(book.head(), head);
}

#[test]
fn a_chunk_at_the_limit_is_assembled() {
    // The chunk limit is the matcher's: a text of that many bytes folds and matches.
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunk.txt");
    let mut text = "萧炎".repeat(CHUNK_BYTES_MAX / 6).into_bytes();
    text.resize(CHUNK_BYTES_MAX, b'.');
    std::fs::write(&path, &text).unwrap();
    let (code, stderr, _) = run(
        &book,
        &["assemble", "--dry-run", "--chapter", "1", "--chunk", "c1", "--text", &path.display().to_string()],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
}

/// A library with book `a` holding one term.
fn library(extra: &[&str]) -> (tempfile::TempDir, Server) {
    Server::library_with_a_book(extra, &[&term_line("T-1", "萧炎", "Сяо Янь")])
}

/// Sends `body` to `path` in chunks of 1 KiB without a `Content-Length`, and reads
/// the answer (which may come before the whole body is sent).
fn chunked(server: &Server, path: &str, body: impl Iterator<Item = Vec<u8>> + Send + 'static) -> serve::Reply {
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        for chunk in body {
            let frame = [format!("{:x}\r\n", chunk.len()).into_bytes(), chunk, b"\r\n".to_vec()].concat();
            if writer.write_all(&frame).is_err() {
                return;
            }
        }
        let _ = writer.write_all(b"0\r\n\r\n");
    });
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while serve::parse_reply(&answer).is_err() {
        let n = stream.read(&mut buffer).expect("an answer");
        assert!(n > 0, "closed without an answer");
        answer.extend_from_slice(&buffer[..n]);
    }
    drop(stream);
    let _ = sender.join();
    serve::parse_reply(&answer).unwrap()
}

#[test]
fn a_streamed_body_is_read_to_the_limit_and_refused_one_byte_past_it() {
    let (_root, server) = library(&["--body-limit", "4096"]);
    let before = server.info("a");
    let line = term_line("T-2", "药老", "Яо Лао");
    for (len, refused) in [(4096, false), (4097, true)] {
        // One event, then blank lines to the length.
        let mut body = line.clone().into_bytes();
        body.resize(len, b'\n');
        let chunks: Vec<Vec<u8>> = body.chunks(1024).map(<[u8]>::to_vec).collect();
        let reply = chunked(&server, "/v1/books/a/events?actor=human:test", chunks.into_iter());
        if refused {
            let detail = reply.problem(413, "too-large")["detail"].as_str().unwrap().to_owned();
            assert!(detail.contains("limit of 4096 bytes"), "{detail}");
        } else {
            assert_eq!(reply.ok()["head"], before["head"].as_u64().unwrap() + 1);
        }
    }
    // An endless body is answered once it passes the limit.
    let endless = std::iter::repeat_with(|| vec![b'\n'; 1024]).take(1 << 20);
    let started = Instant::now();
    chunked(&server, "/v1/books/a/events?actor=human:test", endless).problem(413, "too-large");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(server.info("a")["head"], before["head"].as_u64().unwrap() + 1);
}

/// A workbook of one sheet (`rows`, the `<sheetData>` content).
fn workbook(rows: &str) -> Vec<u8> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let relationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let package = "http://schemas.openxmlformats.org/package/2006/relationships";
    let parts = [
        (
            "_rels/.rels",
            format!(
                r#"<Relationships xmlns="{package}"><Relationship Id="rId1" Type="{relationships}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
            ),
        ),
        (
            "xl/workbook.xml",
            format!(
                r#"<workbook xmlns="{main}" xmlns:r="{relationships}"><sheets><sheet name="术语表" sheetId="1" r:id="rId1"/></sheets></workbook>"#
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!(
                r#"<Relationships xmlns="{package}"><Relationship Id="rId1" Type="{relationships}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
            ),
        ),
        ("xl/worksheets/sheet1.xml", format!(r#"<worksheet xmlns="{main}"><sheetData>{rows}</sheetData></worksheet>"#)),
    ];
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in parts {
        out.start_file(name, options).unwrap();
        out.write_all(content.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn hostile_workbooks_are_refused_by_the_cli_and_the_server_before_they_inflate() {
    let huge =
        workbook(&format!(r#"<row r="1"><c r="A1" t="inlineStr"><is><t>{}</t></is></c></row>"#, "林".repeat(30 << 20)));
    assert!(huge.len() < 1 << 20);
    let far = workbook(r#"<row r="1"><c r="ZZZZZZZZZZZZ99999999999999" t="inlineStr"><is><t>远</t></is></c></row>"#);
    let book = Book::new();
    let head = book.head();
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, code, message) in [
        ("huge.xlsx", &huge, 2, "over the limit XLSX_INFLATED_BYTES_MAX"),
        ("far.xlsx", &far, 2, "sheet `术语表`: cell `ZZZZZZZZZZZZ99999999999999` is out of range"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let error = book.fails(&["import", &path.display().to_string()], code);
        assert!(error.contains(message), "{name}: {error}");
    }
    assert_eq!(book.head(), head);

    let (_root, server) = library(&[]);
    let before = server.info("a");
    let send = |bytes: &[u8]| server.send("POST", "/v1/books/a/import?file=terms.xlsx", &[], bytes);
    let detail = send(&huge).problem(413, "too-large")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("XLSX_INFLATED_BYTES_MAX"), "{detail}");
    let detail = send(&far).problem(400, "invalid")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("cell `ZZZZZZZZZZZZ99999999999999` is out of range"), "{detail}");
    assert_eq!(server.info("a")["head"], before["head"]);
}

#[test]
fn the_token_file_is_read_to_its_limit_and_refused_one_byte_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |file: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .args(["serve", "--listen", "127.0.0.1:0", "--dir"])
            .arg(dir.path())
            .arg("--token-file")
            .arg(file)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let max = ledger_model::limits::input::TOKEN_FILE_BYTES_MAX;
    for (len, refused) in [(max, false), (max + 1, true)] {
        // A comment line of the length: read whole, it holds no token.
        let path = dir.path().join(format!("tokens-{len}"));
        let mut text = "# 令牌\n".to_owned().into_bytes();
        text.resize(len - 1, b'#');
        text.push(b'\n');
        std::fs::write(&path, &text).unwrap();
        let (code, stderr) = serve(&path);
        assert_eq!(code, Some(2), "{stderr}");
        let over = format!("over the limit TOKEN_FILE_BYTES_MAX of {max} bytes");
        assert_eq!(stderr.contains(&over), refused, "{stderr}");
        assert_eq!(stderr.contains("no token in it"), !refused, "{stderr}");
    }
    let (code, stderr) = serve(Path::new("/dev/zero"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("/dev/zero: over the limit TOKEN_FILE_BYTES_MAX"), "{stderr}");
}
