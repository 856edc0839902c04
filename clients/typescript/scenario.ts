/**
 * The appzone consumer scenario, through the TypeScript client that @hey-api/openapi-ts
 * (fetch client) generates from openapi.json.
 *
 * Run by `cargo xtask clients` against a fresh `appzone-server serve --demo`, which it describes
 * in the environment: APPZONE_BASE_URL, APPZONE_ADMIN_KEY, APPZONE_MEMBER_KEY,
 * APPZONE_DELETABLE_PROFILE, APPZONE_KEPT_PROFILE (the demo also holds the zone mapping `prod`, the
 * document's example id); APPZONE_DESCRIBE_OUTPUT names the AWS CLI output step 8f stores
 * (`clients/aws-describe-availability-zones.json`). Prints one line per step and exits 1 on the
 * first wrong answer.
 * Type-checked with `tsc --strict` together with the generated code.
 */

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { type Client, createClient, createConfig } from './generated/client/index.js';
import {
  deleteApplicationProfile,
  deleteZoneMapping,
  type ErrorBody,
  getZoneMapping,
  type InstanceTypeList,
  listInstanceTypes,
  listProviders,
  listRegions,
  listZoneIdentities,
  listZoneMappings,
  listZones,
  type NameScope,
  type ProviderList,
  putZoneMapping,
  type RegionList,
  type Visibility,
  type ZoneIdentity,
  type ZoneIdentityList,
  type ZoneList,
  type ZoneMappingAnswer,
  type ZoneMappingRequest,
  type ZoneType,
} from './generated/index.js';

const TIMEOUT_MS = 10_000;
const WRONG_KEY = 'apz_AAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const PROVIDERS = ['aws', 'gcp', 'azure'];
const DEMO_MAPPING = 'prod';
const MAPPING = 'scenario-ts';


class WrongAnswer extends Error {}

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.log(`scenario.ts: ${name} is not set`);
    process.exit(2);
  }
  return value;
}

/**
 * What `aws ec2 describe-availability-zones --all-availability-zones --region us-east-1 --output
 * json` prints, for a constructed account (its letters are no real account's): six availability
 * zones and a local zone, which the service skips. The Python scenario reads the same file.
 */
function describeOutput(): string {
  return readFileSync(env('APPZONE_DESCRIBE_OUTPUT'), 'utf8');
}

/** Every request gives up after TIMEOUT_MS. */
const boundedFetch: typeof fetch = (input, init) =>
  fetch(input, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });

/**
 * A client for `baseUrl`; with `key`, the generated SDK puts it in X-API-KEY (the `apiKey`
 * security scheme of each operation, fed by the client's `auth` option). Without, no key header.
 */
function client(baseUrl: string, key?: string): Client {
  return createClient(
    createConfig({ baseUrl, fetch: boundedFetch, ...(key === undefined ? {} : { auth: key }) }),
  );
}

/**
 * What a listing answered, as the program sees it: `Listing` is the 200 body (`ZoneList`,
 * `ProviderList`, `RegionList`: the same envelope). The generated client has no 304 in its
 * types: a 304 is not `response.ok`, so it lands in `error`, typed as the error body but holding
 * `{}` (the empty body). `listOutcome` looks at the status first and names it.
 */
type ListOutcome<Listing = ZoneList> =
  | { kind: 'listing'; listing: Listing; requestId: string | null; etag: string | null }
  | { kind: 'notModified'; etag: string | null; data: unknown; error: unknown }
  | { kind: 'error'; status: number; body: unknown };

/**
 * What `listZones`, `listProviders` and `listRegions` resolve to when they do not throw (the
 * default, `throwOnError: false`): their `Awaited<RequestResult<...Responses, ...Errors, false>>`,
 * whose only 200 body is `Listing` and whose every error body is `ErrorBody`.
 */
type ListResult<Listing> = (
  | { data: Listing; error: undefined }
  | { data: undefined; error: ErrorBody }
) & { response: Response };

/**
 * The answer's status. When no answer came (connection refused, timed out), the generated client
 * returns `error` set to the fetch exception and `response` undefined, although its type says
 * `Response`: check before use.
 */
function answered(result: { response: Response; error?: unknown }): Response {
  const response: Response | undefined = result.response;
  if (response === undefined) {
    throw new WrongAnswer(`no answer: ${String(result.error)}`);
  }
  return response;
}

function listOutcome<Listing>(result: ListResult<Listing>): ListOutcome<Listing> {
  const response = answered(result);
  if (response.status === 304) {
    return {
      kind: 'notModified',
      etag: response.headers.get('ETag'),
      data: result.data,
      error: result.error,
    };
  }
  if (result.error === undefined) {
    return {
      kind: 'listing',
      listing: result.data,
      requestId: response.headers.get('X-Request-Id'),
      etag: response.headers.get('ETag'),
    };
  }
  return { kind: 'error', status: response.status, body: result.error };
}

/** The decoded error body, checked at run time (the generated client does not validate). */
function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const body = value as Record<string, unknown>;
  return typeof body['error'] === 'string' && typeof body['error_code'] === 'string';
}

function expectError(
  status: number,
  body: unknown,
  wantStatus: number,
  wantCode: string,
): ErrorBody {
  if (status !== wantStatus) {
    throw new WrongAnswer(`status ${status}, want ${wantStatus}`);
  }
  if (!isErrorBody(body)) {
    throw new WrongAnswer(`${wantStatus} decoded as ${JSON.stringify(body)}, want an ErrorBody`);
  }
  // `error_code` is typed as the enum of known codes; read it as the string it is on the wire.
  const code: string = body.error_code;
  if (code !== wantCode) {
    throw new WrongAnswer(`error_code ${JSON.stringify(code)}, want ${JSON.stringify(wantCode)}`);
  }
  return body;
}

function expectListError<Listing>(
  outcome: ListOutcome<Listing>,
  wantStatus: number,
  wantCode: string,
): ErrorBody {
  if (outcome.kind !== 'error') {
    throw new WrongAnswer(`got ${outcome.kind}, want a ${wantStatus} error`);
  }
  return expectError(outcome.status, outcome.body, wantStatus, wantCode);
}

/**
 * Checks a listing's 200: `data` not empty, `status` "success", the body's `id` equal to the
 * X-Request-Id header, and an ETag header. Returns the listing and its ETag.
 */
function expectListing<Listing extends { data: unknown[]; status: string; id: string }>(
  outcome: ListOutcome<Listing>,
  what: string,
): { listing: Listing; etag: string } {
  if (outcome.kind !== 'listing') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 200 ${what}`);
  }
  const { listing, requestId, etag } = outcome;
  if (listing.data.length === 0) {
    throw new WrongAnswer('data is empty');
  }
  if (listing.status !== 'success') {
    throw new WrongAnswer(`status field ${JSON.stringify(listing.status)}, want "success"`);
  }
  if (listing.id !== requestId) {
    throw new WrongAnswer(`body id ${listing.id} != X-Request-Id header ${String(requestId)}`);
  }
  if (!etag) {
    throw new WrongAnswer('no ETag header');
  }
  return { listing, etag };
}

/** Checks a 304 answering `If-None-Match: etag`; returns what the client made of it. */
function expectNotModified<Listing>(outcome: ListOutcome<Listing>, etag: string): string {
  if (outcome.kind !== 'notModified') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 304`);
  }
  if (outcome.etag !== etag) {
    throw new WrongAnswer(`304 ETag ${String(outcome.etag)}, want ${etag}`);
  }
  return (
    `304 not modified (no exception; data ${JSON.stringify(outcome.data)}, ` +
    `error ${JSON.stringify(outcome.error)}, response.status 304)`
  );
}

/** Checks a 204: the status, and no error body. */
function expectNoContent(result: { response: Response; error?: unknown }): void {
  const status = answered(result).status;
  if (status !== 204 || result.error !== undefined) {
    throw new WrongAnswer(`status ${status} (${JSON.stringify(result.error)}), want 204`);
  }
}

/** Step 0a: a stranger with only the document discovers the provider ids; returns the ETag. */
async function stepProviders(baseUrl: string, memberKey: string): Promise<string> {
  const outcome = listOutcome(await listProviders({ client: client(baseUrl, memberKey) }));
  const { listing: providers, etag } = expectListing<ProviderList>(outcome, 'providers');
  if (JSON.stringify(providers.data) !== JSON.stringify(PROVIDERS)) {
    throw new WrongAnswer(
      `data ${JSON.stringify(providers.data)}, want ${JSON.stringify(PROVIDERS)}`,
    );
  }
  console.log(
    `step 0a ok: 200, providers ${JSON.stringify(providers.data)}, ` +
      `id == X-Request-Id == ${providers.id}, ETag ${etag}`,
  );
  return etag;
}

/** Step 0b: If-None-Match with the ETag of step 0a gives 304, as in step 2. */
async function stepProvidersNotModified(
  baseUrl: string,
  memberKey: string,
  etag: string,
): Promise<void> {
  const outcome = listOutcome(
    await listProviders({ client: client(baseUrl, memberKey), headers: { 'If-None-Match': etag } }),
  );
  console.log(`step 0b ok: ${expectNotModified(outcome, etag)}`);
}

/** Step 0c: the region ids of a provider from step 0a. */
async function stepRegions(baseUrl: string, memberKey: string): Promise<void> {
  const outcome = listOutcome(
    await listRegions({ client: client(baseUrl, memberKey), path: { providerId: 'aws' } }),
  );
  const regions: RegionList = expectListing(outcome, 'regions').listing;
  const first = regions.data[0];
  if (!regions.data.includes('us-east-1')) {
    throw new WrongAnswer(`data ${JSON.stringify(regions.data)} has no "us-east-1"`);
  }
  console.log(
    `step 0c ok: 200, ${regions.data.length} aws regions from ${first}, us-east-1 among them`,
  );
}

/** Step 0d: the regions of an unknown provider; the message names the close one. */
async function stepRegionsBadProvider(baseUrl: string, memberKey: string): Promise<void> {
  const outcome = listOutcome(
    await listRegions({ client: client(baseUrl, memberKey), path: { providerId: 'awz' } }),
  );
  const body = expectListError(outcome, 400, 'invalid_provider');
  const hint = 'did you mean "aws"';
  if (!body.error.includes(hint)) {
    throw new WrongAnswer(
      `message ${JSON.stringify(body.error)} does not contain ${JSON.stringify(hint)}`,
    );
  }
  console.log(`step 0d ok: 400 invalid_provider: ${body.error}`);
}

const zonesPath = { providerId: 'aws', regionId: 'us-east-1' };

async function stepList(baseUrl: string, memberKey: string): Promise<string> {
  const outcome = listOutcome(await listZones({ client: client(baseUrl, memberKey), path: zonesPath }));
  const { listing: zones, etag } = expectListing<ZoneList>(outcome, 'zones');
  console.log(
    `step 1 ok: 200, ${zones.data.length} zones, id == X-Request-Id == ${zones.id}, ETag ${etag}`,
  );
  return etag;
}

async function stepNotModified(baseUrl: string, memberKey: string, etag: string): Promise<void> {
  const outcome = listOutcome(
    await listZones({
      client: client(baseUrl, memberKey),
      path: zonesPath,
      headers: { 'If-None-Match': etag },
    }),
  );
  console.log(`step 2 ok: ${expectNotModified(outcome, etag)}`);
}

/** Steps 3 and 4: a listing the service refuses, with its status and code. */
async function stepListRefused(
  step: string,
  baseUrl: string,
  memberKey: string,
  path: { providerId: string; regionId: string },
  status: number,
  code: string,
): Promise<void> {
  const outcome = listOutcome(await listZones({ client: client(baseUrl, memberKey), path }));
  expectListError(outcome, status, code);
  console.log(`step ${step} ok: ${status} ${code}`);
}

async function stepKeys(baseUrl: string): Promise<void> {
  let outcome = listOutcome(await listZones({ client: client(baseUrl), path: zonesPath }));
  expectListError(outcome, 401, 'missing_api_key');
  outcome = listOutcome(await listZones({ client: client(baseUrl, WRONG_KEY), path: zonesPath }));
  expectListError(outcome, 401, 'invalid_api_key');
  console.log('step 5 ok: 401 missing_api_key without a key, 401 invalid_api_key with a wrong one');
}

async function stepDelete(baseUrl: string, adminKey: string, memberKey: string): Promise<void> {
  const admin = client(baseUrl, adminKey);
  const member = client(baseUrl, memberKey);
  expectNoContent(
    await deleteApplicationProfile({
      client: admin,
      path: { profileId: env('APPZONE_DELETABLE_PROFILE') },
    }),
  );
  let result = await deleteApplicationProfile({
    client: member,
    path: { profileId: env('APPZONE_KEPT_PROFILE') },
  });
  expectError(answered(result).status, result.error, 403, 'forbidden');
  result = await deleteApplicationProfile({
    client: admin,
    path: { profileId: 'prof_does_not_exist' },
  });
  expectError(answered(result).status, result.error, 404, 'profile_not_found');
  console.log('step 6 ok: 204 as admin, 403 forbidden as member, 404 profile_not_found');
}

/** Calls `call` with the URL of a server that answers every request with `status` and `answer`. */
async function withStandIn<T>(
  status: number,
  answer: unknown,
  call: (url: string) => Promise<T>,
): Promise<T> {
  const body = JSON.stringify(answer);
  const server = createServer((_request, response) => {
    response.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': 'stand-in',
    });
    response.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    return await call(`http://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** Step 7: an error code added after the client was generated reaches the caller as an error. */
async function stepUnknownCode(label: string, status: number): Promise<void> {
  const unknown = { error: 'something new', error_code: 'brand_new_code' };
  let outcome: ListOutcome;
  try {
    outcome = await withStandIn(status, unknown, async (url) =>
      listOutcome(await listZones({ client: client(url, 'apz_stand_in'), path: zonesPath })),
    );
  } catch (error) {
    throw new WrongAnswer(`a ${status} with error_code "brand_new_code" threw: ${String(error)}`);
  }
  expectListError(outcome, status, 'brand_new_code');
  console.log(
    `step ${label} ok: ${status} with an unknown code reaches the caller as error {error_code: "brand_new_code"}`,
  );
}

/**
 * Step 7c: `name_scope`, `zone_type` and `visibility` are open sets (plain strings in the
 * document): values this program does not know type-check (the `const`s below would not compile
 * against a union of literals), and an identity listing carrying them decodes, keeping them.
 */
async function stepOpenStringSets(): Promise<void> {
  const scope: NameScope = 'brand_new_scope';
  const zoneType: ZoneType = 'brand-new-zone-type';
  const visibility: Visibility = 'brand_new_visibility';
  const zone: ZoneIdentity = {
    zone_id: 'use1-az1',
    zone_name: null,
    name_scope: scope,
    zone_type: zoneType,
    visibility,
    parent_zone_id: null,
    network_border_group: null,
    names: [],
  };
  const listing: ZoneIdentityList = {
    data: [zone],
    id: 'stand-in',
    mapping: null,
    mappings: [],
    message: '1 zone',
    source: { compiled_on: null, refreshed_on: null, references: [] },
    status: 'success',
  };
  const outcome = await withStandIn(200, listing, async (url) =>
    listOutcome(await listZoneIdentities({ client: client(url, 'apz_stand_in'), path: zonesPath })),
  );
  if (outcome.kind !== 'listing' || JSON.stringify(outcome.listing.data) !== JSON.stringify([zone])) {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want the stand-in's listing`);
  }
  console.log('step 7c ok: unknown name_scope, zone_type and visibility values decode as strings');
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
async function stepIdentitiesAccount(baseUrl: string, memberKey: string): Promise<void> {
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
async function stepIdentitiesGlobal(baseUrl: string, memberKey: string): Promise<void> {
  const listing = await identities(baseUrl, memberKey, { providerId: 'gcp', regionId: 'us-central1' });
  for (const zone of listing.data) {
    if (zone.name_scope !== 'global' || zone.zone_name !== zone.zone_id) {
      throw new WrongAnswer(`${JSON.stringify(zone)}: want name_scope "global", zone_name == zone_id`);
    }
  }
  console.log(`step 8b ok: 200, ${listing.data.length} gcp/us-central1 zones, name_scope global`);
}

/** Step 8c: ?mapping=prod fills the names from the demo's mapping; returns its pairs. */
async function stepIdentitiesMapped(baseUrl: string, memberKey: string): Promise<string> {
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
async function stepListMappings(baseUrl: string, memberKey: string): Promise<void> {
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
async function stepGetMapping(baseUrl: string, memberKey: string, mapped: string): Promise<void> {
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
async function stepPutMapping(baseUrl: string, adminKey: string, memberKey: string): Promise<void> {
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
async function stepPutUnknownZone(baseUrl: string, adminKey: string): Promise<void> {
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
async function stepOfferings(baseUrl: string, adminKey: string, memberKey: string): Promise<void> {
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
async function stepDeleteMapping(baseUrl: string, adminKey: string): Promise<void> {
  const admin = client(baseUrl, adminKey);
  const path = { mappingId: MAPPING };
  expectNoContent(await deleteZoneMapping({ client: admin, path }));
  const again = await deleteZoneMapping({ client: admin, path });
  expectError(answered(again).status, again.error, 404, 'zone_mapping_not_found');
  const read = await getZoneMapping({ client: admin, path });
  expectError(answered(read).status, read.error, 404, 'zone_mapping_not_found');
  console.log('step 8i ok: 204, then 404 zone_mapping_not_found for a delete and a read');
}

async function main(): Promise<number> {
  const baseUrl = env('APPZONE_BASE_URL');
  const adminKey = env('APPZONE_ADMIN_KEY');
  const memberKey = env('APPZONE_MEMBER_KEY');
  let providersEtag = '';
  let etag = '';
  let mapped = '';
  const steps: Array<[string, () => Promise<void>]> = [
    ['0a', async () => {
      providersEtag = await stepProviders(baseUrl, memberKey);
    }],
    ['0b', () => stepProvidersNotModified(baseUrl, memberKey, providersEtag)],
    ['0c', () => stepRegions(baseUrl, memberKey)],
    ['0d', () => stepRegionsBadProvider(baseUrl, memberKey)],
    ['1', async () => {
      etag = await stepList(baseUrl, memberKey);
    }],
    ['2', () => stepNotModified(baseUrl, memberKey, etag)],
    [
      '3',
      () =>
        stepListRefused('3', baseUrl, memberKey, { providerId: 'awz', regionId: 'us-east-1' }, 400, 'invalid_provider'),
    ],
    [
      '4',
      () =>
        stepListRefused('4', baseUrl, memberKey, { providerId: 'aws', regionId: 'us-east-9' }, 404, 'region_not_found'),
    ],
    ['5', () => stepKeys(baseUrl)],
    ['6', () => stepDelete(baseUrl, adminKey, memberKey)],
    ['7a', () => stepUnknownCode('7a', 400)],
    ['7b', () => stepUnknownCode('7b', 409)],
    ['7c', () => stepOpenStringSets()],
    ['8a', () => stepIdentitiesAccount(baseUrl, memberKey)],
    ['8b', () => stepIdentitiesGlobal(baseUrl, memberKey)],
    ['8c', async () => {
      mapped = await stepIdentitiesMapped(baseUrl, memberKey);
    }],
    ['8d', () => stepListMappings(baseUrl, memberKey)],
    ['8e', () => stepGetMapping(baseUrl, memberKey, mapped)],
    ['8f', () => stepPutMapping(baseUrl, adminKey, memberKey)],
    ['8g', () => stepPutUnknownZone(baseUrl, adminKey)],
    ['8h', () => stepOfferings(baseUrl, adminKey, memberKey)],
    ['8i', () => stepDeleteMapping(baseUrl, adminKey)],
  ];
  for (const [label, step] of steps) {
    try {
      await step();
    } catch (error) {
      const text = error instanceof WrongAnswer ? error.message : String(error);
      console.log(`step ${label} FAILED: ${text}`);
      return 1;
    }
  }
  console.log('typescript scenario: all steps passed');
  return 0;
}

// Nothing may hang: the whole scenario gives up after a minute.
setTimeout(() => {
  console.log('typescript scenario FAILED: still running after 60 s');
  process.exit(1);
}, 60_000).unref();

process.exitCode = await main();
