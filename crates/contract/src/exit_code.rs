//! Exit codes of the two command lines, `appzone` (the client's) and `appzone-server` (the
//! operator's): one table, so that a script sees one scheme whichever it runs.
//!
//! Each `--help` prints the rows its command uses, from [`TABLE`], so the help cannot drift
//! from what the command does; the README holds the same table (a test compares them). `2` is
//! the usage error, as with clap and most Unix tools.

/// Success.
pub const OK: u8 = 0;
/// The command failed for a reason not classed below; its `error:` line says why, and nothing
/// was changed. (`appzone`: stdout could not be written.)
pub const FAILURE: u8 = 1;
/// The command line is invalid: an unknown command or option, a missing argument, or a value
/// of the wrong form. Nothing was sent or changed.
pub const USAGE: u8 = 2;
/// `appzone`: no API key was given, or the server answered 401.
pub const UNAUTHORIZED: u8 = 3;
/// `appzone`: the server answered 403.
pub const FORBIDDEN: u8 = 4;
/// `appzone`: the server answered 404 for the region or the profile.
pub const NOT_FOUND: u8 = 5;
/// `appzone`: an id the API refuses, found before sending, or the server answered 400.
pub const INVALID_INPUT: u8 = 6;
/// `appzone`: the answer was not the appzone API's; the base URL is probably wrong.
pub const UNEXPECTED_ANSWER: u8 = 7;
/// `appzone`: any other answer of the API (429, 5xx, ...): try again later.
pub const API: u8 = 8;
/// `appzone`: no answer: could not connect, the connection broke, or the request timed out.
pub const TRANSPORT: u8 = 9;

/// One exit code and what it means, as `--help` and the README show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Row {
    /// The exit code.
    pub code: u8,
    /// One line: the class, a colon, then what falls in it.
    pub meaning: &'static str,
    /// Whether `appzone-server` exits with this code too (`appzone` may exit with every one).
    pub server: bool,
}

const fn row(code: u8, meaning: &'static str, server: bool) -> Row {
    Row {
        code,
        meaning,
        server,
    }
}

/// Every exit code, in order. Each meaning fits one line of a 100-column terminal.
pub const TABLE: &[Row] = &[
    row(OK, "success", true),
    row(
        FAILURE,
        "failed: the command could not do its work; the error line says why, nothing changed",
        true,
    ),
    row(
        USAGE,
        "usage: unknown command or option, missing argument, or a value of the wrong form",
        true,
    ),
    row(
        UNAUTHORIZED,
        "unauthorized: no API key given, or 401 (the key is unknown or revoked)",
        false,
    ),
    row(
        FORBIDDEN,
        "forbidden: 403, the key may not do this; ask your organization admin",
        false,
    ),
    row(
        NOT_FOUND,
        "not found: 404, no such region or profile",
        false,
    ),
    row(
        INVALID_INPUT,
        "invalid input: an id the API refuses (found before sending), or 400",
        false,
    ),
    row(
        UNEXPECTED_ANSWER,
        "not the appzone API: no such route, no JSON error body, or undecodable; check --url",
        false,
    ),
    row(
        API,
        "try later: 429 (rate limited, see its Retry-After), 5xx",
        false,
    ),
    row(
        TRANSPORT,
        "transport: could not connect (refused, DNS, TLS), connection broken, or timed out",
        false,
    ),
];

/// The rows of [`TABLE`] as `--help` shows them: `  N  meaning`, one per line, only those of
/// `appzone-server` when `server` is set.
pub fn help_rows(server: bool) -> String {
    TABLE
        .iter()
        .filter(|row| row.server || !server)
        .map(|row| format!("  {}  {}\n", row.code, row.meaning))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_each_code_once_in_order_on_one_short_line() {
        let codes: Vec<u8> = TABLE.iter().map(|row| row.code).collect();
        let expected: Vec<u8> = (0..).take(TABLE.len()).collect();
        assert_eq!(codes, expected);
        assert_eq!(
            codes,
            [
                OK,
                FAILURE,
                USAGE,
                UNAUTHORIZED,
                FORBIDDEN,
                NOT_FOUND,
                INVALID_INPUT,
                UNEXPECTED_ANSWER,
                API,
                TRANSPORT
            ]
        );
        for row in TABLE {
            // `--help` prints "  N  meaning"; clap wraps lines beyond 100 columns.
            assert!(row.meaning.len() + 5 <= 95, "{row:?}");
            assert!(
                !row.meaning.contains('\n') && !row.meaning.contains('|'),
                "{row:?}"
            );
        }
    }

    #[test]
    fn the_server_uses_success_failure_and_usage() {
        assert_eq!(help_rows(true).lines().count(), 3, "{}", help_rows(true));
        assert!(help_rows(true).starts_with("  0  success\n  1  failed: "));
    }
}
