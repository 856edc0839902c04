//! The `--timeout` value.

use std::time::Duration;

/// Parses `30`, `1.5`, `30s`, `500ms` or `2m`.
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let (number, scale) = if let Some(n) = raw.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = raw.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = raw.strip_suffix('m') {
        (n, 60.0)
    } else {
        (raw, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not a duration such as 30s, 1.5s or 500ms"))?;
    let seconds = value * scale;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(format!("`{raw}` must be more than 0 and at most one day"));
    }
    Ok(Duration::from_secs_f64(seconds))
}
