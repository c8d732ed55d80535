import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@logi/config';
import { servedOpenApiDocument } from '@logi/api';

/**
 * docs/integrate/errors-and-retries.md lists, per endpoint, every status it
 * can answer and whether to send it again. The reference lists the answers
 * too: every status (and exact message) the served document gives an
 * operation must be in the page, in that operation's table or, for an
 * operation that takes a key, in the table every such operation shares.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const PAGE = 'docs/integrate/errors-and-retries.md';
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

interface Section {
  heading: string;
  /** Status -> the messages (`code` spans) of its rows. */
  statuses: Map<string, Set<string>>;
}

/** The `### ` sections of the page's "Every endpoint, every status", each with its table's rows. */
function sections(markdown: string): Section[] {
  const part = markdown.slice(markdown.indexOf('## Every endpoint, every status'));
  expect(part.length, 'the page has "## Every endpoint, every status"').toBeGreaterThan(100);
  const found: Section[] = [];
  for (const line of part.split('\n').slice(1)) {
    if (line.startsWith('## ')) break;
    if (line.startsWith('### ')) found.push({ heading: line.slice(4), statuses: new Map() });
    const row = /^\|\s*(\d{3})\s*\|([^|]*)\|/.exec(line);
    if (row && found.length > 0) {
      const messages = found.at(-1)!.statuses.get(row[1]!) ?? new Set<string>();
      for (const match of row[2]!.matchAll(/`([^`]+)`/g)) messages.add(match[1]!);
      found.at(-1)!.statuses.set(row[1]!, messages);
    }
  }
  return found;
}

/** The operations a heading names: `GET /v1/orders/by-nr`, several separated by commas. */
function operationsOf(heading: string): string[] {
  return [...heading.matchAll(/`(GET|POST|PATCH|DELETE|PUT) \/v1(\/[^`]*)`/g)].map((match) => `${match[1]!.toLowerCase()} ${match[2]}`);
}

type Json = Record<string, unknown>;

/** The exact messages an answer's schema allows (`const`, `enum`); none when it is a pattern or not an envelope. */
function messagesOf(schema: unknown): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const node = schema as Json;
  const own: string[] = [];
  const message = (node.properties as Json | undefined)?.message as Json | undefined;
  if (message) {
    if (typeof message.const === 'string') own.push(message.const);
    if (Array.isArray(message.enum)) own.push(...(message.enum as string[]));
    for (const option of (message.anyOf as Json[] | undefined) ?? []) if (typeof option.const === 'string') own.push(option.const);
  }
  return [...own, ...Object.entries(node).flatMap(([key, value]) => (key === 'properties' ? [] : messagesOf(value)))];
}

describe(PAGE, () => {
  it('when read beside the served document, then every status of every operation is in its table, with its exact messages', async () => {
    const document = servedOpenApiDocument(loadConfig({})) as unknown as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, Json> }>>;
      components: { responses: Record<string, Json> };
    };
    const page = sections(await readFile(path.join(ROOT, PAGE), 'utf8'));
    const common = page.find((section) => section.heading === 'Every endpoint with a key');
    expect(common, 'the table every operation with a key shares').toBeDefined();
    const byOperation = new Map<string, Section>();
    for (const section of page) for (const operation of operationsOf(section.heading)) byOperation.set(operation, section);

    const missing: string[] = [];
    let checked = 0;
    for (const [route, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item).filter(([method]) => METHODS.includes(method))) {
        const name = `${method} ${route}`;
        const own = byOperation.get(name);
        if (!own) {
          missing.push(`${name}: no section`);
          continue;
        }
        const takesKey = !(Array.isArray(operation.security) && operation.security.length === 0);
        for (const [status, declared] of Object.entries(operation.responses)) {
          const response = '$ref' in declared ? document.components.responses[String(declared.$ref).split('/').at(-1)!]! : declared;
          const shared = takesKey ? common!.statuses.get(status) : undefined;
          const listed = new Set([...(own.statuses.get(status) ?? []), ...(shared ?? [])]);
          if (!own.statuses.has(status) && !shared) {
            missing.push(`${name}: ${status}`);
            continue;
          }
          checked += 1;
          // A missing scope names the operation's own scope: its status is in the shared table, with `<scope>`.
          if (takesKey && status === '403') continue;
          for (const message of messagesOf(response)) if (!listed.has(message)) missing.push(`${name}: ${status} \`${message}\``);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  });

  it("when the page's tables are read, then a heading names its operations and a row its status and messages", () => {
    const page = sections(
      [
        '## Every endpoint, every status',
        '### `GET /v1/events`',
        '| Status | Message | When | Again? |',
        '| --- | --- | --- | --- |',
        '| 200 | `OK` | a page | yes |',
        '| 429 | `Too many waiting requests.` | long polls | yes |',
        '## Browsers',
        '### `GET /v1/invoices`',
      ].join('\n'),
    );
    expect(page).toHaveLength(1);
    expect(operationsOf(page[0]!.heading)).toEqual(['get /events']);
    expect([...page[0]!.statuses.keys()]).toEqual(['200', '429']);
    expect([...page[0]!.statuses.get('429')!]).toEqual(['Too many waiting requests.']);
    expect(operationsOf('`GET /v1/exports`, `GET /v1/exports/{export_id}`')).toEqual(['get /exports', 'get /exports/{export_id}']);
    expect(messagesOf({ allOf: [{ $ref: '#/x' }, { properties: { status: { const: 429 }, message: { enum: ['a', 'b'] } } }] })).toEqual(['a', 'b']);
  });
});
