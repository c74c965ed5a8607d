//! All output goes through one [`Printer`]: data on stdout, progress and diagnostics on stderr,
//! colour only when asked for or on a terminal without `NO_COLOR`, progress only on a terminal.

use std::io::{IsTerminal, Write};

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
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Good => "32",
            Self::Warn => "33",
            Self::Bad => "31",
            Self::Dim => "2",
            Self::Bold => "1",
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

    /// Writes data to stdout. A closed pipe (`| head`) is not an error.
    pub fn out(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        if !text.ends_with('\n') && !text.is_empty() {
            let _ = out.write_all(b"\n");
        }
        let _ = out.flush();
    }

    /// Writes a diagnostic line to stderr.
    pub fn note(&self, text: &str) {
        self.clear_progress();
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }

    pub fn warn(&self, text: &str) {
        self.note(&format!(
            "{} {text}",
            self.paint_err(Style::Warn, "warning:")
        ));
    }

    /// An error with every cause in its chain (`what: why: underlying`), on stderr.
    pub fn error(&self, error: &Error) {
        self.note(&format!(
            "{} {}",
            self.paint_err(Style::Bad, "error:"),
            chain(error)
        ));
    }

    /// A transient progress line on a terminal (overwritten by the next one); nothing otherwise.
    pub fn progress(&self, text: &str) {
        if self.stderr_tty {
            let mut err = std::io::stderr().lock();
            let width = 120;
            let line: String = text.chars().take(width).collect();
            let _ = write!(err, "\r\x1b[2K{}", line);
            let _ = err.flush();
        }
    }

    /// Progress that matters in logs too: overwritten on a terminal, one line each otherwise.
    pub fn progress_or_line(&self, text: &str) {
        if self.stderr_tty {
            self.progress(text);
        } else {
            self.note(text);
        }
    }

    pub fn clear_progress(&self) {
        if self.stderr_tty {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
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

/// kubectl-style columns: upper-case headers, three spaces between columns, no trailing spaces.
pub fn table(printer: &Printer, headers: &[&str], rows: &[Vec<Cell>]) -> String {
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.text.chars().count());
        }
    }
    let mut out = String::new();
    let header_cells: Vec<Cell> = headers.iter().map(|h| Cell::from(*h)).collect();
    for row in std::iter::once(&header_cells).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate().take(columns) {
            let last = i + 1 == columns.min(row.len());
            let pad = if last {
                0
            } else {
                widths[i] - cell.text.chars().count() + 3
            };
            match cell.style {
                Some(style) => line.push_str(&printer.paint(style, &cell.text)),
                None => line.push_str(&cell.text),
            }
            line.push_str(&" ".repeat(pad));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
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
        let text = table(&Printer::plain(), &["NAME", "STATE", "READY"], &rows);
        assert_eq!(
            text,
            "NAME                 STATE       READY\ndemo                 Ready       3/3\na-much-longer-name   Deploying\n"
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
