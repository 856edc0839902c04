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
 *
 * This file holds steps 0 to 7 and `main`, and is the program that runs (`out/scenario.js`);
 * support.ts holds what the steps share (environment, client, answer checks), zones.ts step 8
 * (zone identities, zone mappings, offerings).
 */

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import {
  deleteApplicationProfile,
  listProviders,
  listRegions,
  listZoneIdentities,
  listZones,
  type NameScope,
  type ProviderList,
  type RegionList,
  type Visibility,
  type ZoneIdentity,
  type ZoneIdentityList,
  type ZoneList,
  type ZoneType,
} from './generated/index.js';
import {
  answered,
  client,
  env,
  expectError,
  expectListError,
  expectListing,
  expectNoContent,
  expectNotModified,
  listOutcome,
  type ListOutcome,
  WRONG_KEY,
  WrongAnswer,
  zonesPath,
} from './support.js';
import {
  stepDeleteMapping,
  stepGetMapping,
  stepIdentitiesAccount,
  stepIdentitiesGlobal,
  stepIdentitiesMapped,
  stepListMappings,
  stepOfferings,
  stepPutMapping,
  stepPutUnknownZone,
} from './zones.js';

const PROVIDERS = ['aws', 'gcp', 'azure'];

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
