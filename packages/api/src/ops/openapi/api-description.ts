import type { GuideLinks } from './guides.js';

export interface DeploymentFacts {
  timeZone: string;
  rateLimit: { max: number; windowSeconds: number };
  uploadMaxFiles: number;
  /** Where the repository's files can be read (a Git host's file view); the guide links start there. Absent: the guides this API serves (/v1/guides). */
  docsBaseUrl?: string | null;
}

/**
 * The document's front page: what holds for every call where the spec is
 * silent (shared/contract.md, in short), this deployment's limits, so the page
 * a client reads matches the server, and where the guides explain the why.
 */
export function apiDescription(facts: DeploymentFacts, guides: GuideLinks): string {
  return `
Orders and invoices of a logistics company, for client systems: attach files to orders, look orders up, list invoices and download them as PDF.

**This deployment:** \`APP_TIMEZONE=${facts.timeZone}\`, ${facts.rateLimit.max} requests per ${facts.rateLimit.windowSeconds} s, up to ${facts.uploadMaxFiles} files per upload.

This reference says what each call does and answers; the guides say why, step by step:
- Getting started: ${guides.link('getting-started')}
- Uploads, duplicates and safe retries (\`Idempotency-Key\`): ${guides.link('uploads')}
- Files out: downloads, ranges and links: ${guides.link('files')}
- Invoices, PDFs and their cache: ${guides.link('invoices-and-pdfs')}
- E-invoices (EN 16931) and Factur-X: ${guides.link('e-invoices')}
- Events and webhooks: ${guides.link('events-and-webhooks')}
- Exports, and following the feed from one: ${guides.link('exports')}
- Errors, limits and retries: ${guides.link('errors-and-retries')}
- The TypeScript SDK: ${guides.link('sdk')}

## Authentication
Every endpoint needs both \`Authorization: Bearer <API_KEY>\` and \`X-Client-Directory: <directory>\` (the legacy header \`directory\` is still accepted; when both are sent, \`X-Client-Directory\` wins). A key of one directory never sees another's data: those ids answer 404, exactly like ids that do not exist. A directory may hold several keys, each with scopes (\`read\`, \`write\`, \`webhooks\`; each operation names those it needs in \`x-required-scopes\`), an optional expiry, and a revocation that every server sees at once; an expired or revoked key is 401, a key without a scope the operation needs 403 \`This API key lacks the <scope> scope.\`: ${guides.link('getting-started')}.

## Envelope
Every JSON response, errors included, is \`{status, message, data}\` with \`status\` equal to the HTTP status; a 422 may add \`errors\` (\`{"field": ["message"]}\`). Success messages are \`OK\` (uploads: \`Files uploaded\` or \`N of M files uploaded\`). Internals (stacks, SQL, paths) never reach a client.

## Precedence
Unknown path (404) or method (405, with \`Allow\`), then rate limit (429), then credentials (401), then the key's scope (403), then a missing order or invoice (404), then validation (422). \`HEAD\` works on every GET route; \`OPTIONS\` answers 204 with \`Allow\` and needs no credentials.

## Time
Every timestamp is an integer of Unix **seconds**, UTC. \`YYYY-MM-DD\` dates and the named periods are read in \`APP_TIMEZONE\`; periods are closed ranges of whole days.

## Query rules
- Enum values are lower case exactly as listed; spaces around list items are ignored; an empty list item, an unknown member, a parameter sent twice or in array/object form (\`types[]=s\`) is 422. An empty value counts as absent. A query string over 8 KiB is 414.
- \`page\` and \`per_page\` are whole numbers; \`total_pages\` is \`ceil(total / per_page)\` (0 when nothing matches).
- User text (\`search\`, \`customer_name\`, \`nr\`) is matched **literally** (\`%\`, \`_\` and \`\\\` are characters, not wildcards) and case-insensitively, Unicode-aware. List items are de-duplicated.
- A path id that is not a positive integer in plain digits names no resource (404).

## Uploads
A failing upload stores nothing, and a client that aborts one leaves nothing behind; a stored file always has both its row and its object, and its storage key never comes from the client's file name. Parts, limits, duplicates (\`duplicate_of\`) and safe retries (\`Idempotency-Key\`): ${guides.link('uploads')}.

## Conditional requests
\`GET /invoices\`, PDF and e-invoice downloads carry an \`ETag\` and \`Cache-Control: private, no-cache\`: send the value back in \`If-None-Match\` for a 304 with no body while nothing changed. What each version covers, and the PDF cache: ${guides.link('invoices-and-pdfs')}.

## Rate limiting
Counted per client directory when the credentials are valid, else per IP; every request that reaches a route counts (401s too), unknown paths, 405s and OPTIONS do not. A counted response says what is left in its headers (\`X-RateLimit-*\`, and \`RateLimit-Policy\` and \`RateLimit\` of draft-ietf-httpapi-ratelimit-headers); a 429 (\`Too Many Attempts.\`) adds \`Retry-After\`, equal to the \`t\` of \`RateLimit\`. When the limiter's store does not answer, requests go through uncounted (fail open).

## Availability
A dependency that is gone, or a job (PDF render, file store) that does not finish within \`JOB_TIMEOUT_MS\`, is answered 503 with \`Retry-After\`; nothing is half-written. Every response carries \`X-Request-Id\` (yours when it is up to 128 visible ASCII characters), which appears in every log line about the request. What each fault gives, and when to retry: ${guides.link('errors-and-retries')}.

## Events and webhooks
Every committed change to your invoices and order files, whoever made it (this API or a system writing the database), becomes an event: follow them with \`GET /events\`, or receive them as signed POSTs at a webhook endpoint (Standard Webhooks; the \`webhooks\` section). Cursors, retries, signatures and a receiver: ${guides.link('events-and-webhooks')}.

## Operations (no credentials, not rate limited)
\`GET /v1/openapi.json\` is this document, \`GET /v1/docs\` this page and \`GET /v1/guides\` the guides it links to, served entirely by the API. Health checks and metrics are for operators: ${guides.link('observability')}.
`.trim();
}
