//! A printed table: the paper's rows and columns as strings, so tests can
//! compare every cell with the published one and the CLI can print it.

use std::fmt;

/// One table: a title, one or more header rows, and body rows of cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// "Table 2 — polls issued and staleness, …".
    pub title: String,
    /// Header rows (the paper's Table 2 has two: durations, then measures).
    pub header: Vec<Vec<String>>,
    /// Body rows; every row has as many cells as the last header row.
    pub rows: Vec<Vec<String>>,
    /// Footnotes printed under the rows (word-wrapped), e.g. how to read it.
    pub notes: Vec<String>,
}

impl Table {
    /// A table with one header row.
    pub fn new(title: impl Into<String>, header: &[&str]) -> Self {
        Table { title: title.into(), header: vec![cells(header)], rows: Vec::new(), notes: Vec::new() }
    }

    /// Adds a header row above the existing ones (a group row).
    pub fn with_group_header(mut self, group: &[&str]) -> Self {
        self.header.insert(0, cells(group));
        self
    }

    /// Appends a body row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The body cell at `row`, `col`.
    pub fn cell(&self, row: usize, col: usize) -> Option<&str> {
        self.rows.get(row)?.get(col).map(String::as_str)
    }
}

fn cells(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Notes wrap at the table's width, but never narrower than this.
const NOTE_MIN_WIDTH: usize = 72;

impl fmt::Display for Table {
    /// Left-aligned first column, right-aligned numbers, two spaces between columns.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all: Vec<&Vec<String>> = self.header.iter().chain(self.rows.iter()).collect();
        let ncols = all.iter().map(|r| r.len()).max().unwrap_or(0);
        let mut width = vec![0usize; ncols];
        for row in &all {
            for (i, c) in row.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        writeln!(f, "{}", self.title)?;
        let line = |f: &mut fmt::Formatter<'_>, row: &Vec<String>| -> fmt::Result {
            let mut out = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = row.get(i).map(String::as_str).unwrap_or("");
                let pad = w.saturating_sub(c.chars().count());
                if i > 0 {
                    out.push_str("  ");
                }
                if i == 0 {
                    out.push_str(c);
                    out.push_str(&" ".repeat(pad));
                } else {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(c);
                }
            }
            writeln!(f, "{}", out.trim_end())
        };
        for h in &self.header {
            line(f, h)?;
        }
        let total: usize = width.iter().sum::<usize>() + 2 * ncols.saturating_sub(1);
        writeln!(f, "{}", "-".repeat(total))?;
        for r in &self.rows {
            line(f, r)?;
        }
        for note in &self.notes {
            for l in textwrap::wrap(note, total.max(NOTE_MIN_WIDTH)) {
                writeln!(f, "{l}")?;
            }
        }
        Ok(())
    }
}

/// `x` with `places` decimals, rounded as Python's `f"{x:.Nf}"` rounds (the
/// exact binary value, ties to even), e.g. 11.85 → "11.8".
pub fn fixed(x: f64, places: usize) -> String {
    format!("{x:.places$}")
}

/// A fraction as a percentage with `places` decimals, as Python's
/// `f"{x:.N%}"` prints it (the float is multiplied by 100 first).
pub fn percent(x: f64, places: usize) -> String {
    format!("{:.places$}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_python() {
        assert_eq!(fixed(11.85, 1), "11.8");
        assert_eq!(fixed(0.125, 2), "0.12");
        assert_eq!(fixed(0.375, 2), "0.38");
        assert_eq!(percent(0.25, 0), "25%");
        assert_eq!(percent(2.4 / 60.0, 1), "4.0%");
    }

    #[test]
    fn renders_aligned_columns() {
        let mut t = Table::new("T", &["name", "n"]);
        t.push(vec!["a".into(), "10".into()]);
        t.push(vec!["bbb".into(), "2".into()]);
        let s = t.to_string();
        assert_eq!(s, "T\nname   n\n--------\na     10\nbbb    2\n");
    }

    #[test]
    fn notes_follow_the_rows_wrapped() {
        let mut t = Table::new("T", &["a"]);
        t.push(vec!["x".into()]);
        let word = "word ".repeat(20);
        t.notes.push(format!("Reading: {word}"));
        let s = t.to_string();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(&lines[..4], ["T", "a", "-", "x"]);
        assert!(lines[4].starts_with("Reading: word"), "{s}");
        assert!(lines.len() > 5 && lines[4..].iter().all(|l| l.chars().count() <= NOTE_MIN_WIDTH), "{s}");
        assert_eq!(lines[4..].join(" ").split_whitespace().count(), 21);
    }
}
