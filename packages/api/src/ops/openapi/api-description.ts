export interface DeploymentFacts {
  timeZone: string;
  rateLimit: { max: number; windowSeconds: number };
  uploadMaxFiles: number;
}

/**
 * The document's front page: what a client can rely on where the spec is
 * silent (shared/contract.md and the README's "Decisions", in short), plus
 * this deployment's limits, so the page a client reads matches the server.
 */
export function apiDescription(facts: DeploymentFacts): string {
  return `
Orders and invoices of a logistics company, for client systems: attach files to orders, look orders up, list invoices and download them as PDF.

**This deployment:** \`APP_TIMEZONE=${facts.timeZone}\`, ${facts.rateLimit.max} requests per ${facts.rateLimit.windowSeconds} s, up to ${facts.uploadMaxFiles} files per upload.

## Authentication
Every endpoint needs both \`Authorization: Bearer <API_KEY>\` and \`X-Client-Directory: <directory>\` (the legacy header \`directory\` is still accepted; when both are sent, \`X-Client-Directory\` wins). A key of one directory never sees another's data: those ids answer 404, exactly like ids that do not exist.

## Envelope
Every JSON response, errors included, is \`{status, message, data}\` with \`status\` equal to the HTTP status; a 422 may add \`errors\` (\`{"field": ["message"]}\`). Success messages are \`OK\` (uploads: \`Files uploaded\` or \`N of M files uploaded\`). Internals (stacks, SQL, paths) never reach a client.

## Precedence
Unknown path (404) or method (405, with \`Allow\`), then rate limit (429), then credentials (401), then a missing order or invoice (404), then validation (422). \`HEAD\` works on every GET route; \`OPTIONS\` answers 204 with \`Allow\` and needs no credentials.

## Time
Every timestamp is an integer of Unix **seconds**, UTC. \`YYYY-MM-DD\` dates and the named periods are read in \`APP_TIMEZONE\`; periods are closed ranges of whole days.

## Query rules
- Enum values are lower case exactly as listed; spaces around list items are ignored; an empty list item, an unknown member, a parameter sent twice or in array/object form (\`types[]=s\`) is 422. An empty value counts as absent. A query string over 8 KiB is 414.
- \`page\` and \`per_page\` are whole numbers; \`total_pages\` is \`ceil(total / per_page)\` (0 when nothing matches).
- User text (\`search\`, \`customer_name\`, \`nr\`) is matched **literally** (\`%\`, \`_\` and \`\\\` are characters, not wildcards) and case-insensitively, Unicode-aware. List items are de-duplicated; \`search\`, \`customer_name\` and \`nr\` are at most 255 characters, each VAT number at most 64.
- Sorting breaks ties by \`id\` in the same direction, so pages never overlap or skip a row; a null \`payment_date\` sorts as the smallest value; text sorts case-insensitively.
- A path id that is not a positive integer in plain digits names no resource (404).

## Uploads
File parts are named \`files\` (\`files[]\` too). Each file 1 byte to 10 MiB; the whole body is cut off early with 413 past \`UPLOAD_MAX_FILES\` x 10 MiB + 1 MiB. Validation comes first and a failing request stores nothing; a client that aborts leaves nothing behind. A stored file always has both its row and its object; its content type is sniffed from its bytes; storage keys never come from the client's name.

## Safe retries and duplicates
An upload may carry \`Idempotency-Key\` (up to 255 visible ASCII characters, per client directory): its first answer that stored something is kept 24 h and a retry with the same key and the same files gets it again, with \`Idempotency-Replayed: true\`, storing nothing; the same key with other files, names, category or order is 422 naming \`Idempotency-Key\`; a retry while the first is still running is 409 with \`Retry-After\`. Answers that stored nothing (422, 503, ...) are not kept. A file whose bytes are already attached to the same order is not stored again: its item names the existing file (\`duplicate_of\`).

## Conditional requests and the PDF cache
\`GET /invoices\` answers carry a weak \`ETag\` of the body; PDF downloads a strong \`ETag\`, the SHA-256 of everything printed (the invoice and its related rows, the seller's company data, \`lang\`, \`duplicate\`) and of the template's version. Both come with \`Cache-Control: private, no-cache\`. Send the value back in \`If-None-Match\` to get 304 with no body while nothing changed; credentials, rate limit, tenancy (404) and validation (422) are checked first, and a 304 renders nothing. A rendered PDF is kept on the server under that version and served from there on the next download; any change to what is printed gives a new version, so an old PDF is never served for new data.

## Rate limiting
Counted per client directory when the credentials are valid, else per IP; every request that reaches a route counts (401s too), unknown paths, 405s and OPTIONS do not. Counted responses carry \`X-RateLimit-Limit\` and \`X-RateLimit-Remaining\` (what is left after this request), and the same as the IETF fields of draft-ietf-httpapi-ratelimit-headers: \`RateLimit-Policy: "default";q=<limit>;w=<window seconds>\` and \`RateLimit: "default";r=<remaining>;t=<seconds until the window resets>\` (\`r\` equals \`X-RateLimit-Remaining\`); a 429 (\`Too Many Attempts.\`) has Remaining 0, \`r=0\` and \`Retry-After\` (equal to \`t\`). When the limiter's store does not answer, requests go through (fail open).

## Availability
A dependency that is gone, or a job (PDF render, file store) that does not finish within \`JOB_TIMEOUT_MS\`, is answered 503 with \`Retry-After\`; nothing is half-written. Every response carries \`X-Request-Id\` (yours when it is up to 128 visible ASCII characters), which appears in every log line about the request.

## Events and webhooks
Every committed change to your invoices and order files, whoever made it (this API or a system writing the database), becomes an event: \`invoice.created\`, \`invoice.updated\` (with \`previous_attributes\`), \`invoice.deleted\`, \`order.file_attached\`. Follow them with \`GET /events?after=<next_after>&wait=30\` (ids only grow in the order you see them: keep \`next_after\` and you never skip or repeat one), or register a webhook endpoint and receive them as signed POSTs (Standard Webhooks; at least once, not ordered: deduplicate by \`webhook-id\`). A receiver in a few lines (Node, with the \`standardwebhooks\` package):

\`\`\`js
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
const hook = new Webhook(process.env.LOGI_WEBHOOK_SECRET); // whsec_... from POST /webhook-endpoints
createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c)).on('end', () => {
    try { const event = hook.verify(body, req.headers); /* store by event.id, then act */ res.writeHead(204).end(); }
    catch { res.writeHead(400).end(); } // not signed by us
  });
}).listen(8080);
\`\`\`

## Operations (no credentials, not rate limited)
- \`GET /v1/openapi.json\`: this document; \`GET /v1/docs\`: this page, served entirely by the API.
- \`GET /health/live\`: 200 while the process answers. \`GET /health/ready\`: 200 with \`data.checks\` when every dependency answers, else 503 naming the failing ones. With read replicas, \`data.replicas\` gives each one's state and \`data.degraded\` the ones skipped; a replica never makes it 503 (the primary serves).
- Prometheus metrics: \`GET /metrics\` on a separate listener (\`METRICS_HOST\`:\`METRICS_PORT\`), never on this port.
`.trim();
}
