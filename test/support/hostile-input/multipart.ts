/** Generated multipart bodies for the upload, what the contract lets them answer, and a raw sender. */
import http from 'node:http';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { type TestApi, authHeaders } from '../api-harness.js';
import { MAX_FILE_BYTES, UPLOAD_MAX_FILES, type Answer, codePoints } from './contract.js';
import { weighted } from './arbitraries.js';

export interface FilePart {
  kind: 'file';
  name: string;
  filename: string;
  size: number;
  fill: number;
  type: string | null;
}
export interface FieldPart {
  kind: 'field';
  name: string;
  value: string;
}
export type PartSpec = FilePart | FieldPart;
export type Shape = 'ok' | 'chunked' | 'truncated' | 'no-closing' | 'wrong-boundary' | 'no-boundary' | 'garbage' | 'not-multipart' | 'declared-too-large';

export const FILE_NAMES = [
  'cmr.pdf',
  '',
  '.',
  '..',
  'dir/',
  '../../etc/passwd',
  '/abs/path.txt',
  'C:\\Users\\me\\scan.pdf',
  'a/b\\c.txt',
  'zażółć gęślą jaźń.pdf',
  '😀.txt',
  'ملف\u202Etxt.exe',
  'e\u0301.txt',
  'x'.repeat(300),
  ' spaced .txt',
  '%0A%2F.txt',
  'c1\u0085.txt',
  'file',
  '𝔘𝔫𝔦.bin',
];
/** Names a part header cannot carry cleanly. */
export const DIRTY_FILE_NAMES = ['tab\there.pdf', 'quote".pdf', 'new\r\nline.pdf', 'nul\u0000.pdf', 'ends-with\\'];
export const CATEGORY_VALUES = [
  '1',
  '2',
  '3',
  '',
  'null',
  'NULL',
  'Null',
  '99',
  '0',
  '-3',
  '1x',
  'abc',
  ' 2 ',
  '02',
  '2.0',
  '２',
  '9'.repeat(30),
  'null ',
  '1,2',
];
export const PART_NAMES = ['files', 'files', 'files', 'files', 'files', 'files[]', 'files[]', 'other', 'category_id', 'FILES', 'files[0]', 'fïles', ''];
export const BOUNDARIES = ['simple', '----=_Part_0_123.456', "a'()+_,-./:=?b", 'with space inside', 'x'.repeat(70), 'b'];

export const sizeArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 12, arbitrary: fc.integer({ min: 1, max: 4096 }) },
  { weight: 1, arbitrary: fc.constant(MAX_FILE_BYTES) },
  { weight: 2, arbitrary: fc.constant(MAX_FILE_BYTES + 1) },
);
export const partArb: fc.Arbitrary<PartSpec> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('file' as const),
      name: fc.constantFrom(...PART_NAMES),
      filename: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...FILE_NAMES) },
        { weight: 1, arbitrary: fc.constantFrom(...DIRTY_FILE_NAMES) },
        { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
      ),
      size: sizeArb,
      fill: fc.integer({ min: 0, max: 255 }),
      type: fc.constantFrom('application/octet-stream', 'application/pdf', 'image/png', 'text/plain; charset=utf-8', 'x/y', null),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('field' as const),
      name: fc.constantFrom('category_id', 'category_id', 'files', 'other', 'files[]'),
      value: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...CATEGORY_VALUES) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) }),
    }),
  },
);
export const uploadArb = fc.record({
  order: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('3001', '3002', '3005', '03001', '%33001') },
    { weight: 2, arbitrary: fc.constantFrom('4001', '999999', 'abc', '0', '-1', '1.5', '3001abc', '%34001') },
  ),
  parts: fc.oneof({ weight: 1, arbitrary: fc.constant<PartSpec[]>([]) }, { weight: 12, arbitrary: fc.array(partArb, { minLength: 1, maxLength: 4 }) }),
  boundary: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 8, maxLength: 40 }).map((h) => `fc${h}`) },
    { weight: 2, arbitrary: fc.constantFrom(...BOUNDARIES) },
  ),
  typeCase: fc.constantFrom('multipart/form-data', 'MULTIPART/FORM-DATA', 'multipart/form-data; charset=utf-8'),
  preamble: weighted(1, 5),
  shape: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Shape>('ok') },
    { weight: 2, arbitrary: fc.constant<Shape>('chunked') },
    { weight: 2, arbitrary: fc.constant<Shape>('truncated') },
    { weight: 1, arbitrary: fc.constantFrom<Shape>('no-closing', 'wrong-boundary', 'no-boundary', 'garbage', 'not-multipart', 'declared-too-large') },
  ),
  cut: fc.double({ min: 0, max: 1, noNaN: true }),
  garbage: fc.uint8Array({ maxLength: 300 }),
});
export type Upload = typeof uploadArb extends fc.Arbitrary<infer T> ? T : never;

/**
 * A name or file name that a part header cannot carry cleanly (busboy may refuse or skip the part),
 * or an empty part name (RFC 7578 wants a name; whether that is unparseable is not decided).
 */
// eslint-disable-next-line no-control-regex -- control characters are what makes a header dirty
export const dirtyHeaderText = (text: string) => /["\r\n\u0000-\u001f\u007f]/.test(text) || text.endsWith('\\');

/** Asserted on its own below (a known divergence): such a part is read as a plain field. */
export const emptyNameNotOctetStream = (p: FilePart) => p.filename === '' && p.type !== 'application/octet-stream';

export function multipartBody(upload: Upload): { body: Buffer; contentType: string | null; closing: number } {
  const b = upload.boundary;
  const chunks: Buffer[] = upload.preamble ? [Buffer.from('This is a preamble, to be ignored.\r\n')] : [];
  for (const part of upload.parts) {
    const file = part.kind === 'file';
    const disposition = `form-data; name="${part.name}"${file ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${b}\r\nContent-Disposition: ${disposition}\r\n${file && part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`, 'utf8'));
    chunks.push(file ? Buffer.alloc(part.size, part.fill) : Buffer.from(part.value, 'utf8'), Buffer.from('\r\n'));
  }
  const closing = Buffer.from(`--${b}--\r\n`);
  const body = Buffer.concat([...chunks, closing]);
  // A boundary with characters outside a token (RFC 2045 tspecials, spaces) must be quoted.
  const quoted = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(b) ? b : `"${b}"`;
  return { body, contentType: `${upload.typeCase}; boundary=${quoted}`, closing: closing.length };
}

/** `category_id`: empty or null (any case) is none, an existing id names it; padded, zero-led or `2.0` forms are not decided. */
export function categoryVerdict(value: string): { id: number | null } | 'open' | 'invalid' {
  const known = (text: string) => (text === '' || text.toLowerCase() === 'null' ? null : ['1', '2', '3'].includes(text) ? Number(text) : undefined);
  const exact = known(value);
  if (exact !== undefined) return { id: exact };
  const loose = value
    .trim()
    .replace(/^0+(?=[0-9])/, '')
    .replace(/\.0+$/, '');
  return known(loose) !== undefined ? 'open' : 'invalid';
}

/** What the contract lets a well-formed upload to an existing order answer. */
export function judgeUpload(parts: PartSpec[]): { definite: Set<string>; open: Set<string>; categoryId: number | null | undefined } {
  const definite = new Set<string>();
  const open = new Set<string>();
  const fileFields = parts.filter((p) => p.name === 'files' || p.name === 'files[]');
  const fileCount = fileFields.filter((p) => p.kind === 'file').length;
  fileFields.forEach((p, i) => {
    // With no file at all, "files is required" and "files.N must be a file" are both true.
    if (p.kind === 'field') (fileCount === 0 ? open : definite).add(`files.${i}`);
    else if (p.size === 0 || p.size > MAX_FILE_BYTES) definite.add(`files.${i}`);
  });
  if (fileCount === 0 || fileCount > UPLOAD_MAX_FILES) definite.add('files');
  const categories = parts.filter((p) => p.name === 'category_id');
  let categoryId: number | null | undefined = null;
  if (categories.length > 1 || categories.some((p) => p.kind === 'file')) definite.add('category_id');
  else if (categories.length === 1) {
    const verdict = categoryVerdict((categories[0] as FieldPart).value);
    if (verdict === 'invalid') definite.add('category_id');
    else if (verdict === 'open') {
      open.add('category_id');
      categoryId = undefined;
    } else categoryId = verdict.id;
  }
  return { definite, open, categoryId };
}

/**
 * The name the contract promises back: the base name without control, bidirectional (Unicode's Bidi_Control),
 * zero-width or line-separating characters, in NFC; open when trimming or length decide.
 */
export function expectedFileName(filename: string): string | undefined {
  if (/[\\%]/.test(filename)) return undefined;
  const base = (filename.split('/').pop() ?? '').replace(/[\p{Cc}\p{Bidi_Control}\u200b-\u200d\u2060\ufeff\p{Zl}\p{Zp}]/gu, '').normalize('NFC');
  if (base !== base.trim() || codePoints(base) > 255) return undefined;
  return base === '' || base === '.' || base === '..' ? 'file' : base;
}

export function sendRaw(
  api: TestApi,
  pathname: string,
  headers: Record<string, string>,
  body: Buffer,
  mode: { chunked?: boolean; declared?: number },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = mode.chunked ? {} : { 'Content-Length': String(mode.declared ?? body.length) };
    const req = http.request(`${api.base}${pathname}`, { method: 'POST', headers: { ...authHeaders('baltic'), ...headers, ...length } });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') });
        req.destroy();
      });
      res.on('error', reject);
    });
    // After the answer, the server may close while we are still sending: that is allowed.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    if (mode.chunked) {
      for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
      req.end();
    } else if (mode.declared !== undefined) req.write(body);
    else req.end(body);
  });
}

export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}
