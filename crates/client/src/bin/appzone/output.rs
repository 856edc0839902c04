//! What the zone-identity and zone-mapping commands print: tables, the server's summary, and
//! the text or the JSON body by `--output`.

use super::{json_line, one_line, print, Failure, Output};

/// Prints `text()` or, with `--output json`, `json()` on one line.
pub fn print_output(
    output: Output,
    text: impl FnOnce() -> String,
    json: impl FnOnce() -> Result<String, serde_json::Error>,
) -> Result<(), Failure> {
    let text = match output {
        Output::Text => text(),
        Output::Json => json_line(json())?,
    };
    print(&text)
}

/// Left-aligned columns separated by two spaces, header first, each cell on one line (as the
/// operator's `appzone-server` prints its tables).
pub fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let rows: Vec<Vec<String>> = std::iter::once(header.iter().map(|h| (*h).to_owned()).collect())
        .chain(rows.map(|row| row.iter().map(|cell| one_line(cell)).collect()))
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|row| row.get(i).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The server's summary on a line of its own, when it sent one.
pub fn message_line(message: &str) -> String {
    if message.trim().is_empty() {
        String::new()
    } else {
        format!("{}\n", one_line(message))
    }
}
