//! A simulated book for projection tests: decide, then seal real records into a hash
//! chain and apply them, keeping the state after every revision.
#![allow(dead_code)]

use ledger_model::record::{self, SCHEMA_CURRENT};
use ledger_model::*;
use projections::{
    decide, decide_dry, decide_in_place, decide_indexed, Decision, Environment, Rejection, SnapshotId, State,
    SurfaceIndex,
};
use test_support::records::{alias, id, put, summary};

/// A stand-in for a normalization profile: folds the traditional 蕭 to 萧 and case.
pub fn fold(text: &str) -> String {
    text.replace('蕭', "萧").replace('藥', "药").to_lowercase()
}

/// Render formats and token estimators the simulated build has.
pub const RENDER_FORMATS: &[u16] = &[1, 2];
pub const TOKEN_ESTIMATORS: &[u16] = &[1];

/// Every fold table id the simulated book holds: any but all zeros.
pub fn has_table(table: Hash32) -> bool {
    table != Hash32([0; 32])
}

/// Every source text the simulated book holds: any id but all zeros, as many bytes
/// long as its first byte says.
pub fn source_text(text: Hash32) -> Option<u64> {
    (text != Hash32([0; 32])).then_some(u64::from(text.0[0]))
}

/// The simulated build and book, with `snapshot_at` for rollback markers.
pub fn env<'e>(snapshot_at: &'e dyn Fn(Seq) -> Option<SnapshotId>) -> Environment<'e> {
    Environment {
        fold: &fold,
        render_formats: RENDER_FORMATS,
        token_estimators: TOKEN_ESTIMATORS,
        has_table: &has_table,
        source_text: &source_text,
        snapshot_at,
    }
}

pub struct Sim {
    pub events: Vec<Event>,
    pub state: State,
    /// `states[r]` is the state at revision `r`.
    pub states: Vec<State>,
    pub actor: String,
    /// Revisions at which a batch ended: only these are states `decide` vouched for
    /// (inside a batch, UNIQUE may be broken for a moment).
    pub boundaries: Vec<u64>,
    /// The head's index of keys, kept from batch to batch as a book keeps it.
    pub index: Option<SurfaceIndex>,
}

impl Default for Sim {
    fn default() -> Sim {
        Sim {
            events: Vec::new(),
            state: State::new(),
            states: vec![State::new()],
            actor: "human:test".into(),
            boundaries: vec![0],
            index: None,
        }
    }
}

impl Sim {
    pub fn submit(&mut self, bodies: Vec<Body>) -> Result<Decision, Rejection> {
        let batch: Vec<NewEvent> = bodies
            .into_iter()
            .map(|body| NewEvent {
                recorded_at_ms: 1_000 + self.events.len() as u64,
                actor: self.actor.clone(),
                source: "sim".into(),
                body,
            })
            .collect();
        let snapshot_at = |revision: Seq| self.states.get(revision.0 as usize).map(State::snapshot_id);
        let decided = decide(&self.state, &env(&snapshot_at), &batch);
        // Deciding in place gives the same answer, and a refusal leaves the state as
        // it was, whatever the batch applied before it was refused.
        let mut in_place = self.state.clone();
        match (&decided, decide_in_place(&mut in_place, &env(&snapshot_at), &batch)) {
            (Ok(decision), Ok(in_place_decided)) => {
                assert_eq!(
                    (&in_place_decided.events, &in_place_decided.dropped, &in_place_decided.warnings),
                    (&decision.events, &decision.dropped, &decision.warnings)
                );
                assert_eq!(in_place, decision.state, "decided in place, the state differs");
            }
            (Err(rejection), Err(in_place_rejection)) => {
                assert_eq!(&in_place_rejection, rejection);
                assert_eq!(in_place, self.state, "a refused batch left the state changed");
            }
            (decided, in_place_decided) => panic!("decide: {decided:?}; in place: {in_place_decided:?}"),
        }
        // A dry run with the head's index gives the same answer, sees the state the
        // batch leads to, and leaves the state and the index as they were.
        let mut dry = self.state.clone();
        let mut dry_index = self.index.clone();
        let dried = decide_dry(&mut dry, dry_index.as_mut(), &env(&snapshot_at), &batch, |after, _| {
            (after.revision(), after.snapshot_id(), after.clone())
        });
        match (&decided, dried) {
            (Ok(decision), Ok((dry_decided, (revision, snapshot, after)))) => {
                assert_eq!(
                    (&dry_decided.events, &dry_decided.dropped, &dry_decided.warnings),
                    (&decision.events, &decision.dropped, &decision.warnings)
                );
                assert_eq!(after, decision.state, "a dry run saw another state");
                assert_eq!((revision, snapshot), (decision.state.revision(), decision.state.snapshot_id()));
            }
            (Err(rejection), Err(dry_rejection)) => assert_eq!(&dry_rejection, rejection),
            (decided, dried) => panic!("decide: {decided:?}; dry: {:?}", dried.map(|(decided, _)| decided)),
        }
        assert_eq!(dry, self.state, "a dry run left the state changed");
        assert_eq!(dry_index, self.index, "a dry run left the index changed");
        // And so does deciding with the head's index, which is then the index of the
        // state it leaves (none after a config, whose profile may fold anew).
        let mut indexed = self.state.clone();
        let mut index = self.index.take();
        match (&decided, decide_indexed(&mut indexed, &mut index, &env(&snapshot_at), &batch)) {
            (Ok(decision), Ok(indexed_decided)) => {
                assert_eq!(
                    (&indexed_decided.events, &indexed_decided.dropped, &indexed_decided.warnings),
                    (&decision.events, &decision.dropped, &decision.warnings)
                );
                assert_eq!(indexed, decision.state, "decided with the index, the state differs");
            }
            (Err(rejection), Err(indexed_rejection)) => {
                assert_eq!(&indexed_rejection, rejection);
                assert_eq!(indexed, self.state, "a refused batch left the state changed");
            }
            (decided, indexed_decided) => panic!("decide: {decided:?}; with the index: {indexed_decided:?}"),
        }
        if let Some(index) = &index {
            assert_eq!(*index, SurfaceIndex::of(&indexed, &fold), "the kept index differs from one built anew");
        }
        self.index = index;
        let decision = decided?;
        for new_event in &decision.events {
            let seq = self.state.revision().next();
            let prev = self.events.last().map_or(Hash32::GENESIS, |event| event.hash);
            let (bytes, _) = record::seal(seq, prev, SCHEMA_CURRENT, &new_event.encode().unwrap());
            let event = record::open(seq, &bytes).unwrap();
            self.state.apply(&event);
            self.states.push(self.state.clone());
            self.events.push(event);
        }
        assert_eq!(self.state, decision.state, "decide's state differs from the applied state");
        self.boundaries.push(self.state.revision().0);
        Ok(decision)
    }

    pub fn ok(&mut self, bodies: Vec<Body>) -> Decision {
        self.submit(bodies).unwrap_or_else(|rejection| panic!("refused: {rejection}"))
    }

    pub fn at(&self, revision: u64) -> &State {
        &self.states[revision as usize]
    }
}

/// A small glossary with declensions, a windowed nickname, a superseded term and a
/// book summary: what the frozen-projection and determinism tests freeze.
pub fn glossary() -> Sim {
    let mut sim = Sim::default();
    sim.ok(vec![
        Body::TermPut(TermPut {
            decl: vec!["Сяо Яня".into()],
            gender: Some(Gender::Masculine),
            ..put("T-1", "萧炎", "Сяо Янь")
        }),
        Body::AliasAdded(AliasAdded {
            kind: AliasKind::Nickname,
            window: Some(Window { since: 3, until: None }),
            ..alias("T-1", "炎子")
        }),
        Body::TermPut(TermPut { window: Window { since: 1, until: Some(9) }, ..put("T-2", "药老", "Яо Лао") }),
        Body::TermPut(TermPut {
            window: Window { since: 5, until: None },
            supersedes: Some(id("T-2")),
            ..put("T-3", "药尘", "Яо Чэнь")
        }),
        Body::SummaryPut(summary("S-1", Scope::Book, "Сяо Янь теряет силу.")),
    ]);
    sim
}
