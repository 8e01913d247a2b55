//! The evaluation report of `lorebank eval` (docs/evaluation.md): a Markdown table
//! per arm and chapter, its JSON form, and one SVG bar chart per metric. Layout only:
//! every number is the book's ([`book::eval::Evaluation`]); the same evaluation gives
//! the same bytes.

use std::fmt::Write as _;

use book::eval::{Arm, Evaluation, Requirement, Tally};
use serde_json::{json, Value};

/// A requirement with its verdict and the value it was judged on.
pub type Judged = (Requirement, bool, Option<f64>);

/// The metrics charted, each with its title and how it is read from a tally: a
/// per-mille rate or a count (`None` when a rate has nothing to count).
type Reading = fn(&Evaluation, Arm, Option<u32>) -> Option<f64>;

fn rate(tally: &Tally, part: fn(&Tally) -> u32) -> Option<f64> {
    let judged = tally.rendered + tally.missing + tally.wrong;
    (judged > 0).then(|| f64::from(part(tally)) / f64::from(judged))
}

/// Every charted metric: file name, title, reading, whether it is a rate.
pub const CHARTS: &[(&str, &str, Reading, bool)] = &[
    ("adherence", "Term adherence (rendered / judged items)", |e, a, c| rate(&e.tally(a, c), |t| t.rendered), true),
    ("missing", "Missing renderings (share of judged items)", |e, a, c| rate(&e.tally(a, c), |t| t.missing), true),
    ("wrong", "Wrong renderings (share of judged items)", |e, a, c| rate(&e.tally(a, c), |t| t.wrong), true),
    ("gender_flags", "Gender-agreement flags", |e, a, c| Some(f64::from(e.tally(a, c).gender_flags)), false),
    (
        "omissions",
        "Chunks under half the arm's median length ratio",
        |e, a, c| Some(f64::from(e.tally(a, c).omissions)),
        false,
    ),
    ("flags", "Flags a reviewer would face", |e, a, c| Some(f64::from(e.tally(a, c).flags())), false),
    (
        "consistency",
        "Name consistency across chapters (terms rendered in every chunk)",
        |e, a, c| {
            let (consistent, twice) = e.consistency(a);
            (c.is_none() && twice > 0).then(|| f64::from(consistent) / f64::from(twice))
        },
        true,
    ),
    (
        "tokens",
        "Tokens spent",
        |e, a, c| {
            let t = e.tally(a, c);
            Some((t.prompt_tokens + t.completion_tokens) as f64)
        },
        false,
    ),
];

fn shown(value: Option<f64>, is_rate: bool) -> String {
    match value {
        None => "—".to_owned(),
        Some(value) if is_rate => format!("{value:.3}"),
        Some(value) => format!("{value}"),
    }
}

/// The Markdown report: the run, one row per arm and chapter and a total row per arm,
/// the consistency across chapters, and the requirements' verdicts.
pub fn markdown(evaluation: &Evaluation, judged: &[Judged]) -> String {
    let mut out = String::new();
    let chapters = match (evaluation.chapters.first(), evaluation.chapters.last()) {
        (Some(first), Some(last)) if first != last => format!("chapters {first}–{last}"),
        (Some(first), _) => format!("chapter {first}"),
        _ => "no chapter".to_owned(),
    };
    let stored = evaluation.runs.iter().filter(|run| run.stored).count();
    let _ = writeln!(
        out,
        "# Evaluation of {} on {chapters}\n\nPrompt {}, random seed {}; {} translations, {stored} answered from the \
         book's store.\n",
        evaluation.model,
        evaluation.prompt,
        evaluation.seed,
        evaluation.runs.len()
    );
    out.push_str(
        "| arm | chapter | chunks | items | rendered | missing | wrong | unverifiable | adherence | gender flags | \
         omissions | flags | tokens |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | \
         ---: | ---: |\n",
    );
    for &arm in &evaluation.arms {
        let rows = evaluation.chapters.iter().map(|&chapter| (chapter.to_string(), Some(chapter)));
        for (label, chapter) in rows.chain(std::iter::once(("all".to_owned(), None))) {
            let tally = evaluation.tally(arm, chapter);
            let adherence = tally.adherence_permille().map(|p| f64::from(p) / 1000.0);
            let _ = writeln!(
                out,
                "| {} | {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                arm.name(),
                tally.chunks,
                tally.items,
                tally.rendered,
                tally.missing,
                tally.wrong,
                tally.unverifiable,
                shown(adherence, true),
                tally.gender_flags,
                tally.omissions,
                tally.flags(),
                tally.prompt_tokens + tally.completion_tokens
            );
        }
    }
    out.push_str("\nName consistency (terms checked in two chunks or more, rendered in every one):\n\n");
    for &arm in &evaluation.arms {
        let (consistent, twice) = evaluation.consistency(arm);
        let _ = writeln!(out, "* {}: {consistent} of {twice}", arm.name());
    }
    if !judged.is_empty() {
        out.push_str("\nRequirements:\n\n");
        for (requirement, met, value) in judged {
            let verdict = if *met { "met" } else { "NOT met" };
            let value = value.map_or("no value".to_owned(), |value| format!("{value:.3}"));
            let _ = writeln!(out, "* `{}`: {verdict} ({value})", requirement.text);
        }
    }
    out
}

/// The JSON report: the run, the tallies per arm and chapter, consistency, every
/// chunk's run, and the requirements' verdicts.
pub fn json(evaluation: &Evaluation, judged: &[Judged]) -> Value {
    let arms: Vec<Value> = evaluation
        .arms
        .iter()
        .map(|&arm| {
            let chapters: Vec<Value> = evaluation
                .chapters
                .iter()
                .map(|&chapter| json!({ "chapter": chapter, "tally": evaluation.tally(arm, Some(chapter)) }))
                .collect();
            let (consistent, twice) = evaluation.consistency(arm);
            let metrics: serde_json::Map<String, Value> = book::eval::METRICS
                .iter()
                .map(|metric| ((*metric).to_owned(), json!(evaluation.metric(arm, metric))))
                .collect();
            json!({
                "arm": arm,
                "total": evaluation.tally(arm, None),
                "metrics": metrics,
                "consistency": { "consistent": consistent, "checked_twice": twice },
                "chapters": chapters,
            })
        })
        .collect();
    let runs: Vec<Value> = evaluation
        .runs
        .iter()
        .map(|run| {
            json!({
                "chapter": run.chapter,
                "chunk": run.chunk,
                "arm": run.arm,
                "receipt": run.receipt.to_hex(),
                "exchange": run.exchange.to_hex(),
                "stored": run.stored,
                "source_chars": run.source_chars,
                "translation_chars": run.translation_chars,
                "verdicts": run.verdicts.iter().map(|(term, verdict)| json!([format!("T-{term}"), verdict.as_str()])).collect::<Vec<_>>(),
                "gender_flags": run.gender_flags,
                "swapped": run.swapped,
                "prompt_tokens": run.prompt_tokens,
                "completion_tokens": run.completion_tokens,
                "omission": run.omission,
            })
        })
        .collect();
    let requirements: Vec<Value> = judged
        .iter()
        .map(|(requirement, met, value)| json!({ "requirement": requirement.text, "met": met, "value": value }))
        .collect();
    json!({
        "model": evaluation.model,
        "prompt": evaluation.prompt,
        "seed": evaluation.seed,
        "chapters": evaluation.chapters,
        "arms": arms,
        "runs": runs,
        "requirements": requirements,
    })
}

/// The colour of an arm's bars.
fn colour(arm: Arm) -> &'static str {
    match arm {
        Arm::None => "#9e9e9e",
        Arm::Glossary => "#1f77b4",
        Arm::Random => "#d62728",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// One grouped bar chart of `metric` (a row of [`CHARTS`]): a group per chapter and one
/// for the whole run, a bar per arm, the value over each bar.
pub fn svg(evaluation: &Evaluation, (name, title, reading, is_rate): (&str, &str, Reading, bool)) -> String {
    let groups: Vec<(String, Option<u32>)> = evaluation
        .chapters
        .iter()
        .map(|&chapter| (format!("ch {chapter}"), Some(chapter)))
        .chain(std::iter::once(("all".to_owned(), None)))
        .collect();
    let values: Vec<Vec<Option<f64>>> = groups
        .iter()
        .map(|(_, chapter)| evaluation.arms.iter().map(|&arm| reading(evaluation, arm, *chapter)).collect())
        .collect();
    let top = if is_rate { 1.0 } else { values.iter().flatten().flatten().copied().fold(0.0_f64, f64::max).max(1.0) };
    let (bar, gap, plot_h, left, base) = (18.0, 14.0, 160.0, 40.0, 200.0);
    let group_w = bar * evaluation.arms.len() as f64 + gap;
    let width = left + group_w * groups.len() as f64 + 20.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"250\" viewBox=\"0 0 {width:.0} 250\" \
         font-family=\"sans-serif\" font-size=\"10\">\n<title>{}</title>\n<text x=\"{left}\" y=\"16\" font-size=\"12\">{}</text>\n",
        escape(name),
        escape(title)
    );
    let _ = writeln!(out, "<line x1=\"{left}\" y1=\"{base}\" x2=\"{width:.0}\" y2=\"{base}\" stroke=\"#333\"/>");
    for (g, ((label, _), row)) in groups.iter().zip(&values).enumerate() {
        let x0 = left + group_w * g as f64;
        for (a, (value, &arm)) in row.iter().zip(&evaluation.arms).enumerate() {
            let x = x0 + bar * a as f64;
            let Some(value) = value else {
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">—</text>",
                    x + bar / 2.0,
                    base - 2.0
                );
                continue;
            };
            let h = plot_h * value / top;
            let _ = writeln!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"><title>{} {label}: {}</title></rect>",
                base - h,
                bar - 2.0,
                colour(arm),
                arm.name(),
                shown(Some(*value), is_rate)
            );
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"8\">{}</text>",
                x + bar / 2.0 - 1.0,
                base - h - 2.0,
                shown(Some(*value), is_rate)
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x0 + (group_w - gap) / 2.0,
            base + 14.0,
            escape(label)
        );
    }
    for (a, &arm) in evaluation.arms.iter().enumerate() {
        let x = left + 90.0 * a as f64;
        let _ = writeln!(
            out,
            "<rect x=\"{x:.0}\" y=\"232\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0}\" y=\"241\">{}</text>",
            colour(arm),
            x + 14.0,
            arm.name()
        );
    }
    out.push_str("</svg>\n");
    out
}
