-- Changes to what servers hold in memory (API keys, the catalog), in commit order, so that every
-- server process drops or reloads what a change names: it reads the rows after the last one it
-- applied, on a short interval and as soon as a NOTIFY on channel appzone_changes says there is
-- one. Rows older than an hour are purged.
CREATE TABLE change_log (
    seq BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    at BIGINT NOT NULL
);
