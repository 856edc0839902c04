-- Release 1.3, "what runs where": a zone mapping's instance-type offerings, placed on zone
-- identities, in their compact form (per region the types once, and per zone the indexes of
-- the types it offers); NULL when the mapping holds none.
ALTER TABLE zone_mappings ADD COLUMN offerings TEXT;
