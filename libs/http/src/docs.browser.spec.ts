import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { createLogger, MODULES } from '@platform/core';
import { launchBrowser, mintToken, testVerifier, type TestBrowser } from '@platform/testing';
import { createServiceApp, operation, request as requestSchema, listOf } from './index';

/**
 * The API reference in a real browser (Debian's chromium, headless): two apps behind a router that
 * sends /<module>/... to that module's app and /docs to identity, as the gateways do.
 */
const access = { permission: 'identity:Thing.write', roles: ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const };
const logger = createLogger('docs', 'silent');
const identity = createServiceApp({
  service: 'identity',
  logger,
  verifier: testVerifier,
  operations: [
    operation({
      path: '/identity/v1/thing/create',
      access,
      summary: 'Create a thing',
      schema: requestSchema({ name: z.string().min(1) }),
      response: z.strictObject({ name: z.string(), domain_id: z.string() }), handler: (input, ctx) => ({ name: input.name, domain_id: ctx.auth.domainId }),
    }),
    operation({ path: '/identity/v1/thing/ping', access: 'public', schema: requestSchema({}), response: z.strictObject({ pong: z.boolean() }), handler: () => ({ pong: true }) }),
  ],
});
const inventory = createServiceApp({
  service: 'inventory',
  logger,
  verifier: testVerifier,
  operations: [operation({ path: '/inventory/v1/gadget/list', access: { permission: 'inventory:Gadget.read', roles: ['WORKSPACE_MEMBER'] }, schema: requestSchema({}), response: listOf(z.strictObject({})), handler: () => ({ results: [], total_count: 0 }) })],
});
const router = http.createServer((req, res) => {
  const segment = (req.url ?? '/').split('/')[1]?.split('?')[0];
  (segment === 'inventory' ? inventory : identity)(req, res);
});
const shots = path.resolve(__dirname, '../../../tmp/screenshots');

describe('the API reference in a browser', () => {
  let b: TestBrowser;
  let origin: string;

  beforeAll(async () => {
    await new Promise<void>((r) => router.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(router.address() as AddressInfo).port}`;
    b = await launchBrowser();
    mkdirSync(shots, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await new Promise((r) => router.close(r));
  });

  /** A page that records every request it makes and every error it logs (CSP violations included). */
  async function open(url: string): Promise<{ page: Page; requests: string[]; problems: string[] }> {
    const page = await b.browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url);
    return { page, requests, problems };
  }
  const offOrigin = (requests: string[]) => requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));

  it("shows a module's operations, takes a token in Authorize and runs an operation from the page", async () => {
    const { page, requests, problems } = await open(`${origin}/identity/docs`);
    const create = page.locator('.opblock', { hasText: '/identity/v1/thing/create' });
    await create.waitFor();
    await expect(page.locator('.opblock-summary-path').allInnerTexts()).resolves.toEqual(['/identity/v1/thing/create', '/identity/v1/thing/ping']);

    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await page.locator('.modal-ux input[type=text]').fill(await mintToken({ domainId: 'domain-docs' }));
    await page.locator('.modal-ux button.modal-btn.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    await create.locator('.opblock-summary').click();
    await create.getByRole('button', { name: 'Try it out' }).click();
    await create.locator('textarea.body-param__text').fill('{"name": "from-the-browser"}');
    await create.getByRole('button', { name: 'Execute' }).click();
    const row = create.locator('.live-responses-table tbody tr.response');
    await row.waitFor();
    expect(await row.locator('.response-col_status').innerText()).toBe('200');
    expect(JSON.parse(await row.locator('.response-col_description pre').first().innerText())).toEqual({ name: 'from-the-browser', domain_id: 'domain-docs' });

    await page.screenshot({ path: path.join(shots, 'module-docs.png'), fullPage: true });
    expect(problems).toEqual([]);
    expect(offOrigin(requests)).toEqual([]);
    expect(requests).toContain(`${origin}/identity/openapi.json`);
    await page.close();
  }, 90_000);

  it('shows the platform page at /docs with every module, and switches between their documents', async () => {
    const { page, requests, problems } = await open(`${origin}/docs`);
    await page.locator('.opblock', { hasText: '/identity/v1/thing/create' }).waitFor();
    const select = page.locator('.topbar select');
    expect(await select.locator('option').allInnerTexts()).toEqual(Object.keys(MODULES));
    expect(await page.locator('header nav a').allInnerTexts()).toEqual(Object.keys(MODULES));
    await page.screenshot({ path: path.join(shots, 'platform-docs.png') });

    await select.selectOption('inventory');
    await page.locator('.opblock', { hasText: '/inventory/v1/gadget/list' }).waitFor();
    expect(await page.locator('.opblock-summary-path').allInnerTexts()).toEqual(['/inventory/v1/gadget/list']);
    expect(problems).toEqual([]);
    expect(offOrigin(requests)).toEqual([]);
    await page.close();
  }, 90_000);
});
