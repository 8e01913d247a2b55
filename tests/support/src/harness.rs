//! The runner of the `harness = false` targets: the part of libtest's interface that
//! `cargo test` and `.ci/run` rely on.
//!
//! A target that needs processes of its own (a child it kills, a child that must load
//! a library once, two children that must agree) cannot be a `#[test]`: its `main` is
//! the test and re-runs its own binary as the child. That `main` hands its named test
//! functions to [`run`] (or, when the tests share a setup, to a [`Harness`]), which
//! reads the command line as libtest does (name filters, `--exact`, `--skip`, `--list`),
//! prints `running N tests`, a `test NAME ... ok` line per test and libtest's closing
//! `test result: ok. N passed; M failed; …` line, which `.ci/run` adds to its totals,
//! and ends the process with libtest's status 101 when a test failed.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the tests of `tests` the command line selects, in order, and ends the process
/// as libtest does (status 101 when one failed). With `--list` it lists them instead.
pub fn run(tests: &[(&'static str, fn())]) {
    let names: Vec<&'static str> = tests.iter().map(|(name, _)| *name).collect();
    let mut harness = Harness::new(&names);
    for (name, test) in tests {
        harness.run(name, test);
    }
    harness.finish();
}

/// The tests of one target and what happened to them so far.
///
/// For targets whose tests share a setup that only runs when a test is selected, or
/// that report tests as ignored: [`Harness::new`] reads the command line, each test
/// goes through [`Harness::run`] or [`Harness::ignore`], and [`Harness::finish`] prints
/// the closing line and ends a failed run.
#[derive(Debug)]
pub struct Harness {
    n_tests: usize,
    selected: Vec<&'static str>,
    running_printed: bool,
    passed: usize,
    failed: Vec<&'static str>,
    ignored: usize,
}

impl Harness {
    /// The harness of a target whose tests are `names`, as the command line selects
    /// them. With `--list` it prints the names in libtest's form and ends the process.
    pub fn new(names: &[&'static str]) -> Harness {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.iter().any(|arg| arg == "--list") {
            for name in names {
                println!("{name}: test");
            }
            std::process::exit(0);
        }
        Harness::from_args(names, &args)
    }

    fn from_args(names: &[&'static str], args: &[String]) -> Harness {
        let selection = Selection::parse(args);
        Harness {
            n_tests: names.len(),
            selected: names.iter().copied().filter(|name| selection.selects(name)).collect(),
            running_printed: false,
            passed: 0,
            failed: Vec::new(),
            ignored: 0,
        }
    }

    /// For tests that build on each other: all of them when the command line selects
    /// any, none otherwise.
    pub fn all_or_none(mut self, names: &[&'static str]) -> Harness {
        if !self.selected.is_empty() {
            self.selected = names.to_vec();
        }
        self
    }

    /// The selected tests, in order.
    pub fn selected(&self) -> &[&'static str] {
        &self.selected
    }

    /// Whether a test has failed so far.
    pub fn failed(&self) -> bool {
        !self.failed.is_empty()
    }

    /// Runs `test` as the test `name` if it is selected: `test NAME ... ok`, or
    /// `test NAME ... FAILED` when it panicked (its message is on stderr, and the next
    /// tests still run).
    pub fn run(&mut self, name: &'static str, test: impl FnOnce()) {
        if !self.selected.contains(&name) {
            return;
        }
        self.print_running();
        match catch_unwind(AssertUnwindSafe(test)) {
            Ok(()) => {
                println!("test {name} ... ok");
                self.passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED");
                self.failed.push(name);
            }
        }
    }

    /// Reports the test `name`, if it is selected, as ignored without running it.
    pub fn ignore(&mut self, name: &'static str) {
        if !self.selected.contains(&name) {
            return;
        }
        self.print_running();
        println!("test {name} ... ignored");
        self.ignored += 1;
    }

    /// Prints libtest's closing line and, when a test failed, the failures, ending
    /// the process with status 101.
    pub fn finish(mut self) {
        self.print_running();
        let line = self.result_line();
        if self.failed.is_empty() {
            println!("\n{line}");
            return;
        }
        println!("\nfailures:");
        for name in &self.failed {
            println!("    {name}");
        }
        println!("\n{line}");
        std::process::exit(101);
    }

    fn print_running(&mut self) {
        if !self.running_printed {
            self.running_printed = true;
            let n = self.selected.len();
            println!("running {n} test{}", if n == 1 { "" } else { "s" });
        }
    }

    /// `test result: ok. N passed; M failed; …`: the line `.ci/run` counts.
    fn result_line(&self) -> String {
        let n_run = self.passed + self.failed.len() + self.ignored;
        let filtered_out = self.n_tests.saturating_sub(self.selected.len());
        let not_run = self.selected.len() - n_run;
        format!(
            "test result: {}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out",
            if self.failed.is_empty() { "ok" } else { "FAILED" },
            self.passed,
            self.failed.len(),
            self.ignored,
            filtered_out + not_run
        )
    }
}

/// What the command line selects: name filters (a test whose name contains one, or
/// equals one with `--exact`; every test when there is none), less the `--skip`s.
#[derive(Debug, Default)]
struct Selection {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
}

impl Selection {
    fn parse(args: &[String]) -> Selection {
        let mut selection = Selection::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--exact" => selection.exact = true,
                "--skip" => selection.skips.extend(args.next().cloned()),
                // libtest's options that take a value, which is no filter.
                "--test-threads" | "--format" | "--color" | "--logfile" | "-Z" => {
                    args.next();
                }
                flag if flag.starts_with('-') => {}
                filter => selection.filters.push(filter.to_owned()),
            }
        }
        selection
    }

    fn matches(&self, pattern: &str, name: &str) -> bool {
        if self.exact {
            pattern == name
        } else {
            name.contains(pattern)
        }
    }

    fn selects(&self, name: &str) -> bool {
        (self.filters.is_empty() || self.filters.iter().any(|filter| self.matches(filter, name)))
            && !self.skips.iter().any(|skip| self.matches(skip, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["a_writer_appends", "a_reader_reads", "a_writer_waits"];

    fn selected(args: &[&str]) -> Vec<&'static str> {
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        Harness::from_args(NAMES, &args).selected().to_vec()
    }

    #[test]
    fn filters_select_by_substring_or_exactly_and_skips_leave_out() {
        assert_eq!(selected(&[]), NAMES);
        assert_eq!(selected(&["writer"]), ["a_writer_appends", "a_writer_waits"]);
        assert_eq!(selected(&["writer", "--exact"]), Vec::<&str>::new());
        assert_eq!(selected(&["--exact", "a_reader_reads"]), ["a_reader_reads"]);
        assert_eq!(selected(&["--skip", "waits"]), ["a_writer_appends", "a_reader_reads"]);
        assert_eq!(selected(&["writer", "--skip", "waits"]), ["a_writer_appends"]);
        // Values of libtest's options are no filters.
        assert_eq!(selected(&["--test-threads", "1", "--color", "never", "--nocapture"]), NAMES);
    }

    #[test]
    fn all_or_none_takes_every_test_when_one_is_selected() {
        let args = vec!["reader".to_owned()];
        assert_eq!(Harness::from_args(NAMES, &args).all_or_none(NAMES).selected(), NAMES);
        let args = vec!["nothing".to_owned()];
        assert!(Harness::from_args(NAMES, &args).all_or_none(NAMES).selected().is_empty());
    }

    #[test]
    fn a_panic_fails_its_test_and_the_next_one_still_runs() {
        let mut harness = Harness::from_args(NAMES, &[]);
        harness.run("a_writer_appends", || panic!("on purpose"));
        let mut ran = false;
        harness.run("a_reader_reads", || ran = true);
        harness.ignore("a_writer_waits");
        assert!(ran && harness.failed());
        assert_eq!(
            harness.result_line(),
            "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out"
        );
        let mut harness = Harness::from_args(NAMES, &["reader".to_owned()]);
        harness.run("a_writer_appends", || panic!("not selected, never run"));
        harness.run("a_reader_reads", || {});
        assert!(!harness.failed());
        assert_eq!(harness.result_line(), "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 2 filtered out");
    }
}
