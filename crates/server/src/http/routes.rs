//! Which route a request path belongs to: the router's path templates in one table, matched by
//! `matchit`, the matcher axum's router itself runs on the same raw path.
//!
//! One lookup gives a request its route label (metrics and logs name templates, never raw
//! paths, so callers cannot create label values), the listing shortcut its raw path
//! parameters, and the path extractor the segments the router could not decode. None of them
//! can disagree with the router on a path's shape: same templates, same matcher.

use std::sync::LazyLock;

use appzone_contract::paths::{DELETE_PROFILE, LIST_PROVIDERS, LIST_REGIONS, LIST_ZONES};

/// The route templates metrics and logs may name, and `unmatched` last. `/docs` also labels
/// the documentation page's assets.
const ROUTES: [&str; 10] = [
    LIST_ZONES,
    DELETE_PROFILE,
    LIST_PROVIDERS,
    LIST_REGIONS,
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
    "unmatched",
];
const DOCS: usize = 8;
const UNMATCHED: usize = ROUTES.len() - 1;
/// The templates of the documentation page's assets, labelled `/docs`.
const DOCS_ASSETS: [&str; 2] = ["/docs/", "/docs/{*file}"];

/// The route a request belongs to, for metrics and logs: one of a fixed set of templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteLabel(usize);

impl RouteLabel {
    /// `GET /api/v1/providers/{providerId}/regions/{regionId}/zones`.
    pub const LIST_ZONES: Self = Self(0);
    /// `DELETE /api/v1/applications/profiles/{profileId}`.
    pub const DELETE_PROFILE: Self = Self(1);
    /// `GET /api/v1/providers`.
    pub const LIST_PROVIDERS: Self = Self(2);
    /// `GET /api/v1/providers/{providerId}/regions`.
    pub const LIST_REGIONS: Self = Self(3);
    /// A path of no route's shape.
    pub const UNMATCHED: Self = Self(UNMATCHED);

    /// How many labels there are, `unmatched` included.
    pub const COUNT: usize = ROUTES.len();

    /// The route template, or `unmatched`.
    pub fn as_str(self) -> &'static str {
        ROUTES[self.0]
    }

    /// The route and method of the document's operation `operation_id`, read from the
    /// contract's document (a path template matches its own route); `None` for an id the
    /// document does not have. Builds the document: for start-up, not for requests.
    pub fn of_operation(operation_id: &str) -> Option<(Self, http::Method)> {
        let doc = appzone_contract::openapi::document();
        doc["paths"].as_object()?.iter().find_map(|(path, item)| {
            let (method, _) = item
                .as_object()?
                .iter()
                .find(|(_, operation)| operation["operationId"] == operation_id)?;
            Some((label(path), method.to_uppercase().parse().ok()?))
        })
    }

    pub(super) fn index(self) -> usize {
        self.0
    }

    pub(super) fn from_index(index: usize) -> Option<Self> {
        (index < ROUTES.len()).then_some(Self(index))
    }
}

/// A path's route and its raw (still percent-encoded) parameters, in template order.
#[derive(Debug)]
pub struct Found<'p> {
    /// The route the path belongs to.
    pub route: RouteLabel,
    params: matchit::Params<'static, 'p>,
}

impl<'p> Found<'p> {
    /// The raw parameters, when the route has exactly `N`.
    pub fn params<const N: usize>(&self) -> Option<[&'p str; N]> {
        let mut values = self.params.iter().map(|(_, value)| value);
        let params = std::array::from_fn(|_| values.next().unwrap_or_default());
        (self.params.len() == N).then_some(params)
    }

    /// The raw parameters, in template order.
    pub fn raw_params(&self) -> impl Iterator<Item = &'p str> + '_ {
        self.params.iter().map(|(_, value)| value)
    }
}

static TABLE: LazyLock<matchit::Router<RouteLabel>> = LazyLock::new(|| {
    let mut table = matchit::Router::new();
    let templates = ROUTES[..UNMATCHED].iter().enumerate();
    let assets = DOCS_ASSETS.iter().map(|asset| (DOCS, asset));
    for (index, template) in templates.chain(assets) {
        // The templates are constants, tested below; a conflict is a programming error.
        #[allow(clippy::expect_used)]
        table
            .insert(*template, RouteLabel(index))
            .expect("route templates do not conflict");
    }
    table
});

/// The route `path` belongs to, with its raw parameters; `None` when it has no route's shape.
pub fn find(path: &str) -> Option<Found<'_>> {
    let found = TABLE.at(path).ok()?;
    Some(Found {
        route: *found.value,
        params: found.params,
    })
}

/// The route label of `path`: its template, or `unmatched`.
pub fn label(path: &str) -> RouteLabel {
    find(path).map_or(RouteLabel::UNMATCHED, |found| found.route)
}

/// Whether `path` is one of the router's routes itself (`/docs` as itself, not its assets).
pub fn is_route(path: &str) -> bool {
    find(path).is_some_and(|found| found.route.0 != DOCS || path == "/docs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use appzone_contract::paths::{self, decode_segment};
    use appzone_contract::{ProfileId, ProviderId, RegionId};
    use proptest::prelude::*;

    #[test]
    fn route_labels_name_templates_and_nothing_else() {
        let cases = [
            ("/api/v1/providers/aws/regions/us-east-1/zones", LIST_ZONES),
            ("/api/v1/providers/a%2Fb/regions/r/zones", LIST_ZONES),
            // As in axum's router, an empty segment fills a parameter inside a path (the
            // handler answers it as a malformed id), not at its end.
            ("/api/v1/providers//regions/us-east-1/zones", LIST_ZONES),
            (
                "/api/v1/providers/aws/regions/us-east-1/zones/",
                "unmatched",
            ),
            ("/api/v1/providers/aws/regions/us-east-1", "unmatched"),
            ("/api/v1/providers/", "unmatched"),
            ("/api/v1/providers", LIST_PROVIDERS),
            ("/api/v1/providers/aws/regions", LIST_REGIONS),
            ("/api/v1/providers//regions", LIST_REGIONS),
            ("/api/v1/providers/aws/regions/", "unmatched"),
            ("/api/v1/applications/profiles/p1", DELETE_PROFILE),
            ("/api/v1/applications/profiles/", "unmatched"),
            ("/api/v1/applications/profiles/p1/x", "unmatched"),
            ("/healthz", "/healthz"),
            ("/healthz/", "unmatched"),
            ("/healthzz", "unmatched"),
            ("/readyz", "/readyz"),
            ("/metrics", "/metrics"),
            ("/openapi.json", "/openapi.json"),
            ("/docs", "/docs"),
            ("/docs/", "/docs"),
            ("/docs/swagger-ui.css", "/docs"),
            ("/docsx", "unmatched"),
            ("/", "unmatched"),
            ("", "unmatched"),
        ];
        for (path, expected) in cases {
            assert_eq!(label(path).as_str(), expected, "{path}");
        }
        // The labels handlers record name their own templates.
        assert_eq!(RouteLabel::LIST_ZONES.as_str(), LIST_ZONES);
        assert_eq!(RouteLabel::DELETE_PROFILE.as_str(), DELETE_PROFILE);
        assert_eq!(RouteLabel::LIST_PROVIDERS.as_str(), LIST_PROVIDERS);
        assert_eq!(RouteLabel::LIST_REGIONS.as_str(), LIST_REGIONS);
        assert!(is_route("/docs") && !is_route("/docs/swagger-ui.css"));
    }

    #[test]
    fn every_operation_of_the_document_has_its_route_and_method() {
        let doc = appzone_contract::openapi::document();
        let mut seen = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let id = op["operationId"].as_str().unwrap();
                if method == "head" {
                    continue;
                }
                let (route, expected) = RouteLabel::of_operation(id).unwrap();
                assert_eq!(
                    (route.as_str(), expected.as_str()),
                    (path.as_str(), method.to_uppercase().as_str())
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 4);
        assert!(RouteLabel::of_operation("nope").is_none());
    }

    #[test]
    fn parameters_come_in_template_order_and_only_in_their_number() {
        let found = find("/api/v1/providers/aws/regions/us-east-1/zones").expect("a route");
        assert_eq!(found.route, RouteLabel::LIST_ZONES);
        assert_eq!(found.params::<2>(), Some(["aws", "us-east-1"]));
        assert_eq!(found.params::<1>(), None);
        assert_eq!(find("/healthz").expect("a route").params::<0>(), Some([]));
    }

    #[test]
    fn route_labels_need_no_escaping_in_log_lines() {
        // The direct request line writes the route between quotes without escaping it.
        for route in ROUTES {
            assert!(
                route
                    .bytes()
                    .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\'),
                "{route}"
            );
        }
    }

    fn provider_or_region_id() -> impl Strategy<Value = String> {
        "[a-z0-9][a-z0-9-]{0,62}"
    }

    proptest! {
        /// What the client builds with the contract's path functions comes back, decoded, as
        /// the ids it was built from.
        #[test]
        fn every_valid_id_survives_path_building_and_matching(
            p in provider_or_region_id(),
            r in provider_or_region_id(),
            id in "[A-Za-z0-9][A-Za-z0-9._-]{0,127}",
        ) {
            let (p, r, id): (ProviderId, RegionId, ProfileId) =
                (p.parse().unwrap(), r.parse().unwrap(), id.parse().unwrap());
            let decoded = |path: &str| -> (RouteLabel, Vec<String>) {
                let found = find(path).unwrap();
                let params = found.raw_params().map(|s| decode_segment(s).unwrap().into_owned());
                (found.route, params.collect())
            };
            prop_assert_eq!(
                decoded(&paths::list_zones(&p, &r)),
                (RouteLabel::LIST_ZONES, vec![p.to_string(), r.to_string()])
            );
            prop_assert_eq!(
                decoded(&paths::list_regions(&p)),
                (RouteLabel::LIST_REGIONS, vec![p.to_string()])
            );
            prop_assert_eq!(
                decoded(&paths::delete_profile(&id)),
                (RouteLabel::DELETE_PROFILE, vec![id.to_string()])
            );
        }
    }
}
