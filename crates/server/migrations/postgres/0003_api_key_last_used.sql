-- When each key last authenticated a request (Unix milliseconds), approximate: the server
-- writes it at most once a minute per key. NULL until the key is first used.
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
