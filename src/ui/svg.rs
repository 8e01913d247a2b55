//! The bi-temporal timeline of a term as inline SVG: chapters (story time) across,
//! revisions (editorial time) down, one rectangle per stretch of revisions during
//! which a version applied in one window (`book::timeline::Stretch`), the part of a
//! declared window a successor cut off hatched, retirement greyed, and a marker per
//! recorded chunk that hit the term, at its chapter and the revision it was
//! assembled at.
//!
//! The revision axis is ordinal: one band per revision at which something on the
//! chart begins or ends (and the head), so a term edited twice in a log of a million
//! events still reads. Everything is drawn with classes (ui.css); no style attribute,
//! no script.

use std::collections::BTreeSet;

use book::timeline::{Stretch, Timeline};
use ledger_model::*;
use maud::{html, Markup};

const LEFT: u32 = 64;
const TOP: u32 = 34;
const RIGHT: u32 = 16;
const BOTTOM: u32 = 12;
const BAND: u32 = 30;
const CHART_WIDTH_MAX: u32 = 900;

/// The chart's geometry: chapter columns and revision bands.
struct Axes {
    /// Columns: chapters 1..=last, then one more standing for "and on" when a
    /// window is open-ended.
    n_columns: u32,
    column: u32,
    /// The revisions that start a band, ascending; the last is the head.
    bands: Vec<Seq>,
}

impl Axes {
    fn x(&self, chapter: u32) -> u32 {
        LEFT + (chapter.clamp(1, self.n_columns) - 1) * self.column
    }

    /// Left and right x of a window's chapters.
    fn span(&self, window: Window) -> (u32, u32) {
        let last = window.until.unwrap_or(self.n_columns).min(self.n_columns);
        (self.x(window.since), self.x(last.max(window.since)) + self.column)
    }

    fn band(&self, revision: Seq) -> usize {
        match self.bands.binary_search(&revision) {
            Ok(index) => index,
            Err(index) => index.saturating_sub(1),
        }
    }

    fn y(&self, band: usize) -> u32 {
        TOP + band as u32 * BAND
    }

    /// Top and bottom y of the revisions `from` up to (not including) `until`.
    fn rows(&self, from: Seq, until: Option<Seq>) -> (u32, u32) {
        let first = self.band(from);
        let end = match until {
            Some(until) => self.bands.binary_search(&until).unwrap_or_else(|index| index).max(first + 1),
            None => self.bands.len(),
        };
        (self.y(first), self.y(end))
    }

    fn width(&self) -> u32 {
        LEFT + self.n_columns * self.column + RIGHT
    }

    fn height(&self) -> u32 {
        TOP + self.bands.len() as u32 * BAND + BOTTOM
    }
}

fn axes(timeline: &Timeline) -> Axes {
    let mut last = 1u32;
    let mut open = false;
    let mut see = |window: Window| {
        last = last.max(window.since);
        match window.until {
            Some(until) => last = last.max(until),
            None => open = true,
        }
    };
    for stretch in &timeline.stretches {
        see(stretch.declared);
        if let Some(effective) = stretch.effective {
            see(effective);
        }
    }
    for mark in &timeline.marks {
        last = last.max(mark.chapter);
    }
    let n_columns = last + u32::from(open);
    let column = (CHART_WIDTH_MAX / n_columns.max(1)).clamp(14, 96);
    let mut bands: BTreeSet<Seq> = BTreeSet::new();
    for stretch in &timeline.stretches {
        bands.insert(stretch.from);
        bands.extend(stretch.until);
    }
    bands.extend(timeline.marks.iter().map(|mark| mark.revision));
    bands.insert(timeline.head);
    // Nothing is drawn before the term's first put.
    let first = timeline.stretches.first().map_or(Seq(1), |stretch| stretch.from);
    let bands = bands.into_iter().filter(|seq| *seq >= first).collect();
    Axes { n_columns, column, bands }
}

fn window_words(window: Option<Window>) -> String {
    match window {
        None => "no chapter".into(),
        Some(Window { since, until: Some(until) }) if until == since => format!("chapter {since}"),
        Some(Window { since, until: Some(until) }) => format!("chapters {since}-{until}"),
        Some(Window { since, until: None }) => format!("chapters {since}-"),
    }
}

fn until_words(until: Option<Seq>) -> String {
    until.map_or_else(|| "the head".to_owned(), |until| format!("r{}", until.0 - 1))
}

/// The version number (1, 2, …) of the version put at `seq`.
fn ordinal(timeline: &Timeline, seq: Seq) -> usize {
    timeline.versions.iter().position(|version| version.by.seq == seq).map_or(0, |index| index + 1)
}

fn stretch_title(timeline: &Timeline, stretch: &Stretch) -> String {
    let dst = timeline.versions.iter().find(|v| v.by.seq == stretch.version).map_or("", |v| v.put.dst.as_str());
    let mut title = format!(
        "version {} (event {}) «{dst}»: {} at revisions r{}–{}",
        ordinal(timeline, stretch.version),
        stretch.version.0,
        window_words(stretch.effective),
        stretch.from.0,
        until_words(stretch.until)
    );
    if let Some(by) = stretch.superseded_by {
        title.push_str(&format!("; superseded by {by} (declared {})", window_words(Some(stretch.declared))));
    }
    if stretch.retired {
        title.push_str("; retired");
    }
    title
}

/// The timeline chart of `timeline`; links go to pages of book `book`.
pub fn timeline(book: &str, timeline: &Timeline) -> Markup {
    let axes = axes(timeline);
    let (width, height) = (axes.width(), axes.height());
    let chart_bottom = axes.y(axes.bands.len());
    let open_column = timeline.stretches.iter().any(|s| s.declared.until.is_none());
    html! {
        svg.timeline xmlns="http://www.w3.org/2000/svg" role="img" width=(width) height=(height)
            viewBox=(format!("0 0 {width} {height}"))
            aria-label=(format!("Timeline of {}: chapters across, revisions down", timeline.id)) {
            defs {
                pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)" {
                    line.hatch x1="0" y1="0" x2="0" y2="6" {}
                }
            }
            // Chapter columns.
            @for chapter in 1..=axes.n_columns {
                @let x = axes.x(chapter);
                rect.column x=(x) y=(TOP) width=(axes.column) height=(chart_bottom - TOP) {}
                text.axis x=(x + axes.column / 2) y=(TOP - 8) text-anchor="middle" {
                    @if open_column && chapter == axes.n_columns { "…" } @else { (chapter) }
                }
            }
            text.axis-name x=(LEFT) y="12" { "chapter →" }
            // Revision bands.
            @for (index, revision) in axes.bands.iter().enumerate() {
                @let y = axes.y(index);
                line.band x1=(LEFT) y1=(y) x2=(width - RIGHT) y2=(y) {}
                text.axis x=(LEFT - 6) y=(y + BAND / 2 + 4) text-anchor="end" {
                    @if *revision == timeline.head { "head r" (revision.0) } @else { "r" (revision.0) }
                }
            }
            // The stretches.
            @for stretch in &timeline.stretches {
                @let (top, bottom) = axes.rows(stretch.from, stretch.until);
                @let (declared_left, declared_right) = axes.span(stretch.declared);
                @let number = ordinal(timeline, stretch.version);
                @let class = if stretch.retired { "stretch retired".to_owned() } else { format!("stretch v{}", (number.max(1) - 1) % 4 + 1) };
                a href=(format!("#v{}", stretch.version.0)) {
                    g.stretch-group {
                        title { (stretch_title(timeline, stretch)) }
                        // The declared window; what supersession cut off stays hatched.
                        @if stretch.effective != Some(stretch.declared) {
                            rect.cut x=(declared_left) y=(top + 2) width=(declared_right - declared_left) height=(bottom - top - 4)
                                data-cut-by=[stretch.superseded_by.map(|id| id.to_string())] {}
                        }
                        @if let Some(effective) = stretch.effective {
                            @let (left, right) = axes.span(effective);
                            rect class=(class) x=(left) y=(top + 2) width=(right - left) height=(bottom - top - 4) rx="3"
                                data-version=(stretch.version.0) data-from=(stretch.from.0)
                                data-until=[stretch.until.map(|until| until.0)]
                                data-since=(effective.since) data-until-chapter=[effective.until]
                                data-superseded-by=[stretch.superseded_by.map(|id| id.to_string())]
                                data-retired=(stretch.retired) {}
                            text.label x=(left + 5) y=(top + 17) {
                                "v" (number)
                                @if stretch.retired { " retired" }
                                @else if let Some(by) = stretch.superseded_by { " → " (by) }
                            }
                        }
                    }
                }
            }
            // The chunks that hit the term.
            @for (index, mark) in timeline.marks.iter().enumerate() {
                @let band = axes.band(mark.revision);
                @let before = timeline.marks[..index].iter().filter(|m| m.chapter == mark.chapter && axes.band(m.revision) == band).count() as u32;
                @let cx = axes.x(mark.chapter) + 7 + (before * 8) % axes.column.max(8);
                @let cy = axes.y(band) + BAND - 7;
                @let disposition = mark.hit.map_or("sticky", |(disposition, _)| match disposition {
                    book::assemble::Disposition::Confirmed => "confirmed",
                    book::assemble::Disposition::Ambiguous => "ambiguous",
                    book::assemble::Disposition::Rejected => "rejected",
                });
                @let class = format!("mark {disposition}{}", if mark.injected.is_some() { " injected" } else { "" });
                a href=(format!("/ui/books/{book}/chapters/{}#r-{}", mark.chapter, &mark.receipt.to_hex()[..16])) {
                    circle class=(class) cx=(cx) cy=(cy) r="4" data-chapter=(mark.chapter) data-chunk=(mark.chunk_key)
                        data-revision=(mark.revision.0) data-injected=(mark.injected.is_some()) {
                        title {
                            "chapter " (mark.chapter) ", chunk " (mark.chunk_key) ", assembled at r" (mark.revision.0)
                            ": " (disposition)
                            @if let Some((_, Some(reason))) = mark.hit { " (" (crate::render::text::word(&reason)) ")" }
                            @if let Some(via) = mark.injected { ", injected (" (crate::render::text::word(&via)) ")" } @else { ", not injected" }
                        }
                    }
                }
            }
        }
    }
}
