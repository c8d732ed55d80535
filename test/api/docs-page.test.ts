import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { DIRS, KEYS } from '../support/test-fixture.js';
import type { OpenApiDoc } from '../support/openapi-contract.js';

/** Left for a person to look at: the page as rendered, and a request tried from it. */
const SCREENSHOTS = path.resolve('.tmp');

let api: TestApi;
let browser: Browser;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_MAX: '3' });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await api?.stop();
});

describe('GET /v1/docs', () => {
  it('when fetched without credentials, then an HTML page whose policy allows this server only', async () => {
    for (let i = 0; i < 5; i += 1) {
      const response = await fetch(`${api.base}/docs`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
      expect(await response.text()).toContain('/v1/docs/assets/swagger-ui-bundle.js');
    }
    expect((await fetch(`${api.base}/docs/assets/swagger-ui.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await fetch(`${api.base}/docs/assets/package.json`)).status).toBe(404);
    expect((await fetch(`${api.base}/docs/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  // Two pages in Chromium (the reference, then a guide from its link) and a request tried: more than the default 30 s on a busy machine.
  it('when opened in a browser, then it lists every operation of the served document and each of its webhooks, a request can be tried with credentials, and nothing leaves 127.0.0.1', async () => {
    // What the page should show: every operation of `paths` (the spec's five endpoints and the contract's additions), and the `webhooks` entries in a section of their own.
    const doc = (await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc & { webhooks: Record<string, Record<string, unknown>> };
    const listed = (items: Record<string, Record<string, unknown>>, section: string) =>
      Object.entries(items).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${section} ${method.toUpperCase()} ${path}`));
    const expected = [...listed(doc.paths, 'paths'), ...listed(doc.webhooks, 'webhooks')].sort();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const requested: string[] = [];
    const pageErrors: string[] = [];
    context.on('request', (request) => requested.push(request.url()));
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      await page.goto(`${api.base}/docs`, { waitUntil: 'load' });
      const operations = page.locator('.opblock');
      await operations.nth(expected.length - 1).waitFor();
      expect(await operations.count()).toBe(expected.length);
      const shown = await operations.evaluateAll((nodes) =>
        nodes.map(
          (n) =>
            `${n.closest('.webhooks') ? 'webhooks' : 'paths'} ${n.querySelector('.opblock-summary-method')?.textContent} ${n.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
        ),
      );
      expect(shown.sort()).toEqual(expected);
      await expect(page.locator('.info .title').innerText()).resolves.toContain('Logistics orders and invoices API');
      await page.screenshot({ path: await screenshotPath('docs-page.png'), fullPage: true });

      // Its "more info" links (the document's and each tag's externalDocs, the front page's guide links) as the page resolved them: each a guide this server serves.
      const links = await page.locator('a[href]').evaluateAll((anchors) => anchors.map((anchor) => (anchor as unknown as { href: string }).href));
      const guides = [...new Set(links.filter((href) => href.startsWith(`${api.root}/v1/guides/`)))];
      expect(guides).toEqual(
        expect.arrayContaining([`${api.root}/v1/guides/getting-started`, `${api.root}/v1/guides/events-and-webhooks`, `${api.root}/v1/guides/exports`]),
      );
      expect(links.filter((href) => href.startsWith(api.root) && !/\/v1\/(guides\/[a-z-]+|docs|openapi\.json)([#?].*)?$/.test(href))).toEqual([]);
      for (const href of guides) {
        const guide = await fetch(href);
        expect(guide.status, href).toBe(200);
        expect(guide.headers.get('content-type'), href).toBe('text/html; charset=utf-8');
      }
      // Opened in the browser, a guide is styled (its one inline stylesheet is allowed by the page's policy) and loads nothing else.
      const guidePage = await context.newPage();
      const refused: string[] = [];
      guidePage.on('console', (message) => {
        if (message.type() === 'error') refused.push(message.text());
      });
      await guidePage.goto(`${api.root}/v1/guides/errors-and-retries`, { waitUntil: 'load' });
      await expect(guidePage.title()).resolves.toBe('Errors and retries · Logistics API guides');
      await expect(guidePage.evaluate('getComputedStyle(document.body).maxWidth')).resolves.toBe('832px');
      await guidePage.locator('a[href="#every-endpoint-every-status"]').first().click();
      await expect(guidePage.locator('#every-endpoint-every-status').isVisible()).resolves.toBe(true);
      await guidePage.screenshot({ path: await screenshotPath('guide-page.png') });
      expect(refused).toEqual([]);

      // Authorize as a person would: the bearer key and the client directory, each in its own form.
      await page.locator('.auth-wrapper button.authorize').click();
      const modal = page.locator('.modal-ux');
      await modal.locator('.auth-container', { hasText: 'bearerAuth' }).locator('input').fill(KEYS.baltic);
      await modal.locator('.auth-container', { hasText: 'clientDirectory' }).locator('input').fill(DIRS.baltic);
      for (const name of ['bearerAuth', 'clientDirectory']) {
        await modal.locator('.auth-container', { hasText: name }).locator('button.authorize').click();
      }
      await modal.locator('button.close-modal').click();

      const operation = page.locator('#operations-Orders-listFileCategories');
      await operation.locator('.opblock-summary').click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('button.execute').click();
      const status = operation.locator('.live-responses-table .response .response-col_status');
      await expect(status.first().innerText()).resolves.toBe('200');
      await expect(operation.locator('.live-responses-table').innerText()).resolves.toContain('Delivery note');
      await operation.screenshot({ path: await screenshotPath('docs-page-try-it-out.png') });
    } finally {
      await context.close();
    }
    expect(pageErrors).toEqual([]);
    expect(requested.length).toBeGreaterThan(3);
    const elsewhere = requested.filter((url) => !/^(data:|http:\/\/127\.0\.0\.1:\d+\/)/.test(url));
    expect(elsewhere).toEqual([]);
    expect(requested).toContain(`${api.base}/openapi.json`);
    expect(requested).toContain(`${api.base}/orders/file-categories`);
  }, 60_000);
});

async function screenshotPath(name: string): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}
