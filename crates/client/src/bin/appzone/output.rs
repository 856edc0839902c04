//! What the commands print on stdout: listings' ids, tables, the server's summary, a
//! confirmation, or with `--output json` the body on one line.

use std::io::{self, Write};

use tabwriter::TabWriter;

use super::{Failure, Output};

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

/// Prints a listing: its ids one per line, or its whole body (`json`) on one line.
pub fn print_list(
    ids: &[String],
    json: impl FnOnce() -> Result<String, serde_json::Error>,
    output: Output,
) -> Result<(), Failure> {
    let text = match output {
        Output::Text => ids.iter().map(|id| format!("{id}\n")).collect(),
        Output::Json => json_line(json())?,
    };
    print(&text)
}

pub fn print_deleted(id: &str, output: Output) -> Result<(), Failure> {
    let text = match output {
        Output::Text => format!("deleted profile {id}\n"),
        Output::Json => json_line(serde_json::to_string(&serde_json::json!({ "deleted": id })))?,
    };
    print(&text)
}

pub fn json_line(json: Result<String, serde_json::Error>) -> Result<String, Failure> {
    let mut line = json.map_err(|e| Failure::Local(format!("cannot write JSON: {e}")))?;
    line.push('\n');
    Ok(line)
}

/// Writes to stdout; a closed pipe (`appzone zones aws us-east-1 | head -1`) is not an error.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Local(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// `text` on one line: a server's message or a request id could otherwise break the report's
/// shape, or send control sequences to the terminal.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
