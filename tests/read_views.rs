//! End-to-end tests of the window rules shared by assembly and the read views: what
//! `show --chapter N` lists is what assembly may inject at chapter N, and arc
//! summaries are recaps shown after their arc.

mod common;

use common::Book;
use serde_json::Value;

fn assemble(book: &Book, chapter: u32, text: &str) -> String {
    let chapter = chapter.to_string();
    let chunk = format!("c{chapter}");
    let output =
        book.run_with_stdin(&["assemble", "--chapter", &chapter, "--chunk", &chunk, "--text", "-"], Some(text));
    assert!(output.status.success(), "assemble failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn surfaces(shown: &Value) -> Vec<String> {
    shown["terms"][0]["aliases"].as_array().unwrap().iter().map(|a| a["surface"].as_str().unwrap().into()).collect()
}

fn summaries(shown: &Value) -> Vec<String> {
    shown["summaries"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().into()).collect()
}

#[test]
fn show_at_a_chapter_lists_no_alias_whose_window_starts_later() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--alias", "蕭炎"]);
    book.ok(&["alias", "add", "T-1", "炎帝", "--kind", "title", "--since", "30"]);
    book.ok(&["alias", "add", "T-1", "炎子", "--kind", "nickname", "--until", "9"]);
    let at_5 = book.json(&["show", "--chapter", "5"]);
    assert_eq!(surfaces(&at_5), ["炎子", "蕭炎"]);
    assert_eq!(surfaces(&book.json(&["show", "--chapter", "30"])), ["炎帝", "蕭炎"]);
    assert_eq!(surfaces(&book.json(&["show"])), ["炎子", "炎帝", "蕭炎"]);
    let text = book.ok(&["show", "--chapter", "5"]);
    assert!(text.contains("aliases: 炎子, 蕭炎") && !text.contains("炎帝"), "{text}");
    // Assembly agrees: the title is a spoiler at chapter 5 and found at chapter 30.
    assert!(!assemble(&book, 5, "炎帝来了。").contains("Сяо Янь"));
    assert!(assemble(&book, 30, "炎帝来了。").contains("Сяо Янь"));
}

#[test]
fn an_arc_summary_is_a_recap_shown_from_visible_from_on() {
    let book = Book::new();
    book.ok(&["summary", "put", "--id", "S-1", "--scope", "book", "--text", "Книга."]);
    book.ok(&["summary", "put", "--id", "S-2", "--scope", "chapter:3", "--text", "Глава три."]);
    book.ok(&["summary", "put", "--id", "S-3", "--scope", "arc:1-4", "--text", "Арка   Мглистой\nреки."]);
    book.ok(&["summary", "put", "--id", "S-4", "--scope", "arc:5-8", "--text", "Вторая арка.", "--visible-from", "10"]);
    // Inside its arc, the recap would be a spoiler; decide refuses showing it there.
    let error =
        book.fails(&["summary", "put", "--id", "S-5", "--scope", "arc:1-4", "--text", "x", "--visible-from", "4"], 2);
    assert!(error.contains("before its scope ends at chapter 4"), "{error}");
    assert_eq!(assemble(&book, 3, "无"), "[summaries]\n(book) Книга.\n");
    assert_eq!(assemble(&book, 4, "无"), "[summaries]\n(book) Книга.\n(chapter 3) Глава три.\n");
    assert_eq!(assemble(&book, 5, "无"), "[summaries]\n(book) Книга.\n(arc, chapters 1-4) Арка Мглистой реки.\n");
    assert_eq!(
        assemble(&book, 12, "无"),
        "[summaries]\n(book) Книга.\n(arc, chapters 1-4) Арка Мглистой реки.\n(arc, chapters 5-8) Вторая арка.\n"
    );
    // show lists what assembly shows.
    assert_eq!(summaries(&book.json(&["show", "--chapter", "3"])), ["S-1"]);
    assert_eq!(summaries(&book.json(&["show", "--chapter", "4"])), ["S-1", "S-2"]);
    assert_eq!(summaries(&book.json(&["show", "--chapter", "9"])), ["S-1", "S-3"]);
    assert_eq!(summaries(&book.json(&["show"])), ["S-1", "S-2", "S-3", "S-4"]);
}
