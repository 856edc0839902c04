/**
 * What the scenario's steps share (scenario.ts: steps 0 to 7; zones.ts: step 8): the environment,
 * the client with its bounded fetch, and the checks of an answer's status and body. Its own file
 * so that no source file grows past 600 lines.
 */

import { type Client, createClient, createConfig } from './generated/client/index.js';
import type { ErrorBody, ZoneList } from './generated/index.js';

export const TIMEOUT_MS = 10_000;
export const WRONG_KEY = 'apz_AAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export class WrongAnswer extends Error {}

export function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.log(`scenario.ts: ${name} is not set`);
    process.exit(2);
  }
  return value;
}

/** Every request gives up after TIMEOUT_MS. */
export const boundedFetch: typeof fetch = (input, init) =>
  fetch(input, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });

/**
 * A client for `baseUrl`; with `key`, the generated SDK puts it in X-API-KEY (the `apiKey`
 * security scheme of each operation, fed by the client's `auth` option). Without, no key header.
 */
export function client(baseUrl: string, key?: string): Client {
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
export type ListOutcome<Listing = ZoneList> =
  | { kind: 'listing'; listing: Listing; requestId: string | null; etag: string | null }
  | { kind: 'notModified'; etag: string | null; data: unknown; error: unknown }
  | { kind: 'error'; status: number; body: unknown };

/**
 * What `listZones`, `listProviders` and `listRegions` resolve to when they do not throw (the
 * default, `throwOnError: false`): their `Awaited<RequestResult<...Responses, ...Errors, false>>`,
 * whose only 200 body is `Listing` and whose every error body is `ErrorBody`.
 */
export type ListResult<Listing> = (
  | { data: Listing; error: undefined }
  | { data: undefined; error: ErrorBody }
) & { response: Response };

/**
 * The answer's status. When no answer came (connection refused, timed out), the generated client
 * returns `error` set to the fetch exception and `response` undefined, although its type says
 * `Response`: check before use.
 */
export function answered(result: { response: Response; error?: unknown }): Response {
  const response: Response | undefined = result.response;
  if (response === undefined) {
    throw new WrongAnswer(`no answer: ${String(result.error)}`);
  }
  return response;
}

export function listOutcome<Listing>(result: ListResult<Listing>): ListOutcome<Listing> {
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
export function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const body = value as Record<string, unknown>;
  return typeof body['error'] === 'string' && typeof body['error_code'] === 'string';
}

export function expectError(
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

export function expectListError<Listing>(
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
export function expectListing<Listing extends { data: unknown[]; status: string; id: string }>(
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
export function expectNotModified<Listing>(outcome: ListOutcome<Listing>, etag: string): string {
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
export function expectNoContent(result: { response: Response; error?: unknown }): void {
  const status = answered(result).status;
  if (status !== 204 || result.error !== undefined) {
    throw new WrongAnswer(`status ${status} (${JSON.stringify(result.error)}), want 204`);
  }
}

/** The region most steps list: aws/us-east-1. */
export const zonesPath = { providerId: 'aws', regionId: 'us-east-1' };
