import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

type Operation = { responses: Record<string, DocumentedResponse>; parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }> };
type DocumentedResponse = {
  $ref?: string;
  description: string;
  headers?: Record<string, { required?: boolean; schema: Record<string, unknown> }>;
  content?: Record<string, { schema: Record<string, unknown> }>;
};
type WebhookOperation = {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
  requestBody: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
};
export type OpenApiDoc = { openapi: string; paths: Record<string, Record<string, Operation>>; [key: string]: unknown };

const DOC_ID = 'https://api.test/openapi.json';

/**
 * Checks real responses against the OpenAPI document the server publishes:
 * the status must be documented for that operation, every header the
 * document lists must be there when required and fit its schema when sent, and the body must
 * validate against the documented schema (JSON Schema 2020-12, as OpenAPI 3.1).
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDoc) {
    this.ajv.addSchema(doc, DOC_ID);
  }

  operation(method: string, path: string): Operation {
    const operation = this.doc.paths[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${method} ${path} is not in the document`);
    return operation;
  }

  /**
   * Where the document answers this status for the operation: its own entry
   * (or `default`), followed to a shared response (`#/components/responses/...`)
   * when it is a reference. Undefined when the status is not documented.
   */
  documentedResponse(method: string, path: string, status: number): { response: DocumentedResponse; pointer: string[] } | undefined {
    const responses = this.operation(method, path).responses;
    const key = String(status) in responses ? String(status) : 'default' in responses ? 'default' : undefined;
    if (key === undefined) return undefined;
    let pointer = ['paths', path, method.toLowerCase(), 'responses', key];
    let response = responses[key]!;
    while (response.$ref) {
      const target = response.$ref;
      if (!target.startsWith('#/')) throw new Error(`${method} ${path} ${key}: only local references are followed, not ${target}`);
      pointer = target
        .slice(2)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
      response = pointer.reduce<any>((node, part) => node?.[part], this.doc) as DocumentedResponse;
      if (!response) throw new Error(`${method} ${path} ${key}: ${target} is not in the document`);
    }
    return { response, pointer };
  }

  /** Asserts the response is documented and fits; returns the parsed body (JSON) or the bytes. */
  async expectDocumented(response: Response, method: string, path: string): Promise<unknown> {
    const where = `${method} ${path} -> ${response.status}`;
    const found = this.documentedResponse(method, path, response.status);
    expect(found, `${where} is documented`).toBeDefined();
    const documented = found!.response;
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const value = response.headers.get(name);
      // A header the document lists must be there when required, and fit its schema whenever it is there.
      if (header.required) expect(value, `${where}: header ${name}`).not.toBeNull();
      if (value === null) continue;
      const numeric = header.schema.type === 'integer' || header.schema.type === 'number';
      const typed = numeric && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      const check = this.ajv.compile(header.schema);
      expect(check(typed), `${where}: header ${name}=${value} fits ${JSON.stringify(header.schema)}`).toBe(true);
    }
    if (!documented.content) {
      // An answer without content (a 304): nothing may come.
      expect((await response.arrayBuffer()).byteLength, `${where}: a body where the document has none`).toBe(0);
      return null;
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    // OpenAPI media type ranges: the exact type first, then `type/*`, then `*/*` (stored files keep their own types).
    const content = documented.content[mediaType] ?? documented.content[`${mediaType.split('/')[0]}/*`] ?? documented.content['*/*'];
    expect(content, `${where}: content type ${mediaType} is documented`).toBeDefined();
    if (mediaType !== 'application/json') return Buffer.from(await response.arrayBuffer());
    const body: unknown = await response.json();
    const validate = this.validatorFor([...found!.pointer, 'content', mediaType, 'schema']);
    expect(validate(body), `${where}: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`).toBe(true);
    return body;
  }

  /**
   * Asserts a request the service sent to a webhook endpoint fits the
   * document's `webhooks` entry `name` (OpenAPI 3.1): its method, every
   * header the entry lists (there when required, fitting its schema), its
   * media type and its body. Returns the parsed body.
   */
  expectWebhookRequest(name: string, request: { method: string; headers: Record<string, string | string[] | undefined>; body: string }): unknown {
    const entry = (this.doc.webhooks as Record<string, Record<string, WebhookOperation>> | undefined)?.[name]?.[request.method.toLowerCase()];
    expect(entry, `webhook ${name} ${request.method} is documented`).toBeDefined();
    for (const parameter of entry!.parameters ?? []) {
      expect(parameter.in, `webhook ${name}: parameter ${parameter.name}`).toBe('header');
      const value = request.headers[parameter.name.toLowerCase()];
      if (parameter.required) expect(value, `webhook ${name}: header ${parameter.name}`).toBeDefined();
      if (value === undefined) continue;
      const check = this.ajv.compile(parameter.schema);
      expect(check(value), `webhook ${name}: header ${parameter.name}=${String(value)} fits ${JSON.stringify(parameter.schema)}`).toBe(true);
    }
    const mediaType = String(request.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    expect(Object.keys(entry!.requestBody.content), `webhook ${name}: content type ${mediaType} is documented`).toContain(mediaType);
    const body: unknown = JSON.parse(request.body);
    const validate = this.validatorFor(['webhooks', name, request.method.toLowerCase(), 'requestBody', 'content', mediaType, 'schema']);
    expect(validate(body), `webhook ${name}: ${this.ajv.errorsText(validate.errors)}\n${request.body.slice(0, 500)}`).toBe(true);
    return body;
  }

  private validatorFor(parts: string[]): ValidateFunction {
    const pointer = parts.map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
    const ref = `${DOC_ID}#/${pointer}`;
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    return validate;
  }
}
