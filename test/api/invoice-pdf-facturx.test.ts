import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFString, PDFHexString } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { iccComponents, iccProblems, infoXmpDisagreements, parseXmp, pdfAFacts, xmpText, xmpValues, XMP_TWIN } from '../support/pdfa-facts.js';
import { XSD, xsdErrors } from '../support/xml-validation.js';

const run = promisify(execFile);
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.stop();
});

async function saved(response: Response, name: string): Promise<string> {
  const file = path.join(api.dataDir, `${name}-${Date.now()}-${Math.random()}.pdf`);
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  return file;
}

/** The embedded files of a PDF, by name, as pdfdetach (poppler-utils) saves them. */
async function attachment(pdf: string, name: string): Promise<Buffer> {
  const list = (await run('pdfdetach', ['-list', pdf])).stdout;
  expect(list).toContain(name);
  const out = path.join(api.dataDir, `detached-${Date.now()}-${Math.random()}.xml`);
  const index = list
    .split('\n')
    .find((line) => line.endsWith(` ${name}`))!
    .split(':')[0]!
    .trim();
  await run('pdfdetach', ['-save', index, '-o', out, pdf]);
  return readFile(out);
}

describe('GET /invoices/{id}/pdf?format=facturx', () => {
  it('when Factur-X is asked in German, then a PDF/A-3b with the CII XML embedded byte for byte as the cii answer, relationship Alternative', async () => {
    const response = await api.call('/invoices/9005/pdf?lang=de&format=facturx');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="KOR_11_2026_0001.pdf"');
    const file = await saved(response, 'facturx');

    const embedded = await attachment(file, 'factur-x.xml');
    const cii = Buffer.from(await (await api.call('/invoices/9005/e-invoice?format=cii&lang=de')).arrayBuffer());
    expect(embedded.equals(cii)).toBe(true);
    const xmlFile = path.join(api.dataDir, 'embedded.xml');
    await writeFile(xmlFile, embedded);
    expect(await xsdErrors(XSD.cii, [xmlFile])).toEqual([]);

    const meta = (await run('pdfinfo', ['-meta', file])).stdout;
    expect(meta).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    expect(meta).toMatch(/<pdfaid:conformance>B<\/pdfaid:conformance>/);
    expect(meta).toMatch(/<fx:DocumentFileName>factur-x.xml<\/fx:DocumentFileName>/);
    expect(meta).toMatch(/<fx:ConformanceLevel>EN 16931<\/fx:ConformanceLevel>/);

    // PDF/A: every font embedded.
    const fonts = (await run('pdffonts', [file])).stdout
      .split('\n')
      .slice(2)
      .filter((line) => line.trim() !== '');
    expect(fonts.length).toBeGreaterThan(0);
    for (const font of fonts) expect(/\s(yes|no)\s+(?:yes|no)\s+(?:yes|no)\s+\d+\s+\d+\s*$/.exec(font)?.[1], font).toBe('yes');

    const text = (await run('pdftotext', ['-layout', file, '-'])).stdout;
    expect(text).toContain('KOR/11/2026/0001');
    expect(text).toMatch(/Korrekturrechnung|Rechnung/);

    const pdf = await PDFDocument.load(await readFile(file), { updateMetadata: false });
    const catalog = pdf.catalog;
    const intents = catalog.lookup(PDFName.of('OutputIntents'), PDFArray);
    expect(intents.size()).toBe(1);
    expect((intents.lookup(0, PDFDict).get(PDFName.of('S')) as PDFName).asString()).toBe('/GTS_PDFA1');
    const af = catalog.lookup(PDFName.of('AF'), PDFArray);
    const specs = Array.from({ length: af.size() }, (_unused, index) => af.lookup(index, PDFDict));
    const facturX = specs.find((spec) => {
      const name = spec.lookup(PDFName.of('UF')) ?? spec.lookup(PDFName.of('F'));
      return (name instanceof PDFString || name instanceof PDFHexString) && name.decodeText() === 'factur-x.xml';
    });
    expect(facturX).toBeDefined();
    expect((facturX!.get(PDFName.of('AFRelationship')) as PDFName).asString()).toBe('/Alternative');
  });

  it("when Chromium's PDF 1.4 is made Factur-X, then header, information dictionary, XMP and output intent agree as PDF/A-3 asks (ISO 19005-3 6.1.2, 6.6.2.3.1, 6.2.3)", async () => {
    const plain = await pdfAFacts(Buffer.from(await (await api.call('/invoices/9001/pdf?lang=pl')).arrayBuffer()));
    expect(plain.headerVersion).toBe('1.4');
    const response = await api.call('/invoices/9001/pdf?lang=pl&format=facturx');
    expect(response.status).toBe(200);
    const facts = await pdfAFacts(Buffer.from(await response.arrayBuffer()));

    expect(facts.headerVersion).toBe('1.7');
    expect([...facts.binaryComment!].filter((byte) => byte > 127).length).toBeGreaterThanOrEqual(4);
    expect(facts.catalogVersion).toBeNull();
    const xmp = await parseXmp(xmpText(facts));
    expect(xmpValues(xmp, 'pdf:PDFVersion')).toEqual([facts.headerVersion]);

    expect(Object.keys(facts.info).sort()).toEqual(Object.keys(XMP_TWIN).sort());
    expect(infoXmpDisagreements(facts, xmp)).toEqual([]);
    expect([xmpValues(xmp, 'pdfaid:part'), xmpValues(xmp, 'pdfaid:conformance')]).toEqual([['3'], ['B']]);

    expect(facts.outputProfiles).toHaveLength(1);
    const [profile] = facts.outputProfiles;
    expect(iccProblems(profile!.icc)).toEqual([]);
    expect(profile!.n).toBe(3);
    expect(iccComponents(profile!.icc)).toBe(3);
  });

  it('when Factur-X and the plain PDF are asked, then two versions: the ETag (and the cache key) depend on the format', async () => {
    const plain = await api.call('/invoices/9001/pdf');
    const facturX = await api.call('/invoices/9001/pdf?format=facturx');
    expect(facturX.status).toBe(200);
    const etag = facturX.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(etag).not.toBe(plain.headers.get('etag'));
    expect((await run('pdfdetach', ['-list', await saved(plain, 'plain')])).stdout).toMatch(/^0 embedded files/);
    await facturX.arrayBuffer();
    const again = await api.call('/invoices/9001/pdf?format=facturx', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    const cached = await api.call('/invoices/9001/pdf?format=facturx');
    expect(cached.headers.get('etag')).toBe(etag);
    expect((await run('pdfdetach', ['-list', await saved(cached, 'cached')])).stdout).toContain('factur-x.xml');
  });

  it.each(['?format=xml', '?format=FACTURX', '?format=pdf&format=facturx'])('when the query is %s, then 422 naming format', async (query) => {
    const response = await api.call(`/invoices/9001/pdf${query}`);
    expect(response.status).toBe(422);
    expect(Object.keys((await envelopeOf(response)).errors ?? {})).toEqual(['format']);
  });
});
