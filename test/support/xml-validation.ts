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
};

/**
 * Validates files against one XSD with xmllint (Debian's libxml2-utils),
 * in batches; returns xmllint's complaints, empty when every file is valid.
 */
export async function xsdErrors(schema: string, files: string[]): Promise<string[]> {
  const errors: string[] = [];
  for (let start = 0; start < files.length; start += 100) {
    const batch = files.slice(start, start + 100);
    const result = await run('xmllint', ['--noout', '--schema', schema, ...batch], { maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { stderr?: string; code?: number }) => ({ stderr: error.stderr ?? String(error), stdout: '' }),
    );
    errors.push(...result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.endsWith(' validates')));
  }
  return errors;
}

/** The EN 16931 validation artefacts (XSLT from the schematron rules) checked into test/fixtures/en16931. */
const RULES = {
  ubl: path.join(fixtures, 'en16931/EN16931-UBL-validation.xslt'),
  cii: path.join(fixtures, 'en16931/EN16931-CII-validation.xslt'),
};

/** The compiler's version decides the compiled file's format: a new SaxonJS is a new file. */
const SAXON_VERSION = (require('saxon-js/package.json') as { version: string }).version;

/** Where the compiled rules of one XSLT and SaxonJS version are checked in (gzip, about 150 KB each). */
export async function compiledRulesFile(syntax: 'ubl' | 'cii'): Promise<string> {
  const xslt = await readFile(RULES[syntax]);
  const hash = createHash('sha256').update(xslt).digest('hex').slice(0, 16);
  return path.join(fixtures, 'en16931', `${syntax}-${hash}-saxon-${SAXON_VERSION}.sef.json.gz`);
}

/** Compiles the XSLT for SaxonJS (xslt3 -export): about a minute of CPU per syntax. */
export async function compileRules(syntax: 'ubl' | 'cii', target: string): Promise<void> {
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
async function compiledRules(syntax: 'ubl' | 'cii'): Promise<string> {
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
