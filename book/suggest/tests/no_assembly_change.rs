//! Proof that no embedding ever changes an assembly or a snapshot ID (proptest): the
//! same book built twice, once as it is and once with the embedding model set, every
//! term's vectors refreshed, and every suggestion and dedupe pair proposed (none
//! accepted), has the same snapshot ID and assembles every chunk to the same
//! context, hits and receipt snapshot.

mod common;

use std::sync::{Mutex, OnceLock};

use book::Reader;
use common::*;
use ledger_model::*;
use proptest::prelude::*;
use suggest::{Model, SuggestOptions};

/// Han characters of the tiny vocabulary that are no grammar words.
const HAN: &str = "雾川灯录萧炎薰药林动山水火风云天月星光明夜雨雪花草木石金玉龙凤虎马鸟鱼城门王剑刀书画琴棋酒茶";
const CYRILLIC: &str = "абвгдежзиклмнопрстуфхцчшэюя";

fn pick(alphabet: &'static str) -> impl Strategy<Value = char> {
    let chars: Vec<char> = alphabet.chars().collect();
    (0..chars.len()).prop_map(move |index| chars[index])
}

fn word(alphabet: &'static str, len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(pick(alphabet), len).prop_map(|chars| chars.into_iter().collect())
}

/// Terms with distinct sources, and chunks mixing their sources, quoted names and
/// other characters.
fn case() -> impl Strategy<Value = (Vec<(String, String)>, Vec<String>)> {
    let terms = prop::collection::btree_map(word(HAN, 2..=3), word(CYRILLIC, 3..=8), 1..=6)
        .prop_map(|terms| terms.into_iter().collect::<Vec<_>>());
    terms.prop_flat_map(|terms| {
        let sources: Vec<String> = terms.iter().map(|(src, _)| src.clone()).collect();
        let piece = prop_oneof![
            (0..sources.len()).prop_map(move |index| sources[index].clone()),
            word(HAN, 2..=4).prop_map(|name| format!("“{name}”")),
            word(HAN, 1..=6),
            Just("。".to_owned()),
        ];
        let chunk = prop::collection::vec(piece, 1..=10).prop_map(|pieces| pieces.concat());
        (Just(terms), prop::collection::vec(chunk, 1..=3))
    })
}

fn model() -> &'static Mutex<Option<Model>> {
    static MODEL: OnceLock<Mutex<Option<Model>>> = OnceLock::new();
    MODEL.get_or_init(|| Mutex::new(None))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_same_book_with_and_without_vectors_assembles_identically(case in case()) {
        let (terms, chunks) = case;
        let bodies: Vec<Body> = terms
            .iter()
            .enumerate()
            .map(|(index, (src, dst))| term(&format!("T-{}", index + 1), src, dst))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let mut plain = zh_book(&dir.path().join("plain.lorebank"), bodies.clone());
        let mut embedded = zh_book(&dir.path().join("embedded.lorebank"), bodies);
        suggest::set_model(&mut embedded, &tiny(), &tiny_options(), &write()).unwrap();
        let mut guard = model().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let model = guard.get_or_insert_with(|| Model::for_book(&mut embedded, &tiny()).unwrap());
        suggest::refresh(&mut embedded, model, false, |_, _| {}).unwrap();
        let mut n_proposed = 0;
        for (chunk_idx, text) in chunks.iter().enumerate() {
            let key = (chunk_idx + 1).to_string();
            let suggested =
                suggest::suggest(&mut embedded, model, 1, &key, text, &SuggestOptions { min_score: Some(-1_000_000), phrases: true, dry_run: false }, &write()).unwrap();
            n_proposed += suggested.proposed.len();
        }
        let deduped = suggest::dedupe(&mut embedded, model, Some(-1_000_000), false, &write()).unwrap();
        n_proposed += deduped.proposed.len();
        let with = embedded.state(None).unwrap();
        prop_assert!(with.revision() > plain.state(None).unwrap().revision());
        prop_assert_eq!(with.candidates().len(), n_proposed);
        prop_assert_eq!(plain.state(None).unwrap().snapshot_id(), with.snapshot_id());
        prop_assert!(suggest::status(&mut embedded).unwrap().n_fresh == terms.len());
        for (chunk_idx, text) in chunks.iter().enumerate() {
            let key = (chunk_idx + 1).to_string();
            for chapter in [1, 2] {
                let a = plain.assemble_chunk(&Reader::Full, chapter, &key, text, None, false).unwrap();
                let b = embedded.assemble_chunk(&Reader::Full, chapter, &key, text, None, false).unwrap();
                prop_assert_eq!(&a.assembly, &b.assembly);
                prop_assert_eq!(a.receipt.snapshot, b.receipt.snapshot);
                prop_assert_eq!(&a.receipt.hits, &b.receipt.hits);
            }
        }
    }
}
