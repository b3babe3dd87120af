//! Parser messages cut to a readable length before they reach an error.

/// Longest line of a parser's message quoted in an error: a TOML parser quotes the
/// offending line, which may be a file's whole content.
const QUOTED_LINE: usize = 160;

/// Whether `line` is the parser's quote of the input (`3 | measures = ...`) or its
/// marker line (`  |   ^^^`), not a message: only those are cut.
fn is_quote(line: &str) -> bool {
    let rest = line
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit());
    rest.trim_start().starts_with('|')
}

/// `text` (a parser's message) with every quoted input line longer than
/// [`QUOTED_LINE`] characters cut, saying how much was left out, and trailing
/// whitespace removed. The messages themselves (a list of allowed values) stay whole.
pub fn clip_lines(text: &str) -> String {
    let lines: Vec<String> = text
        .trim_end()
        .lines()
        .map(
            |l| match l.char_indices().nth(QUOTED_LINE).filter(|_| is_quote(l)) {
                Some((at, _)) => format!(
                    "{}... ({} more characters)",
                    &l[..at],
                    l[at..].chars().count()
                ),
                None => l.to_string(),
            },
        )
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::clip_lines;

    #[test]
    fn long_lines_are_cut_and_counted() {
        let long = format!(
            "1 | a = {}\n  |     ^\nrecursion limit",
            "[".repeat(400_000)
        );
        let c = clip_lines(&long);
        assert!(c.len() < 400, "{}", c.len());
        assert!(c.contains("(399848 more characters)"), "{c}");
        assert!(c.ends_with("recursion limit"));
        assert_eq!(clip_lines("short\n"), "short");
        let quote = format!("12 | {}", "é".repeat(156));
        assert_eq!(
            clip_lines(&quote),
            format!("12 | {}... (1 more characters)", "é".repeat(155))
        );
        // A message (the allowed values of a key) is never cut, however long.
        let message = format!("measures: unknown; allowed: {}", "renewal, ".repeat(40));
        assert_eq!(clip_lines(&message), message.trim_end());
    }
}
