//! The one writer of standard output: every line the application prints goes
//! through here, so a reader that stops reading ends printing, not the command.

use std::io::Write;
use std::sync::Mutex;

/// The state of stdout: open, closed by the reader (a broken pipe: stop printing,
/// and the command still succeeds), or failed with another error (reported by
/// [`finish`] as an I/O failure).
enum Stdout {
    Open,
    Closed,
    Failed(std::io::Error),
}

static STDOUT: Mutex<Stdout> = Mutex::new(Stdout::Open);

/// Prints one line on stdout. Every line the application prints goes through here,
/// so a reader that stops reading (`| head -1`) never turns a committed write into a
/// failure: after a broken pipe nothing more is printed and nothing panics.
pub fn write_line(line: std::fmt::Arguments) {
    write_text(line, true);
}

/// Prints `text` on stdout as it is (a context ends with its own newline); like
/// [`write_line`], a closed stdout ends printing quietly.
pub fn write_text(text: std::fmt::Arguments, newline: bool) {
    let mut state = STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !matches!(*state, Stdout::Open) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(text).and_then(|()| if newline { stdout.write_all(b"\n") } else { Ok(()) });
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => *state = Stdout::Closed,
        Err(error) => *state = Stdout::Failed(error),
    }
}

/// Writes `bytes` on stdout as they are (an exported file); like [`write_line`], a
/// closed stdout ends printing quietly.
pub fn write_bytes(bytes: &[u8]) {
    let mut state = STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !matches!(*state, Stdout::Open) {
        return;
    }
    match std::io::stdout().lock().write_all(bytes) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => *state = Stdout::Closed,
        Err(error) => *state = Stdout::Failed(error),
    }
}

/// Whether stdout still takes lines (false once the reader has gone).
pub fn stdout_open() -> bool {
    matches!(*STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner), Stdout::Open)
}

/// Flushes stdout at the end of a command. A broken pipe is success; any other
/// write error is an I/O failure.
pub fn finish() -> Result<(), crate::failure::Failure> {
    let mut state = STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if matches!(*state, Stdout::Open) {
        if let Err(error) = std::io::stdout().flush() {
            if error.kind() != std::io::ErrorKind::BrokenPipe {
                *state = Stdout::Failed(error);
            }
        }
    }
    match &*state {
        Stdout::Failed(error) => Err(crate::failure::Failure::io(format!("cannot write to stdout: {error}"))),
        _ => Ok(()),
    }
}
