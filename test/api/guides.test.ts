import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';

/**
 * The integrator's guides, served by the API beside the reference
 * (GET /v1/guides, /v1/guides/{name}) from docs/integrate, so that the
 * reference's "more info" links work on any install.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const PUBLISHED = 'https://git.example.com/logi/-/blob/v1.4.0';

let api: TestApi;
let guides: Array<{ name: string; title: string }>;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_MAX: '3' });
  const files = (await readdir(path.join(ROOT, 'docs/integrate'))).filter((file) => file.endsWith('.md')).sort();
  guides = await Promise.all(
    files.map(async (file) => ({
      name: file.slice(0, -3),
      title: /^# (.+)$/m.exec(await readFile(path.join(ROOT, 'docs/integrate', file), 'utf8'))![1]!.replace(/`/g, ''),
    })),
  );
});
afterAll(async () => {
  await api?.stop();
});

/** The page's links (`href`s), its element ids and its title. */
function read(html: string) {
  const decode = (text: string) =>
    text
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return {
    title: decode(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? ''),
    links: [...html.matchAll(/<a href="([^"]*)"/g)].map((match) => decode(match[1]!)),
    ids: new Set([...html.matchAll(/ id="([^"]*)"/g)].map((match) => decode(match[1]!))),
  };
}

async function html(url: string) {
  const response = await fetch(url);
  return { response, text: await response.text() };
}

describe('GET /v1/guides', () => {
  it('when fetched without credentials, again and again, then an HTML index of every guide under docs/integrate, never rate limited, with a policy that allows no script', async () => {
    expect(guides.length).toBeGreaterThanOrEqual(9);
    for (let i = 0; i < 5; i += 1) {
      const { response, text } = await html(`${api.base}/guides`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("default-src 'none'");
      expect(policy).not.toContain('script-src');
      expect(read(text).links).toEqual(expect.arrayContaining(guides.map((guide) => `/v1/guides/${guide.name}`)));
    }
  });

  it('when each guide is fetched, then it is its Markdown rendered: 200 HTML titled with its first heading, tables and code as HTML, no tool comment left', async () => {
    for (const guide of guides) {
      const { response, text } = await html(`${api.base}/guides/${guide.name}`);
      expect(response.status, guide.name).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
      expect(read(text).title, guide.name).toBe(`${guide.title} · Logistics API guides`);
      expect(text).not.toContain('quick-start: skip');
      expect(text).not.toMatch(/<script/i);
    }
    const start = (await html(`${api.base}/guides/getting-started`)).text;
    expect(start).toMatch(/<table>[\s\S]*<code>POST \/orders\/\{order_id\}\/files<\/code>/);
    expect(start).toContain('<pre><code class="language-sh">curl -s');
    // HEAD works as on every GET route.
    expect((await fetch(`${api.base}/guides/sdk`, { method: 'HEAD' })).status).toBe(200);
  });

  it('when a guide that does not exist is asked for, then 404 in the envelope, whatever the name holds', async () => {
    for (const name of ['no-such-guide', 'uploads.md', '..%2F..%2Fpackage.json', '..%2Foperate%2Fcli', 'Uploads', '%2Fetc%2Fpasswd']) {
      const response = await fetch(`${api.base}/guides/${name}`);
      expect(response.status, name).toBe(404);
      expect(await envelopeOf(response), name).toEqual({ status: 404, message: 'Not Found', data: null });
    }
  });

  it('when the links inside the served guides are followed, then each one to this server answers 200 HTML and each fragment names a heading there', async () => {
    const followed = new Set<string>();
    for (const guide of guides) {
      const { text } = await html(`${api.base}/guides/${guide.name}`);
      for (const link of read(text).links) {
        if (/^https?:/.test(link)) {
          // Only pages elsewhere on the web: no link points into the repository, which this server does not serve.
          expect(link, `${guide.name}: ${link}`).not.toMatch(/\.md(#|$)/);
          continue;
        }
        const target = new URL(link, `${api.base}/guides/${guide.name}`);
        expect(target.origin, `${guide.name}: ${link}`).toBe(new URL(api.root).origin);
        expect(target.pathname, `${guide.name}: ${link}`).toMatch(/^\/v1\/(guides|guides\/[a-z-]+|docs|openapi\.json)$/);
        if (!target.pathname.startsWith('/v1/guides')) continue;
        const page = await html(target.href);
        expect(page.response.status, `${guide.name}: ${link}`).toBe(200);
        if (target.hash) expect(read(page.text).ids.has(decodeURIComponent(target.hash.slice(1))), `${guide.name}: ${link}`).toBe(true);
        followed.add(target.href);
      }
    }
    // The guides link each other (uploads, scopes, resync, ...), anchors included.
    expect([...followed].filter((url) => url.includes('#')).length).toBeGreaterThan(5);
    // A page of the repository that is not served (operate/, contribute/) is its text, not a link that would answer 404.
    const start = (await html(`${api.base}/guides/getting-started`)).text;
    expect(start).toContain('ADR 0001');
    expect(read(start).links.filter((link) => link.includes('0001-envelope-messages'))).toEqual([]);
  });

  it('when the operator publishes the repository (DOCS_BASE_URL), then links to the pages not served go there, and the guides still link each other here', async () => {
    const published = await startTestApi({ DOCS_BASE_URL: PUBLISHED });
    try {
      const { text } = await html(`${published.base}/guides/getting-started`);
      const links = read(text).links;
      expect(links).toContain(`${PUBLISHED}/docs/contribute/decisions/0001-envelope-messages.md`);
      expect(links).toContain(`${PUBLISHED}/docs/operate/runbook.md#api-keys`);
      expect(links).toContain(`${PUBLISHED}/README.md#quick-start`);
      expect(links).toContain('/v1/guides/uploads');
    } finally {
      await published.stop();
    }
  });
});

describe("the reference's guide links", () => {
  it('when the served document is read, then every externalDocs URL and every guide link in a description answers 200 HTML from this same server', async () => {
    const documentUrl = `${api.base}/openapi.json`;
    const document = (await (await fetch(documentUrl)).json()) as {
      externalDocs: { url: string };
      tags: Array<{ name: string; externalDocs?: { url: string } }>;
    };
    const text = JSON.stringify(document);
    const described = [...text.matchAll(/\]\(([^)]*)\)/g)].map((match) => match[1]!);
    const external = [document.externalDocs.url, ...document.tags.map((tag) => tag.externalDocs?.url ?? `(none on ${tag.name})`)];
    const urls = new Set([...external, ...described]);
    expect(urls.size).toBeGreaterThanOrEqual(9);
    for (const url of urls) {
      // A relative reference, resolved as Swagger UI resolves it: against the document's address.
      const target = new URL(url, documentUrl);
      expect(target.origin, url).toBe(new URL(api.root).origin);
      const { response, text: page } = await html(target.href);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('content-type'), url).toBe('text/html; charset=utf-8');
      expect(page).toContain('Logistics API guides');
    }
  });
});
