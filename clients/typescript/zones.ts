/**
 * Step 8 of the scenario (see scenario.ts): zone identities, zone mappings and instance-type
 * offerings (8a to 8i). Its own file so that no source file grows past 600 lines.
 */

import { readFileSync } from 'node:fs';

import {
  deleteZoneMapping,
  getZoneMapping,
  type InstanceTypeList,
  listInstanceTypes,
  listZoneIdentities,
  listZoneMappings,
  putZoneMapping,
  type ZoneIdentityList,
  type ZoneMappingAnswer,
  type ZoneMappingRequest,
} from './generated/index.js';
import {
  answered,
  client,
  env,
  expectError,
  expectListing,
  expectNoContent,
  listOutcome,
  WrongAnswer,
  zonesPath,
} from './support.js';

const DEMO_MAPPING = 'prod';
const MAPPING = 'scenario-ts';

/**
 * What `aws ec2 describe-availability-zones --all-availability-zones --region us-east-1 --output
 * json` prints, for a constructed account (its letters are no real account's): six availability
 * zones and a local zone, which the service skips. The Python scenario reads the same file.
 */
function describeOutput(): string {
  return readFileSync(env('APPZONE_DESCRIBE_OUTPUT'), 'utf8');
}

/** A zone identity listing that must answer 200 with zones, `id` == `X-Request-Id`. */
async function identities(
  baseUrl: string,
  key: string,
  path: { providerId: string; regionId: string },
  mapping?: string,
): Promise<ZoneIdentityList> {
  const outcome = listOutcome(
    await listZoneIdentities({
      client: client(baseUrl, key),
      path,
      ...(mapping === undefined ? {} : { query: { mapping: [mapping] } }),
    }),
  );
  return expectListing<ZoneIdentityList>(outcome, 'identities').listing;
}

/** The pairs of a listing or a mapping, zone id -> zone name, in a stable order. */
function pairs(zones: Array<{ zone_id: string; zone_name: string | null }>): string {
  const entries = zones.map((zone) => [zone.zone_id, zone.zone_name] as const);
  return JSON.stringify(entries.sort(([a], [b]) => a.localeCompare(b)));
}

/** Step 8a: aws/us-east-1 names zones per account: identities, and no name guessed. */
export async function stepIdentitiesAccount(baseUrl: string, memberKey: string): Promise<void> {
  const listing = await identities(baseUrl, memberKey, zonesPath);
  for (const zone of listing.data) {
    if (
      zone.name_scope !== 'account' ||
      zone.zone_name !== null ||
      !zone.zone_id.startsWith('use1-az')
    ) {
      throw new WrongAnswer(
        `${JSON.stringify(zone)}: want a use1 AZ ID, name_scope "account", zone_name null`,
      );
    }
  }
  if (listing.mapping !== null) {
    throw new WrongAnswer(`mapping ${JSON.stringify(listing.mapping)}, want null`);
  }
  const ids = listing.data.map((zone) => zone.zone_id);
  console.log(
    `step 8a ok: 200, aws/us-east-1 identities ${JSON.stringify(ids)}, ` +
      'name_scope account, names null',
  );
}

/** Step 8b: a GCP zone's name is its identity. */
export async function stepIdentitiesGlobal(baseUrl: string, memberKey: string): Promise<void> {
  const listing = await identities(baseUrl, memberKey, { providerId: 'gcp', regionId: 'us-central1' });
  for (const zone of listing.data) {
    if (zone.name_scope !== 'global' || zone.zone_name !== zone.zone_id) {
      throw new WrongAnswer(`${JSON.stringify(zone)}: want name_scope "global", zone_name == zone_id`);
    }
  }
  console.log(`step 8b ok: 200, ${listing.data.length} gcp/us-central1 zones, name_scope global`);
}

/** Step 8c: ?mapping=prod fills the names from the demo's mapping; returns its pairs. */
export async function stepIdentitiesMapped(baseUrl: string, memberKey: string): Promise<string> {
  const listing = await identities(baseUrl, memberKey, zonesPath, DEMO_MAPPING);
  if (listing.mapping?.id !== DEMO_MAPPING) {
    throw new WrongAnswer(`mapping ${JSON.stringify(listing.mapping)}, want id "${DEMO_MAPPING}"`);
  }
  const names = listing.data.map((zone) => zone.zone_name);
  const unnamed = names.some((name) => name === null || !name.startsWith('us-east-1'));
  if (unnamed || new Set(names).size !== names.length) {
    throw new WrongAnswer(`names ${JSON.stringify(names)}: want distinct us-east-1 zone names`);
  }
  const mapped = pairs(listing.data);
  console.log(`step 8c ok: 200, mapping.id == "${listing.mapping.id}", names ${mapped}`);
  return mapped;
}

/** Step 8d: the organization's mappings hold the demo's. */
export async function stepListMappings(baseUrl: string, memberKey: string): Promise<void> {
  const outcome = listOutcome(await listZoneMappings({ client: client(baseUrl, memberKey) }));
  if (outcome.kind !== 'listing') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 200 mappings`);
  }
  const demo = outcome.listing.data.find((mapping) => mapping.id === DEMO_MAPPING);
  if (demo?.provider !== 'aws' || JSON.stringify(demo.regions) !== '["us-east-1"]') {
    throw new WrongAnswer(`data ${JSON.stringify(outcome.listing.data)}: no aws "${DEMO_MAPPING}"`);
  }
  console.log(`step 8d ok: 200, mappings ${JSON.stringify(outcome.listing.data.map((m) => m.id))}`);
}

/** Step 8e: the demo's mapping, whose pairs are the names of step 8c. */
export async function stepGetMapping(baseUrl: string, memberKey: string, mapped: string): Promise<void> {
  const outcome = listOutcome(
    await getZoneMapping({ client: client(baseUrl, memberKey), path: { mappingId: DEMO_MAPPING } }),
  );
  if (outcome.kind !== 'listing') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 200 mapping`);
  }
  const mapping: ZoneMappingAnswer = outcome.listing;
  const stored = pairs(mapping.data.regions.flatMap((region) => region.zones));
  if (mapping.data.id !== DEMO_MAPPING || stored !== mapped) {
    throw new WrongAnswer(`${JSON.stringify(mapping.data)}: want "${DEMO_MAPPING}" pairing ${mapped}`);
  }
  const count = mapping.data.regions[0]?.zones.length;
  console.log(`step 8e ok: 200, ${DEMO_MAPPING} pairs ${count} zones as step 8c named them`);
}

/** A PUT body from a describe-availability-zones output as the AWS CLI printed it. */
function mappingRequest(output: string): ZoneMappingRequest {
  const parsed: ZoneMappingRequest['output'] = JSON.parse(output);
  return { provider: 'aws', label: 'scenario account', output: parsed };
}

/**
 * Step 8f: store a mapping from the CLI's output: 201, the same again: 200; then the identities
 * with ?mapping= carry the output's names.
 */
export async function stepPutMapping(baseUrl: string, adminKey: string, memberKey: string): Promise<void> {
  const output = describeOutput();
  const body = mappingRequest(output);
  const zones: Array<{ ZoneId: string; ZoneName: string; ZoneType: string }> =
    JSON.parse(output).AvailabilityZones;
  // Every zone of the output is kept, the Local Zone included; the listing shows the
  // availability zones unless asked for other types.
  const want = pairs(zones.map((zone) => ({ zone_id: zone.ZoneId, zone_name: zone.ZoneName })));
  const wantListed = pairs(
    zones
      .filter((zone) => zone.ZoneType === 'availability-zone')
      .map((zone) => ({ zone_id: zone.ZoneId, zone_name: zone.ZoneName })),
  );
  const admin = client(baseUrl, adminKey);
  for (const status of [201, 200]) {
    const result = await putZoneMapping({ client: admin, path: { mappingId: MAPPING }, body });
    const got = answered(result).status;
    if (got !== status || result.data === undefined) {
      throw new WrongAnswer(`status ${got} (${JSON.stringify(result.error)}), want ${status}`);
    }
    const stored = pairs(result.data.data.regions.flatMap((region) => region.zones));
    if (result.data.data.id !== MAPPING || stored !== want || result.data.skipped.length !== 0) {
      throw new WrongAnswer(`stored ${JSON.stringify(result.data)}, want "${MAPPING}" with ${want}, none skipped`);
    }
  }
  const named = pairs((await identities(baseUrl, memberKey, zonesPath, MAPPING)).data);
  if (named !== wantListed) {
    throw new WrongAnswer(`?mapping=${MAPPING} names ${named}, want ${wantListed}`);
  }
  console.log(`step 8f ok: 201 then 200 for ${MAPPING} (its Local Zone kept); ?mapping= names as stored`);
}

/** Step 8g: an AZ ID the catalog does not know is skipped and named; the rest is stored (200). */
export async function stepPutUnknownZone(baseUrl: string, adminKey: string): Promise<void> {
  const result = await putZoneMapping({
    client: client(baseUrl, adminKey),
    path: { mappingId: MAPPING },
    body: mappingRequest(describeOutput().replace('"use1-az3"', '"use1-az9"')),
  });
  const got = answered(result).status;
  if (got !== 200 || result.data === undefined) {
    throw new WrongAnswer(`status ${got} (${JSON.stringify(result.error)}), want 200`);
  }
  const skipped = result.data.skipped.map((zone) => `${zone.region}/${zone.zone_id}`);
  const kept = result.data.data.regions.flatMap((region) => region.zones.map((zone) => zone.zone_id));
  if (skipped.join(',') !== 'us-east-1/use1-az9' || kept.includes('use1-az9')) {
    throw new WrongAnswer(`skipped ${skipped}, kept ${kept}: want use1-az9 skipped`);
  }
  console.log(`step 8g ok: 200, use1-az9 skipped: ${result.data.skipped[0]?.reason}`);
}

/**
 * Step 8h: store the mapping again with its account's instance-type offerings (as `aws ec2
 * describe-instance-type-offerings --location-type availability-zone-id` prints them): the
 * answer counts them; ?offers= keeps the zones that offer the type; the instance-type listing
 * gives it with its zones.
 */
export async function stepOfferings(baseUrl: string, adminKey: string, memberKey: string): Promise<void> {
  const output = describeOutput();
  const zones: Array<{ ZoneId: string; ZoneType: string }> = JSON.parse(output).AvailabilityZones;
  const offered = zones
    .filter((zone) => zone.ZoneType === 'availability-zone')
    .slice(0, 2)
    .map((zone) => zone.ZoneId)
    .sort();
  const body: ZoneMappingRequest = {
    ...mappingRequest(output),
    offerings: {
      InstanceTypeOfferings: offered.map((zone) => ({
        InstanceType: 'p5.48xlarge',
        LocationType: 'availability-zone-id',
        Location: zone,
      })),
    },
  };
  const result = await putZoneMapping({ client: client(baseUrl, adminKey), path: { mappingId: MAPPING }, body });
  const got = answered(result).status;
  const counts = JSON.stringify(result.data?.data.offerings ?? null);
  if (got !== 200 || counts !== '[{"region":"us-east-1","instance_types":1,"offerings":2}]') {
    throw new WrongAnswer(`status ${got}, offerings ${counts} (${JSON.stringify(result.error)}): want 200, 1 type, 2 offerings`);
  }
  const member = client(baseUrl, memberKey);
  const query = { mapping: [MAPPING], offers: ['p5.48xlarge'] };
  const listing = listOutcome(await listZoneIdentities({ client: member, path: zonesPath, query }));
  const kept = expectListing<ZoneIdentityList>(listing, 'identities').listing.data.map((zone) => zone.zone_id).sort();
  if (kept.join(',') !== offered.join(',')) {
    throw new WrongAnswer(`?offers=p5.48xlarge kept ${kept}, want ${offered}`);
  }
  const types = listOutcome(await listInstanceTypes({ client: member, path: zonesPath, query: { mapping: MAPPING } }));
  const listed = expectListing<InstanceTypeList>(types, 'instance types').listing.data.map(
    (type) => `${type.instance_type}:${[...type.zone_ids].sort().join('+')}`,
  );
  if (listed.join(',') !== `p5.48xlarge:${offered.join('+')}`) {
    throw new WrongAnswer(`instance types ${listed}, want p5.48xlarge in ${offered}`);
  }
  console.log(`step 8h ok: 200 with 1 type in 2 zones; ?offers= and instance-types give ${offered}`);
}

/** Step 8i: delete the mapping (204); then it is gone: 404 for a delete and a read. */
export async function stepDeleteMapping(baseUrl: string, adminKey: string): Promise<void> {
  const admin = client(baseUrl, adminKey);
  const path = { mappingId: MAPPING };
  expectNoContent(await deleteZoneMapping({ client: admin, path }));
  const again = await deleteZoneMapping({ client: admin, path });
  expectError(answered(again).status, again.error, 404, 'zone_mapping_not_found');
  const read = await getZoneMapping({ client: admin, path });
  expectError(answered(read).status, read.error, 404, 'zone_mapping_not_found');
  console.log('step 8i ok: 204, then 404 zone_mapping_not_found for a delete and a read');
}
