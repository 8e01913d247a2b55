//! End-to-end tests of the write-time rules: keys the matcher cannot use, forged
//! rollback markers, two different writes of one record in a batch, and partial
//! `config_set`s. Every refusal exits 2, names what is wrong and writes nothing.

mod common;

use std::process::Output;

use common::Book;

fn apply(book: &Book, lines: &[&str]) -> Output {
    book.run_with_stdin(&["apply", "-"], Some(&(lines.join("\n") + "\n")))
}

fn refused(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    stderr
}

fn assemble_ok(book: &Book, text: &str) -> String {
    let output = book.run_with_stdin(&["assemble", "--chapter", "1", "--chunk", "c1", "--text", "-"], Some(text));
    assert!(output.status.success(), "assemble failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn keys_that_fold_to_nothing_or_to_punctuation_are_refused_and_the_book_still_assembles() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь"]);
    let invisible = [
        "\u{200b}\u{200b}",
        "\u{ad}\u{ad}",
        "\u{fe0f}\u{fe0f}",
        "\u{feff}\u{feff}",
        "\u{2060}\u{2060}",
        "\u{200d}\u{200c}",
        "\u{301}\u{301}",
        "《》",
    ];
    for key in invisible {
        let error = book.fails(&["term", "put", "--id", "T-2", "--src", key, "--dst", "Пусто"], 2);
        assert!(error.contains("term_put.src") && error.contains("folds to"), "{key:?}: {error}");
        let error = book.fails(&["alias", "add", "T-1", key], 2);
        assert!(error.contains("alias_added.surface") && error.contains("folds to"), "{key:?}: {error}");
    }
    let error = book.fails(
        &["term", "put", "--id", "T-3", "--src", "灶", "--dst", "Очаг", "--secondary", "灶王,\u{200b}\u{200b}"],
        2,
    );
    assert!(error.contains("term_put.secondary.keys[1]"), "{error}");
    // In a batch, one bad key refuses the whole batch.
    let output = apply(
        &book,
        &[
            r#"{"term_put":{"id":"T-4","src":"药老","dst":"Яо Лао"}}"#,
            "{\"alias_added\":{\"id\":\"T-4\",\"surface\":\"\u{ad}\u{ad}\"}}",
        ],
    );
    let error = refused(&output);
    assert!(error.contains("stdin line 2") && error.contains(r#"folds to """#), "{error}");
    assert_eq!(book.head(), 2);
    // Nothing unusable got in, so the book still assembles, dry or not, and rebuilds.
    assert!(assemble_ok(&book, "萧炎来了。").contains("Сяо Янь"));
    let dry = book.run_with_stdin(
        &["assemble", "--chapter", "1", "--chunk", "c2", "--text", "-", "--dry-run"],
        Some("萧炎来了。"),
    );
    assert!(dry.status.success(), "{}", String::from_utf8_lossy(&dry.stderr));
    book.ok(&["rebuild"]);
}

#[test]
fn a_hand_written_rollback_marker_is_refused() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь"]);
    book.ok(&["term", "put", "--id", "T-2", "--src", "药老", "--dst", "Яо Лао"]);
    for to in [0, 1, 2] {
        let marker = format!(r#"{{"rollback_marker":{{"to":{to}}}}}"#);
        let error = refused(&apply(&book, &[&marker]));
        assert!(error.contains(&format!("rollback_marker to revision {to}")), "{error}");
    }
    // Compensating events that do bring the book back to revision 2 may close with a
    // marker, but the marker must be last.
    let retire = r#"{"term_retired":{"id":"T-2"}}"#;
    let error = refused(&apply(&book, &[r#"{"rollback_marker":{"to":2}}"#, retire]));
    assert!(error.contains("stdin line 1") && error.contains("must be the last event"), "{error}");
    assert_eq!(book.head(), 3);
    let output = apply(&book, &[retire, r#"{"rollback_marker":{"to":2,"reason":"by hand"}}"#]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(book.ok(&["log"]).contains("rollback_marker to revision 2"));
    assert_eq!(book.json(&["snapshot"])["snapshot"], book.json(&["snapshot", "--as-of", "2"])["snapshot"]);
}

#[test]
fn two_different_writes_of_one_record_in_a_batch_name_both_lines() {
    let book = Book::new();
    let first = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь"}}"#;
    let other = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Ян"}}"#;
    let error = refused(&apply(&book, &[first, r#"{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао"}}"#, other]));
    assert!(error.contains("stdin line 3") && error.contains("stdin line 1") && error.contains("T-1"), "{error}");
    let alias = |kind: &str| format!(r#"{{"alias_added":{{"id":"T-1","surface":"炎子","kind":"{kind}"}}}}"#);
    let error = refused(&apply(&book, &[first, &alias("nickname"), &alias("title")]));
    assert!(error.contains("stdin line 3") && error.contains("stdin line 2"), "{error}");
    assert_eq!(book.head(), 1);
    // The same event twice is written once.
    let output = apply(&book, &[first, first]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(book.head(), 2);
}

#[test]
fn a_partial_config_keeps_the_fields_it_leaves_out() {
    let book = Book::new();
    let config = |book: &Book| book.log().last().unwrap()["body"]["config_set"].clone();
    let output = apply(&book, &[r#"{"config_set":{"assembly":{"token_budget":1000,"sticky_chunks":5}}}"#]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let set = config(&book);
    assert_eq!(set["assembly"]["token_budget"], 1000);
    assert_eq!(set["assembly"]["sticky_chunks"], 5);
    assert_eq!(set["assembly"]["min_key_chars"], 2);
    assert_eq!(set["profile"]["name"], "zh");
    assert_eq!(set["profile"]["table"], book.log()[0]["body"]["config_set"]["profile"]["table"]);
    let output = apply(&book, &[r#"{"config_set":{"assembly":{"token_budget":10}}}"#]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(config(&book)["assembly"]["sticky_chunks"], 5);
    // Naming only the profile keeps the budget.
    let output = apply(&book, &[r#"{"config_set":{"profile":{"name":"ja"}}}"#]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let set = config(&book);
    assert_eq!((set["profile"]["name"].as_str(), set["assembly"]["token_budget"].as_u64()), (Some("ja"), Some(10)));
    assert_eq!(book.head(), 4);
}

/// `n` `term_put` lines, T-1 to T-n, each with its own three-character Chinese source
/// and all with the rendering "Сяо Янь".
fn one_rendering(n: usize) -> Vec<String> {
    let first: Vec<char> = "林沈白云叶苏陆顾江秦楚韩柳宁谢温燕唐方姜".chars().collect();
    let rest: Vec<char> = "炎照川衣山天寒风月雪霜星辰海岳河清明远舟".chars().collect();
    (0..n)
        .map(|index| {
            let src: String = [first[index / 400], rest[index / 20 % 20], rest[index % 20]].into_iter().collect();
            format!(r#"{{"term_put":{{"id":"T-{}","src":"{src}","dst":"Сяо Янь"}}}}"#, index + 1)
        })
        .collect()
}

#[test]
fn terms_sharing_a_rendering_are_one_warning_naming_the_first_and_counting_the_rest() {
    // The warning used to name every pair: 3,000 terms with one rendering answered
    // 4.5 million warnings (348 MB of JSON). Doubling the terms now leaves the answer
    // as long, but for the count's digits.
    let answer = |n: usize| {
        let book = Book::new();
        let lines = one_rendering(n);
        let output = book.run_with_stdin(&["--json", "apply", "-"], Some(&(lines.join("\n") + "\n")));
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let warnings = answer["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{n} terms, one rendering: {} warnings", warnings.len());
        let warning = warnings[0].as_str().unwrap();
        assert!(warning.starts_with(&format!("{n} terms with different sources render as \"Сяо Янь\"")), "{warning}");
        assert!(warning.contains(r#"T-1 "林炎炎" (ch 1..), T-2 "林炎照" (ch 1..)"#), "{warning}");
        assert!(warning.ends_with(&format!(" and {} more", n - 20)), "{warning}");
        // Without --json, one line on stderr.
        let more = [one_rendering(n + 1).pop().unwrap()];
        let output = book.run_with_stdin(&["apply", "-"], Some(&(more.join("\n") + "\n")));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert_eq!(stderr.lines().filter(|line| line.starts_with("warning: ")).count(), 1, "{stderr}");
        assert!(stderr.contains(&format!("warning: {} terms with different sources", n + 1)), "{stderr}");
        output.stdout.len() + answer.to_string().len()
    };
    let single = answer(1_500);
    let doubled = answer(3_000);
    assert!(doubled <= single + 8, "{single} bytes answered for 1,500 terms, {doubled} for 3,000");
}
