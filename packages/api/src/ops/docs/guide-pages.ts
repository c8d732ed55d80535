import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked, type Tokens } from 'marked';

/** Where the integrator's guides are served, beside the reference (`/v1/docs`). */
export const GUIDES_PATH = '/v1/guides';

/** A guide's name: its file name under docs/integrate without `.md`. Anything else is not a guide (never a path). */
const GUIDE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The guides' Markdown: the repository's docs/integrate when this module runs
 * from its TypeScript source (tests, tsx), the copy `pnpm build` puts in
 * packages/api/dist/guides when it runs built (the image has no docs/ of its
 * own; scripts/copy-build-assets.js).
 */
export function guidesDirectory(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? path.resolve(path.dirname(here), '../../../../../docs/integrate') : path.resolve(path.dirname(here), '../../guides');
}

export interface GuidePage {
  name: string;
  title: string;
  html: string;
}

const STYLE = `body{font:16px/1.55 system-ui,sans-serif;color:#1b1f24;max-width:52rem;margin:0 auto;padding:1rem 1.5rem 4rem}
nav{font-size:.9rem;border-bottom:1px solid #d0d7de;padding-bottom:.5rem;margin-bottom:1rem}
nav a{margin-right:1rem}
a{color:#0550ae}
code,pre{font:.875rem/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f5f7;border-radius:4px}
code{padding:.1em .3em}
pre{padding:.8rem 1rem;overflow-x:auto}
pre code{padding:0;background:none}
table{border-collapse:collapse;display:block;overflow-x:auto;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;vertical-align:top;text-align:left}
h1,h2,h3{line-height:1.25}`;

/**
 * The page's policy: no script at all, the one stylesheet inline (allowed by its hash), links only;
 * nothing is loaded from elsewhere.
 */
export const GUIDES_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'self' data:",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** GitHub's heading anchors (lower case, punctuation dropped, spaces as `-`), so `uploads.md#daily-quota` finds its heading here too. */
function slugOf(text: string, taken: Map<string, number>): string {
  const base = text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
  const seen = taken.get(base) ?? 0;
  taken.set(base, seen + 1);
  return seen === 0 ? base : `${base}-${seen}`;
}

/**
 * The integrator's guides (docs/integrate/*.md) rendered to HTML, read and
 * rendered once, on the first request, from the same files the repository
 * shows. Links between guides go to their served pages; links to other
 * repository pages (operate/, contribute/, the README) go to `docsBaseUrl`
 * when the operator publishes the repository there, else they are plain text:
 * this server does not serve them (docs/contribute/decisions/0047-guides-served-beside-the-reference.md).
 */
export class GuidePages {
  private pages: Promise<Map<string, GuidePage>> | null = null;

  constructor(
    private readonly directory: string,
    private readonly docsBaseUrl: string | null = null,
  ) {}

  /** Every guide by name; a failed read is not kept, so the next request tries again. */
  all(): Promise<Map<string, GuidePage>> {
    if (!this.pages) {
      this.pages = this.load();
      this.pages.catch(() => {
        this.pages = null;
      });
    }
    return this.pages;
  }

  async get(name: string): Promise<GuidePage | null> {
    if (!GUIDE_NAME.test(name)) return null;
    return (await this.all()).get(name) ?? null;
  }

  /** The index page: every guide with its title, getting started first. */
  async index(): Promise<string> {
    const pages = [...(await this.all()).values()].sort((a, b) => order(a.name) - order(b.name) || a.name.localeCompare(b.name));
    const items = pages.map((page) => `<li><a href="${GUIDES_PATH}/${page.name}">${escapeHtml(page.title)}</a></li>`).join('\n');
    return layout(
      'Guides',
      `<h1>Guides</h1>\n<p>How and why, for developers of client systems. What each operation takes and answers is in the <a href="/v1/docs">API reference</a>.</p>\n<ul>\n${items}\n</ul>`,
    );
  }

  private async load(): Promise<Map<string, GuidePage>> {
    const files = (await readdir(this.directory)).filter((file) => file.endsWith('.md') && GUIDE_NAME.test(file.slice(0, -3))).sort();
    const names = new Set(files.map((file) => file.slice(0, -3)));
    const pages = new Map<string, GuidePage>();
    for (const file of files) {
      const name = file.slice(0, -3);
      const markdown = await readFile(path.join(this.directory, file), 'utf8');
      pages.set(name, this.render(name, markdown, names));
    }
    return pages;
  }

  private render(name: string, markdown: string, guides: ReadonlySet<string>): GuidePage {
    const hrefOf = (href: string) => this.servedHref(href, guides);
    const slugs = new Map<string, number>();
    let title = name;
    const marked = new Marked({
      gfm: true,
      renderer: {
        heading(token: Tokens.Heading) {
          const text = this.parser.parseInline(token.tokens, this.parser.textRenderer);
          if (token.depth === 1 && title === name) title = decodeEntities(text);
          return `<h${token.depth} id="${escapeHtml(slugOf(decodeEntities(text), slugs))}">${this.parser.parseInline(token.tokens)}</h${token.depth}>\n`;
        },
        link(token: Tokens.Link) {
          const inner = this.parser.parseInline(token.tokens);
          const href = hrefOf(token.href);
          if (href === null) return inner;
          return `<a href="${escapeHtml(href)}"${token.title ? ` title="${escapeHtml(token.title)}"` : ''}>${inner}</a>`;
        },
        // Raw HTML in a guide is a comment for the tools (quick-start markers) or text that looks like a tag: never markup here.
        html(token: Tokens.HTML | Tokens.Tag) {
          return token.text.trimStart().startsWith('<!--') ? '' : escapeHtml(token.text);
        },
      },
    });
    const body = marked.parse(markdown, { async: false });
    return { name, title, html: layout(title, body) };
  }

  /** Where a guide's link points when served; null: not served here and no published copy, so plain text. */
  private servedHref(href: string, guides: ReadonlySet<string>): string | null {
    if (href.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(href)) return href;
    const [file = '', fragment] = href.split(/(?=#)/);
    const guide = /^(?:\.\/)?([a-z0-9-]+)\.md$/.exec(file)?.[1];
    if (guide && guides.has(guide)) return `${GUIDES_PATH}/${guide}${fragment ?? ''}`;
    if (!this.docsBaseUrl) return null;
    const repositoryPath = path.posix.normalize(path.posix.join('docs/integrate', file));
    if (repositoryPath.startsWith('..')) return null;
    let base = this.docsBaseUrl;
    while (base.endsWith('/')) base = base.slice(0, -1);
    return `${base}/${repositoryPath}${fragment ?? ''}`;
  }
}

const FIRST = ['getting-started', 'uploads', 'files', 'invoices-and-pdfs', 'e-invoices', 'events-and-webhooks', 'exports', 'errors-and-retries', 'sdk'];
const order = (name: string) => (FIRST.includes(name) ? FIRST.indexOf(name) : FIRST.length);

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)} · Logistics API guides</title>
    <link rel="icon" type="image/png" href="/v1/docs/assets/favicon-32x32.png" sizes="32x32">
    <style>${STYLE}</style>
  </head>
  <body>
    <nav><a href="${GUIDES_PATH}">Guides</a><a href="/v1/docs">API reference</a><a href="/v1/openapi.json">OpenAPI document</a></nav>
    <main>
${body}
    </main>
  </body>
</html>
`;
}
