import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

type Operation = { responses: Record<string, DocumentedResponse>; parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }> };
type DocumentedResponse = {
  description: string;
  headers?: Record<string, { required?: boolean; schema: Record<string, unknown> }>;
  content?: Record<string, { schema: Record<string, unknown> }>;
};
export type OpenApiDoc = { openapi: string; paths: Record<string, Record<string, Operation>>; [key: string]: unknown };

const DOC_ID = 'https://api.test/openapi.json';

/**
 * Checks real responses against the OpenAPI document the server publishes:
 * the status must be documented for that operation, every header the
 * document lists must be there and fit its schema, and the body must
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

  /** Asserts the response is documented and fits; returns the parsed body (JSON) or the bytes. */
  async expectDocumented(response: Response, method: string, path: string): Promise<unknown> {
    const where = `${method} ${path} -> ${response.status}`;
    const documented = this.operation(method, path).responses[String(response.status)];
    expect(documented, `${where} is documented`).toBeDefined();
    for (const [name, header] of Object.entries(documented!.headers ?? {})) {
      const value = response.headers.get(name);
      if (!header.required) continue;
      expect(value, `${where}: header ${name}`).not.toBeNull();
      const numeric = header.schema.type === 'integer' || header.schema.type === 'number';
      const typed = numeric && /^-?\d+(\.\d+)?$/.test(value!) ? Number(value) : value;
      const check = this.ajv.compile(header.schema);
      expect(check(typed), `${where}: header ${name}=${value} fits ${JSON.stringify(header.schema)}`).toBe(true);
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const content = documented!.content?.[mediaType];
    expect(content, `${where}: content type ${mediaType} is documented`).toBeDefined();
    if (mediaType !== 'application/json') return Buffer.from(await response.arrayBuffer());
    const body: unknown = await response.json();
    const validate = this.validatorFor(path, method, response.status, mediaType);
    expect(validate(body), `${where}: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`).toBe(true);
    return body;
  }

  private validatorFor(path: string, method: string, status: number, mediaType: string): ValidateFunction {
    const pointer = ['paths', path, method.toLowerCase(), 'responses', String(status), 'content', mediaType, 'schema']
      .map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const ref = `${DOC_ID}#/${pointer}`;
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    return validate;
  }
}
