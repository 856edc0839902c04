//! What the zone-identity and zone-mapping commands print: tables, the server's summary, and
//! the text or the JSON body by `--output`.

use std::io::Write;

use tabwriter::TabWriter;

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

/// Left-aligned columns at least two spaces apart, header first, each cell on one line (as the
/// operator's `appzone-server` prints its tables).
pub fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let cells = rows.map(|row| row.iter().map(|cell| one_line(cell)).collect::<Vec<_>>());
    let mut out = TabWriter::new(Vec::new()).minwidth(0);
    for line in std::iter::once(header.join("\t")).chain(cells.map(|row| row.join("\t"))) {
        // Into a Vec: writing cannot fail.
        let _ = writeln!(out, "{line}");
    }
    out.into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// The server's summary on a line of its own, when it sent one.
pub fn message_line(message: &str) -> String {
    if message.trim().is_empty() {
        String::new()
    } else {
        format!("{}\n", one_line(message))
    }
}
