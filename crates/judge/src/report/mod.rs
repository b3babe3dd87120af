//! Presentation: plain-text tables for terminals and helpers shared by every command's
//! human-readable output. Machine-readable output is the serde JSON of the results.

pub mod capacity;
pub mod compare;
pub mod fit;
pub mod html;
pub mod ingest;
pub mod model_fn;
pub mod replay;
pub mod size;
pub mod verdicts;

/// Terminal output fits this many columns (wider forms are behind a flag or in files).
pub const WIDTH: usize = 100;

/// Numbered notes, each kept once however often it is given: a caveat shared by many
/// rows is printed once under the table, the rows refer to it by number.
#[derive(Debug, Default)]
pub struct Notes(Vec<String>);

impl Notes {
    /// Registers a note (once) and returns its number.
    pub fn add(&mut self, text: impl AsRef<str>) -> usize {
        let text = text.as_ref();
        match self.0.iter().position(|n| n == text) {
            Some(i) => i + 1,
            None => {
                self.0.push(text.to_string());
                self.0.len()
            }
        }
    }

    /// Registers every note and returns their numbers as a cell ("1,3"; "" for none).
    pub fn refs<S: AsRef<str>>(&mut self, notes: impl IntoIterator<Item = S>) -> String {
        let mut refs: Vec<usize> = notes.into_iter().map(|n| self.add(n)).collect();
        refs.sort_unstable();
        refs.dedup();
        refs.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// "[1] text" lines, wrapped to [`WIDTH`].
    pub fn render(&self) -> String {
        self.0
            .iter()
            .enumerate()
            .map(|(i, n)| wrap(&format!("[{}] {n}", i + 1), WIDTH, "    "))
            .collect()
    }
}

/// A two-or-more-column text table with right-aligned numbers, and [`Notes`] printed
/// once under it.
#[derive(Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    notes: Notes,
    /// Columns aligned left (text); the rest are right-aligned (numbers).
    left: Vec<usize>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            notes: Notes::default(),
            left: vec![0],
        }
    }

    /// Aligns these columns (0-based) left, like the first; for text columns.
    pub fn left_aligned(mut self, columns: &[usize]) -> Self {
        self.left.extend_from_slice(columns);
        self
    }

    /// Registers a note printed once under the table and returns its number.
    pub fn note(&mut self, text: impl AsRef<str>) -> usize {
        self.notes.add(text)
    }

    /// Registers every note and returns their numbers as a cell ("1,3"; "" for none).
    pub fn note_refs<S: AsRef<str>>(&mut self, notes: impl IntoIterator<Item = S>) -> String {
        self.notes.refs(notes)
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    pub fn render(&self) -> String {
        let cols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let mut width = vec![0; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, r: &[String]| {
            let mut l = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = r.get(i).map_or("", String::as_str);
                let pad = " ".repeat(w - c.chars().count());
                if i > 0 {
                    l.push_str("  ");
                }
                if self.left.contains(&i) {
                    l.push_str(c);
                    l.push_str(&pad);
                } else {
                    l.push_str(&pad);
                    l.push_str(c);
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        if !self.header.is_empty() {
            line(&mut out, &self.header);
            let total: usize = width.iter().sum::<usize>() + 2 * width.len().saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
        for r in &self.rows {
            line(&mut out, r);
        }
        out.push_str(&self.notes.render());
        out
    }
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word
/// stays whole), continuation lines indented by `indent`; ends with a newline.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        } else if len > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// A value in scientific notation with four significant digits ("0" for zero).
pub fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.3e}")
    }
}

/// [`sci`] of an optional value, "-" when absent.
pub fn sci_or_dash(x: Option<f64>) -> String {
    x.map_or("-".into(), sci)
}

/// "[low, high]" of an interval in [`sci`] form.
pub fn interval(i: &rbf_foundations::stats::Interval) -> String {
    format!("[{}, {}]", sci(i.low), sci(i.high))
}

/// An observed interval's cell, in the form `ends` gives, or
/// [`rbf_observed::replay::TOO_FEW_CYCLES`] where the replay had too few cycles for one (the
/// words every table uses).
pub fn interval_or_why(
    i: Option<&rbf_foundations::stats::Interval>,
    ends: impl Fn(&rbf_foundations::stats::Interval) -> String,
) -> String {
    i.map_or_else(|| rbf_observed::replay::TOO_FEW_CYCLES.to_string(), ends)
}

/// A rate in scientific notation when small, fixed otherwise.
pub fn rate(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() < 1e-3 {
        format!("{x:.3e}")
    } else {
        format!("{x:.6}")
    }
}

/// An integer with thousands separators.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(rate(0.0), "0");
        assert_eq!(rate(1.5e-5), "1.500e-5");
        let mut t = Table::new(["a", "bb"]);
        t.row(["x", "1"]).row(["yy", "22"]);
        assert_eq!(t.render(), "a   bb\n------\nx    1\nyy  22\n");
        let refs = t.note_refs(["second", "first", "second"]);
        assert_eq!(refs, "1,2");
        assert_eq!(t.note("first"), 2);
        assert!(t.render().ends_with("yy  22\n[1] second\n[2] first\n"));
        let long = "word ".repeat(30);
        let w = wrap(long.trim(), 22, "  ");
        assert!(w.lines().all(|l| l.len() <= 22), "{w}");
        assert!(w.lines().skip(1).all(|l| l.starts_with("  word")), "{w}");
    }
}
