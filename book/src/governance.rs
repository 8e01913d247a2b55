//! The governance use cases of a book: the register of expected concepts and its
//! coverage report, the check of the additive memory profile (the levels a book
//! reaches, and the records that fail each requirement), and the profile's compact
//! one-line-per-record export.

use std::collections::{BTreeMap, BTreeSet};

use ledger_model::limits::input::GLOSSARY_FILE_BYTES_MAX;
use ledger_model::*;
use matcher::MatcherBuilder;
use projections::read::visible_from;
use projections::{Provenance, Reader, SnapshotId, State};

use crate::book::Book;
use crate::error::BookError;
use crate::service::{Labelled, WriteOptions, Written};

/// An expected concept no active record covers: no term's source surface or alias
/// folds to its surface.
#[derive(Clone, Debug)]
pub struct Missing {
    /// The registered concept.
    pub concept: ConceptExpected,
    /// Who registered it, from what.
    pub put_by: Provenance,
}

/// An occurrence of an expected surface in a recorded chunk that got nothing
/// injected for it.
#[derive(Clone, Debug)]
pub struct Uncovered {
    /// Chapter of the chunk.
    pub chapter: u32,
    /// Its key.
    pub chunk_key: String,
    /// Its latest receipt.
    pub receipt: Hash32,
    /// The expected surface, as registered.
    pub surface: String,
    /// The text as written in the chunk.
    pub text: String,
    /// Char span in the chunk.
    pub chars: (u32, u32),
    /// The active term that covers the concept, if one does (it was not injected:
    /// gated, rejected or out of budget); `None` when no record covers it.
    pub covered_by: Option<RecordId>,
}

/// The coverage report of the register of expected concepts.
#[derive(Clone, Debug)]
pub struct Coverage {
    /// Revision of the book the report is of.
    pub revision: Seq,
    /// Concepts in the register.
    pub n_expected: usize,
    /// Recorded chunks looked at (none when nothing is expected).
    pub n_chunks: usize,
    /// Expected concepts no record covers, by surface.
    pub missing: Vec<Missing>,
    /// Occurrences in recorded chunks with nothing injected for them, in chapter,
    /// chunk and text order.
    pub uncovered: Vec<Uncovered>,
}

/// One entry of a cast list read by [`Book::expect_import`].
#[derive(Clone, Debug)]
pub struct CastEntry {
    /// Where it is (`cast.txt:4`).
    pub at: String,
    /// The concept.
    pub concept: ConceptExpected,
}

/// What an import of expected concepts did.
#[derive(Debug)]
pub struct ExpectImported {
    /// Concepts registered or changed.
    pub added: Vec<CastEntry>,
    /// Concepts already registered as they are.
    pub unchanged: Vec<CastEntry>,
    /// The write; `None` for a dry run or when nothing changed.
    pub written: Option<Written>,
}

/// The level of a profile requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// MUST: the level is not reached while a record fails it.
    Must,
    /// SHOULD: reported, never blocks a level.
    Should,
}

/// One requirement of the profile, checked.
#[derive(Clone, Debug)]
pub struct Requirement {
    /// The profile's field name (`concept_owner`).
    pub field: &'static str,
    /// The level it belongs to (1, 2 or 3).
    pub level: u8,
    /// MUST or SHOULD.
    pub need: Need,
    /// What is asked, in a line.
    pub asks: &'static str,
    /// Records (or the book, for book-wide fields) it was checked on.
    pub n_checked: usize,
    /// The records that fail it, by id; for a book-wide field, `failed_book`.
    pub failing: Vec<RecordId>,
    /// A book-wide field the book fails.
    pub failed_book: bool,
}

impl Requirement {
    /// Whether it holds.
    pub fn holds(&self) -> bool {
        self.failing.is_empty() && !self.failed_book
    }
}

/// The profile check of a book.
#[derive(Clone, Debug)]
pub struct ProfileReport {
    /// The revision checked.
    pub revision: Seq,
    /// The highest level whose MUSTs, and those of every level below, all hold
    /// (0: not even level 1).
    pub level: u8,
    /// Active records checked (terms, summaries, rules).
    pub n_records: usize,
    /// Every requirement, in the profile's order.
    pub requirements: Vec<Requirement>,
}

/// Whether a book at profile `level` meets the `required` one: the one rule behind
/// `profile check --require`, wherever the level was read (a report in this process,
/// or a server's answer). Below it, invalid, naming both levels.
pub fn require_level(level: u64, required: u8) -> Result<(), BookError> {
    if level < u64::from(required) {
        return Err(BookError::Invalid(format!(
            "the book reaches level {level} of the profile, below the required level {required}"
        )));
    }
    Ok(())
}

/// The compact form of the profile: one line per record, fixed field order.
#[derive(Clone, Debug)]
pub struct ProfileExport {
    /// The revision exported.
    pub revision: Seq,
    /// Its snapshot ID.
    pub snapshot: SnapshotId,
    /// The text, a header line and then one line per record.
    pub text: String,
    /// Records written.
    pub n_records: usize,
}

/// The header line of the compact profile form: its fields, in order.
pub const PROFILE_HEADER: &str =
    "# record_id|valid_from|valid_to|source|concept_owner|owner_role|supersedes|release_to|value";

/// Sources lorebank writes when the caller names none: they say which tool made a
/// change, not where the statement comes from, so the profile does not count them
/// as a source one can follow.
pub const UNFOLLOWABLE_SOURCES: &[&str] = &["cli", "api", "review", "init", "edit", "append", "-"];

/// A field of the compact form: `\` as `\\`, `|` as `\|`, line breaks as `\n`.
fn field(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// The active terms, summaries and rules of `state`, in id order.
fn active_records(state: &State) -> Vec<RecordId> {
    let terms = state.terms().iter().filter(|(_, t)| !t.retired).map(|(id, _)| *id);
    let summaries = state.summaries().iter().filter(|(_, s)| !s.retired).map(|(id, _)| *id);
    let rules = state.rules().iter().filter(|(_, r)| !r.retired).map(|(id, _)| *id);
    let mut ids: Vec<RecordId> = terms.chain(summaries).chain(rules).collect();
    ids.sort_unstable();
    ids
}

/// The provenance of the current version of an active record.
fn put_by(state: &State, id: RecordId) -> Option<&Provenance> {
    match id.kind() {
        RecordKind::Term => state.terms().get(&id).map(|term| &term.put_by),
        RecordKind::Summary => state.summaries().get(&id).map(|summary| &summary.put_by),
        RecordKind::Rule => state.rules().get(&id).map(|rule| &rule.put_by),
        RecordKind::Candidate => None,
    }
}

/// Reads a cast list: one surface per line, optionally a tab and its kind; blank
/// lines and lines starting with `#` are skipped.
fn read_cast_list(file: &str, bytes: &[u8]) -> Result<Vec<CastEntry>, BookError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|error| BookError::Invalid(format!("{file}: not UTF-8 (byte {})", error.valid_up_to())))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut entries = Vec::new();
    for (line_idx, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", line_idx + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (surface, kind) = match line.split_once('\t') {
            Some((surface, kind)) => (surface.trim(), Some(kind.trim().to_owned()).filter(|kind| !kind.is_empty())),
            None => (line, None),
        };
        entries.push(CastEntry { at, concept: ConceptExpected { surface: surface.to_owned(), kind, note: None } });
    }
    Ok(entries)
}

impl Book {
    /// Registers the concepts of a cast list (`format` `None`: one surface per line,
    /// optionally a tab and a kind) or of a glossary file in one of the interchange
    /// formats (each entry's source surface and kind) as expected, in one atomic
    /// batch; each event's source is the entry's place. Concepts already registered
    /// as they are append nothing. With `dry_run`, decides and writes nothing. The
    /// actor, unless one is named, is [`crate::service::CAST_LIST_ACTOR`].
    pub fn expect_import(
        &mut self,
        file: &str,
        bytes: &[u8],
        format: Option<formats::Format>,
        dry_run: bool,
        write: &WriteOptions,
    ) -> Result<ExpectImported, BookError> {
        let name = file.rsplit(['/', '\\']).next().filter(|name| !name.is_empty()).unwrap_or("cast list").to_owned();
        if bytes.len() > GLOSSARY_FILE_BYTES_MAX {
            return Err(BookError::TooLarge(format!(
                "{name}: the file has {} bytes: over the limit GLOSSARY_FILE_BYTES_MAX of {GLOSSARY_FILE_BYTES_MAX} bytes",
                bytes.len()
            )));
        }
        let entries = match format {
            None => read_cast_list(&name, bytes)?,
            Some(format) => {
                let state = self.state(None)?;
                let languages = formats::Languages {
                    source: state.source_lang().to_owned(),
                    target: state.target_lang().to_owned(),
                };
                let parsed =
                    formats::read(format, bytes, &languages).map_err(|error| BookError::of_file(&name, error))?;
                parsed
                    .entries
                    .into_iter()
                    .map(|entry| CastEntry {
                        at: format!("{name}{}", entry.at.source_suffix()),
                        concept: ConceptExpected { surface: entry.term.src, kind: entry.term.kind, note: None },
                    })
                    .collect()
            }
        };
        if entries.is_empty() {
            return Err(BookError::Invalid(format!("{name}: no concepts in it")));
        }
        let state = self.state(None)?;
        let (added, unchanged): (Vec<CastEntry>, Vec<CastEntry>) = entries.into_iter().partition(|entry| {
            state.expected().get(&entry.concept.surface).map(|e| &e.concept) != Some(&entry.concept)
        });
        // The write changes the head in place once nothing here holds it.
        drop(state);
        let bodies: Vec<Labelled> = added
            .iter()
            .map(|entry| Labelled {
                label: entry.at.clone(),
                default_source: entry.at.clone(),
                body: Body::ConceptExpected(entry.concept.clone()),
            })
            .collect();
        let write = write.acting_as(crate::service::CAST_LIST_ACTOR);
        let written = match (bodies.is_empty(), dry_run) {
            (true, _) => None,
            (false, true) => {
                self.check_labelled(&write, bodies, &[])?;
                None
            }
            (false, false) => Some(self.submit_labelled(&write, bodies, Vec::new())?),
        };
        Ok(ExpectImported { added, unchanged, written })
    }

    /// The coverage report at the head: expected concepts no active record covers,
    /// and occurrences of expected surfaces in the latest receipt of every recorded
    /// chunk (of `chapter`, or all) that got nothing injected for them: no hit over
    /// the occurrence whose term the receipt injected.
    pub fn coverage(&mut self, chapter: Option<u32>) -> Result<Coverage, BookError> {
        let state = self.state(None)?;
        let expected: Vec<(&String, &projections::Expected)> = state.expected().iter().collect();
        let profile = if expected.is_empty() { None } else { self.profile(&state)? };
        let Some(profile) = profile else {
            // Nothing expected (or no profile yet): nothing to look for.
            return Ok(Coverage {
                revision: state.revision(),
                n_expected: expected.len(),
                n_chunks: 0,
                missing: Vec::new(),
                uncovered: Vec::new(),
            });
        };
        // Folded surface → the active term that has it.
        let mut covering: BTreeMap<String, RecordId> = BTreeMap::new();
        for active in state.active_terms(None) {
            covering.entry(profile.fold(&active.term.put.src)).or_insert(active.id);
            for alias in active.term.aliases.values() {
                covering.entry(profile.fold(&alias.surface)).or_insert(active.id);
            }
        }
        let covered_by = |surface: &str| covering.get(&profile.fold(surface)).copied();
        let missing = expected
            .iter()
            .filter(|(surface, _)| covered_by(surface).is_none())
            .map(|(_, expected)| Missing { concept: expected.concept.clone(), put_by: expected.put_by.clone() })
            .collect();
        let mut uncovered = Vec::new();
        let receipts = self.latest_receipts(chapter)?;
        {
            let keys = expected.iter().enumerate().map(|(idx, (surface, _))| (surface.as_str(), idx as u32));
            let matcher = MatcherBuilder::new(&profile)
                .build(keys)
                .map_err(|error| BookError::Invalid(format!("expected concepts: {error}")))?;
            for (id, receipt) in &receipts {
                let (text, _) = self.receipt_texts(receipt)?;
                let normalized = profile.normalize(&text).map_err(|error| BookError::Corrupted(error.to_string()))?;
                let injected: BTreeSet<u32> = receipt.injected.iter().map(|entry| entry.term).collect();
                for hit in matcher.find(&normalized) {
                    let chars = (hit.src.start_char.as_usize() as u32, hit.src.end_char.as_usize() as u32);
                    let served = receipt.hits.iter().any(|receipt_hit| {
                        receipt_hit.chars.0 < chars.1
                            && chars.0 < receipt_hit.chars.1
                            && injected.contains(&receipt_hit.term)
                    });
                    if served {
                        continue;
                    }
                    for &value in matcher.values(hit.pattern) {
                        let surface = expected[value as usize].0.clone();
                        uncovered.push(Uncovered {
                            chapter: receipt.chapter,
                            chunk_key: receipt.chunk_key.clone(),
                            receipt: *id,
                            covered_by: covered_by(&surface),
                            surface,
                            text: text[hit.src.bytes()].to_owned(),
                            chars,
                        });
                    }
                }
            }
        }
        Ok(Coverage {
            revision: state.revision(),
            n_expected: expected.len(),
            n_chunks: receipts.len(),
            missing,
            uncovered,
        })
    }

    /// Checks the book at the head against the additive memory profile: every
    /// requirement of levels 1 to 3 on every active term, summary and rule, and the
    /// level the book reaches.
    pub fn profile_check(&mut self) -> Result<ProfileReport, BookError> {
        let state = self.state(None)?;
        let ids = active_records(&state);
        let n = ids.len();
        let failing = |test: &dyn Fn(RecordId) -> bool| ids.iter().copied().filter(|id| !test(*id)).collect();
        let rules: Vec<RecordId> = ids.iter().copied().filter(|id| id.kind() == RecordKind::Rule).collect();
        let restricted = state.is_restricted();
        let mut requirements = vec![
            Requirement {
                field: "record_id",
                level: 1,
                need: Need::Must,
                asks: "a stable id short enough to type (T-…, S-…, R-…)",
                n_checked: n,
                failing: Vec::new(),
                failed_book: false,
            },
            Requirement {
                field: "valid_from",
                level: 1,
                need: Need::Must,
                asks: "the chapter the statement holds from (a window's start, a summary's first chapter)",
                n_checked: n,
                failing: failing(&|id| match id.kind() {
                    RecordKind::Term => state.terms()[&id].put.window.since >= 1,
                    RecordKind::Summary => visible_from(&state.summaries()[&id].put) >= 1,
                    _ => state.rules()[&id].put.window.since >= 1,
                }),
                failed_book: false,
            },
            Requirement {
                field: "valid_to",
                level: 1,
                need: Need::Must,
                asks: "the chapter it holds to, present as a field (open-ended: until it is superseded)",
                n_checked: n,
                failing: Vec::new(),
                failed_book: false,
            },
            Requirement {
                field: "source",
                level: 2,
                need: Need::Must,
                asks: "a source of the current version one can follow (not a tool's default like `cli`)",
                n_checked: n,
                failing: failing(&|id| {
                    put_by(&state, id).is_some_and(|put_by| {
                        !put_by.source.trim().is_empty() && !UNFOLLOWABLE_SOURCES.contains(&put_by.source.as_str())
                    })
                }),
                failed_book: false,
            },
            Requirement {
                field: "concept_owner",
                level: 2,
                need: Need::Must,
                asks: "one party that answers for what it means (own, or the book's default for its class)",
                n_checked: n,
                failing: failing(&|id| state.governed(id).owner.is_some()),
                failed_book: false,
            },
            Requirement {
                field: "owner_role",
                level: 2,
                need: Need::Should,
                asks: "the role within the owner a question goes to",
                n_checked: n,
                failing: failing(&|id| state.governed(id).owner_role.is_some()),
                failed_book: false,
            },
            Requirement {
                field: "conflict_policy",
                level: 2,
                need: Need::Must,
                asks: "one conflict policy declared once for the book (governance_set)",
                n_checked: 1,
                failing: Vec::new(),
                failed_book: state.governance_set().is_none(),
            },
            Requirement {
                field: "applies_to",
                level: 2,
                need: Need::Must,
                asks: "on every rule, what it governs",
                n_checked: rules.len(),
                failing: rules.iter().copied().filter(|id| state.rules()[id].put.applies_to.is_empty()).collect(),
                failed_book: false,
            },
            Requirement {
                field: "does_not_apply_to",
                level: 2,
                need: Need::Must,
                asks: "on every rule, what it does not govern, declared (an empty list counts)",
                n_checked: rules.len(),
                failing: rules
                    .iter()
                    .copied()
                    .filter(|id| state.rules()[id].put.does_not_apply_to.is_none())
                    .collect(),
                failed_book: false,
            },
            Requirement {
                field: "release_to",
                level: 3,
                need: Need::Must,
                asks: "once any record is restricted, on every record, who may read it (absence is not permission)",
                n_checked: if restricted { n } else { 0 },
                failing: if restricted { failing(&|id| state.governed(id).release_to.is_some()) } else { Vec::new() },
                failed_book: false,
            },
            Requirement {
                field: "supersedes",
                level: 3,
                need: Need::Should,
                asks: "a term that takes over from one ending the chapter before, with the same source and sense, names it",
                n_checked: ids.iter().filter(|id| id.kind() == RecordKind::Term).count(),
                failing: unnamed_successions(&state),
                failed_book: false,
            },
        ];
        requirements.sort_by_key(|requirement| requirement.level);
        let level = (1..=3u8)
            .take_while(|level| {
                requirements.iter().filter(|r| r.level == *level && r.need == Need::Must).all(Requirement::holds)
            })
            .last()
            .unwrap_or(0);
        Ok(ProfileReport { revision: state.revision(), level, n_records: n, requirements })
    }

    /// The compact profile form of what `reader` sees at revision `as_of` (the head
    /// when `None`): [`PROFILE_HEADER`], then one line per active term, summary and
    /// rule, in id order. `valid_to` is derived at read time (a superseded term ends
    /// the chapter before its successor starts); `release_to` lists its parties
    /// joined by `,`; the value is `src -> dst` for a term (`src (sense) -> dst` with a
    /// sense), the text for a summary or rule. Empty fields are empty.
    pub fn export_profile(&mut self, reader: &Reader, as_of: Option<Seq>) -> Result<ProfileExport, BookError> {
        let read = self.read_at(reader, as_of)?;
        let snapshot = read.snapshot;
        let state = read.view();
        let windows: BTreeMap<RecordId, Option<Window>> =
            state.active_terms(None).into_iter().map(|active| (active.id, active.window)).collect();
        let mut text = String::from(PROFILE_HEADER);
        text.push('\n');
        let ids = active_records(state);
        for id in &ids {
            let governed = state.governed(*id);
            let (from, to, supersedes, value) = match id.kind() {
                RecordKind::Term => {
                    let put = &state.terms()[id].put;
                    let window = windows.get(id).copied().flatten();
                    let value = match &put.sense {
                        Some(sense) => format!("{} ({sense}) -> {}", put.src, put.dst),
                        None => format!("{} -> {}", put.src, put.dst),
                    };
                    let from = window.map_or(String::new(), |w| w.since.to_string());
                    let to = window.and_then(|w| w.until).map_or(String::new(), |until| until.to_string());
                    (from, to, put.supersedes.map(|old| old.to_string()).unwrap_or_default(), value)
                }
                RecordKind::Summary => {
                    let put = &state.summaries()[id].put;
                    (visible_from(put).to_string(), String::new(), String::new(), put.text.clone())
                }
                _ => {
                    let put = &state.rules()[id].put;
                    let to = put.window.until.map_or(String::new(), |until| until.to_string());
                    (put.window.since.to_string(), to, String::new(), put.text.clone())
                }
            };
            let source = put_by(state, *id).map(|put_by| put_by.source.as_str()).unwrap_or_default();
            let fields = [
                id.to_string(),
                from,
                to,
                source.to_owned(),
                governed.owner.unwrap_or_default().to_owned(),
                governed.owner_role.unwrap_or_default().to_owned(),
                supersedes,
                governed.release_to.map(|list| list.join(",")).unwrap_or_default(),
                value,
            ];
            let line: Vec<String> = fields.iter().map(|value| field(value)).collect();
            text.push_str(&line.join("|"));
            text.push('\n');
        }
        Ok(ProfileExport { revision: state.revision(), snapshot, text, n_records: ids.len() })
    }
}

/// Terms that take over from another with the same source and sense whose window
/// ends the chapter before theirs starts, without naming it in `supersedes`: the
/// update was made by editing the old record's window, the error the profile's
/// measurements found.
fn unnamed_successions(state: &State) -> Vec<RecordId> {
    let active: Vec<(RecordId, &TermPut)> =
        state.terms().iter().filter(|(_, term)| !term.retired).map(|(id, term)| (*id, &term.put)).collect();
    let mut out: Vec<RecordId> = active
        .iter()
        .filter(|(id, put)| {
            put.supersedes.is_none()
                && active.iter().any(|(other, old)| {
                    other != id
                        && old.src == put.src
                        && old.sense == put.sense
                        && old.window.until.is_some_and(|until| until.checked_add(1) == Some(put.window.since))
                })
        })
        .map(|(id, _)| *id)
        .collect();
    out.sort_unstable();
    out
}
