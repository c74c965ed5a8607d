//! All output goes through one [`Printer`]: data on stdout, progress and diagnostics on stderr,
//! colour only when asked for or on a terminal without `NO_COLOR`, progress only on a terminal.
//! Tables are `comfy-table`'s, laid out like `kubectl get`; progress is an `indicatif` spinner,
//! or a bar per worker pool while `rollout status` follows a rollout.

use std::{
    io::{IsTerminal, Write},
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use comfy_table::{Attribute, Color, ContentArrangement, presets};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::{
    cli::ColorChoice,
    error::{Error, Result, chain},
};

/// Text styles the commands use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Good,
    Warn,
    Bad,
    Dim,
    Bold,
    /// One colour per series (the pools of `logs`), cycling through [`SERIES`].
    Series(usize),
}

/// The colours of [`Style::Series`], as ANSI codes and as table colours.
const SERIES: [(&str, Color); 6] = [
    ("36", Color::Cyan),
    ("35", Color::Magenta),
    ("34", Color::Blue),
    ("33", Color::Yellow),
    ("32", Color::Green),
    ("96", Color::DarkCyan),
];

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Good => "32",
            Self::Warn => "33",
            Self::Bad => "31",
            Self::Dim => "2",
            Self::Bold => "1",
            Self::Series(n) => SERIES[n % SERIES.len()].0,
        }
    }

    /// The same style on a table cell.
    fn on(self, cell: comfy_table::Cell) -> comfy_table::Cell {
        match self {
            Self::Good => cell.fg(Color::Green),
            Self::Warn => cell.fg(Color::Yellow),
            Self::Bad => cell.fg(Color::Red),
            Self::Dim => cell.add_attribute(Attribute::Dim),
            Self::Bold => cell.add_attribute(Attribute::Bold),
            Self::Series(n) => cell.fg(SERIES[n % SERIES.len()].1),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Printer {
    color_out: bool,
    color_err: bool,
    stdin_tty: bool,
    stdout_tty: bool,
    stderr_tty: bool,
    /// The spinner on stderr while something is in progress; only ever set on a terminal.
    spinner: Arc<Mutex<Option<ProgressBar>>>,
    /// The bars of a rollout's pools on stderr, by pool; only ever set on a terminal.
    bars: Arc<Mutex<Option<PoolBars>>>,
}

/// One bar per pool under one [`MultiProgress`].
#[derive(Debug)]
struct PoolBars {
    multi: MultiProgress,
    pools: Vec<(String, ProgressBar)>,
}

/// Where one pool of a rollout stands, for its bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolProgress {
    pub pool: String,
    /// Replicas (groups) on the update revision.
    pub updated: u64,
    /// Replicas (groups) desired.
    pub desired: u64,
    /// Replicas (groups) ready, of any revision.
    pub ready: i32,
}

impl Printer {
    pub fn new(choice: ColorChoice) -> Self {
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
            || std::env::var("TERM").is_ok_and(|t| t == "dumb");
        Self {
            color_out: use_color(choice, stdout_tty, no_color),
            color_err: use_color(choice, stderr_tty, no_color),
            stdin_tty: std::io::stdin().is_terminal(),
            stdout_tty,
            stderr_tty,
            spinner: Arc::default(),
            bars: Arc::default(),
        }
    }

    /// A printer for tests: no terminal, no colour.
    #[cfg(test)]
    pub fn plain() -> Self {
        Self {
            color_out: false,
            color_err: false,
            stdin_tty: false,
            stdout_tty: false,
            stderr_tty: false,
            spinner: Arc::default(),
            bars: Arc::default(),
        }
    }

    /// True when we may prompt: both stdin and stdout are terminals.
    pub fn interactive(&self) -> bool {
        self.stdin_tty && self.stdout_tty
    }

    pub fn stdout_is_tty(&self) -> bool {
        self.stdout_tty
    }

    /// Text for stdout, styled when colour is on.
    pub fn paint(&self, style: Style, text: &str) -> String {
        paint(self.color_out, style, text)
    }

    /// Text for stderr, styled when colour is on there.
    pub fn paint_err(&self, style: Style, text: &str) -> String {
        paint(self.color_err, style, text)
    }

    /// Writes data to stdout (with the spinner off the screen). A closed pipe (`| head`) is not an
    /// error.
    pub fn out(&self, text: &str) {
        self.above_progress(|| {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            if !text.ends_with('\n') && !text.is_empty() {
                let _ = out.write_all(b"\n");
            }
            let _ = out.flush();
        });
    }

    /// Writes a diagnostic line to stderr, above the spinner if one runs.
    pub fn note(&self, text: &str) {
        self.above_progress(|| {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        });
    }

    pub fn warn(&self, text: &str) {
        self.note(&format!(
            "{} {text}",
            self.paint_err(Style::Warn, "warning:")
        ));
    }

    /// An error with every cause in its chain (`what: why: underlying`), on stderr; it ends any
    /// progress.
    pub fn error(&self, error: &Error) {
        self.clear_progress();
        self.note(&format!(
            "{} {}",
            self.paint_err(Style::Bad, "error:"),
            chain(error)
        ));
    }

    /// Progress on a terminal: a spinner with `text` on stderr (the text replaces the previous
    /// one); nothing otherwise.
    pub fn progress(&self, text: &str) {
        if !self.stderr_tty {
            return;
        }
        let mut spinner = self.spinner();
        let bar = spinner.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                .with_style(ProgressStyle::default_spinner());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        bar.set_message(text.to_string());
    }

    /// Progress that matters in logs too: the spinner on a terminal, one line each otherwise.
    pub fn progress_or_line(&self, text: &str) {
        if self.stderr_tty {
            self.progress(text);
        } else {
            self.note(text);
        }
    }

    /// On a terminal, a bar per pool on stderr (`decode [=====>    ] 2/4 updated, 3 ready`),
    /// updated in place; nothing otherwise (the caller's lines say the same in logs).
    pub fn pool_progress(&self, pools: &[PoolProgress]) {
        if !self.stderr_tty {
            return;
        }
        let mut bars = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
        let bars = bars.get_or_insert_with(|| PoolBars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            pools: Vec::new(),
        });
        let width = pools.iter().map(|p| p.pool.len()).max().unwrap_or(0);
        for pool in pools {
            let existing = bars.pools.iter().find(|(name, _)| *name == pool.pool);
            let bar = match existing {
                Some((_, bar)) => bar.clone(),
                None => {
                    let template = format!(
                        "{{prefix:>{width}}} [{{bar:30}}] {{pos}}/{{len}} updated, {{msg}}"
                    );
                    let style = ProgressStyle::with_template(&template)
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> ");
                    let bar = bars
                        .multi
                        .add(ProgressBar::new(pool.desired).with_style(style));
                    bar.set_prefix(pool.pool.clone());
                    bars.pools.push((pool.pool.clone(), bar.clone()));
                    bar
                }
            };
            bar.set_message(format!("{} ready", pool.ready));
            bar.set_length(pool.desired);
            bar.set_position(pool.updated.min(pool.desired));
        }
    }

    /// Ends the progress display (the spinner and the pools' bars leave no trace).
    pub fn clear_progress(&self) {
        if let Some(bar) = self.spinner().take() {
            bar.finish_and_clear();
        }
        let bars = self
            .bars
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(bars) = bars {
            for (_, bar) in &bars.pools {
                bar.finish_and_clear();
            }
            let _ = bars.multi.clear();
        }
    }

    fn spinner(&self) -> MutexGuard<'_, Option<ProgressBar>> {
        self.spinner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `write` with the spinner hidden, so that output never mixes with it.
    fn above_progress(&self, write: impl FnOnce()) {
        let bars = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bars) = bars.as_ref() {
            return bars.multi.suspend(write);
        }
        match self.spinner().as_ref() {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Clears the terminal (for `--watch` redraws).
    pub fn clear_screen(&self) {
        if self.stdout_tty {
            let _ = write!(std::io::stdout().lock(), "\x1b[H\x1b[2J");
        }
    }

    /// One JSON document, pretty-printed.
    pub fn json<T: Serialize>(&self, value: &T) -> Result<()> {
        let text = serde_json::to_string_pretty(value)
            .map_err(|e| Error::serialize("the output", "JSON", e))?;
        self.out(&text);
        Ok(())
    }

    /// One JSON document on one line (NDJSON).
    pub fn json_line<T: Serialize>(&self, value: &T) -> Result<()> {
        let text =
            serde_json::to_string(value).map_err(|e| Error::serialize("the output", "JSON", e))?;
        self.out(&text);
        Ok(())
    }

    /// One YAML document.
    pub fn yaml<T: Serialize>(&self, value: &T) -> Result<()> {
        let text = infera_core::yaml::to_yaml(value)
            .map_err(|e| Error::serialize("the output", "YAML", e))?;
        self.out(&text);
        Ok(())
    }
}

/// `--color always|never` win; `auto` means a terminal without `NO_COLOR` (or `TERM=dumb`).
pub fn use_color(choice: ColorChoice, tty: bool, no_color: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => tty && !no_color,
    }
}

/// `text` in an ANSI style, when colour is on.
fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_string()
    }
}

/// A cell of a [`table`]: text and an optional style (applied after padding, so columns align).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub style: Option<Style>,
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self { text, style: None }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Self {
            text: text.to_string(),
            style: None,
        }
    }
}

impl Cell {
    pub fn styled(text: impl Into<String>, style: Option<Style>) -> Self {
        Self {
            text: text.into(),
            style,
        }
    }
}

/// kubectl-style columns: upper-case headers, three spaces between columns, no borders and no
/// trailing spaces, `indent` spaces in. On a terminal, long cells wrap to its width; piped, lines
/// are never wrapped.
pub fn table(printer: &Printer, indent: u16, headers: &[&str], rows: &[Vec<Cell>]) -> String {
    let mut table = comfy_table::Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_header(headers.to_vec());
    for row in rows {
        table.add_row(
            row.iter()
                .take(headers.len())
                .map(|cell| printer.cell(cell)),
        );
    }
    printer.lay_out(&mut table, indent, &vec![3; headers.len()]);
    lines(&table)
}

/// `kubectl get`'s own layout for a list of any length: upper-case headers, each column as wide as
/// its widest cell (in characters: the cells are names, states, counts and URLs), three spaces
/// between columns, no trailing spaces, never wrapped (a terminal wraps a long line itself).
/// Unlike [`table`], it keeps no comfy-table cell per cell: over 5,000 deployments the release
/// build's `status -A` peaked at 14.4 MiB instead of 25.5 (the same bytes out).
pub fn columns(printer: &Printer, headers: &[&str], rows: &[Vec<Cell>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.text.chars().count());
        }
    }
    let mut text = String::new();
    // Spaces are written only before a cell that follows, so no line ends in them.
    let mut line = |cells: &mut dyn Iterator<Item = (String, usize)>| {
        let mut pad = 0;
        for ((painted, len), width) in cells.zip(&widths) {
            if len > 0 {
                text.extend(std::iter::repeat_n(' ', pad));
                text.push_str(&painted);
                pad = 0;
            }
            pad += width - len + 3;
        }
        text.push('\n');
    };
    line(&mut headers.iter().map(|h| (h.to_string(), h.chars().count())));
    for row in rows {
        line(&mut row.iter().take(headers.len()).map(|cell| {
            let painted = match cell.style {
                Some(style) => printer.paint(style, &cell.text),
                None => cell.text.clone(),
            };
            (painted, cell.text.chars().count())
        }));
    }
    text
}

impl Printer {
    /// A table cell, styled when colour is on for stdout.
    pub fn cell(&self, cell: &Cell) -> comfy_table::Cell {
        let plain = comfy_table::Cell::new(&cell.text);
        match cell.style {
            Some(style) if self.color_out => style.on(plain),
            _ => plain,
        }
    }

    /// Sets `table` up for stdout: `indent` spaces before the first column, `gaps[i]` spaces after
    /// column `i` (none after the last), wrapping to the terminal's width when stdout is one,
    /// styling when colour is on.
    pub fn lay_out(&self, table: &mut comfy_table::Table, indent: u16, gaps: &[u16]) {
        let columns = table.column_count();
        for (i, column) in table.column_iter_mut().enumerate() {
            let left = if i == 0 { indent } else { 0 };
            let right = match gaps.get(i) {
                Some(gap) if i + 1 < columns => *gap,
                _ => 0,
            };
            column.set_padding((left, right));
        }
        table.set_content_arrangement(if self.stdout_tty {
            ContentArrangement::Dynamic
        } else {
            ContentArrangement::Disabled
        });
        if self.color_out {
            table.enforce_styling();
        }
    }
}

/// The table's lines, without trailing spaces, each ending in a newline.
pub fn lines(table: &comfy_table::Table) -> String {
    table
        .lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_like_kubectl() {
        let rows = vec![
            vec![
                Cell::from("demo"),
                Cell::styled("Ready", Some(Style::Good)),
                Cell::from("3/3"),
            ],
            vec![
                Cell::from("a-much-longer-name"),
                Cell::from("Deploying"),
                Cell::from(""),
            ],
        ];
        let text = table(&Printer::plain(), 0, &["NAME", "STATE", "READY"], &rows);
        assert_eq!(
            text,
            "NAME                 STATE       READY\ndemo                 Ready       3/3\na-much-longer-name   Deploying\n"
        );
        let headers = ["NAME", "STATE", "READY"];
        assert_eq!(columns(&Printer::plain(), &headers, &rows), text);
        // An empty cell between others keeps its column.
        let gap = vec![vec![Cell::from("x"), Cell::from(""), Cell::from("1/1")]];
        assert_eq!(
            columns(&Printer::plain(), &headers, &gap),
            table(&Printer::plain(), 0, &headers, &gap)
        );
    }

    #[test]
    fn colour_follows_the_flag_then_the_terminal_and_no_color() {
        assert!(use_color(ColorChoice::Always, false, true));
        assert!(!use_color(ColorChoice::Never, true, false));
        assert!(use_color(ColorChoice::Auto, true, false));
        assert!(!use_color(ColorChoice::Auto, true, true));
        assert!(!use_color(ColorChoice::Auto, false, false));
    }

    #[test]
    fn colour_only_when_on() {
        assert_eq!(paint(false, Style::Bad, "x"), "x");
        assert_eq!(paint(true, Style::Bad, "x"), "\x1b[31mx\x1b[0m");
    }
}
