#!/usr/bin/env python3
"""Compile the built-in catalog (format 1.2) from the sourced zone facts.

Reads:
  * crates/server/catalog/builtin.json (next to this script): the current catalog. Every
    existing region keeps its id, name and zones exactly, in the same order, so the HTTP
    answers built from them do not change.
  * <facts-dir>/zone-identities.json: zone identities (AWS AZ IDs with names where known,
    Azure zonal and non-zonal regions, the GCP note) and the references S1..S16.
  * <facts-dir>/cloud-zones.json: the catalog's source notes; only used to check the AWS
    region-list citation (C1).
  * <facts-dir>/extended-zones.json: the zones beyond availability zones (AWS Local and
    Wavelength Zones, Azure Extended Zones, GCP AI zones) and the references E1..E22. They are
    identities of their region only: `zones` (what /zones serves) stays availability zones.

Writes crates/server/catalog/builtin.json in the 1.2 form:
  {"source": {"compiled_on", "references": [{"id", "what", "where", "date"}]},
   "providers": [{"id", "name", "regions": [
       {"id", "name", "zones", "name_scope", "identities", "sources", "note"?}]}]}
An identity carries `parent_zone_id`, `network_border_group`, `opt_in` and its own
`name_scope` only where they are not what an availability zone of the region has.
The 1.1 `source_notes` are dropped; their facts are in `source.references`. The Azure
regions without availability zones are added with `zones: []`.

Run from the repository root (Python 3, standard library only):

    python3 crates/server/catalog/compile.py ../shared/catalog

Re-running is safe: the script only recomputes the 1.2 fields and adds missing Azure
regions, so its output does not change when its input is its own output.
"""

import json
import re
import sys
from pathlib import Path

BUILTIN = Path(__file__).resolve().parent / "builtin.json"
COMPILED_ON = "2026-11-28"

# The catalog's own AWS region list (from cloud-zones.json source_notes.aws).
C1 = {
    "id": "C1",
    "what": "AWS region list and region display names: partition 'aws' of botocore's "
    "partitions.json; 34 regions, the 'aws-global' pseudo-region dropped.",
    "where": "boto/botocore botocore/data/partitions.json@0e6e2404b85d",
    "date": "2026-08-07",
}

# Display names, in Azure's own style, for the regions without availability zones.
AZURE_NAMES = {
    "australiacentral": "Australia Central",
    "australiacentral2": "Australia Central 2",
    "australiasoutheast": "Australia Southeast",
    "brazilsoutheast": "Brazil Southeast",
    "canadaeast": "Canada East",
    "francesouth": "France South",
    "germanynorth": "Germany North",
    "koreasouth": "Korea South",
    "northcentralus": "North Central US",
    "norwaywest": "Norway West",
    "southafricawest": "South Africa West",
    "southindia": "South India",
    "switzerlandwest": "Switzerland West",
    "uaecentral": "UAE Central",
    "ukwest": "UK West",
    "westcentralus": "West Central US",
    "westindia": "West India",
    "westus": "West US",
}

GCP_NOTE = (
    "The same name in every project. Google publishes no physical-zone id and may map one "
    "name onto different internal clusters for different organizations (zone "
    "virtualization, S16)."
)
AZURE_NOTE = (
    "A physical zone. Deployments name a logical zone (1, 2 or 3), shuffled per "
    "subscription: import your `az account list-locations -o json` output as a zone "
    "mapping to see which logical zone this is for you."
)

AWS_SOURCES = ["C1", "S1"]
AWS_ACCOUNT_SCOPE_SOURCE = "S2"
GCP_SOURCES = ["S13", "S14", "S16"]
AZURE_SOURCES = ["S10", "S11"]


def fail(message):
    sys.exit(f"compile.py: {message}")


def cited(text):
    """The reference ids (S1, S12, ...) named in a note."""
    return re.findall(r"\bS\d+\b", text or "")


def sorted_ids(ids):
    """Deduplicated, C ids before S ids, each by number: C1, S1, S2, S10."""
    return sorted(set(ids), key=lambda i: (i[0], int(i[1:])))


def identity(zone_id, zone_name, visibility, note, zone_type="availability-zone", **edge):
    entry = {
        "zone_id": zone_id,
        "zone_name": zone_name,
        "zone_type": zone_type,
        "visibility": visibility,
    }
    # name_scope (when not the region's), parent_zone_id, network_border_group, opt_in.
    entry.update({k: v for k, v in edge.items() if v is not None})
    if note:
        entry["note"] = note
    return entry


# Edge zones that one account's later output no longer lists, with the zone it lists instead
# (E8, E9): they may be retired, and no AWS page says so.
SUCCEEDED = {
    "use1-atl1-az1": ("us-east-1-atl-2a", "E9"),
    "use1-chi1-az1": ("us-east-1-chi-2a", "E8"),
    "use1-dfw1-az1": ("us-east-1-dfw-2a", "E8"),
    "use1-iah1-az1": ("us-east-1-iah-2a", "E8"),
    "use1-mia1-az1": ("us-east-1-mia-2a", "E9"),
    "use1-nyc1-az1": ("us-east-1-nyc-2a", "E9"),
    "usw2-phx1-az1": ("us-west-2-phx-2a", "E8"),
}
# AWS's own pages: a zone listed there is listed for every account.
AWS_PAGES = {"E1", "E5"}


def cite(ids):
    return ", ".join(sorted_ids(ids))


def aws_local_zone(z):
    group = f" {z['group_name']}" if z["group_name"] else ""
    note = f"A Local Zone; opt in to its zone group{group} before use (E2, E4)."
    if z["parent_zone_id"] is None:
        note += (
            " No public source gives its parent zone: aws ec2 describe-availability-zones "
            "--all-availability-zones prints it as ParentZoneId."
        )
    if z["zone_id"] in SUCCEEDED:
        note += (
            " One account's later output lists {} instead ({}): it may be retired.".format(
                *SUCCEEDED[z["zone_id"]]
            )
        )
    elif z["sources"] == ["E9"]:
        note += " Seen in one account's output only (E9); no AWS page confirms it."
    listed = bool(AWS_PAGES & set(z["sources"])) and z["zone_id"] not in SUCCEEDED
    return identity(
        z["zone_id"],
        z["zone_name"],
        "all_accounts" if listed else "unknown",
        note,
        "local-zone",
        name_scope="uniform",
        parent_zone_id=z["parent_zone_id"],
        network_border_group=z["network_border_group"],
        opt_in="required",
    )


def aws_wavelength_zone(z):
    note = (
        f"A Wavelength Zone, in a carrier's network; opt in to its zone group {z['group_name']} "
        "before use (E2, E4). AWS says the number and mapping of Wavelength Zones per region "
        f"can differ between accounts (E6), so no name is given: the sources name it "
        f"{z['zone_name']} ({cite(s for s in z['sources'] if s in ('E5', 'E7'))}); store your "
        "account's output as a zone mapping to see yours."
    )
    if not z["listed_in_current_aws_docs_regions"]:
        note += " AWS's current Wavelength page lists no Wavelength Zone in this region (E5): it may be retired."
    return identity(
        z["zone_id"],
        None,
        "unknown",
        note,
        "wavelength-zone",
        name_scope="account",
        parent_zone_id=z["parent_zone_id"],
        network_border_group=z["network_border_group"],
        opt_in="required",
    )


# The Azure Extended Zones Microsoft documents as current (E14, E15, E16); the older names some
# specs and unofficial lists carry are left out.
AZURE_EXTENDED = {"losangeles", "perth"}


def azure_extended_zone(z):
    region = z["home_region"]
    note = (
        f"An Azure Extended Zone whose home region is {region}: deploy with --location {region} "
        f"--edge-zone {z['name']} ({cite(s for s in z['sources'] if s != 'E19')}). Each "
        "subscription registers the Microsoft.EdgeZones provider and requests access first (E16)."
    )
    return identity(
        z["name"], z["name"], "unknown", note, "extended-zone", name_scope="uniform", opt_in="required"
    )


def gcp_ai_zone(z):
    # E20 names one parent (us-central1-a) and the rule: the standard zone of the same letter;
    # E22 dates the appearance of us-central1-ai1a only.
    named = z["zone"] == "us-central1-ai1a"
    rule = "" if named else " by E20's rule, the standard zone of the same letter"
    note = (
        f"A GCP AI zone anchored to {z['parent_zone']}, its parent zone{rule} (E20); each project "
        "makes AI zones visible before use (E20)."
    )
    if named:
        note += " Listed by zones.list since January 2026 (E22)."
    return identity(
        z["zone"],
        z["zone"],
        "unknown",
        note,
        "ai-zone",
        parent_zone_id=z["parent_zone"],
        opt_in="required",
    )


def edge_zones(extended):
    """(provider, region) -> (identities, sources) of the zones beyond availability zones."""
    edges = {}

    def add(provider, region, entry, sources):
        found = edges.setdefault((provider, region), ([], set()))
        found[0].append(entry)
        found[1].update(sources)
        found[1].update(re.findall(r"\bE\d+\b", entry.get("note", "")))

    for z in extended["aws_local_zones"]:
        add("aws", z["region"], aws_local_zone(z), z["sources"])
    for z in extended["aws_wavelength_zones"]:
        add("aws", z["region"], aws_wavelength_zone(z), z["sources"])
    for z in extended["azure_extended_zones"]:
        if z["name"] in AZURE_EXTENDED:
            add("azure", z["home_region"], azure_extended_zone(z), [])
    for z in extended["gcp_ai_zones"]:
        add("gcp", z["region"], gcp_ai_zone(z), z["sources"])
    return edges


def with_edges(provider, entry, edges):
    """The region `entry` with its edge zones appended to its identities."""
    found = edges.pop((provider, entry["id"]), None)
    if found is None:
        return entry
    identities, sources = found
    azs = {i["zone_id"] for i in entry["identities"]}
    for i in identities:
        parent = i.get("parent_zone_id")
        if parent is not None and parent not in azs:
            fail(f"{provider}/{entry['id']}: {i['zone_id']}'s parent {parent} is not one of its zones")
    return {
        **entry,
        "identities": entry["identities"] + identities,
        "sources": sorted_ids(entry["sources"] + sorted(sources)),
    }


def region(base, name_scope, identities, sources, note=None):
    entry = {
        "id": base["id"],
        "name": base["name"],
        "zones": base["zones"],
        "name_scope": name_scope,
        "identities": identities,
        "sources": sorted_ids(sources),
    }
    # What is known of the region as a whole (access restricted, an unconfirmed zone report).
    if note:
        entry["note"] = note
    return entry


def aws_region(base, facts):
    entry = facts["aws"].get(base["id"])
    if entry is None:
        fail(f"aws region {base['id']} has no entry in zone-identities.json")
    zones = entry["zones"]
    names = [z["zone_name"] for z in zones if z["zone_name"] is not None]
    if len(zones) != len(base["zones"]) or not set(names) <= set(base["zones"]):
        fail(f"aws region {base['id']}: identities do not match the zones {base['zones']}")
    identities = [
        identity(z["zone_id"], z["zone_name"], z["visibility"], z.get("note")) for z in zones
    ]
    sources = list(AWS_SOURCES)
    if entry["name_scope"] == "account":
        sources.append(AWS_ACCOUNT_SCOPE_SOURCE)
    for z in zones:
        sources.append(z["source"])
        sources += cited(z.get("note"))
    return region(base, entry["name_scope"], identities, sources)


def gcp_region(base):
    identities = [identity(z, z, "all_accounts", GCP_NOTE) for z in base["zones"]]
    return region(base, "global", identities, GCP_SOURCES)


def azure_region(base, facts):
    entry = facts["azure"].get(base["id"])
    if entry is None:
        fail(f"azure region {base['id']} has no entry in zone-identities.json")
    zone_ids = [z["zone_id"] for z in entry["zones"]]
    if set(zone_ids) != set(base["zones"]) or len(zone_ids) != len(base["zones"]):
        fail(f"azure region {base['id']}: zones {base['zones']} are not the ids {zone_ids}")
    if entry["zonal"] != bool(zone_ids):
        fail(f"azure region {base['id']}: zonal is {entry['zonal']} but zones are {zone_ids}")
    identities = [identity(z, None, "all_accounts", AZURE_NOTE) for z in zone_ids]
    sources = AZURE_SOURCES + [entry["source"]] + cited(entry.get("note"))
    return region(base, "subscription", identities, sources, entry.get("note"))


def add_missing_azure_regions(regions, facts):
    """Adds the non-zonal Azure regions, keeping the list sorted by id as it is today."""
    ids = [r["id"] for r in regions]
    if ids != sorted(ids):
        fail("azure regions are not sorted by id; cannot insert the missing ones")
    for region_id, entry in facts["azure"].items():
        if region_id in ids:
            continue
        if entry["zonal"]:
            fail(f"zonal azure region {region_id} is missing from the catalog")
        if region_id not in AZURE_NAMES:
            fail(f"no display name for azure region {region_id}")
        regions.append({"id": region_id, "name": AZURE_NAMES[region_id], "zones": []})
    return sorted(regions, key=lambda r: r["id"])


def references(facts, cloud_zones, extended):
    aws_list = cloud_zones["source_notes"]["aws"]["region_list_and_names"]
    if "0e6e2404b85d" not in aws_list or "2026-08-07" not in aws_list:
        fail(f"cloud-zones.json no longer cites the C1 botocore commit: {aws_list!r}")
    refs = [C1] + [
        {"id": s["id"], "what": s["what"], "where": s["where"], "date": s["date"]}
        for s in facts["sources"]
    ] + [
        # A source without a date of its own carries the date it was read.
        {"id": s["id"], "what": s["what"], "where": s["where"].strip(),
         "date": s["date"] or extended["compiled_on"]}
        for s in extended["sources"]
    ]
    ids = [r["id"] for r in refs]
    if len(ids) != len(set(ids)):
        fail(f"reference ids are not unique: {ids}")
    return refs


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 crates/server/catalog/compile.py <facts-dir>")
    facts_dir = Path(sys.argv[1])
    facts = json.loads((facts_dir / "zone-identities.json").read_text(encoding="utf-8"))
    cloud_zones = json.loads((facts_dir / "cloud-zones.json").read_text(encoding="utf-8"))
    extended = json.loads((facts_dir / "extended-zones.json").read_text(encoding="utf-8"))
    current = json.loads(BUILTIN.read_text(encoding="utf-8"))

    refs = references(facts, cloud_zones, extended)
    edges = edge_zones(extended)
    providers = []
    for provider in current["providers"]:
        bases = provider["regions"]
        if provider["id"] == "aws":
            regions = [aws_region(b, facts) for b in bases]
        elif provider["id"] == "gcp":
            regions = [gcp_region(b) for b in bases]
        elif provider["id"] == "azure":
            regions = [azure_region(b, facts) for b in add_missing_azure_regions(bases, facts)]
        else:
            fail(f"unknown provider {provider['id']}")
        regions = [with_edges(provider["id"], r, edges) for r in regions]
        providers.append({**provider, "regions": regions})
    # The one zone outside the catalog's regions (China partition) stays out.
    outside = sorted(f"{p}/{r}" for p, r in edges)
    if outside != ["aws/cn-north-1"]:
        fail(f"edge zones of regions outside the catalog: {outside}")

    known = {r["id"] for r in refs}
    for provider in providers:
        for r in provider["regions"]:
            unknown = set(r["sources"]) - known
            if unknown:
                fail(f"{provider['id']}/{r['id']} cites unknown references {sorted(unknown)}")

    # Of the edge-zone references, only those some region cites are carried (E12 names a zone
    # outside the catalog, E19 an unofficial list).
    cited_ids = {s for provider in providers for r in provider["regions"] for s in r["sources"]}
    refs = [r for r in refs if not r["id"].startswith("E") or r["id"] in cited_ids]
    catalog = {
        "source": {"compiled_on": COMPILED_ON, "references": refs},
        "providers": providers,
    }
    BUILTIN.write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
