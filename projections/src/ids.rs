//! New record ids: the one rule every writer that numbers records itself follows
//! (`scan`, `review accept`, `import`, `suggest`, `dedupe`). A new record of a kind
//! takes the number after the highest number of that kind the book has ever used,
//! so an id is never given twice; numbers end at [`RECORD_NUMBER_MAX`], and past it
//! the writer gets a [`NoFreeId`] naming the kind and the limit, never a panic.

use ledger_model::ids::RECORD_NUMBER_MAX;
use ledger_model::{RecordId, RecordKind};

use crate::State;

/// No id of `kind` is left: the book already uses the largest number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no free {noun} id is left: the book uses {last}, and record numbers end at {max}",
    noun = .kind.noun(),
    max = RECORD_NUMBER_MAX
)]
pub struct NoFreeId {
    /// The kind of record that needed an id.
    pub kind: RecordKind,
    /// The highest id of that kind in use.
    pub last: RecordId,
}

/// The ids new records of one kind take, in order ([`State::free_ids`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreeIds {
    kind: RecordKind,
    /// The highest number in use so far, 0 for none.
    last: u32,
}

impl FreeIds {
    /// New ids of `kind` after the ids `used`.
    pub fn after(kind: RecordKind, used: impl IntoIterator<Item = RecordId>) -> FreeIds {
        let last = used.into_iter().filter(|id| id.kind() == kind).map(RecordId::number).max().unwrap_or(0);
        FreeIds { kind, last }
    }

    /// The next free id, which is then in use; an error when none is left.
    pub fn take(&mut self) -> Result<RecordId, NoFreeId> {
        let next = self.last.checked_add(1).and_then(|number| RecordId::new(self.kind, number));
        match next {
            Some(id) => {
                self.last = id.number();
                Ok(id)
            }
            None => Err(NoFreeId {
                kind: self.kind,
                last: RecordId::new(self.kind, self.last.min(RECORD_NUMBER_MAX)).expect("the last number is in range"),
            }),
        }
    }
}

impl State {
    /// The ids new records of `kind` take: after every id of that kind the book has
    /// used (retired and rejected records included).
    pub fn free_ids(&self, kind: RecordKind) -> FreeIds {
        let used: Box<dyn Iterator<Item = RecordId> + '_> = match kind {
            RecordKind::Term => Box::new(self.terms().keys().copied()),
            RecordKind::Summary => Box::new(self.summaries().keys().copied()),
            RecordKind::Candidate => Box::new(self.candidates().keys().copied()),
            RecordKind::Rule => Box::new(self.rules().keys().copied()),
        };
        FreeIds::after(kind, used)
    }

    /// The id a new record of `kind` takes ([`State::free_ids`]).
    pub fn next_free_id(&self, kind: RecordKind) -> Result<RecordId, NoFreeId> {
        self.free_ids(kind).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> RecordId {
        text.parse().unwrap()
    }

    #[test]
    fn ids_follow_the_highest_used_and_stop_with_an_error_at_the_limit() {
        let cases: &[(RecordKind, &[&str], Result<&str, &str>)] = &[
            (RecordKind::Candidate, &[], Ok("C-1")),
            (RecordKind::Candidate, &["C-7", "C-3"], Ok("C-8")),
            (RecordKind::Candidate, &["T-40", "C-2"], Ok("C-3")),
            (RecordKind::Term, &["T-999999998"], Ok("T-999999999")),
            (
                RecordKind::Candidate,
                &["C-1", "C-999999999"],
                Err("no free candidate id is left: the book uses C-999999999, and record numbers end at 999999999"),
            ),
            (RecordKind::Term, &["T-999999999"], Err("no free term id is left: the book uses T-999999999")),
            (RecordKind::Rule, &["R-999999999"], Err("no free rule id is left")),
            (RecordKind::Summary, &["S-999999999"], Err("no free summary id is left")),
        ];
        for (kind, used, expected) in cases {
            let taken = FreeIds::after(*kind, used.iter().map(|text| id(text))).take();
            match (taken, expected) {
                (Ok(taken), Ok(expected)) => assert_eq!(taken, id(expected), "{used:?}"),
                (Err(error), Err(says)) => {
                    assert_eq!(error.kind, *kind);
                    assert!(error.to_string().starts_with(says), "{used:?}: {error}");
                }
                (taken, _) => panic!("{kind:?} after {used:?}: {taken:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn the_last_free_id_is_given_once() {
        let mut free = FreeIds::after(RecordKind::Candidate, [id("C-999999998")]);
        assert_eq!(free.take(), Ok(id("C-999999999")));
        assert_eq!(free.take().unwrap_err().last, id("C-999999999"));
        assert!(free.take().is_err(), "an exhausted kind stays exhausted");
    }
}
