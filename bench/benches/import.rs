//! Import benchmark (issue 11): a 50,000-entry GalTransl GPT dictionary imported
//! into an empty book in one atomic batch with `Book::import`, beside the same
//! 50,000 `term_put` bodies appended from JSON Lines with `Book::submit_labelled`
//! (what `lorebank apply` does) in the same process; then the re-import of the same
//! file (nothing to append) and the parse alone.
//!
//! The file is generated (two CJK ideographs from the simplified range and the line
//! number, a Russian rendering and a note), so every key is distinct after folding.
//! Each workload runs in a fresh book per round; the figure is the median round,
//! with the range beside it. Every round checks what it measured: 50,000 events
//! appended, or none for the re-import.
//!
//! Run: `cd bench && cargo bench --bench import`. `LOREBANK_BENCH_ROUNDS` sets the
//! rounds (default 5); `LOREBANK_BENCH_ENTRIES` the entries (default 50,000).

use std::time::Instant;

use book::{Book, Labelled, WriteOptions};
use formats::{Format, Languages};
use ledger::Ledger;
use ledger_model::*;
use matcher::{Flavour, ProfileBuilder};
use test_support::books::import_options;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}

/// A GalTransl dictionary of `n` lines, deterministic (xorshift over a fixed seed).
fn glossary(n: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Common simplified ideographs, which the zh profile folds to themselves.
    let han: Vec<char> = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域读".chars().collect();
    let mut text = String::with_capacity(n * 48);
    for line in 0..n {
        let a = han[next() as usize % han.len()];
        let b = han[next() as usize % han.len()];
        text.push_str(&format!("{a}{b}{line}\tПеревод {line}\tзаметка {line}\n"));
    }
    text
}

fn fresh_book(dir: &std::path::Path, name: &str, table: &(Hash32, Vec<u8>)) -> Book {
    let mut book = Book::new(Ledger::create(&dir.join(name)).unwrap());
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "zh".into(), table: Some(table.0) },
    });
    let event = NewEvent { recorded_at_ms: 0, actor: "human:bench".into(), source: "bench".into(), body: config };
    book.submit(&[event], Some(Seq(0)), vec![table.clone()]).unwrap();
    book
}

fn median(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0], values[values.len() - 1])
}

fn main() {
    let rounds = env_number("LOREBANK_BENCH_ROUNDS", 5).max(1);
    let n = env_number("LOREBANK_BENCH_ENTRIES", 50_000);
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let table = (Hash32(profile.id().0), profile.to_bytes());
    let text = glossary(n);
    let languages = Languages { source: "zh".into(), target: "ru".into() };
    let parsed = formats::read(Format::GalTransl, text.as_bytes(), &languages).unwrap();
    assert_eq!(parsed.entries.len(), n);
    // The same entries as `apply` lines.
    let lines: Vec<String> = parsed
        .entries
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let put = TermPut {
                note: entry.term.note.clone(),
                ..TermPut::new(
                    RecordId::new(RecordKind::Term, index as u32 + 1).unwrap(),
                    &entry.term.src,
                    &entry.term.dst,
                )
            };
            serde_json::to_string(&Body::TermPut(put)).unwrap()
        })
        .collect();
    let jsonl = lines.join("\n");
    let options = import_options();
    let (mut import, mut apply, mut reimport, mut parse) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let dir = tempfile::tempdir().unwrap();

        let started = Instant::now();
        let bodies: Vec<Labelled> = jsonl
            .lines()
            .enumerate()
            .map(|(index, line)| Labelled {
                label: format!("line {}", index + 1),
                default_source: format!("g.jsonl:{}", index + 1),
                body: serde_json::from_str(line).unwrap(),
            })
            .collect();
        let mut book = fresh_book(dir.path(), "apply.lorebank", &table);
        let write = WriteOptions { actor: "human:bench".into(), source: None, expect_head: None, recorded_at_ms: 0 };
        let written = book.submit_labelled(&write, bodies, Vec::new()).unwrap();
        apply.push(started.elapsed().as_secs_f64());
        let appended = written.submitted.appended.unwrap();
        assert_eq!(appended.last.0 - appended.first.0 + 1, n as u64);
        drop(book);

        let mut book = fresh_book(dir.path(), "import.lorebank", &table);
        let started = Instant::now();
        let report = book.import("g.txt", text.as_bytes(), &options).unwrap();
        import.push(started.elapsed().as_secs_f64());
        assert_eq!((report.imported.len(), report.n_events, report.written), (n, n, true));
        assert_eq!(report.snapshot, written.submitted.snapshot, "import and apply built different books");

        let started = Instant::now();
        let report = book.import("g.txt", text.as_bytes(), &options).unwrap();
        reimport.push(started.elapsed().as_secs_f64());
        assert_eq!((report.unchanged.len(), report.written), (n, false));

        let started = Instant::now();
        let parsed = formats::read(Format::GalTransl, text.as_bytes(), &languages).unwrap();
        parse.push(started.elapsed().as_secs_f64());
        assert_eq!(parsed.entries.len(), n);
        eprintln!("round {}: import {:.3} s, apply {:.3} s", round + 1, import[round], apply[round]);
    }
    println!("{n} entries, {} bytes of GalTransl ({rounds} rounds, median [min..max]):", text.len());
    for (name, values) in [
        ("import (Book::import)", &import),
        ("apply (same puts as JSON Lines)", &apply),
        ("re-import (no change)", &reimport),
        ("parse only", &parse),
    ] {
        let (median, min, max) = median(values.clone());
        println!("  {name:34} {median:7.3} s  [{min:.3}..{max:.3}]  {:9.0} entries/s", n as f64 / median);
    }
    let ratio = median(import.clone()).0 / median(apply.clone()).0;
    println!("  import / apply: {ratio:.2}x");
}
