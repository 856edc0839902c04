// The /docs page (Swagger UI over /openapi.json, served by appzone-server from its binary)
// used by a portal reader in headless Chromium: authorize, try the zone listing and profile
// deletions out, and check what the page sends and where.
//
// Run by `cargo xtask browser`, which starts `serve --demo` and passes what it seeded:
//   APPZONE_BASE_URL           http://127.0.0.1:<port> (no trailing slash)
//   APPZONE_ADMIN_KEY          an admin key of the demo organization
//   APPZONE_MEMBER_KEY         a member key of the same organization
//   APPZONE_DELETABLE_PROFILE  a live profile (deleted here: 204)
//   APPZONE_KEPT_PROFILE       another live profile (a member tries to delete it: 403)
// Optional:
//   CHROMIUM                   the browser binary (default /usr/bin/chromium)
//   BROWSER_OUT_DIR            where docs.png goes (default <repo>/target/browser)
//   BROWSER_CSP                a Content-Security-Policy to add to the /docs page and its
//                              assets (for trying a policy out before the server sends one)
//
// Every check is recorded and the flow goes on after a failed one where it can, so one run
// shows every point that fails. The last line is `browser: N passed, N failed`; the exit code
// is 1 when anything failed.

import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const WAIT_MS = 10_000; // any single wait
const TOTAL_MS = 120_000; // the whole test

function need(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`browser: ${name} is not set (run through \`cargo xtask browser\`)`);
    process.exit(2);
  }
  return value;
}

const base = need('APPZONE_BASE_URL').replace(/\/+$/, '');
const origin = new URL(base).origin;
const adminKey = need('APPZONE_ADMIN_KEY');
const memberKey = need('APPZONE_MEMBER_KEY');
const deletableProfile = need('APPZONE_DELETABLE_PROFILE');
const keptProfile = need('APPZONE_KEPT_PROFILE');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const outDir = process.env.BROWSER_OUT_DIR || path.join(here, '..', '..', 'target', 'browser');
const screenshot = path.join(outDir, 'docs.png');
const csp = process.env.BROWSER_CSP || '';
for (const name of ['docs.png', 'docs-top.png', 'docs-last-response.png']) {
  rmSync(path.join(outDir, name), { force: true });
}

const ZONES = '/api/v1/providers/{providerId}/regions/{regionId}/zones';
const PROFILE = '/api/v1/applications/profiles/{profileId}';
const HEADER_PARAMS = ['X-Request-Id', 'If-None-Match'];

// ---- results ---------------------------------------------------------------------------

const results = [];
function check(name, ok, seen) {
  results.push({ name, ok });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `\n       seen: ${seen}`}`);
  return ok;
}
/** Runs one step; an exception (a timeout, a missing element) fails it and the run goes on. */
async function step(name, body) {
  try {
    await body();
  } catch (err) {
    check(name, false, String(err?.message ?? err).split('\n')[0]);
  }
}

// ---- what the page does ----------------------------------------------------------------

const requests = []; // every request the page made, in order
const foreign = []; // those to another origin (blocked: they never leave the browser)
const consoleErrors = [];
// Chromium logs every 4xx/5xx answer to a fetch as a console error ("Failed to load resource:
// the server responded with a status of 404 (Not Found)"), whoever made it. The ones for the
// statuses this test asks for on purpose are listed here and not counted as failures.
const expectedStatusLogs = new Set(); // "<status> <url>"
const exempted = [];
const pageErrors = [];
const apiRequests = []; // the API calls Try-it-out made: { method, url, headers }

const browser = await chromium.launch({
  executablePath,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  timeout: WAIT_MS,
});
const chromiumVersion = browser.version();
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
page.setDefaultTimeout(WAIT_MS);
page.setDefaultNavigationTimeout(WAIT_MS);

let finished = false;
const guard = setTimeout(async () => {
  if (finished) return;
  check(`the whole test within ${TOTAL_MS / 1000} s`, false, 'still running; stopped');
  await finish();
}, TOTAL_MS);

page.on('request', (request) => {
  requests.push(`${request.method()} ${request.url()}`);
  const url = new URL(request.url());
  if (url.pathname.startsWith('/api/')) {
    apiRequests.push({ method: request.method(), url: request.url(), headers: request.headers() });
  }
});
page.on('console', (message) => {
  if (message.type() !== 'error') return;
  const at = message.location()?.url ?? '';
  const line = `${message.text()}${at ? ` (${at})` : ''}`;
  const status = /^Failed to load resource: the server responded with a status of (\d{3})/.exec(message.text());
  if (status && expectedStatusLogs.has(`${status[1]} ${at}`)) exempted.push(line);
  else consoleErrors.push(line);
});
page.on('pageerror', (error) => pageErrors.push(String(error?.message ?? error)));

// Requests to any other origin are recorded and aborted, so a wrong Try-it-out target (or a
// CDN, font or telemetry URL) can never reach whatever listens there.
await context.route('**/*', async (route) => {
  const url = route.request().url();
  if (!url.startsWith('data:') && !url.startsWith('blob:') && new URL(url).origin !== origin) {
    foreign.push(`${route.request().method()} ${url}`);
    return route.abort('blockedbyclient');
  }
  const pathname = new URL(url).pathname;
  if (csp && (pathname === '/docs' || pathname.startsWith('/docs/'))) {
    const response = await route.fetch();
    return route.fulfill({
      response,
      headers: { ...response.headers(), 'content-security-policy': csp },
    });
  }
  return route.continue();
});

// ---- Swagger UI helpers --------------------------------------------------------------------

function operation(method, apiPath) {
  return page.locator(`.opblock-${method.toLowerCase()}`).filter({
    has: page.locator(`.opblock-summary-path[data-path="${apiPath}"]`),
  });
}

async function openTryItOut(op) {
  if (!(await op.locator('.opblock-body').isVisible())) {
    await op.locator('.opblock-summary-control').click();
  }
  const tryOut = op.locator('.try-out__btn');
  if ((await tryOut.innerText()).trim() !== 'Cancel') await tryOut.click();
  await op.locator('.btn.execute').waitFor();
}

/** Types `value` into the parameter's input, clearing what was there first. */
async function fill(op, name, value) {
  const input = op.locator(`tr[data-param-name="${name}"] input`);
  await input.fill('');
  await input.fill(value);
}

/** Header parameters whose try-it-out input holds a value the reader did not type. */
async function prefilledHeaders(op) {
  const seen = [];
  for (const name of HEADER_PARAMS) {
    const input = op.locator(`tr[data-param-name="${name}"] input`);
    if ((await input.count()) === 0) continue;
    const value = await input.inputValue();
    if (value !== '') seen.push(`${name}: ${value}`);
  }
  return seen;
}

/**
 * Clicks Execute and waits for the live response. Returns { request, status, body, url } with
 * the request Try-it-out sent (null if none left the page) and what the UI rendered.
 */
async function execute(op) {
  const clear = op.locator('.btn-clear');
  if (await clear.isVisible()) await clear.click();
  const before = apiRequests.length;
  await op.locator('.btn.execute').click();
  const status = op.locator('.live-responses-table tbody tr.response .response-col_status').first();
  await status.waitFor();
  const request = apiRequests[before] ?? null;
  const body = await op
    .locator('.live-responses-table tbody tr.response .response-col_description')
    .first()
    .innerText()
    .catch(() => '');
  const url = await op
    .locator('.request-url pre')
    .first()
    .innerText()
    .catch(() => '');
  return { request, status: (await status.innerText()).trim(), body: body.trim(), url: url.trim() };
}

function sentHeaders(request) {
  if (!request) return [];
  const lower = HEADER_PARAMS.map((name) => name.toLowerCase());
  return Object.entries(request.headers)
    .filter(([name]) => lower.includes(name))
    .map(([name, value]) => `${name}: ${value}`);
}

/**
 * The checks every Try-it-out call shares: where it went, which header parameters it carried,
 * what status the UI shows. `label` names the call.
 */
function checkCall(label, outcome, expectedStatus, prefilled) {
  const { request } = outcome;
  check(
    `${label}: the request went to ${origin}`,
    request !== null && new URL(request.url).origin === origin,
    request
      ? `${request.method} ${request.url}`
      : `no request reached ${origin}; blocked: ${foreign.slice(-1)[0] ?? 'none'}; UI request URL ${outcome.url || '(none)'}`,
  );
  check(
    `${label}: no header parameter pre-filled`,
    prefilled.length === 0,
    `inputs pre-filled with ${prefilled.join(', ')}`,
  );
  const sent = sentHeaders(request);
  check(
    `${label}: no header parameter sent that the reader did not type`,
    sent.length === 0,
    `sent ${sent.join(', ')}`,
  );
  return check(
    `${label}: ${expectedStatus} rendered`,
    outcome.status === String(expectedStatus),
    `status ${JSON.stringify(outcome.status)}; body ${JSON.stringify(outcome.body.slice(0, 200))}`,
  );
}

const offOrigin = (outcome) => outcome.request === null || new URL(outcome.request.url).origin !== origin;

/**
 * Today's document points Try-it-out at the `{base_url}` server variable's default. After that
 * is recorded, point the variable at the real server so that the rest of the flow still runs.
 * Returns whether it did.
 */
async function retarget() {
  const variable = page.locator('.servers input[data-variable]');
  if ((await variable.count()) === 0) return false;
  console.log(`       (setting the server variable ${await variable.first().getAttribute('data-variable')} to ${base} to go on)`);
  await variable.first().fill(base);
  return true;
}

async function authorize(key, role) {
  await page.locator('.scheme-container .btn.authorize, .auth-wrapper .btn.authorize').first().click();
  const modal = page.locator('.modal-ux');
  await modal.waitFor();
  const logout = modal.locator('button', { hasText: 'Logout' });
  if (await logout.isVisible()) await logout.click();
  const field = modal.locator('.auth-container').filter({ hasText: 'X-API-KEY' }).locator('input');
  await field.fill(key);
  await modal.locator('.auth-btn-wrapper button.authorize').click();
  const authorized = modal.locator('.auth-container', { hasText: 'Authorized' });
  await authorized.waitFor();
  check(`authorize through the UI with the ${role} key`, true);
  await modal.locator('.auth-btn-wrapper button.btn-done').click();
  await modal.waitFor({ state: 'detached' });
}

async function logout() {
  await page.locator('.scheme-container .btn.authorize, .auth-wrapper .btn.authorize').first().click();
  const modal = page.locator('.modal-ux');
  await modal.waitFor();
  await modal.locator('button', { hasText: 'Logout' }).click();
  await modal.locator('.auth-container input').first().waitFor();
  check('log out through the UI', true);
  await modal.locator('.auth-btn-wrapper button.btn-done').click();
  await modal.waitFor({ state: 'detached' });
}

// ---- the flow ------------------------------------------------------------------------------

async function flow() {
  await step('open /docs', async () => {
    const response = await page.goto(`${base}/docs`, { waitUntil: 'load' });
    check('GET /docs answers 200', response?.status() === 200, `status ${response?.status()}`);
    const served = response?.headers()['content-security-policy'];
    console.log(`       /docs Content-Security-Policy: ${served ?? '(none)'}${csp ? ` (test adds: ${csp})` : ''}`);
    await page.locator('.opblock').first().waitFor();
    check('the operations render', true);
  });

  await step('page title', async () => {
    const title = await page.title();
    check('the page title names the API ("appzone API")', title.includes('appzone API'), JSON.stringify(title));
  });
  await step('no Swagger top bar', async () => {
    const topbar = await page.locator('.topbar').count();
    const explore = await page.locator('.download-url-wrapper, .download-url-input, button:text-is("Explore")').count();
    check('no Swagger top bar', topbar === 0, `${topbar} .topbar element(s)`);
    check('no "Explore" spec-URL box', explore === 0, `${explore} download-url/Explore element(s)`);
  });

  await step('authorize with the admin key', () => authorize(adminKey, 'admin'));

  const zones = operation('GET', ZONES);
  await step('GET zones', async () => {
    const computed = page.locator('.servers .computed-url code');
    if ((await computed.count()) > 0) console.log(`       Servers: computed URL ${await computed.innerText()}`);
    await openTryItOut(zones);
    await fill(zones, 'providerId', 'aws');
    await fill(zones, 'regionId', 'us-east-1');
    const prefilled = await prefilledHeaders(zones);
    const label = 'GET zones aws/us-east-1';
    let outcome = await execute(zones);
    checkCall(label, outcome, 200, prefilled);
    if (offOrigin(outcome) && (await retarget())) {
      outcome = await execute(zones);
      check(
        `${label} (server variable set by the test): 200 rendered`,
        outcome.status === '200',
        `status ${JSON.stringify(outcome.status)}; request ${outcome.request?.url ?? '(none)'}`,
      );
    }
    check(
      `${label}: the zones are in the rendered body`,
      outcome.body.includes('us-east-1a') && outcome.body.includes('6 zones'),
      JSON.stringify(outcome.body.slice(0, 200)),
    );
    const sentKey = outcome.request?.headers['x-api-key'];
    check(`${label}: the X-API-KEY from Authorize was sent`, sentKey === adminKey, `x-api-key ${sentKey ?? '(none)'}`);
  });

  const del = operation('DELETE', PROFILE);
  const deletion = async (profile, key, expected, label, errorCode) => {
    await step(label, async () => {
      if (expected >= 400) expectedStatusLogs.add(`${expected} ${base}${PROFILE.replace('{profileId}', profile)}`);
      await openTryItOut(del);
      await fill(del, 'profileId', profile);
      const prefilled = await prefilledHeaders(del);
      const outcome = await execute(del);
      // The retargeting (if any) happened on GET zones: the server variable is page-wide.
      if (checkCall(label, outcome, expected, prefilled) && errorCode) {
        check(
          `${label}: error_code ${errorCode} in the rendered body`,
          outcome.body.includes(`"${errorCode}"`),
          JSON.stringify(outcome.body.slice(0, 200)),
        );
      }
      const sentKey = outcome.request?.headers['x-api-key'];
      if (outcome.request) {
        check(`${label}: the key from Authorize was sent`, sentKey === key, `x-api-key ${sentKey ?? '(none)'}`);
      }
    });
  };
  await deletion(deletableProfile, adminKey, 204, `DELETE ${deletableProfile} (admin)`);
  await deletion('prof_does_not_exist', adminKey, 404, 'DELETE prof_does_not_exist (admin)', 'profile_not_found');
  await step('log out', logout);
  await step('authorize with the member key', () => authorize(memberKey, 'member'));
  await deletion(keptProfile, memberKey, 403, `DELETE ${keptProfile} (member)`, 'forbidden');
}

async function finish() {
  finished = true;
  clearTimeout(guard);
  check(
    'no request to another origin',
    foreign.length === 0,
    `${foreign.length} blocked: ${[...new Set(foreign)].join(', ')}`,
  );
  check('no console error', consoleErrors.length === 0, `${consoleErrors.length}:\n         ${consoleErrors.join('\n         ')}`);
  for (const line of exempted) console.log(`       (expected, not counted: ${line})`);
  check('no uncaught page error', pageErrors.length === 0, pageErrors.join('\n         '));
  try {
    mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true, timeout: WAIT_MS });
    // The full page is very tall once both operations are open: two readable views as well.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(outDir, 'docs-top.png'), timeout: WAIT_MS });
    const shots = [screenshot, 'docs-top.png'];
    if ((await page.locator('.live-responses-table').count()) > 0) {
      const live = page.locator('.live-responses-table').last().locator('xpath=..');
      await live.screenshot({ path: path.join(outDir, 'docs-last-response.png'), timeout: WAIT_MS });
      shots.push('docs-last-response.png');
    }
    console.log(`browser: screenshots ${shots.join(', ')}`);
  } catch (err) {
    console.log(`browser: no screenshot (${String(err?.message ?? err).split('\n')[0]})`);
  }
  console.log(`browser: requests the page made (${requests.length}):`);
  for (const request of requests) console.log(`  ${request}`);
  console.log(`browser: Chromium ${chromiumVersion}, playwright-core ${playwrightVersion()}`);
  const failed = results.filter((result) => !result.ok);
  if (failed.length > 0) {
    console.log('browser: failed:');
    for (const result of failed) console.log(`  - ${result.name}`);
  }
  await browser.close().catch(() => {});
  console.log(`browser: ${results.length - failed.length} passed, ${failed.length} failed`);
  process.exit(failed.length === 0 ? 0 : 1);
}

function playwrightVersion() {
  try {
    const manifest = createRequire(import.meta.url).resolve('playwright-core/package.json');
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

await flow().catch((err) => check('the flow', false, String(err?.message ?? err)));
if (!finished) await finish();
