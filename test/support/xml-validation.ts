import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '../fixtures');

/** The official schemas checked into test/fixtures/xsd (see its README). */
export const XSD = {
  ublInvoice: path.join(fixtures, 'xsd/ubl-2.1/maindoc/UBL-Invoice-2.1.xsd'),
  ublCreditNote: path.join(fixtures, 'xsd/ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd'),
  cii: path.join(fixtures, 'xsd/cii-d16b/data/standard/CrossIndustryInvoice_100pD16B.xsd'),
  /** The Polish KSeF structure FA(3); its base schemas are imported by URL, see KSEF_CATALOG. */
  ksefFa3: path.join(fixtures, 'xsd/ksef-fa3/schemat_FA(3)_v1-0E.xsd'),
};

/** An XML catalog that maps the Ministry's schema URLs to the copies beside FA(3), so xmllint runs with --nonet. */
export const KSEF_CATALOG = path.join(fixtures, 'xsd/ksef-fa3/catalog.xml');

/**
 * Validates files against one XSD with xmllint (Debian's libxml2-utils),
 * in batches; returns xmllint's complaints, empty when every file is valid.
 */
export async function xsdErrors(schema: string, files: string[], catalog?: string): Promise<string[]> {
  const errors: string[] = [];
  // With a catalog, nothing is fetched: a URL the catalog does not map is an error, not a download.
  const options = catalog ? { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, XML_CATALOG_FILES: catalog } } : { maxBuffer: 64 * 1024 * 1024 };
  for (let start = 0; start < files.length; start += 100) {
    const batch = files.slice(start, start + 100);
    const result = await run('xmllint', [...(catalog ? ['--nonet'] : []), '--noout', '--schema', schema, ...batch], options).catch(
      (error: { stderr?: string; code?: number }) => ({ stderr: error.stderr ?? String(error), stdout: '' }),
    );
    errors.push(...result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.endsWith(' validates')));
  }
  return errors;
}

/**
 * The validation artefacts (XSLT generated from the official schematron) checked into test/fixtures: the EN 16931
 * rules per syntax, and the national rules that run after them (see test/fixtures/xsd/README.md for each source).
 */
const RULES = {
  ubl: path.join(fixtures, 'en16931/EN16931-UBL-validation.xslt'),
  cii: path.join(fixtures, 'en16931/EN16931-CII-validation.xslt'),
  'xrechnung-ubl': path.join(fixtures, 'xrechnung/XRechnung-UBL-validation.xslt'),
  'xrechnung-cii': path.join(fixtures, 'xrechnung/XRechnung-CII-validation.xslt'),
  peppol: path.join(fixtures, 'peppol/PEPPOL-EN16931-UBL.xslt'),
  'cius-ro': path.join(fixtures, 'cius-ro/ROeFactura-UBL-validation-Invoice_v1.0.9.xslt'),
};
export type RuleSet = keyof typeof RULES;
export const RULE_SETS = Object.keys(RULES) as RuleSet[];

/** The compiler's version decides the compiled file's format: a new SaxonJS is a new file. */
const SAXON_VERSION = (require('saxon-js/package.json') as { version: string }).version;

/** Where the compiled rules of one XSLT and SaxonJS version are checked in (gzip, about 150 KB each). */
export async function compiledRulesFile(syntax: RuleSet): Promise<string> {
  const xslt = await readFile(RULES[syntax]);
  const hash = createHash('sha256').update(xslt).digest('hex').slice(0, 16);
  return path.join(path.dirname(RULES[syntax]), `${syntax}-${hash}-saxon-${SAXON_VERSION}.sef.json.gz`);
}

/** Compiles the XSLT for SaxonJS (xslt3 -export): about a minute of CPU per syntax. */
export async function compileRules(syntax: RuleSet, target: string): Promise<void> {
  await run(process.execPath, [require.resolve('xslt3/xslt3.js'), `-xsl:${RULES[syntax]}`, `-export:${target}`, '-nogo', '-relocate:on'], {
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * The XSLT compiled for SaxonJS. Compiling takes about a minute per syntax,
 * so the compiled rules are checked in next to the XSLT
 * (`pnpm test:en16931-compile` writes them) and unpacked under
 * node_modules/.cache; without a checked-in file for this XSLT and SaxonJS
 * version the tests compile it themselves, once per machine.
 */
async function compiledRules(syntax: RuleSet): Promise<string> {
  const packed = await compiledRulesFile(syntax);
  const dir = path.resolve(here, '../../node_modules/.cache/en16931-sef');
  const sef = path.join(dir, path.basename(packed, '.gz'));
  if (
    await stat(sef).then(
      () => true,
      () => false,
    )
  )
    return sef;
  await mkdir(dir, { recursive: true });
  const partial = `${sef}.${process.pid}.tmp`;
  const checkedIn = await readFile(packed).catch(() => null);
  if (checkedIn) await writeFile(partial, gunzipSync(checkedIn));
  else await compileRules(syntax, partial);
  // Two test processes may unpack or compile at once; each renames a whole file.
  await rename(partial, sef);
  return sef;
}

/**
 * The EN 16931 business rules (BR-*, BR-CO-*, BR-S-*, BR-E-*, BR-AE-*, and
 * the syntax and code-list rules of the artefacts) run on one document with
 * SaxonJS; returns the failed assertions (fatal and warning alike) as
 * "id flag text", empty when the document passes.
 */
export async function en16931Failures(syntax: 'ubl' | 'cii', file: string): Promise<string[]> {
  return schematronFailures(syntax, file);
}

/**
 * One set of rules (EN 16931 or a national CIUS) run on one document with SaxonJS: the failed assertions as
 * "id flag text", fatal, error and warning alike; empty when every assertion holds.
 */
export async function schematronFailures(syntax: RuleSet, file: string): Promise<string[]> {
  const SaxonJS = require('saxon-js') as {
    transform(options: Record<string, unknown>, mode: 'async'): Promise<{ principalResult: string }>;
  };
  const result = await SaxonJS.transform({ stylesheetFileName: await compiledRules(syntax), sourceFileName: file, destination: 'serialized' }, 'async');
  return [...result.principalResult.matchAll(/<svrl:failed-assert\b([^>]*)>[\s\S]*?<svrl:text>([\s\S]*?)<\/svrl:text>/g)].map((match) => {
    const id = /\bid="([^"]*)"/.exec(match[1]!)?.[1] ?? '?';
    const flag = /\bflag="([^"]*)"/.exec(match[1]!)?.[1] ?? '?';
    return `${id} ${flag} ${match[2]!.trim()}`;
  });
}
