//! The same tables and texts as HTML, for report pages: [`Table::html`] renders the
//! table the terminal shows (header, alignment, numbered notes) from the same cells,
//! and [`inline`] turns the few Markdown marks our texts use into HTML.

use std::fmt::Write as _;

use super::Table;

/// `s` safe as HTML text or as a double-quoted attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One line of our Markdown as HTML: `**strong**`, `*em*` and `` `code` `` (nothing
/// else is interpreted; the rest is escaped). An unpaired mark stays as written.
pub fn inline(md: &str) -> String {
    let mut out = String::new();
    let mut rest = md;
    while !rest.is_empty() {
        let next = ["**", "*", "`"]
            .iter()
            .filter_map(|m| rest.find(m).map(|i| (i, *m)))
            // The earliest mark; at one position "**" before "*".
            .min_by_key(|(i, m)| (*i, std::cmp::Reverse(m.len())));
        let Some((at, mark)) = next else {
            out.push_str(&escape(rest));
            break;
        };
        out.push_str(&escape(&rest[..at]));
        let body = &rest[at + mark.len()..];
        match body.find(mark) {
            Some(end) if end > 0 => {
                let tag = match mark {
                    "**" => "strong",
                    "*" => "em",
                    _ => "code",
                };
                let inner = &body[..end];
                let inner = if mark == "`" {
                    escape(inner)
                } else {
                    inline(inner)
                };
                let _ = write!(out, "<{tag}>{inner}</{tag}>");
                rest = &body[end + mark.len()..];
            }
            _ => {
                out.push_str(&escape(mark));
                rest = body;
            }
        }
    }
    out
}

/// Our Markdown texts as HTML: `## ` headings, `- ` bullet lists and paragraphs
/// (separated by blank lines), each line through [`inline`].
pub fn blocks(md: &str) -> String {
    let mut out = String::new();
    let mut list = false;
    let mut para: Vec<&str> = Vec::new();
    let flush = |out: &mut String, para: &mut Vec<&str>| {
        if !para.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", inline(&para.join(" ")));
            para.clear();
        }
    };
    for line in md.lines() {
        let item = line.strip_prefix("- ");
        if list && item.is_none() {
            out.push_str("</ul>\n");
            list = false;
        }
        if let Some(h) = line.strip_prefix("## ") {
            flush(&mut out, &mut para);
            let _ = writeln!(out, "<h2>{}</h2>", inline(h));
        } else if let Some(item) = item {
            flush(&mut out, &mut para);
            if !list {
                out.push_str("<ul>\n");
                list = true;
            }
            let _ = writeln!(out, "<li>{}</li>", inline(item));
        } else if line.trim().is_empty() {
            flush(&mut out, &mut para);
        } else {
            para.push(line.trim());
        }
    }
    flush(&mut out, &mut para);
    if list {
        out.push_str("</ul>\n");
    }
    out
}

impl Table {
    /// The table as an HTML `<table>` (numbers right-aligned, text left, as in
    /// [`Table::render`]) followed by its notes as a numbered list. `class` may give a
    /// cell a CSS class from its text (e.g. a verdict's colour).
    pub fn html(&self, class: impl Fn(&str) -> Option<&'static str>) -> String {
        let align = |i: usize| {
            if self.left.contains(&i) {
                "t"
            } else {
                "n"
            }
        };
        // A table wider than the page scrolls in its own box, not the page.
        let mut s = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
        for (i, h) in self.header.iter().enumerate() {
            let _ = write!(
                s,
                r#"<th class="{}" scope="col">{}</th>"#,
                align(i),
                escape(h)
            );
        }
        s.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let extra = class(c).map_or(String::new(), |k| format!(" {k}"));
                let _ = write!(s, r#"<td class="{}{extra}">{}</td>"#, align(i), escape(c));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody>\n</table></div>\n");
        if !self.notes.is_empty() {
            s.push_str("<ol class=\"notes\">\n");
            for n in &self.notes.0 {
                let _ = writeln!(s, "<li>{}</li>", escape(n));
            }
            s.push_str("</ol>\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_marks_and_escapes() {
        assert_eq!(
            inline("**a** <b> *c* `d_e*` x*y"),
            "<strong>a</strong> &lt;b&gt; <em>c</em> <code>d_e*</code> x*y"
        );
        assert_eq!(
            inline("**bold *it* x**"),
            "<strong>bold <em>it</em> x</strong>"
        );
        assert_eq!(inline("p < 1 & q"), "p &lt; 1 &amp; q");
    }

    #[test]
    fn blocks_make_headings_lists_and_paragraphs() {
        let h = blocks("## What\n\n- **a**: one\n- b\ntext\nmore\n\nnext");
        assert_eq!(
            h,
            "<h2>What</h2>\n<ul>\n<li><strong>a</strong>: one</li>\n<li>b</li>\n</ul>\n<p>text more</p>\n<p>next</p>\n"
        );
    }

    #[test]
    fn a_table_renders_as_html_with_its_notes() {
        let mut t = Table::new(["name", "value"]);
        let refs = t.note_refs(["a <note>"]);
        t.row(["x&y", "1"]).row(["z", refs.as_str()]);
        let h = t.html(|c| (c == "1").then_some("one"));
        assert!(
            h.contains(
                r#"<th class="t" scope="col">name</th><th class="n" scope="col">value</th>"#
            ),
            "{h}"
        );
        assert!(
            h.contains(r#"<td class="t">x&amp;y</td><td class="n one">1</td>"#),
            "{h}"
        );
        assert!(h.contains("<li>a &lt;note&gt;</li>"), "{h}");
    }
}
