/**
 * The appzone consumer scenario, through the TypeScript client that @hey-api/openapi-ts
 * (fetch client) generates from openapi.json.
 *
 * Run by `cargo xtask clients` against a fresh `appzone-server serve --demo`, which it describes
 * in the environment: APPZONE_BASE_URL, APPZONE_ADMIN_KEY, APPZONE_MEMBER_KEY,
 * APPZONE_DELETABLE_PROFILE, APPZONE_KEPT_PROFILE. Prints one line per step and exits 1 on the
 * first wrong answer. Type-checked with `tsc --strict` together with the generated code.
 */

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { type Client, createClient, createConfig } from './generated/client/index.js';
import {
  deleteApplicationProfile,
  type ErrorBody,
  listProviders,
  listRegions,
  listZones,
  type ProviderList,
  type RegionList,
  type ZoneList,
} from './generated/index.js';

const TIMEOUT_MS = 10_000;
const WRONG_KEY = 'apz_AAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const PROVIDERS = ['aws', 'gcp', 'azure'];

class WrongAnswer extends Error {}

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.log(`scenario.ts: ${name} is not set`);
    process.exit(2);
  }
  return value;
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

/** Step 0a: a stranger with only the document discovers the provider ids; returns the ETag. */
async function stepProviders(baseUrl: string, memberKey: string): Promise<string> {
  const outcome = listOutcome(await listProviders({ client: client(baseUrl, memberKey) }));
  if (outcome.kind !== 'listing') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 200 providers`);
  }
  const { listing, requestId, etag } = outcome;
  const providers: ProviderList = listing;
  if (JSON.stringify(providers.data) !== JSON.stringify(PROVIDERS)) {
    throw new WrongAnswer(
      `data ${JSON.stringify(providers.data)}, want ${JSON.stringify(PROVIDERS)}`,
    );
  }
  if (providers.status !== 'success') {
    throw new WrongAnswer(`status field ${JSON.stringify(providers.status)}, want "success"`);
  }
  if (providers.id !== requestId) {
    throw new WrongAnswer(`body id ${providers.id} != X-Request-Id header ${String(requestId)}`);
  }
  if (!etag) {
    throw new WrongAnswer('no ETag header');
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
  if (outcome.kind !== 'notModified') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 304`);
  }
  if (outcome.etag !== etag) {
    throw new WrongAnswer(`304 ETag ${String(outcome.etag)}, want ${etag}`);
  }
  console.log(
    `step 0b ok: 304 not modified (no exception; data ${JSON.stringify(outcome.data)}, ` +
      `error ${JSON.stringify(outcome.error)}, response.status 304)`,
  );
}

/** Step 0c: the region ids of a provider from step 0a. */
async function stepRegions(baseUrl: string, memberKey: string): Promise<void> {
  const outcome = listOutcome(
    await listRegions({ client: client(baseUrl, memberKey), path: { providerId: 'aws' } }),
  );
  if (outcome.kind !== 'listing') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 200 regions`);
  }
  const regions: RegionList = outcome.listing;
  const [first] = regions.data;
  if (first === undefined) {
    throw new WrongAnswer('data is empty');
  }
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
  if (outcome.kind !== 'listing') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 200 zones`);
  }
  const { listing: zones, requestId, etag } = outcome;
  if (zones.data.length === 0) {
    throw new WrongAnswer('data is empty');
  }
  if (zones.status !== 'success') {
    throw new WrongAnswer(`status field ${JSON.stringify(zones.status)}, want "success"`);
  }
  if (zones.id !== requestId) {
    throw new WrongAnswer(`body id ${zones.id} != X-Request-Id header ${String(requestId)}`);
  }
  if (!etag) {
    throw new WrongAnswer('no ETag header');
  }
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
  if (outcome.kind !== 'notModified') {
    throw new WrongAnswer(`got ${JSON.stringify(outcome)}, want 304`);
  }
  if (outcome.etag !== etag) {
    throw new WrongAnswer(`304 ETag ${String(outcome.etag)}, want ${etag}`);
  }
  console.log(
    `step 2 ok: 304 not modified (no exception; data ${JSON.stringify(outcome.data)}, ` +
      `error ${JSON.stringify(outcome.error)}, response.status 304)`,
  );
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
  let result = await deleteApplicationProfile({
    client: admin,
    path: { profileId: env('APPZONE_DELETABLE_PROFILE') },
  });
  if (answered(result).status !== 204 || result.error !== undefined) {
    throw new WrongAnswer(`status ${result.response.status} (${JSON.stringify(result.error)}), want 204`);
  }
  result = await deleteApplicationProfile({
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

/** Step 7: an error code added after the client was generated reaches the caller as an error. */
async function stepUnknownCode(label: string, status: number): Promise<void> {
  const body = JSON.stringify({ error: 'something new', error_code: 'brand_new_code' });
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
    let outcome: ListOutcome;
    try {
      outcome = listOutcome(
        await listZones({ client: client(`http://127.0.0.1:${port}`, 'apz_stand_in'), path: zonesPath }),
      );
    } catch (error) {
      throw new WrongAnswer(`a ${status} with error_code "brand_new_code" threw: ${String(error)}`);
    }
    expectListError(outcome, status, 'brand_new_code');
  } finally {
    server.closeAllConnections();
    server.close();
  }
  console.log(
    `step ${label} ok: ${status} with an unknown code reaches the caller as error {error_code: "brand_new_code"}`,
  );
}

async function main(): Promise<number> {
  const baseUrl = env('APPZONE_BASE_URL');
  const adminKey = env('APPZONE_ADMIN_KEY');
  const memberKey = env('APPZONE_MEMBER_KEY');
  let providersEtag = '';
  let etag = '';
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
