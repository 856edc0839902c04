-- Release 1.2, "zones you can build on": when each region was last refreshed from a cloud's
-- output (`catalog import --from`), and the account a zone mapping was taken from.

-- `YYYY-MM-DD`, NULL until an import shows the region.
ALTER TABLE catalog_regions ADD COLUMN refreshed_on TEXT;
-- An AWS account id or an Azure subscription id, NULL when the mapping's PUT did not say.
ALTER TABLE zone_mappings ADD COLUMN account TEXT;
