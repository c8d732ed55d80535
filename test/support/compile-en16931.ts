import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { compileRules, compiledRulesFile, RULE_SETS } from './xml-validation.js';

/**
 * `pnpm test:en16931-compile`: compiles the EN 16931 rules (UBL and CII) and
 * the national rules (XRechnung, Peppol, CIUS-RO) for SaxonJS and writes them,
 * gzipped, beside each XSLT, named by the XSLT's hash and SaxonJS's version. Run it after changing either; the old
 * files can go.
 */
const dir = await mkdtemp(path.join(os.tmpdir(), 'en16931-'));
try {
  for (const syntax of process.argv.length > 2 ? (process.argv.slice(2) as typeof RULE_SETS) : RULE_SETS) {
    const target = await compiledRulesFile(syntax);
    const sef = path.join(dir, `${syntax}.sef.json`);
    await compileRules(syntax, sef);
    await writeFile(target, gzipSync(await readFile(sef), { level: 9 }));
    console.log(`wrote ${path.relative(process.cwd(), target)}`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
