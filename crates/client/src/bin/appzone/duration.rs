//! The `--timeout` value.

use std::time::Duration;

/// The longest `--timeout`: an attempt that has not answered in a day is not coming back.
const MAX: Duration = Duration::from_secs(86_400);

/// Parses what `humantime` parses (`30s`, `1.5s`, `500ms`, `2m`, `1m 30s`) and a bare number,
/// which is seconds, as `--help` says: humantime wants a unit.
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let bare_number = !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let parsed = if bare_number {
        humantime::parse_duration(&format!("{raw}s"))
    } else {
        humantime::parse_duration(raw)
    };
    let duration = parsed
        .map_err(|err| format!("`{raw}` is not a duration such as 30s, 1.5s or 500ms ({err})"))?;
    if duration.is_zero() || duration > MAX {
        return Err(format!("`{raw}` must be more than 0 and at most one day"));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_help_names_parse_and_a_bare_number_is_seconds() {
        for (raw, expected) in [
            ("30", Duration::from_secs(30)),
            ("1.5", Duration::from_millis(1500)),
            ("30s", Duration::from_secs(30)),
            ("1.5s", Duration::from_millis(1500)),
            ("500ms", Duration::from_millis(500)),
            ("2m", Duration::from_secs(120)),
            (" 2m ", Duration::from_secs(120)),
            ("1m 30s", Duration::from_secs(90)),
            ("1d", MAX),
        ] {
            assert_eq!(parse_duration(raw), Ok(expected), "{raw:?}");
        }
    }

    #[test]
    fn nothing_zero_or_longer_than_a_day_is_a_timeout() {
        for raw in ["", "soon", "x", "-1s", "0", "0s", "1d 1s", "2d"] {
            assert!(parse_duration(raw).is_err(), "{raw:?}");
        }
    }
}
