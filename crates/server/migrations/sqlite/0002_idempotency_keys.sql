-- The outcome of each DELETE sent with an Idempotency-Key, kept for 24 hours per organization so
-- that a retry with the same key gets the same answer. Written in the delete's own transaction.
CREATE TABLE idempotency_keys (
    org_id      TEXT NOT NULL,
    idem_key    TEXT NOT NULL,
    profile_id  TEXT NOT NULL,
    status      BIGINT NOT NULL,
    request_id  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (org_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
