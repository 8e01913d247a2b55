//! Real files of other tools (`tests/fixtures/real/`, each folder with its provenance
//! and licence): every one reads to what docs/formats.md promises (entries, skipped
//! concepts, lost fields by name, notices), its `tbx-2008` or `omegat` export reads
//! back to the same entries with nothing lost (read, write, read is a fixed point),
//! and translate-toolkit reads that export as exactly the exported entries.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use formats::{read, write, At, ExportInput, Format, Languages, Parsed};
use test_support::interchange::{fixture, numbered, terms_of, translate_toolkit, ToolkitStore, ToolkitUnit};

/// (uid, src, aliases, dst) of an entry.
type TbxEntry = (&'static str, &'static str, &'static [&'static str], &'static str);

/// What a real TBX file reads as, for a book from `source` to `target`.
struct RealTbx {
    file: &'static str,
    source: &'static str,
    target: &'static str,
    /// (uid, src, aliases, dst) of each entry, in file order.
    entries: &'static [TbxEntry],
    /// (uid, reason) of each concept left out.
    skipped: &'static [(&'static str, &'static str)],
    /// How many times each field is reported lost.
    lost: &'static [(&'static str, usize)],
    notices: &'static [&'static str],
}

const DOCTYPE: &str = "the <!DOCTYPE> was skipped: lorebank fetches no DTD and expands no entity one declares";

const REAL_TBX: &[RealTbx] = &[
    RealTbx {
        file: "okapi/test01.tbx",
        source: "en",
        target: "hu",
        entries: &[("eid-Oracle-67", "alpha smoothing factor", &[], "Alfa simítási tényező")],
        skipped: &[],
        lost: &[("definition", 1)],
        notices: &[DOCTYPE],
    },
    // Decided: a legacy code page named by the XML declaration is read (every XML reader
    // honours it), with a notice.
    RealTbx {
        file: "okapi/test02_win1254.tbx",
        source: "en",
        target: "tr",
        entries: &[("id1", "term with: éá and İı", &[], "tr term with: éá and İı")],
        skipped: &[],
        lost: &[],
        notices: &["decoded as windows-1254, the encoding the XML declaration names"],
    },
    // The source language is the last of four sections, and the root says `EN`.
    RealTbx {
        file: "okapi/maryland.tbx",
        source: "en",
        target: "fr",
        entries: &[("eid-VocCod-211.01", "scribe", &["copyist"], "copiste")],
        skipped: &[],
        lost: &[("definition", 1), ("langSet", 2), ("term", 2), ("termType", 3)],
        notices: &[DOCTYPE],
    },
    // A trailing space in a term (trimmed), an abbreviation as a second term.
    RealTbx {
        file: "okapi/oracle_TBX.tbx",
        source: "en",
        target: "pt",
        entries: &[
            ("c1", "Provincial Reporting Establishment", &["PRE"], "Entidade de Supervisão de Província"),
            ("c2", "Target Value", &[], "Valor a Atingir"),
        ],
        skipped: &[],
        lost: &[
            ("abbreviatedFormFor", 1),
            ("administrativeStatus", 2),
            ("corpusTrace", 2),
            ("definition", 2),
            ("productSubset", 2),
            ("term", 1),
        ],
        notices: &[DOCTYPE],
    },
    // ntig/termGrp only, data categories outside TBX-Basic.
    RealTbx {
        file: "okapi/ibm_tbx.tbx",
        source: "en",
        target: "fr",
        entries: &[
            ("c1", "navigation trail", &["branch"], "historique de navigation"),
            ("c2", "bill acceptor", &[], "accepteur de billets"),
            ("c3", "scheduled operation", &[], "opération planifiée"),
            ("c4", "samples gallery", &[], "galerie d'exemples"),
            ("c5", "front end", &[], "avant-guichet"),
        ],
        skipped: &[],
        lost: &[
            ("context", 5),
            ("definition", 1),
            ("partOfSpeech", 5),
            ("productSubset", 9),
            ("relatedConcept", 1),
            ("relatedConceptBroader", 3),
            ("sourceIdentifier", 7),
        ],
        notices: &[
            DOCTYPE,
            "c2: a line break or tab inside <descrip> read as a space",
            "c3: a line break or tab inside <descrip> read as a space",
        ],
    },
    // Decided: two sections of the target language in one concept (the second `da` holds
    // German) read as one: the first term is the rendering, the later ones are lost.
    RealTbx {
        file: "okapi/medtronic_TBX.slice-first2.tbx",
        source: "en",
        target: "da",
        entries: &[
            ("c7331", "patient identifier", &[], "patientidentifikator"),
            ("c7332", "audible alert", &["audible notification"], "hørbar alarm"),
        ],
        skipped: &[],
        lost: &[
            ("administrativeStatus", 2),
            ("businessUnitSubset", 2),
            ("context", 2),
            ("definition", 2),
            ("langSet", 24),
            ("productSubset", 2),
            ("projectSubset", 2),
            ("term", 2),
            ("transacGrp/date", 14),
            ("transacGrp/transacNote", 14),
            ("transactionType", 14),
        ],
        notices: &[DOCTYPE],
    },
    // LISA's TBX-Basic 2008 sample: five English terms of one concept, a third
    // language, English-only concepts, a <back>.
    RealTbx {
        file: "lisa/TBX-basic-sample.tbx",
        source: "en",
        target: "fr",
        entries: &[
            ("c5", "e-mail", &[], "courriel"),
            ("c6", "federated database", &[], "base de données fédérée"),
            (
                "c7",
                "progressive lens",
                &["progressive addition lens", "PAL", "progressive power lens", "graduated lens"],
                "lentille progressive",
            ),
        ],
        skipped: &[("c1", "no dst"), ("c2", "no dst")],
        lost: &[
            ("administrativeStatus", 5),
            ("back", 1),
            ("context", 2),
            ("definition", 1),
            ("descripGrp/admin", 1),
            ("langSet", 1),
            ("termType", 2),
        ],
        notices: &[DOCTYPE],
    },
];

fn real(path: &str) -> Vec<u8> {
    fixture(&format!("real/{path}"))
}

/// The report of `parsed` in the shape of [`RealTbx`].
fn report(parsed: &Parsed) -> RealReport {
    let uid = |at: &At| match at {
        At::Uid(uid) => uid.clone(),
        other => other.to_string(),
    };
    let mut lost = BTreeMap::new();
    for field in &parsed.lost {
        *lost.entry(field.field.clone()).or_insert(0) += 1;
    }
    RealReport {
        entries: parsed
            .entries
            .iter()
            .map(|entry| {
                let aliases = entry.term.aliases.iter().map(|alias| alias.surface.clone()).collect();
                (uid(&entry.at), entry.term.src.clone(), aliases, entry.term.dst.clone())
            })
            .collect(),
        skipped: parsed.skipped.iter().map(|skipped| (uid(&skipped.at), skipped.reason.clone())).collect(),
        lost,
        notices: parsed
            .notices
            .iter()
            .map(|notice| match &notice.at {
                Some(at) => format!("{}: {}", uid(at), notice.message),
                None => notice.message.clone(),
            })
            .collect(),
    }
}

#[derive(Debug, PartialEq, Eq)]
struct RealReport {
    entries: Vec<(String, String, Vec<String>, String)>,
    skipped: Vec<(String, String)>,
    lost: BTreeMap<String, usize>,
    notices: Vec<String>,
}

impl RealTbx {
    fn languages(&self) -> Languages {
        Languages { source: self.source.into(), target: self.target.into() }
    }

    fn expected(&self) -> RealReport {
        RealReport {
            entries: self
                .entries
                .iter()
                .map(|(uid, src, aliases, dst)| {
                    (
                        uid.to_string(),
                        src.to_string(),
                        aliases.iter().map(|alias| alias.to_string()).collect(),
                        dst.to_string(),
                    )
                })
                .collect(),
            skipped: self.skipped.iter().map(|(uid, reason)| (uid.to_string(), reason.to_string())).collect(),
            lost: self.lost.iter().map(|(field, count)| (field.to_string(), *count)).collect(),
            notices: self.notices.iter().map(|notice| notice.to_string()).collect(),
        }
    }

    /// What a book from `source` to `target` that imported the file exports.
    fn export_input(&self, parsed: &Parsed) -> ExportInput {
        ExportInput {
            source_lang: self.source.into(),
            target_lang: self.target.into(),
            chapter: None,
            terms: numbered(terms_of(parsed)),
            summaries: Vec::new(),
        }
    }
}

#[test]
fn every_real_tbx_file_reads_as_the_docs_say() {
    for real_tbx in REAL_TBX {
        for format in [Format::Tbx, Format::Tbx2008] {
            let parsed = read(format, &real(real_tbx.file), &real_tbx.languages())
                .unwrap_or_else(|error| panic!("{}: {error}", real_tbx.file));
            assert_eq!(report(&parsed), real_tbx.expected(), "{} as {format}", real_tbx.file);
        }
    }
}

#[test]
fn every_real_tbx_file_exported_as_tbx_2008_reads_back_the_same_and_is_a_fixed_point() {
    for real_tbx in REAL_TBX {
        let first = read(Format::Tbx2008, &real(real_tbx.file), &real_tbx.languages()).unwrap();
        for format in [Format::Tbx2008, Format::Tbx] {
            let exported = write(format, &real_tbx.export_input(&first)).unwrap();
            assert_eq!(exported.lost, vec![], "{} as {format}", real_tbx.file);
            let second = read(format, &exported.bytes, &real_tbx.languages()).unwrap();
            assert_eq!(terms_of(&second), terms_of(&first), "{} as {format}", real_tbx.file);
            assert_eq!((second.skipped.len(), second.lost.len(), second.notices.len()), (0, 0, 0));
            let again = write(format, &real_tbx.export_input(&second)).unwrap();
            assert!(again.bytes == exported.bytes, "{} as {format}: the second export differs", real_tbx.file);
        }
    }
}

#[test]
fn translate_toolkit_reads_the_tbx_2008_export_of_every_real_tbx_file_as_its_pairs() {
    for real_tbx in REAL_TBX {
        let parsed = read(Format::Tbx2008, &real(real_tbx.file), &real_tbx.languages()).unwrap();
        let input = real_tbx.export_input(&parsed);
        let bytes = write(Format::Tbx2008, &input).unwrap().bytes;
        let expected: Vec<(Option<String>, Option<String>, Option<String>)> = input
            .terms
            .iter()
            .map(|export| (Some(export.id.to_string()), Some(export.term.src.clone()), Some(export.term.dst.clone())))
            .collect();
        let pairs = |units: Vec<ToolkitUnit>| -> Vec<_> {
            units.into_iter().map(|unit| (unit.id, unit.source, unit.target)).collect()
        };
        assert_eq!(pairs(translate_toolkit(ToolkitStore::Tbx(None), &bytes)), expected, "{}", real_tbx.file);
        let languages = Some((real_tbx.source, real_tbx.target));
        assert_eq!(pairs(translate_toolkit(ToolkitStore::Tbx(languages), &bytes)), expected, "{}", real_tbx.file);
    }
}

#[test]
fn the_tbx_basic_2008_checker_passes_lisas_own_sample() {
    // The checker of tbx-2008 exports (tbx.rs) agrees with the sample the TBX-Basic
    // 2008 package shipped: both DTDs and every data category of its XCS.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let output = Command::new("python3")
        .arg(fixtures.join("tbx/check_tbx2008.py"))
        .arg(fixtures.join("real/lisa/TBX-basic-sample.tbx"))
        .output()
        .unwrap_or_else(|error| panic!("python3 is needed to check TBX files ({error}): run scripts/setup.sh"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("checked 1 files, 0 problems"), "{stdout}");
}

/// OmegaT's own test glossaries, with what OmegaT's tests assert they hold: (file,
/// format, [(src, dst, note)]).
/// Entries of a glossary as (src, dst, note).
type Entries = &'static [(&'static str, &'static str, &'static str)];

const REAL_OMEGAT: &[(&str, Format, Entries)] = &[
    (
        "test.tab",
        Format::OmegaT,
        &[
            ("kde", "koo moo", ""),
            ("question", "qqqqq", ""),
            ("地球システム", "System Terre", "https://fr.wikipedia.org/wiki/Science_du_syst%C3%A8me_Terre"),
            ("손가락", "Korean Term", ""),
        ],
    ),
    (
        "testUTF16LE.txt",
        Format::OmegaT,
        &[("UTF", "Unicode Transformation Format", "Comment #1"), ("LE", "Little Endian", "Comment #2")],
    ),
    (
        "test.csv",
        Format::OmegaTCsv,
        &[
            ("kde", "csv kde", ""),
            ("question", "csv q", ""),
            ("kde; question", "comma", ""),
            ("kde, qu", "comma dot", ""),
            ("\"kde\",\"q\"", "cdk", ""),
            ("\"\"k", "k", ""),
            ("zz\"zz", "zz", ""),
        ],
    ),
    ("test-magiccomment.tab", Format::OmegaT, &[]),
    ("test-magiccomment-bom.tab", Format::OmegaT, &[]),
    ("empty.txt", Format::OmegaT, &[]),
    ("project__glossary.txt", Format::OmegaT, &[("Introduction", "紹介", ""), ("Error", "エラー", "")]),
    // Six spaces where a tab should be: OmegaT reads no entry from those lines.
    ("project_CN_JP__glossary.txt", Format::OmegaT, &[]),
];

#[test]
fn omegats_own_glossaries_read_as_omegats_tests_say() {
    let zh = Languages { source: "zh".into(), target: "ru".into() };
    for (file, format, entries) in REAL_OMEGAT {
        let parsed =
            read(*format, &real(&format!("omegat/{file}")), &zh).unwrap_or_else(|error| panic!("{file}: {error}"));
        let read: Vec<(&str, &str, &str)> = parsed
            .entries
            .iter()
            .map(|entry| (entry.term.src.as_str(), entry.term.dst.as_str(), entry.term.note.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(read, *entries, "{file}");
        assert_eq!(parsed.lost, vec![], "{file}");
        let skipped: Vec<String> =
            parsed.skipped.iter().map(|skipped| format!("{}: {}", skipped.at, skipped.reason)).collect();
        if *file == "project_CN_JP__glossary.txt" {
            assert_eq!(skipped, ["line 2: no tab: fewer than 2 columns", "line 3: no tab: fewer than 2 columns"]);
        } else {
            assert_eq!(skipped, Vec::<String>::new(), "{file}");
        }
    }
}

#[test]
fn translate_toolkit_reads_the_omegat_export_of_omegats_own_glossaries_entry_for_entry() {
    let zh = Languages { source: "zh".into(), target: "ru".into() };
    for (file, format, entries) in REAL_OMEGAT {
        let parsed = read(*format, &real(&format!("omegat/{file}")), &zh).unwrap();
        let input = ExportInput { terms: numbered(terms_of(&parsed)), ..ExportInput::default() };
        let exported = write(Format::OmegaT, &input).unwrap();
        assert_eq!(exported.lost, vec![], "{file}");
        let units = translate_toolkit(ToolkitStore::OmegaT, &exported.bytes);
        let got: Vec<(String, String, String)> = units
            .into_iter()
            .map(|unit| (unit.source.unwrap(), unit.target.unwrap(), unit.notes.unwrap_or_default()))
            .collect();
        let expected: Vec<(String, String, String)> =
            entries.iter().map(|(src, dst, note)| (src.to_string(), dst.to_string(), note.to_string())).collect();
        assert_eq!(got, expected, "{file}");
    }
}
