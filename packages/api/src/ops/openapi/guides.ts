/** The guides the reference links to for the why; each rule is written there once. */
export const GUIDES = {
  'getting-started': 'docs/integrate/getting-started.md',
  uploads: 'docs/integrate/uploads.md',
  files: 'docs/integrate/files.md',
  'invoices-and-pdfs': 'docs/integrate/invoices-and-pdfs.md',
  'e-invoices': 'docs/integrate/e-invoices.md',
  'events-and-webhooks': 'docs/integrate/events-and-webhooks.md',
  exports: 'docs/integrate/exports.md',
  'errors-and-retries': 'docs/integrate/errors-and-retries.md',
  sdk: 'docs/integrate/sdk.md',
  observability: 'docs/operate/observability.md',
} as const;

export type GuideName = keyof typeof GUIDES;

/** The integrator's guides: the API serves these itself (GET /v1/guides/{name}, ops/docs/guide-pages.ts). */
export type ServedGuideName = { [N in GuideName]: (typeof GUIDES)[N] extends `docs/integrate/${string}` ? N : never }[GuideName];

export interface GuideLinks {
  /** A Markdown link for a description, e.g. `[docs/integrate/uploads.md](/v1/guides/uploads)`; an operator's page not published anywhere is its path as code. */
  link(name: GuideName): string;
  /** An External Documentation Object, for the document and its tags. */
  externalDocs(name: ServedGuideName, description: string): { description: string; url: string };
}

/**
 * The API serves the integrator's guides itself, beside the reference
 * (`/v1/guides/<name>`), so a link's URL is that path: absolute on the
 * server, which Swagger UI at /v1/docs resolves against the document's
 * address, and a relative reference that OpenAPI 3.1 allows. The link's text
 * is the guide's repository path, so it reads right where nothing can be
 * followed (the SDK's comments). An operator who publishes the repository (a
 * Git host's file view, DOCS_BASE_URL) sets the base, and every link goes
 * there instead, operators' pages too; without it, an operator's page is named,
 * not linked: this server does not serve it. Markdown links in descriptions,
 * because parameters have no `externalDocs`; tags and the document take
 * `externalDocs` too, which Swagger UI shows beside them
 * (docs/contribute/decisions/0047-guides-served-beside-the-reference.md).
 */
export function guideLinks(baseUrl?: string | null): GuideLinks {
  const base = !baseUrl ? null : baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const url = (name: GuideName): string | null => (base ? `${base}${GUIDES[name]}` : GUIDES[name].startsWith('docs/integrate/') ? `/v1/guides/${name}` : null);
  return {
    link: (name) => {
      const target = url(name);
      return target ? `[${GUIDES[name]}](${target})` : `\`${GUIDES[name]}\``;
    },
    externalDocs: (name, description) => ({ description, url: url(name)! }),
  };
}
