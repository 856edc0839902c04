//! Which exposition format `/metrics` answers in (`Accept`), and the Prometheus text format
//! 0.0.4 derived from prometheus-client's OpenMetrics output.

use http::header::ACCEPT;
use http::HeaderMap;

/// The exposition formats `/metrics` answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The Prometheus text format 0.0.4.
    Text,
    /// OpenMetrics text, in the version asked for (the body is valid in both).
    OpenMetrics(OpenMetricsVersion),
}

/// The OpenMetrics versions a scraper may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMetricsVersion {
    /// 1.0.0, what Prometheus asks for first.
    V1_0_0,
    /// 0.0.1, the same text under its older name.
    V0_0_1,
}

impl Format {
    /// Best first when the client rates them equally.
    const ALL: [Self; 3] = [
        Self::Text,
        Self::OpenMetrics(OpenMetricsVersion::V1_0_0),
        Self::OpenMetrics(OpenMetricsVersion::V0_0_1),
    ];

    /// The `Content-Type` of an answer in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Text => "text/plain; version=0.0.4; charset=utf-8",
            Self::OpenMetrics(OpenMetricsVersion::V1_0_0) => {
                "application/openmetrics-text; version=1.0.0; charset=utf-8"
            }
            Self::OpenMetrics(OpenMetricsVersion::V0_0_1) => {
                "application/openmetrics-text; version=0.0.1; charset=utf-8"
            }
        }
    }

    /// How specifically the media range `kind` (lowercase `type/subtype`) with `version`
    /// names this format: 3 with the same version, 2 without a version, 1 for `type/*`, 0 for
    /// `*/*`; `None` when it does not name it.
    fn specificity(self, kind: &str, version: Option<&str>) -> Option<u8> {
        let (media, own_version) = match self {
            Self::Text => ("text/plain", "0.0.4"),
            Self::OpenMetrics(OpenMetricsVersion::V1_0_0) => {
                ("application/openmetrics-text", "1.0.0")
            }
            Self::OpenMetrics(OpenMetricsVersion::V0_0_1) => {
                ("application/openmetrics-text", "0.0.1")
            }
        };
        if kind == media {
            return match version {
                None => Some(2),
                Some(v) if v == own_version => Some(3),
                Some(_) => None,
            };
        }
        let top = media.split('/').next().unwrap_or_default();
        match kind.split_once('/') {
            Some(("*", "*")) => Some(0),
            Some((t, "*")) if t == top => Some(1),
            _ => None,
        }
    }

    /// The format to answer `Accept` with, as content negotiation does (RFC 9110, 12.5.1):
    /// each format takes the quality of the most specific media range naming it; the highest
    /// quality wins, then the more specific range, then the range listed first, then the
    /// order text, OpenMetrics 1.0.0, OpenMetrics 0.0.1 (so `*/*` gets the text format).
    /// Without `Accept`, or when it accepts none of them, the text format, as Prometheus's own
    /// libraries answer.
    pub fn negotiate(headers: &HeaderMap) -> Self {
        let ranges: Vec<(String, Option<String>, f32)> = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(media_range)
            .collect();
        let mut best: Option<(Self, f32, u8, usize)> = None;
        for format in Self::ALL {
            // The most specific range naming the format, the first of equals.
            let mut rating: Option<(f32, u8, usize)> = None;
            for (position, (kind, version, quality)) in ranges.iter().enumerate() {
                if let Some(specificity) = format.specificity(kind, version.as_deref()) {
                    if rating.is_none_or(|(_, s, _)| specificity > s) {
                        rating = Some((*quality, specificity, position));
                    }
                }
            }
            let Some((quality, specificity, position)) = rating.filter(|(q, _, _)| *q > 0.0) else {
                continue;
            };
            let better = best.is_none_or(|(_, q, s, p)| {
                (quality, specificity, std::cmp::Reverse(position)) > (q, s, std::cmp::Reverse(p))
            });
            if better {
                best = Some((format, quality, specificity, position));
            }
        }
        best.map_or(Self::Text, |(format, ..)| format)
    }
}

/// One media range of `Accept`: lowercase `type/subtype`, its `version` parameter, its
/// quality. `None` when malformed (no `/`, a quality outside 0 to 1).
fn media_range(range: &str) -> Option<(String, Option<String>, f32)> {
    let mut parts = range.split(';');
    let kind = parts.next()?.trim().to_ascii_lowercase();
    if !kind.contains('/') {
        return None;
    }
    let (mut version, mut quality) = (None, 1.0);
    for param in parts {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        match name.trim().to_ascii_lowercase().as_str() {
            "q" => {
                quality = value
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))?;
            }
            "version" => version = Some(value.to_owned()),
            _ => {}
        }
    }
    Some((kind, version, quality))
}

/// The Prometheus text format 0.0.4 of prometheus-client's OpenMetrics text, which differs
/// in what this registry holds only in counters and the end: OpenMetrics names a counter
/// family `x` in `# HELP` and `# TYPE` and its sample `x_total`; 0.0.4 names the family as
/// its sample, `x_total`, or a parser takes the sample for an untyped metric of its own.
/// 0.0.4 has no `# UNIT` (its unit is in the name already) and no `# EOF`. Types 0.0.4 does
/// not know (OpenMetrics' `info`, `stateset`, `gaugehistogram`) are refused rather than sent
/// mislabelled; `unknown` is 0.0.4's `untyped`. Exemplars are not used here.
pub(super) fn text_004(openmetrics: &str) -> Result<String, std::fmt::Error> {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<(&str, &str)> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = Some(rest.split_once(' ').unwrap_or((rest, "")));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or(std::fmt::Error)?;
            let (suffix, kind) = match kind {
                "counter" => ("_total", kind),
                "gauge" | "histogram" | "summary" => ("", kind),
                "unknown" => ("", "untyped"),
                _ => return Err(std::fmt::Error),
            };
            if let Some((help_name, text)) = help.take() {
                if help_name != name {
                    return Err(std::fmt::Error);
                }
                writeln!(out, "# HELP {name}{suffix} {text}")?;
            }
            writeln!(out, "# TYPE {name}{suffix} {kind}")?;
            continue;
        }
        if help.is_some() {
            // A `# HELP` not followed by its `# TYPE`: not what prometheus-client writes.
            return Err(std::fmt::Error);
        }
        match line {
            "# EOF" => break,
            _ if line.starts_with("# UNIT ") => {}
            _ if line.starts_with('#') => return Err(std::fmt::Error),
            sample => writeln!(out, "{sample}")?,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http::HeaderValue;

    use super::super::*;
    use super::*;

    fn negotiated(accept: &[&str]) -> Format {
        let mut headers = HeaderMap::new();
        for value in accept {
            headers.append(ACCEPT, HeaderValue::from_str(value).expect("header value"));
        }
        Format::negotiate(&headers)
    }

    #[test]
    fn accept_chooses_openmetrics_or_the_text_format() {
        const OM: Format = Format::OpenMetrics(OpenMetricsVersion::V1_0_0);
        const OM_001: Format = Format::OpenMetrics(OpenMetricsVersion::V0_0_1);
        let cases: [(&[&str], Format); 20] = [
            (&[], Format::Text),
            (&["*/*"], Format::Text),
            (&["text/plain"], Format::Text),
            (&["text/plain;version=0.0.4"], Format::Text),
            (&["text/*"], Format::Text),
            (&["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"], Format::Text),
            (&["application/json"], Format::Text),
            (&["garbage"], Format::Text),
            // Prometheus 3's scrape request, and Prometheus 2's.
            (&["application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"], OM),
            (&["application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"], OM),
            (&["application/openmetrics-text"], OM),
            (&["Application/OpenMetrics-Text; Version=\"1.0.0\""], OM),
            (&["application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5"], OM_001),
            (&["application/openmetrics-text;version=2.0.0"], Format::Text),
            (&["application/openmetrics-text;q=0.1,text/plain;q=0.9"], Format::Text),
            (&["application/openmetrics-text;q=0,*/*"], Format::Text),
            (&["text/plain;q=0,*/*"], OM),
            (&["application/openmetrics-text, text/plain"], OM),
            (&["text/plain", "application/openmetrics-text;q=1"], Format::Text),
            (&["text/plain;q=2,application/openmetrics-text;q=0.5"], OM),
        ];
        for (accept, expected) in cases {
            assert_eq!(negotiated(accept), expected, "{accept:?}");
        }
    }

    #[test]
    fn text_format_names_counter_families_as_their_samples_and_has_no_eof() {
        let metrics = Metrics::new();
        let zones = appzone_contract::paths::LIST_ZONES;
        metrics.observe(&Method::GET, zones, 200, Duration::from_millis(3));
        metrics.deleted();
        metrics.rate_limited(RateLimitScope::Key);
        metrics.0.catalog_version.set(7);
        let om = metrics
            .encode(Format::OpenMetrics(OpenMetricsVersion::V1_0_0))
            .expect("encodes");
        let text = metrics.encode(Format::Text).expect("encodes");
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert!(
            om.contains("# TYPE appzone_http_requests counter\n"),
            "{om}"
        );
        assert!(!text.contains("# EOF"), "{text}");
        for line in [
            "# HELP appzone_http_requests_total HTTP requests answered.\n",
            "# TYPE appzone_http_requests_total counter\n",
            "# TYPE appzone_http_request_duration_seconds histogram\n",
            // The family's series in any order: `address` is there too, at 0.
            "# TYPE appzone_rate_limited_total counter\n",
            "\nappzone_rate_limited_total{scope=\"key\"} 1\n",
            "\nappzone_rate_limited_total{scope=\"address\"} 0\n",
            "# TYPE appzone_profiles_deleted_total counter\nappzone_profiles_deleted_total 1\n",
            "# TYPE appzone_catalog_version gauge\nappzone_catalog_version 7\n",
        ] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
        // Every sample belongs to the family the last `# TYPE` named, with the suffixes of
        // its type: what a 0.0.4 parser needs to keep the type.
        let mut family = ("", "");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                family = rest.split_once(' ').expect("name and type");
                continue;
            }
            if line.starts_with("# HELP ") {
                continue;
            }
            let name = line.split(['{', ' ']).next().expect("sample name");
            let suffixes: &[&str] = match family.1 {
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            assert!(
                suffixes.iter().any(|s| name == format!("{}{s}", family.0)),
                "{line} after # TYPE {} {}",
                family.0,
                family.1
            );
        }
        // Otherwise the two are the same lines, but for the process' values, read again at
        // each encoding.
        let steady = |text: &str| -> String {
            text.lines()
                .filter(|line| !line.starts_with("process_"))
                .map(|line| format!("{line}\n"))
                .collect()
        };
        let (om, text) = (steady(&om), steady(&text));
        let renamed = om
            .replace(" appzone_http_requests ", " appzone_http_requests_total ")
            .replace(" appzone_rate_limited ", " appzone_rate_limited_total ")
            .replace(
                " appzone_rate_limit_fallbacks ",
                " appzone_rate_limit_fallbacks_total ",
            )
            .replace(
                " appzone_rate_limit_redis_calls ",
                " appzone_rate_limit_redis_calls_total ",
            )
            .replace(
                " appzone_connections_refused ",
                " appzone_connections_refused_total ",
            )
            .replace(
                " appzone_profiles_deleted ",
                " appzone_profiles_deleted_total ",
            )
            .replace(" process_cpu_seconds ", " process_cpu_seconds_total ")
            .replace("# EOF\n", "");
        assert_eq!(text, renamed);
    }

    #[test]
    fn text_format_refuses_what_it_cannot_say() {
        assert_eq!(
            text_004("# HELP a_info i\n# TYPE a_info info\na_info{v=\"1\"} 1\n# EOF\n"),
            Err(std::fmt::Error)
        );
        assert_eq!(
            text_004("# HELP a h\n# TYPE a unknown\na 1\n# EOF\n").as_deref(),
            Ok("# HELP a h\n# TYPE a untyped\na 1\n")
        );
        assert_eq!(
            text_004("# HELP a_seconds h\n# TYPE a_seconds gauge\n# UNIT a_seconds seconds\na_seconds 1\n# EOF\n").as_deref(),
            Ok("# HELP a_seconds h\n# TYPE a_seconds gauge\na_seconds 1\n")
        );
    }
}
