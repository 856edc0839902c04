-- Release 1.2: zone identities in the catalog, and organizations' zone mappings.

-- A region's identities (JSON array of {zone_id, zone_name, zone_type, visibility, note}), for
-- whom its names hold, the references it cites (JSON array of ids) and a note; all NULL for a
-- region imported from a 1.1 catalog file.
ALTER TABLE catalog_regions ADD COLUMN name_scope TEXT;
ALTER TABLE catalog_regions ADD COLUMN identities TEXT;
ALTER TABLE catalog_regions ADD COLUMN sources TEXT;
ALTER TABLE catalog_regions ADD COLUMN note TEXT;
-- The catalog's compile date and references (JSON), NULL for a 1.1 catalog.
ALTER TABLE catalog_meta ADD COLUMN source TEXT;

-- An organization's own zone names, taken from its cloud CLI's output: the pairs kept as JSON
-- ([{region, zones: [{zone_id, zone_name}]}]), validated against the catalog when stored.
CREATE TABLE zone_mappings (
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    id          TEXT NOT NULL,
    provider    TEXT NOT NULL,
    label       TEXT NOT NULL,
    pairs       TEXT NOT NULL,
    imported_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- Every store, replacement and deletion of a mapping, with who did it.
CREATE TABLE zone_mapping_audit (
    id          BIGSERIAL PRIMARY KEY,
    org_id      TEXT NOT NULL,
    mapping_id  TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('create', 'replace', 'delete')),
    key_id      TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX zone_mapping_audit_mapping ON zone_mapping_audit (org_id, mapping_id);
