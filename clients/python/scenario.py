"""The appzone consumer scenario, through the Python client generated from openapi.json.

Run by `cargo xtask clients` against a fresh `appzone-server serve --demo`, which it describes
in the environment: APPZONE_BASE_URL, APPZONE_ADMIN_KEY, APPZONE_MEMBER_KEY,
APPZONE_DELETABLE_PROFILE, APPZONE_KEPT_PROFILE (the demo also holds the zone mapping `prod`, the
document's example id); APPZONE_DESCRIBE_OUTPUT names the AWS CLI output step 8f stores
(`clients/aws-describe-availability-zones.json`). Prints one line per step and exits 1 on the
first wrong answer.
Type-checked with `mypy --strict` together with the generated package.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, TypeVar

import httpx
from appzone_client import AuthenticatedClient
from appzone_client.api.profiles import delete_application_profile
from appzone_client.api.zone_mappings import (
    delete_zone_mapping,
    get_zone_mapping,
    list_zone_mappings,
    put_zone_mapping,
)
from appzone_client.api.zones import (
    list_instance_types,
    list_providers,
    list_regions,
    list_zone_identities,
    list_zones,
)
from appzone_client.models import (
    ErrorBody,
    InstanceTypeList,
    ProviderList,
    RegionList,
    ZoneIdentity,
    ZoneIdentityList,
    ZoneList,
    ZoneMappingAnswer,
    ZoneMappingList,
    ZoneMappingRequest,
)
# The body's `output` is one AWS region's output (the component `AwsDescribeOutput`), an array
# of them, or Azure's locations; the generator makes a model of each component.
from appzone_client.models.aws_describe_output import AwsDescribeOutput
from appzone_client.models.aws_offerings_output import AwsOfferingsOutput
from appzone_client.types import UNSET, Response, Unset

TIMEOUT = httpx.Timeout(10.0)
WRONG_KEY = "apz_AAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
PROVIDERS = ["aws", "gcp", "azure"]
DEMO_MAPPING = "prod"
MAPPING = "scenario-py"



class WrongAnswer(Exception):
    """A step got an answer the contract does not allow."""


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise SystemExit(f"scenario.py: {name} is not set")
    return value


def describe_output() -> str:
    """What `aws ec2 describe-availability-zones --all-availability-zones --region us-east-1
    --output json` prints, for a constructed account (its letters are no real account's): six
    availability zones and a local zone, which the service skips. The TypeScript scenario reads
    the same file."""
    with open(env("APPZONE_DESCRIBE_OUTPUT"), encoding="utf-8") as file:
        return file.read()


def keyed(base_url: str, key: str) -> AuthenticatedClient:
    """A client sending `key` in X-API-KEY: the generator's way for an `apiKey` scheme."""
    return AuthenticatedClient(
        base_url=base_url,
        token=key,
        prefix="",
        auth_header_name="X-API-KEY",
        timeout=TIMEOUT,
    )


def keyless(base_url: str) -> AuthenticatedClient:
    """A client that sends no X-API-KEY header at all.

    The generated functions of secured operations accept only an AuthenticatedClient, and an
    AuthenticatedClient always sends its token; so the "no key" caller hands it a plain httpx
    client (which replaces the token header, as `set_httpx_client` documents).
    """
    client = AuthenticatedClient(base_url=base_url, token="", timeout=TIMEOUT)
    return client.set_httpx_client(httpx.Client(base_url=base_url, timeout=TIMEOUT))


def expect_error(status: HTTPStatus, parsed: object, want: HTTPStatus, code: str) -> ErrorBody:
    """Checks an error answer: the status, and a decoded ErrorBody carrying `code`."""
    if status != want:
        raise WrongAnswer(f"status {status.value}, want {want.value}")
    if not isinstance(parsed, ErrorBody):
        raise WrongAnswer(f"{want.value} decoded as {parsed!r}, want an ErrorBody")
    if parsed.error_code != code:
        raise WrongAnswer(f"error_code {parsed.error_code!r}, want {code!r}")
    return parsed


T = TypeVar("T")
# The listings: each a 200 envelope of `data`, `status` and `id`.
L = TypeVar("L", ProviderList, RegionList, ZoneList, ZoneIdentityList, InstanceTypeList)


def expect_ok(answer: Response[Any], kind: type[T], want: HTTPStatus = HTTPStatus.OK) -> T:
    """Checks a success: the status, and a body decoded as `kind`."""
    if answer.status_code != want:
        raise WrongAnswer(
            f"status {answer.status_code.value}, want {want.value} ({answer.content!r})"
        )
    if not isinstance(answer.parsed, kind):
        raise WrongAnswer(f"{want.value} decoded as {answer.parsed!r}, want a {kind.__name__}")
    return answer.parsed


def expect_listing(answer: Response[Any], kind: type[L]) -> L:
    """Checks a listing's 200: decoded as `kind`, `data` not empty, `status` 'success', the body's
    `id` equal to the X-Request-Id header, and an ETag header."""
    listing = expect_ok(answer, kind)
    if not listing.data:
        raise WrongAnswer("data is empty")
    if listing.status != "success":
        raise WrongAnswer(f"status field {listing.status!r}, want 'success'")
    request_id = answer.headers.get("X-Request-Id")
    if listing.id != request_id:
        raise WrongAnswer(f"body id {listing.id!r} != X-Request-Id header {request_id!r}")
    if not answer.headers.get("ETag"):
        raise WrongAnswer("no ETag header")
    return listing


def expect_no_content(answer: Response[Any]) -> None:
    """Checks a 204: the status, and nothing decoded."""
    if answer.status_code != HTTPStatus.NO_CONTENT or answer.parsed is not None:
        raise WrongAnswer(f"status {answer.status_code.value} ({answer.parsed!r}), want 204")


def expect_not_modified(status: HTTPStatus, parsed: object, content: bytes) -> None:
    """Checks a 304: the status, nothing decoded, no body."""
    if status != HTTPStatus.NOT_MODIFIED:
        raise WrongAnswer(f"status {status.value}, want 304")
    if parsed is not None:
        raise WrongAnswer(f"304 decoded as {parsed!r}, want None")
    if content:
        raise WrongAnswer(f"304 with a body: {content!r}")


def step_providers(base_url: str, member_key: str) -> str:
    """Step 0a: a stranger with only the document discovers the provider ids; returns the ETag."""
    with keyed(base_url, member_key) as client:
        answer = list_providers.sync_detailed(client=client)
    providers = expect_listing(answer, ProviderList)
    if providers.data != PROVIDERS:
        raise WrongAnswer(f"data {providers.data!r}, want {PROVIDERS!r}")
    etag = answer.headers["ETag"]
    print(
        f"step 0a ok: 200, providers {providers.data}, id == X-Request-Id == {providers.id}, "
        f"ETag {etag}"
    )
    return etag


def step_providers_not_modified(base_url: str, member_key: str, etag: str) -> None:
    """Step 0b: If-None-Match with the ETag of step 0a gives 304, as in step 2."""
    with keyed(base_url, member_key) as client:
        answer = list_providers.sync_detailed(client=client, if_none_match=etag)
    expect_not_modified(answer.status_code, answer.parsed, answer.content)
    print("step 0b ok: 304 not modified (status_code NOT_MODIFIED, parsed None, no exception)")


def step_regions(base_url: str, member_key: str) -> None:
    """Step 0c: the region ids of a provider from step 0a."""
    with keyed(base_url, member_key) as client:
        answer = list_regions.sync_detailed("aws", client=client)
    regions = expect_listing(answer, RegionList)
    if "us-east-1" not in regions.data:
        raise WrongAnswer(f"data {regions.data!r} has no 'us-east-1'")
    print(
        f"step 0c ok: 200, {len(regions.data)} aws regions from {regions.data[0]}, "
        "us-east-1 among them"
    )


def step_regions_bad_provider(base_url: str, member_key: str) -> None:
    """Step 0d: the regions of an unknown provider; the message names the close one."""
    with keyed(base_url, member_key) as client:
        answer = list_regions.sync_detailed("awz", client=client)
    body = expect_error(
        answer.status_code, answer.parsed, HTTPStatus.BAD_REQUEST, "invalid_provider"
    )
    hint = 'did you mean "aws"'
    if hint not in body.error:
        raise WrongAnswer(f"message {body.error!r} does not contain {hint!r}")
    print(f"step 0d ok: 400 invalid_provider: {body.error}")


def step_list(base_url: str, member_key: str) -> str:
    """Step 1: a listing; returns its ETag."""
    with keyed(base_url, member_key) as client:
        answer = list_zones.sync_detailed("aws", "us-east-1", client=client)
    zones = expect_listing(answer, ZoneList)
    etag = answer.headers["ETag"]
    print(f"step 1 ok: 200, {len(zones.data)} zones, id == X-Request-Id == {zones.id}, ETag {etag}")
    return etag


def step_not_modified(base_url: str, member_key: str, etag: str) -> None:
    """Step 2: If-None-Match with the ETag of step 1 gives 304.

    The generated client does not raise on 304: `sync_detailed` returns a Response whose
    `status_code` is NOT_MODIFIED and whose `parsed` is None (`sync` alone would return a bare
    None, indistinguishable from an undocumented status: use `sync_detailed`).
    """
    with keyed(base_url, member_key) as client:
        answer = list_zones.sync_detailed("aws", "us-east-1", client=client, if_none_match=etag)
    expect_not_modified(answer.status_code, answer.parsed, answer.content)
    print("step 2 ok: 304 not modified (status_code NOT_MODIFIED, parsed None, no exception)")


def step_bad_provider(base_url: str, member_key: str) -> None:
    """Step 3: an unknown provider."""
    with keyed(base_url, member_key) as client:
        answer = list_zones.sync_detailed("awz", "us-east-1", client=client)
    expect_error(answer.status_code, answer.parsed, HTTPStatus.BAD_REQUEST, "invalid_provider")
    print("step 3 ok: 400 invalid_provider")


def step_bad_region(base_url: str, member_key: str) -> None:
    """Step 4: an unknown region of a known provider."""
    with keyed(base_url, member_key) as client:
        answer = list_zones.sync_detailed("aws", "us-east-9", client=client)
    expect_error(answer.status_code, answer.parsed, HTTPStatus.NOT_FOUND, "region_not_found")
    print("step 4 ok: 404 region_not_found")


def step_keys(base_url: str) -> None:
    """Step 5: no key, then a well-formed unknown key."""
    with keyless(base_url) as client:
        answer = list_zones.sync_detailed("aws", "us-east-1", client=client)
    expect_error(answer.status_code, answer.parsed, HTTPStatus.UNAUTHORIZED, "missing_api_key")
    with keyed(base_url, WRONG_KEY) as client:
        answer = list_zones.sync_detailed("aws", "us-east-1", client=client)
    expect_error(answer.status_code, answer.parsed, HTTPStatus.UNAUTHORIZED, "invalid_api_key")
    print("step 5 ok: 401 missing_api_key without a key, 401 invalid_api_key with a wrong one")


def step_delete(base_url: str, admin_key: str, member_key: str) -> None:
    """Step 6: 204 as admin, 403 as member, 404 for a profile that does not exist."""
    deletable = env("APPZONE_DELETABLE_PROFILE")
    kept = env("APPZONE_KEPT_PROFILE")
    with keyed(base_url, admin_key) as admin, keyed(base_url, member_key) as member:
        expect_no_content(delete_application_profile.sync_detailed(deletable, client=admin))
        answer = delete_application_profile.sync_detailed(kept, client=member)
        expect_error(answer.status_code, answer.parsed, HTTPStatus.FORBIDDEN, "forbidden")
        answer = delete_application_profile.sync_detailed("prof_does_not_exist", client=admin)
        expect_error(answer.status_code, answer.parsed, HTTPStatus.NOT_FOUND, "profile_not_found")
    print("step 6 ok: 204 as admin, 403 forbidden as member, 404 profile_not_found")


@contextmanager
def stand_in(status: int, answer: object) -> Iterator[str]:
    """A server that answers every GET with `status` and `answer` as JSON."""
    body = json.dumps(answer).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Request-Id", "stand-in")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def step_unknown_code(label: str, status: HTTPStatus) -> None:
    """Step 7: an error code added after the client was generated must still reach the caller
    as an error carrying that code, not as a decoding exception."""
    unknown = {"error": "something new", "error_code": "brand_new_code"}
    with stand_in(status.value, unknown) as url, keyed(url, "apz_stand_in") as client:
        try:
            answer = list_zones.sync_detailed("aws", "us-east-1", client=client)
        except Exception as error:
            raise WrongAnswer(
                f"decoding a {status.value} with error_code 'brand_new_code' raised "
                f"{type(error).__name__}: {error}"
            ) from error
    expect_error(answer.status_code, answer.parsed, status, "brand_new_code")
    print(
        f"step {label} ok: {status.value} with an unknown code reaches the caller "
        "as ErrorBody(error_code='brand_new_code')"
    )


def step_open_string_sets() -> None:
    """Step 7c: `name_scope`, `zone_type` and `visibility` are open sets (plain strings in the
    document): an identity listing with values added after the client was generated decodes,
    keeping them, as a construction with them type-checks."""
    zone: dict[str, object] = {
        "zone_id": "use1-az1",
        "zone_name": None,
        "name_scope": "brand_new_scope",
        "zone_type": "brand-new-zone-type",
        "visibility": "brand_new_visibility",
        "parent_zone_id": None,
        "network_border_group": None,
        "names": [],
    }
    listing: dict[str, object] = {
        "data": [zone],
        "id": "stand-in",
        "mapping": None,
        "mappings": [],
        "message": "1 zone",
        "source": {"compiled_on": None, "refreshed_on": None, "references": []},
        "status": "success",
    }
    with stand_in(HTTPStatus.OK.value, listing) as url, keyed(url, "apz_stand_in") as client:
        answer = list_zone_identities.sync_detailed("aws", "us-east-1", client=client)
    if not isinstance(answer.parsed, ZoneIdentityList) or not answer.parsed.data:
        raise WrongAnswer(f"200 decoded as {answer.parsed!r}, want a ZoneIdentityList")
    decoded = answer.parsed.data[0]
    built = ZoneIdentity(
        zone_id="use1-az1",
        zone_name=None,
        name_scope="brand_new_scope",
        zone_type="brand-new-zone-type",
        visibility="brand_new_visibility",
        parent_zone_id=None,
        network_border_group=None,
        names=[],
    )
    if decoded.to_dict() != built.to_dict() or decoded.to_dict() != zone:
        raise WrongAnswer(f"decoded {decoded.to_dict()!r}, want {zone!r}")
    print("step 7c ok: unknown name_scope, zone_type and visibility values decode as strings")


def identities(
    base_url: str, key: str, provider: str, region: str, mapping: str | Unset = UNSET
) -> ZoneIdentityList:
    """A zone identity listing that must answer 200 with zones, `id` == `X-Request-Id`."""
    with keyed(base_url, key) as client:
        answer = list_zone_identities.sync_detailed(
            provider,
            region,
            client=client,
            mapping=UNSET if isinstance(mapping, Unset) else [mapping],
        )
    return expect_listing(answer, ZoneIdentityList)


def step_identities_account(base_url: str, member_key: str) -> None:
    """Step 8a: aws/us-east-1 names zones per account: identities, and no name guessed."""
    listing = identities(base_url, member_key, "aws", "us-east-1")
    for zone in listing.data:
        if zone.name_scope != "account" or zone.zone_name is not None:
            raise WrongAnswer(f"{zone.to_dict()!r}: want name_scope 'account', zone_name null")
        if not zone.zone_id.startswith("use1-az"):
            raise WrongAnswer(f"zone_id {zone.zone_id!r} is not a us-east-1 AZ ID")
    if listing.mapping is not None:
        raise WrongAnswer(f"mapping {listing.mapping!r}, want None")
    ids = [zone.zone_id for zone in listing.data]
    print(f"step 8a ok: 200, aws/us-east-1 identities {ids}, name_scope account, names null")


def step_identities_global(base_url: str, member_key: str) -> None:
    """Step 8b: a GCP zone's name is its identity."""
    listing = identities(base_url, member_key, "gcp", "us-central1")
    for zone in listing.data:
        if zone.name_scope != "global" or zone.zone_name != zone.zone_id:
            raise WrongAnswer(f"{zone.to_dict()!r}: want name_scope 'global', zone_name == zone_id")
    print(f"step 8b ok: 200, {len(listing.data)} gcp/us-central1 zones, name_scope global")


def step_identities_mapped(base_url: str, member_key: str) -> dict[str, str]:
    """Step 8c: ?mapping=prod fills the names from the demo's mapping; returns id -> name."""
    listing = identities(base_url, member_key, "aws", "us-east-1", mapping=DEMO_MAPPING)
    if listing.mapping is None or listing.mapping.id != DEMO_MAPPING:
        raise WrongAnswer(f"mapping {listing.mapping!r}, want id {DEMO_MAPPING!r}")
    names: dict[str, str] = {}
    for zone in listing.data:
        if zone.zone_name is None or not zone.zone_name.startswith("us-east-1"):
            raise WrongAnswer(f"{zone.to_dict()!r}: want a us-east-1 zone name")
        names[zone.zone_id] = zone.zone_name
    if len(set(names.values())) != len(names):
        raise WrongAnswer(f"a name given twice: {names!r}")
    print(f"step 8c ok: 200, mapping.id == {listing.mapping.id!r}, names {names}")
    return names


def step_list_mappings(base_url: str, member_key: str) -> None:
    """Step 8d: the organization's mappings hold the demo's."""
    with keyed(base_url, member_key) as client:
        mappings = expect_ok(list_zone_mappings.sync_detailed(client=client), ZoneMappingList)
    found = [m for m in mappings.data if m.id == DEMO_MAPPING]
    if not found or found[0].provider != "aws" or found[0].regions != ["us-east-1"]:
        raise WrongAnswer(f"data {[m.to_dict() for m in mappings.data]!r}: no aws {DEMO_MAPPING!r}")
    print(f"step 8d ok: 200, mappings {[m.id for m in mappings.data]}")


def step_get_mapping(base_url: str, member_key: str, names: dict[str, str]) -> None:
    """Step 8e: the demo's mapping, whose pairs are the names of step 8c."""
    with keyed(base_url, member_key) as client:
        answer = get_zone_mapping.sync_detailed(DEMO_MAPPING, client=client)
    mapping = expect_ok(answer, ZoneMappingAnswer)
    pairs = {z.zone_id: z.zone_name for r in mapping.data.regions for z in r.zones}
    if mapping.data.id != DEMO_MAPPING or pairs != names:
        raise WrongAnswer(f"{mapping.data.to_dict()!r}: want {DEMO_MAPPING!r} pairing {names!r}")
    print(f"step 8e ok: 200, {DEMO_MAPPING} pairs {len(pairs)} zones as step 8c named them")


def mapping_request(output: str) -> ZoneMappingRequest:
    """A PUT body from a describe-availability-zones output as the AWS CLI printed it."""
    parsed = json.loads(output)
    return ZoneMappingRequest(
        provider="aws",
        label="scenario account",
        output=AwsDescribeOutput.from_dict(parsed),
    )


def step_put_mapping(base_url: str, admin_key: str, member_key: str) -> None:
    """Step 8f: store a mapping from the CLI's output: 201, the same again: 200; then the
    identities with ?mapping= carry the output's names."""
    output = describe_output()
    body = mapping_request(output)
    zones = json.loads(output)["AvailabilityZones"]
    # Every zone of the output is kept, the Local Zone included; the listing shows the
    # availability zones unless asked for other types.
    want = {z["ZoneId"]: z["ZoneName"] for z in zones}
    want_listed = {
        z["ZoneId"]: z["ZoneName"] for z in zones if z["ZoneType"] == "availability-zone"
    }
    with keyed(base_url, admin_key) as admin:
        for status in (HTTPStatus.CREATED, HTTPStatus.OK):
            answer = put_zone_mapping.sync_detailed(MAPPING, client=admin, body=body)
            stored = expect_ok(answer, ZoneMappingAnswer, status)
            pairs = {z.zone_id: z.zone_name for r in stored.data.regions for z in r.zones}
            if stored.data.id != MAPPING or pairs != want or stored.skipped:
                raise WrongAnswer(
                    f"stored {stored.to_dict()!r}, want {MAPPING!r} with {want!r}, none skipped"
                )
    listing = identities(base_url, member_key, "aws", "us-east-1", mapping=MAPPING)
    named = {zone.zone_id: zone.zone_name for zone in listing.data}
    if named != want_listed:
        raise WrongAnswer(f"?mapping={MAPPING} names {named!r}, want {want_listed!r}")
    print(f"step 8f ok: 201 then 200 for {MAPPING} (its Local Zone kept); ?mapping= names as stored")


def step_put_unknown_zone(base_url: str, admin_key: str) -> None:
    """Step 8g: an AZ ID the catalog does not know for the region is skipped and named; the
    rest is stored (200, the mapping replaced)."""
    body = mapping_request(describe_output().replace('"use1-az5"', '"use1-az9"'))
    with keyed(base_url, admin_key) as admin:
        answer = put_zone_mapping.sync_detailed(MAPPING, client=admin, body=body)
        stored = expect_ok(answer, ZoneMappingAnswer, HTTPStatus.OK)
    skipped = [(s.region, s.zone_id) for s in stored.skipped]
    kept = {z.zone_id for r in stored.data.regions for z in r.zones}
    if skipped != [("us-east-1", "use1-az9")] or "use1-az9" in kept:
        raise WrongAnswer(f"skipped {skipped!r}, kept {sorted(kept)!r}: want use1-az9 skipped")
    print(f"step 8g ok: 200, use1-az9 skipped: {stored.skipped[0].reason}")


def step_offerings(base_url: str, admin_key: str, member_key: str) -> None:
    """Step 8h: store the mapping again with its account's instance-type offerings (as `aws ec2
    describe-instance-type-offerings --location-type availability-zone-id` prints them): the
    answer counts them; ?offers= keeps the zones that offer the type; the instance-type listing
    gives it with its zones."""
    output = describe_output()
    zones = [
        z["ZoneId"]
        for z in json.loads(output)["AvailabilityZones"]
        if z["ZoneType"] == "availability-zone"
    ]
    offered = sorted(zones[:2])
    offerings = {
        "InstanceTypeOfferings": [
            {"InstanceType": "p5.48xlarge", "LocationType": "availability-zone-id", "Location": z}
            for z in offered
        ]
    }
    body = mapping_request(output)
    body.offerings = AwsOfferingsOutput.from_dict(offerings)
    with keyed(base_url, admin_key) as admin:
        put = put_zone_mapping.sync_detailed(MAPPING, client=admin, body=body)
        stored = expect_ok(put, ZoneMappingAnswer, HTTPStatus.OK)
    counts = [(o.region, o.instance_types, o.offerings) for o in stored.data.offerings]
    if counts != [("us-east-1", 1, 2)]:
        raise WrongAnswer(f"offerings {counts!r}, want [('us-east-1', 1, 2)]")
    with keyed(base_url, member_key) as client:
        found = list_zone_identities.sync_detailed(
            "aws", "us-east-1", client=client, mapping=[MAPPING], offers=["p5.48xlarge"]
        )
        listing = expect_listing(found, ZoneIdentityList)
        kept = sorted(zone.zone_id for zone in listing.data)
        if kept != offered:
            raise WrongAnswer(f"?offers=p5.48xlarge kept {kept!r}, want {offered!r}")
        listed_types = list_instance_types.sync_detailed(
            "aws", "us-east-1", client=client, mapping=MAPPING
        )
        types = expect_listing(listed_types, InstanceTypeList)
    listed = [(t.instance_type, sorted(t.zone_ids)) for t in types.data]
    if listed != [("p5.48xlarge", offered)]:
        raise WrongAnswer(f"instance types {listed!r}, want [('p5.48xlarge', {offered!r})]")
    print(f"step 8h ok: 200 with 1 type in 2 zones; ?offers= and instance-types give {offered}")


def step_delete_mapping(base_url: str, admin_key: str) -> None:
    """Step 8i: delete the mapping (204); then it is gone: 404 for a delete and a read."""
    with keyed(base_url, admin_key) as admin:
        expect_no_content(delete_zone_mapping.sync_detailed(MAPPING, client=admin))
        again = delete_zone_mapping.sync_detailed(MAPPING, client=admin)
        expect_error(
            again.status_code, again.parsed, HTTPStatus.NOT_FOUND, "zone_mapping_not_found"
        )
        read = get_zone_mapping.sync_detailed(MAPPING, client=admin)
        expect_error(read.status_code, read.parsed, HTTPStatus.NOT_FOUND, "zone_mapping_not_found")
    print("step 8i ok: 204, then 404 zone_mapping_not_found for a delete and a read")


def main() -> int:
    base_url = env("APPZONE_BASE_URL")
    admin_key = env("APPZONE_ADMIN_KEY")
    member_key = env("APPZONE_MEMBER_KEY")
    steps: list[tuple[str, Callable[[], object]]] = []
    providers_etag: list[str] = []
    steps.append(("0a", lambda: providers_etag.append(step_providers(base_url, member_key))))
    steps.append(("0b", lambda: step_providers_not_modified(base_url, member_key, providers_etag[0])))
    steps.append(("0c", lambda: step_regions(base_url, member_key)))
    steps.append(("0d", lambda: step_regions_bad_provider(base_url, member_key)))
    etag: list[str] = []
    steps.append(("1", lambda: etag.append(step_list(base_url, member_key))))
    steps.append(("2", lambda: step_not_modified(base_url, member_key, etag[0])))
    steps.append(("3", lambda: step_bad_provider(base_url, member_key)))
    steps.append(("4", lambda: step_bad_region(base_url, member_key)))
    steps.append(("5", lambda: step_keys(base_url)))
    steps.append(("6", lambda: step_delete(base_url, admin_key, member_key)))
    steps.append(("7a", lambda: step_unknown_code("7a", HTTPStatus.BAD_REQUEST)))
    steps.append(("7b", lambda: step_unknown_code("7b", HTTPStatus.CONFLICT)))
    steps.append(("7c", step_open_string_sets))
    steps.append(("8a", lambda: step_identities_account(base_url, member_key)))
    steps.append(("8b", lambda: step_identities_global(base_url, member_key)))
    names: list[dict[str, str]] = []
    steps.append(("8c", lambda: names.append(step_identities_mapped(base_url, member_key))))
    steps.append(("8d", lambda: step_list_mappings(base_url, member_key)))
    steps.append(("8e", lambda: step_get_mapping(base_url, member_key, names[0])))
    steps.append(("8f", lambda: step_put_mapping(base_url, admin_key, member_key)))
    steps.append(("8g", lambda: step_put_unknown_zone(base_url, admin_key)))
    steps.append(("8h", lambda: step_offerings(base_url, admin_key, member_key)))
    steps.append(("8i", lambda: step_delete_mapping(base_url, admin_key)))
    for label, step in steps:
        try:
            step()
        except WrongAnswer as wrong:
            print(f"step {label} FAILED: {wrong}")
            return 1
        except Exception as error:  # a transport error, a decoding bug: still a wrong answer
            print(f"step {label} FAILED: {type(error).__name__}: {error}")
            return 1
    print("python scenario: all steps passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
