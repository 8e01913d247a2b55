//! Reading the CLI's input files through their limits; JSON from bytes, as the server
//! reads its request bodies; and parsing of event bodies as the CLI's `apply` and the
//! HTTP API's append read them: one JSON event body per line, each labelled by its
//! line for errors.

use std::io::Read;
use std::path::Path;

use book::Labelled;
use ledger_model::limits::input as limits;
use ledger_model::Body;

use crate::failure::Failure;

/// `bytes` read as JSON, exactly as `serde_json::from_slice` reads them, faster.
/// serde_json checks each string of a byte slice as UTF-8 as it reads it, with
/// `str::from_utf8`, which on CJK text was the largest part of a request's parse
/// (a chapter of 25 chunks, 220 kB: 430 µs, 17 µs of the server's 220 a chunk;
/// docs/benchmarks.md "The request's UTF-8, checked once"). Here the whole body is
/// checked once with SIMD (simdutf8) and read as a `str`, whose strings serde_json
/// does not check again. Bytes that are not UTF-8 are read by `from_slice` itself,
/// so the error, and its line and column, are the ones they always had.
pub fn json_from_bytes<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<T> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// An input limit of `ledger_model::limits::input`: its name and its value in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    pub name: &'static str,
    pub bytes: usize,
}

/// A chunk text (`--text`) or a translation of one (`--translation`).
pub const CHUNK: Bound = Bound { name: "CHUNK_BYTES_MAX", bytes: limits::CHUNK_BYTES_MAX };
/// A JSON Lines file of events (`apply FILE`).
pub const EVENTS_FILE: Bound = Bound { name: "EVENTS_FILE_BYTES_MAX", bytes: limits::EVENTS_FILE_BYTES_MAX };
/// A glossary or cast list (`import FILE`, `expect import FILE`).
pub const GLOSSARY_FILE: Bound = Bound { name: "GLOSSARY_FILE_BYTES_MAX", bytes: limits::GLOSSARY_FILE_BYTES_MAX };
/// A chapter's source text (`source add FILE`, each file of `source import DIR`).
pub const SOURCE_FILE: Bound = Bound { name: "SOURCE_FILE_BYTES_MAX", bytes: limits::SOURCE_FILE_BYTES_MAX };
/// The server's token file (`serve --token-file`).
pub const TOKEN_FILE: Bound = Bound { name: "TOKEN_FILE_BYTES_MAX", bytes: limits::TOKEN_FILE_BYTES_MAX };
/// The certificates an endpoint is trusted by besides the system's (`serve
/// --upstream-ca`, `--model-ca`).
pub const CA_FILE: Bound = Bound { name: "CA_FILE_BYTES_MAX", bytes: limits::CA_FILE_BYTES_MAX };

/// Where an endpoint's settings come from: its URL, the extra certificates' file,
/// where its key is read (a variable, or a file), the wait, and the flags they are
/// given by, which errors name (`--upstream`, `--model-url`).
pub struct EndpointSettings<'a> {
    pub flags: chat::Flags,
    /// The flags that name the key's variable and file.
    pub key_flags: (&'static str, &'static str),
    pub url: &'a str,
    pub ca: Option<&'a Path>,
    pub key_env: Option<&'a str>,
    pub key_file: Option<&'a Path>,
    pub timeout: std::time::Duration,
}

/// The endpoint of `settings`: its key read from the variable or file named (and
/// never printed), its extra certificates from their file, within their limits.
pub fn endpoint(settings: &EndpointSettings) -> Result<chat::Endpoint, Failure> {
    let (env_flag, file_flag) = settings.key_flags;
    let key = match (settings.key_env, settings.key_file) {
        (Some(name), _) => Some(
            std::env::var(name)
                .map_err(|_| Failure::invalid(format!("{env_flag} {name}: the variable is not set or not UTF-8")))?,
        ),
        (None, Some(path)) => {
            let bytes = read_bounded(path, TOKEN_FILE)
                .map_err(|failure| Failure::invalid(format!("{file_flag} {}", failure.message)))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| Failure::invalid(format!("{file_flag} {}: not UTF-8", path.display())))?;
            Some(text.trim().to_owned())
        }
        (None, None) => None,
    };
    let ca = match settings.ca {
        Some(path) => {
            let pem = read_bounded(path, CA_FILE)
                .map_err(|failure| Failure::invalid(format!("{} {}", settings.flags.ca, failure.message)))?;
            Some((shown(path), pem))
        }
        None => None,
    };
    let ca = ca.as_ref().map(|(name, pem)| chat::ExtraCa { name, pem });
    chat::Endpoint::new(settings.flags, settings.url, ca, key, settings.timeout).map_err(Failure::invalid)
}

/// The name of `path` in errors: `stdin` for `-`.
pub fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Reads the file at `path`, or standard input for `-`, whole, through `bound`: a
/// regular file larger than the limit is refused before it is read, and anything else
/// is read to at most one byte past the limit, then refused (exit 2, naming the
/// limit), so `/dev/zero` costs no more than a file at the limit.
pub fn read_bounded(path: &Path, bound: Bound) -> Result<Vec<u8>, Failure> {
    let name = shown(path);
    let over = || Failure::invalid(format!("{name}: over the limit {} of {} bytes", bound.name, bound.bytes));
    let most = bound.bytes as u64 + 1;
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(most)
            .read_to_end(&mut bytes)
            .map_err(|error| Failure::io(format!("cannot read stdin: {error}")))?;
    } else {
        let cannot = |error: std::io::Error| Failure::invalid(format!("cannot read {name}: {error}"));
        let file = std::fs::File::open(path).map_err(cannot)?;
        let metadata = file.metadata().map_err(cannot)?;
        if metadata.is_file() {
            if metadata.len() > bound.bytes as u64 {
                return Err(over());
            }
            bytes.reserve_exact(metadata.len() as usize);
        }
        file.take(most).read_to_end(&mut bytes).map_err(cannot)?;
    }
    if bytes.len() > bound.bytes {
        return Err(over());
    }
    Ok(bytes)
}

/// Parses JSON Lines `text` (named `name` in errors and default sources) into
/// labelled bodies. Blank lines are skipped, a leading byte order mark too. An error
/// names the line and column.
pub fn event_lines(name: &str, text: &str) -> Result<Vec<Labelled>, String> {
    // A byte order mark is never part of JSON; editors on some systems write one at
    // the start of a file, and it is skipped.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut bodies = Vec::new();
    for (line_idx, line) in text.lines().enumerate() {
        let line_no = line_idx + 1;
        if line.trim().is_empty() {
            continue;
        }
        let body: Body = serde_json::from_str(line)
            .map_err(|error| format!("{name} line {line_no}, column {}: {}", error.column(), message(&error)))?;
        bodies.push(Labelled {
            label: format!("{name} line {line_no}"),
            default_source: format!("{name}:{line_no}"),
            body,
        });
    }
    if bodies.is_empty() {
        return Err(format!("{name}: no events (expected one JSON event body per line)"));
    }
    Ok(bodies)
}

/// A serde_json error without its trailing position (the caller names it).
pub fn message(error: &serde_json::Error) -> String {
    let mut message = error.to_string();
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    message
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    /// What `json_from_bytes` must equal: `serde_json::from_slice`, the value or the
    /// error's text (which names its line and column).
    fn both(bytes: &[u8]) -> (Result<Value, String>, Result<Value, String>) {
        let fast = super::json_from_bytes::<Value>(bytes).map_err(|error| error.to_string());
        let reference = serde_json::from_slice::<Value>(bytes).map_err(|error| error.to_string());
        (fast, reference)
    }

    /// JSON-like bytes: pieces of JSON syntax, CJK and other text, a byte order mark,
    /// escapes (valid and lone surrogates), control characters, and bytes that are
    /// not UTF-8.
    fn json_like() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"{\"text\":\"".to_vec()),
            Just(b"\",\"key\":".to_vec()),
            Just(b"[1,2.5e3,".to_vec()),
            Just(b"]}".to_vec()),
            Just(b"\"".to_vec()),
            Just(b"\n".to_vec()),
            Just("\\u4e2d\\ud800\\n".as_bytes().to_vec()),
            Just("孙悟空道：「吾乃齐天大圣」".as_bytes().to_vec()),
            Just("吾輩は猫である。".as_bytes().to_vec()),
            Just("\u{feff}".as_bytes().to_vec()),
            Just(vec![0x01]),
            Just(vec![0xe5, 0xad]),
            Just(vec![0xff]),
            Just(vec![0xc0, 0xaf]),
            any::<Vec<u8>>(),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn json_from_bytes_reads_as_from_slice(bytes in json_like()) {
            let (fast, reference) = both(&bytes);
            prop_assert_eq!(fast, reference);
        }
    }

    #[test]
    fn a_body_that_is_not_utf8_keeps_its_error_and_position() {
        let mut bytes = "{\"chapter\": 1,\n \"text\": \"孙悟空".as_bytes().to_vec();
        bytes.push(0xff);
        bytes.extend_from_slice(b"\"}");
        let (fast, reference) = both(&bytes);
        let error = fast.unwrap_err();
        assert_eq!(Err(error.clone()), reference);
        assert!(error.contains("line 2"), "{error}");
        let (fast, reference) = both("{\"text\": \"孙悟空\"}".as_bytes());
        assert_eq!(fast, reference);
        assert_eq!(fast.unwrap()["text"], "孙悟空");
    }
}
