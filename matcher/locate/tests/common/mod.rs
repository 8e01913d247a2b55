//! The books the tests register: the corpus slices of `tests/data/corpora/` cut into
//! chapters at their chapter headings, and their paragraphs.
#![allow(dead_code)]

use std::sync::OnceLock;

use locate::Index;
use matcher::Flavour;
use matcher::Profile;
use test_support::profiles::{profile, zh_profile};

/// 西游记, the title to part of chapter 8, simplified, CRLF, paragraphs indented by
/// four spaces and separated by blank lines.
pub const XIYOUJI: &str = include_str!("../../../../tests/data/corpora/xiyouji-head.txt");
/// 吾輩は猫である, the end of chapter 3 and part of chapter 4, with Aozora markup.
pub const KUSHAMI: &str = include_str!("../../../../tests/data/corpora/wagahai-kushami.txt");
/// 吾輩は猫である, most of chapter 10 and part of 11: many short lines of dialogue.
pub const VIOLIN: &str = include_str!("../../../../tests/data/corpora/wagahai-violin.txt");

/// 西游记's chapters 1–8 (the title line before chapter 1 left out), each from its
/// `第…回` heading to the next.
pub fn xiyouji() -> &'static [(u32, String)] {
    static CHAPTERS: OnceLock<Vec<(u32, String)>> = OnceLock::new();
    CHAPTERS.get_or_init(|| split(XIYOUJI, |line| line.starts_with('第') && line.contains('回'), 1))
}

/// 吾輩は猫である's chapters 3 (its end) and 4 from the first slice, then 10 and 11
/// from the second, each from its `［＃８字下げ］…［＃「…」は中見出し］` heading.
pub fn wagahai() -> &'static [(u32, String)] {
    static CHAPTERS: OnceLock<Vec<(u32, String)>> = OnceLock::new();
    CHAPTERS.get_or_init(|| {
        let heading = |line: &str| line.contains("は中見出し］");
        let mut chapters = split(&format!("［＃「三」は中見出し］\r\n{KUSHAMI}"), heading, 3);
        chapters.extend(split(&format!("［＃「十」は中見出し］\r\n{VIOLIN}"), heading, 10));
        chapters
    })
}

/// `text` cut before each line `is_heading` accepts, numbered from `first`; what
/// precedes the first heading is dropped.
fn split(text: &str, is_heading: impl Fn(&str) -> bool, first: u32) -> Vec<(u32, String)> {
    let mut chapters: Vec<(u32, String)> = Vec::new();
    for line in text.split_inclusive("\r\n") {
        if is_heading(line) {
            chapters.push((first + chapters.len() as u32, String::new()));
        }
        if let Some((_, chapter)) = chapters.last_mut() {
            chapter.push_str(line);
        }
    }
    chapters
}

/// The paragraphs of a chapter: its lines with text, without their indentation and
/// line breaks.
pub fn paragraphs(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|line| !line.is_empty()).collect()
}

/// The paragraphs `range` of chapter `number` of `chapters`.
pub fn lines(chapters: &[(u32, String)], number: u32, range: std::ops::Range<usize>) -> Vec<&str> {
    let (_, text) = chapters.iter().find(|(n, _)| *n == number).expect("a registered chapter");
    paragraphs(text)[range].to_vec()
}

/// The index of `chapters` with `profile`.
pub fn index_of(profile: &Profile, chapters: &[(u32, String)]) -> Index {
    Index::build(profile, chapters.iter().map(|(n, text)| (*n, text.as_str()))).expect("build the index")
}

/// 西游记 chapters 1–8 with the zh profile.
pub fn xiyouji_index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| index_of(zh_profile(), xiyouji()))
}

/// 吾輩は猫である chapters 3, 4, 10, 11 with the ja profile.
pub fn wagahai_index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| index_of(profile(Flavour::Ja), wagahai()))
}
