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

Writes crates/server/catalog/builtin.json in the 1.2 form:
  {"source": {"compiled_on", "references": [{"id", "what", "where", "date"}]},
   "providers": [{"id", "name", "regions": [
       {"id", "name", "zones", "name_scope", "identities", "sources", "note"?}]}]}
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
COMPILED_ON = "2026-11-27"

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


def identity(zone_id, zone_name, visibility, note):
    entry = {
        "zone_id": zone_id,
        "zone_name": zone_name,
        "zone_type": "availability-zone",
        "visibility": visibility,
    }
    if note:
        entry["note"] = note
    return entry


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


def references(facts, cloud_zones):
    aws_list = cloud_zones["source_notes"]["aws"]["region_list_and_names"]
    if "0e6e2404b85d" not in aws_list or "2026-08-07" not in aws_list:
        fail(f"cloud-zones.json no longer cites the C1 botocore commit: {aws_list!r}")
    refs = [C1] + [
        {"id": s["id"], "what": s["what"], "where": s["where"], "date": s["date"]}
        for s in facts["sources"]
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
    current = json.loads(BUILTIN.read_text(encoding="utf-8"))

    refs = references(facts, cloud_zones)
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
        providers.append({**provider, "regions": regions})

    known = {r["id"] for r in refs}
    for provider in providers:
        for r in provider["regions"]:
            unknown = set(r["sources"]) - known
            if unknown:
                fail(f"{provider['id']}/{r['id']} cites unknown references {sorted(unknown)}")

    catalog = {
        "source": {"compiled_on": COMPILED_ON, "references": refs},
        "providers": providers,
    }
    BUILTIN.write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
