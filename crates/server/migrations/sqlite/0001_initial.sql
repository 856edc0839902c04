-- Organizations, API keys, application profiles with tombstones, the delete audit log, and the
-- zone catalog. Times are Unix milliseconds (BIGINT) so both backends store them alike.

CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- Only the SHA-256 digest of a key is stored, never the key.
CREATE TABLE api_keys (
    key_id      TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    role        TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    name        TEXT NOT NULL,
    digest      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX api_keys_org ON api_keys (org_id);

-- A deleted profile keeps its row (deleted_at set) until purged after the retention period.
CREATE TABLE profiles (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    name        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    deleted_at  BIGINT
);
CREATE INDEX profiles_org ON profiles (org_id);
CREATE INDEX profiles_deleted ON profiles (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE profile_audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    profile_id  TEXT NOT NULL,
    org_id      TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('delete', 'restore', 'purge')),
    key_id      TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX profile_audit_profile ON profile_audit (profile_id);

CREATE TABLE catalog_providers (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    position    BIGINT NOT NULL
);

CREATE TABLE catalog_regions (
    provider_id TEXT NOT NULL REFERENCES catalog_providers (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    name        TEXT NOT NULL,
    position    BIGINT NOT NULL,
    PRIMARY KEY (provider_id, id)
);

CREATE TABLE catalog_zones (
    provider_id TEXT NOT NULL,
    region_id   TEXT NOT NULL,
    position    BIGINT NOT NULL,
    zone        TEXT NOT NULL,
    PRIMARY KEY (provider_id, region_id, position),
    FOREIGN KEY (provider_id, region_id) REFERENCES catalog_regions (provider_id, id) ON DELETE CASCADE
);

-- One row; version increases with every catalog change so replicas know when to reload.
CREATE TABLE catalog_meta (
    singleton   BIGINT PRIMARY KEY CHECK (singleton = 1),
    version     BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
INSERT INTO catalog_meta (singleton, version, updated_at) VALUES (1, 0, 0);
