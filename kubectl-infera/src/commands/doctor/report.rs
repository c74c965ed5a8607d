//! Doctor's report: the checks with their counts and verdict, as one document (`-o json|yaml`) or
//! as text, a table per category.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{
    checks::{self, Check, Severity},
    printer::{Cell, Printer, Style, lines},
};

/// The one document `-o json|yaml` prints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub success: bool,
    pub summary: BTreeMap<&'static str, usize>,
    pub checks: Vec<Check>,
}

/// The checks with their counts per severity and the verdict.
pub fn report(checks: Vec<Check>) -> Report {
    let mut summary = BTreeMap::from([("pass", 0), ("warn", 0), ("fail", 0), ("skip", 0)]);
    for c in &checks {
        let key = match c.severity {
            Severity::Pass => "pass",
            Severity::Warn => "warn",
            Severity::Fail => "fail",
            Severity::Skip => "skip",
        };
        *summary.entry(key).or_default() += 1;
    }
    Report {
        schema_version: 1,
        success: checks::success(&checks),
        summary,
        checks,
    }
}

/// The report as text: per category a heading and a table of its checks (label, ID, name,
/// message), each check's details and hint on lines of their own under its message.
pub fn text(printer: &Printer, report: &Report) -> String {
    let mut out = String::new();
    let mut categories: Vec<(&str, Vec<&Check>)> = Vec::new();
    for c in &report.checks {
        match categories.last_mut() {
            Some((category, checks)) if *category == c.category => checks.push(c),
            _ => categories.push((c.category, vec![c])),
        }
    }
    for (category, checks) in categories {
        out.push_str(&format!("{}\n", printer.paint(Style::Bold, category)));
        out.push_str(&category_table(printer, &checks));
    }
    let s = &report.summary;
    let verdict = if report.success {
        printer.paint(Style::Good, "no failures")
    } else {
        printer.paint(Style::Bad, "problems found")
    };
    out.push_str(&format!(
        "\n{verdict}: {} passed, {} warning(s), {} failed, {} skipped\n",
        s.get("pass").unwrap_or(&0),
        s.get("warn").unwrap_or(&0),
        s.get("fail").unwrap_or(&0),
        s.get("skip").unwrap_or(&0)
    ));
    out
}

/// One category's checks as a borderless table, its names at least 20 wide so that every
/// category's messages start in the same column.
fn category_table(printer: &Printer, checks: &[&Check]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    for c in checks {
        let (label, style) = match c.severity {
            Severity::Pass => ("ok", Style::Good),
            Severity::Warn => ("warn", Style::Warn),
            Severity::Fail => ("FAIL", Style::Bad),
            Severity::Skip => ("skip", Style::Dim),
        };
        table.add_row(vec![
            printer.cell(&Cell::styled(label, Some(style))),
            printer.cell(&Cell::from(c.id)),
            printer.cell(&Cell::from(c.name)),
            printer.cell(&Cell::from(c.message.as_str())),
        ]);
        let under = c.details.iter().map(|d| Cell::from(d.as_str())).chain(
            c.hint
                .iter()
                .map(|h| Cell::styled(format!("hint: {h}"), Some(Style::Dim))),
        );
        for cell in under {
            table.add_row(vec![
                comfy_table::Cell::new(""),
                comfy_table::Cell::new(""),
                comfy_table::Cell::new(""),
                printer.cell(&cell),
            ]);
        }
    }
    printer.lay_out(&mut table, 2, &[2, 2, 1]);
    for (column, width) in [(0, LABEL_WIDTH), (2, NAME_WIDTH)] {
        if let Some(column) = table.column_mut(column) {
            column.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                comfy_table::Width::Fixed(width),
            ));
        }
    }
    lines(&table)
}

/// Widths of the label and check-name columns, padding included, the same in every category so
/// that all messages start in one column.
const LABEL_WIDTH: u16 = 8;
const NAME_WIDTH: u16 = 21;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_report_aligns_messages_hints_and_details_in_one_column() {
        let check = |id, category, name, severity, message: &str| Check {
            id,
            category,
            name,
            severity,
            message: message.into(),
            hint: None,
            details: vec![],
        };
        let mut warn = check(
            "INF004",
            "kubernetes",
            "plugin-path",
            Severity::Warn,
            "2 copies",
        );
        warn.details = vec!["/opt/bin/kubectl-infera".into()];
        warn.hint = Some("remove the other copies".into());
        let report = report(vec![
            check(
                "INF001",
                "kubernetes",
                "kubeconfig",
                Severity::Pass,
                "context \"admin\"",
            ),
            warn,
            check("INF101", "infera", "crd", Severity::Pass, "installed"),
        ]);
        assert_eq!(
            text(&Printer::plain(), &report),
            "kubernetes\n  \
             ok    INF001  kubeconfig           context \"admin\"\n  \
             warn  INF004  plugin-path          2 copies\n                                     \
             /opt/bin/kubectl-infera\n                                     \
             hint: remove the other copies\n\
             infera\n  \
             ok    INF101  crd                  installed\n\
             \nno failures: 2 passed, 1 warning(s), 0 failed, 0 skipped\n"
        );
    }
}
