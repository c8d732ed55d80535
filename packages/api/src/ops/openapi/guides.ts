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

export interface GuideLinks {
  /** A Markdown link for a description, e.g. `[docs/integrate/uploads.md](...)`. */
  link(name: GuideName): string;
  /** An External Documentation Object, for the document and its tags. */
  externalDocs(name: GuideName, description: string): { description: string; url: string };
}

/**
 * The service has no public address of its own for the guides, so a link is
 * the guide's repository path, shown as its text too: it reads right in the
 * SDK's comments and in a saved document, where nothing can be followed. An
 * operator who publishes the repository (a Git host's file view) sets the
 * base, and the same links open in Swagger UI at /v1/docs. Markdown links in
 * descriptions, because parameters have no `externalDocs`; tags and the
 * document take `externalDocs` too, which Swagger UI shows beside them.
 */
export function guideLinks(baseUrl?: string | null): GuideLinks {
  const base = !baseUrl ? '' : baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const url = (name: GuideName) => `${base}${GUIDES[name]}`;
  return {
    link: (name) => `[${GUIDES[name]}](${url(name)})`,
    externalDocs: (name, description) => ({ description, url: url(name) }),
  };
}
