//! Long operations of the pages as jobs of the server (docs/ui.md, "Jobs"): a form
//! starts one, the browser is sent to its page, which says what is being done and
//! how far, refreshes itself while it runs (`<meta http-equiv="refresh">`, no
//! script) and shows the outcome when it ends.
//!
//! One job runs per book at a time. Jobs live in the server's memory only: a
//! restart forgets them (what an import wrote is in the book's log), and at most
//! [`JOBS_KEPT`] are kept, the oldest finished ones dropped first.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::http::StatusCode;

use crate::http::problem::Problem;

/// How many jobs the server keeps (running and finished, every book together):
/// past it, the oldest finished job is forgotten, and its page is 404.
pub const JOBS_KEPT: usize = 64;

/// What a job does.
#[derive(Clone, Debug)]
pub enum Work {
    /// An import (`Book::import_with_progress`) of the file of this name.
    Import { file: String },
    /// A verify of the book (`Book::verify_with_progress`), as `lorebank verify`.
    Verify,
}

/// Where a running job is.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Not started on a worker yet, or opening the book.
    Starting,
    /// An import's phase.
    Import(book::ImportPhase),
    /// A verify's phase.
    Verify(book::VerifyPhase),
}

/// How a job ended.
pub enum Outcome {
    /// An import's report.
    Imported(Box<book::ImportReport>),
    /// A verify's report, or the damage it found (in the words of the book page).
    Verified(Result<ledger::VerifyReport, String>),
    /// Refused or failed: the problem the request would have answered.
    Failed(Problem),
}

/// A job's state: running at a point, or ended.
pub enum State {
    Running(Progress),
    Ended(Outcome),
}

/// One job of one book.
pub struct Job {
    pub id: u64,
    pub book: String,
    pub work: Work,
    /// When it started, in unix milliseconds.
    pub started_ms: u64,
    state: Mutex<State>,
}

impl Job {
    /// Its state, to read or to change.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Moves it on to `progress` (a job that ended stays ended).
    pub fn advance(&self, progress: Progress) {
        let mut state = self.state();
        if let State::Running(_) = *state {
            *state = State::Running(progress);
        }
    }

    /// Ends it with `outcome`.
    pub fn end(&self, outcome: Outcome) {
        *self.state() = State::Ended(outcome);
    }

    fn running(&self) -> bool {
        matches!(*self.state(), State::Running(_))
    }
}

/// The server's jobs, by id (ids count up from 1 and are never reused).
#[derive(Default)]
pub struct Jobs {
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    last_id: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
}

impl Jobs {
    fn kept(&self) -> MutexGuard<'_, Kept> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts a job of `work` on `book`, or refuses (409) when one runs on it, or
    /// (503) when [`JOBS_KEPT`] jobs run and none has ended to be forgotten.
    pub fn start(&self, book: &str, work: Work, started_ms: u64) -> Result<Arc<Job>, Problem> {
        let mut kept = self.kept();
        if let Some(running) = kept.jobs.values().find(|job| job.book == book && job.running()) {
            return Err(Problem::new(
                StatusCode::CONFLICT,
                "conflict",
                format!(
                    "book {book:?} has a job running ({} at /ui/books/{book}/jobs/{}): one job runs on a book at a \
                     time; wait for it to end, then try again",
                    describe(&running.work),
                    running.id
                ),
            ));
        }
        while kept.jobs.len() >= JOBS_KEPT {
            let Some(oldest) = kept.jobs.values().find(|job| !job.running()).map(|job| job.id) else {
                return Err(Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "busy",
                    format!("the server runs {JOBS_KEPT} jobs, as many as it keeps: try again when one has ended"),
                ));
            };
            kept.jobs.remove(&oldest);
        }
        kept.last_id += 1;
        let job = Arc::new(Job {
            id: kept.last_id,
            book: book.to_owned(),
            work,
            started_ms,
            state: Mutex::new(State::Running(Progress::Starting)),
        });
        kept.jobs.insert(job.id, Arc::clone(&job));
        Ok(job)
    }

    /// Job `id` of `book`: 404 when there is none (never was, forgotten, or of
    /// another book).
    pub fn get(&self, book: &str, id: u64) -> Result<Arc<Job>, Problem> {
        self.kept()
            .jobs
            .get(&id)
            .filter(|job| job.book == book)
            .cloned()
            .ok_or_else(|| Problem::new(StatusCode::NOT_FOUND, "not-found", format!("book {book:?} has no job {id}")))
    }
}

/// What a job does, in words.
pub fn describe(work: &Work) -> String {
    match work {
        Work::Import { file } => format!("an import of {file}"),
        Work::Verify => "a verify of the book".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(job: &Job) {
        job.end(Outcome::Verified(Err("damaged".to_owned())));
    }

    #[test]
    fn one_job_runs_per_book_and_an_ended_one_makes_room() {
        let jobs = Jobs::default();
        let first = jobs.start("a", Work::Verify, 0).unwrap();
        assert_eq!(jobs.start("a", Work::Verify, 0).err().unwrap().status, StatusCode::CONFLICT);
        let beside = jobs.start("b", Work::Verify, 0).unwrap();
        assert_eq!((first.id, beside.id), (1, 2));
        ended(&first);
        // An ended job stays ended.
        first.advance(Progress::Starting);
        assert!(!first.running());
        let next = jobs.start("a", Work::Verify, 0).unwrap();
        assert_eq!(next.id, 3);
        assert_eq!(jobs.get("a", 1).unwrap().id, 1);
        assert_eq!(jobs.get("b", 1).err().unwrap().status, StatusCode::NOT_FOUND);
    }

    #[test]
    fn at_most_jobs_kept_are_kept_the_oldest_ended_forgotten_first() {
        let jobs = Jobs::default();
        let running = jobs.start("running", Work::Verify, 0).unwrap();
        for n in 1..JOBS_KEPT {
            ended(&jobs.start(&format!("book{n}"), Work::Verify, 0).unwrap());
        }
        // Full: the oldest ended job (id 2) makes room; the running one (id 1) stays.
        let last = jobs.start("last", Work::Verify, 0).unwrap();
        assert_eq!(jobs.kept().jobs.len(), JOBS_KEPT);
        assert!(jobs.get("book1", 2).is_err());
        assert!(jobs.get("book2", 3).is_ok());
        assert_eq!(jobs.get("running", running.id).unwrap().id, 1);
        // When every kept job runs, none is forgotten and a new one is refused.
        let jobs = Jobs::default();
        for n in 0..JOBS_KEPT {
            jobs.start(&format!("book{n}"), Work::Verify, 0).unwrap();
        }
        assert_eq!(jobs.start("more", Work::Verify, 0).err().unwrap().status, StatusCode::SERVICE_UNAVAILABLE);
        drop(last);
    }
}
