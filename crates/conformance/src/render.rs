//! A report as text, JSON and JUnit XML.

use serde_json::{json, Value};

use crate::{Outcome, Report};

impl Report {
    /// One line per check (`PASS name`, `FAIL name: ...`, `SKIP name: why`), then the summary
    /// line `N passed, N failed, N skipped`.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for check in self.checks() {
            text.push_str(&one_line(&check.line()));
            text.push('\n');
        }
        text.push_str(&self.summary().to_string());
        text.push('\n');
        text
    }

    /// `{"checks": [{"name", "promise", "outcome", ...}], "summary": {...}}`.
    pub fn json(&self) -> Value {
        let checks: Vec<Value> = self
            .checks()
            .iter()
            .map(|check| {
                let mut value = json!({ "name": check.name, "promise": check.promise });
                match &check.outcome {
                    Outcome::Pass => value["outcome"] = json!("pass"),
                    Outcome::Fail {
                        request,
                        expected,
                        received,
                    } => {
                        value["outcome"] = json!("fail");
                        value["request"] = json!(request);
                        value["expected"] = json!(expected);
                        value["received"] = json!(received);
                    }
                    Outcome::Skip { why } => {
                        value["outcome"] = json!("skip");
                        value["why"] = json!(why);
                    }
                }
                value
            })
            .collect();
        let summary = self.summary();
        json!({
            "checks": checks,
            "summary": {
                "passed": summary.passed,
                "failed": summary.failed,
                "skipped": summary.skipped,
                "text": summary.to_string(),
                "seconds": self.elapsed().as_secs_f64(),
            },
        })
    }

    /// A JUnit XML document: one `testsuite` named `appzone-conformance`, one `testcase` per
    /// check, with `<failure message=...>` or `<skipped message=...>`.
    pub fn junit(&self) -> String {
        let summary = self.summary();
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        xml.push_str(&format!(
            "<testsuite name=\"appzone-conformance\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3}\">\n",
            self.checks().len(),
            summary.failed,
            summary.skipped,
            self.elapsed().as_secs_f64()
        ));
        for check in self.checks() {
            let open = format!(
                "  <testcase classname=\"appzone.conformance\" name=\"{}\"",
                escape(check.name)
            );
            match &check.outcome {
                Outcome::Pass => xml.push_str(&format!("{open}/>\n")),
                Outcome::Fail {
                    request,
                    expected,
                    received,
                } => {
                    let message = format!("{request} expected {expected}, received {received}");
                    xml.push_str(&format!(
                        "{open}>\n    <failure message=\"{}\">{}</failure>\n  </testcase>\n",
                        escape(&message),
                        escape(&format!("{message}\npromise: {}", check.promise))
                    ));
                }
                Outcome::Skip { why } => xml.push_str(&format!(
                    "{open}>\n    <skipped message=\"{}\"/>\n  </testcase>\n",
                    escape(why)
                )),
            }
        }
        xml.push_str("</testsuite>\n");
        xml
    }
}

/// Escapes text for XML content and attribute values. Characters XML 1.0 cannot carry at all
/// (most control characters) become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A report line never spans lines nor carries control characters from a server's answer.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
