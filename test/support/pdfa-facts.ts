import { createRequire } from 'node:module';
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRawStream, PDFString } from '@cantoo/pdf-lib';

/**
 * What a PDF/A validator reads of a PDF's identity, taken from its bytes:
 * the header, the document information dictionary, the XMP metadata stream
 * (parsed as XML by SaxonJS, not by what wrote it) and the output intents'
 * ICC profiles. The checks below compare them as ISO 19005-3 asks
 * (6.6.2.3.1 and 6.2.3; its 6.1.2 for the header).
 */

const require = createRequire(import.meta.url);
interface Saxon {
  getResource(options: { text: string; type: 'xml' }): Promise<unknown>;
  XPath: { evaluate(xpath: string, context: unknown, options: { namespaceContext: Record<string, string>; resultForm: 'array' }): string[] };
}
const SaxonJS = require('saxon-js') as Saxon;

export const XMP_NAMESPACES = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  dc: 'http://purl.org/dc/elements/1.1/',
  pdf: 'http://ns.adobe.com/pdf/1.3/',
  xmp: 'http://ns.adobe.com/xap/1.0/',
  pdfaid: 'http://www.aiim.org/pdfa/ns/id/',
  pdfaExtension: 'http://www.aiim.org/pdfa/ns/extension/',
  pdfaSchema: 'http://www.aiim.org/pdfa/ns/schema#',
  pdfaProperty: 'http://www.aiim.org/pdfa/ns/property#',
  fx: 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#',
};

const INFO_KEYS = ['Title', 'Author', 'Subject', 'Keywords', 'Creator', 'Producer', 'CreationDate', 'ModDate'] as const;
export type InfoKey = (typeof INFO_KEYS)[number];

/** A simple property of an rdf:Description, written as an element or as an attribute. */
const simple = (name: string) => `(//rdf:Description/${name}, //rdf:Description/@${name}) ! string()`;
/** The x-default entry of a language alternative (rdf:Alt). */
const alternative = (name: string) => `//rdf:Description/${name}/rdf:Alt/rdf:li[@xml:lang = 'x-default'] ! string()`;

/** ISO 19005-3 6.6.2.3.1 (as ISO 19005-2 Table 3): each Info entry and the XMP property it must equal. */
export const XMP_TWIN: Record<InfoKey, { property: string; xpath: string; kind: 'text' | 'date' }> = {
  Title: { property: 'dc:title', xpath: alternative('dc:title'), kind: 'text' },
  // dc:creator is an ordered array; Author is its one entry.
  Author: { property: 'dc:creator', xpath: '//rdf:Description/dc:creator/rdf:Seq/rdf:li ! string()', kind: 'text' },
  Subject: { property: 'dc:description', xpath: alternative('dc:description'), kind: 'text' },
  Keywords: { property: 'pdf:Keywords', xpath: simple('pdf:Keywords'), kind: 'text' },
  Creator: { property: 'xmp:CreatorTool', xpath: simple('xmp:CreatorTool'), kind: 'text' },
  Producer: { property: 'pdf:Producer', xpath: simple('pdf:Producer'), kind: 'text' },
  CreationDate: { property: 'xmp:CreateDate', xpath: simple('xmp:CreateDate'), kind: 'date' },
  ModDate: { property: 'xmp:ModifyDate', xpath: simple('xmp:ModifyDate'), kind: 'date' },
};

export interface PdfAFacts {
  /** The version in the first line, `%PDF-x.y`. */
  headerVersion: string | null;
  /** The bytes of the second line after its `%` (a binary comment has at least four above 127). */
  binaryComment: Buffer | null;
  /** The catalog's /Version, which would override the header. */
  catalogVersion: string | null;
  /** The information dictionary's entries that PDF/A maps to XMP, as text. */
  info: Partial<Record<InfoKey, string>>;
  /** The catalog's /Metadata stream (absent: empty bytes, no type). */
  metadata: { type: string | null; subtype: string | null; hasFilter: boolean; bytes: Buffer };
  /** Each output intent's DestOutputProfile: its /N and the ICC profile. */
  outputProfiles: Array<{ subtype: string | null; n: number | null; icc: Buffer }>;
  /** The trailer's /ID, as the two hex strings. */
  trailerId: string[];
}

export async function pdfAFacts(bytes: Uint8Array): Promise<PdfAFacts> {
  const buffer = Buffer.from(bytes);
  const lines = /^%PDF-(\d+\.\d+)\r?\n%([^\r\n]*)\r?\n/.exec(buffer.toString('latin1'));
  const pdf = await PDFDocument.load(bytes, { updateMetadata: false });
  const catalog = pdf.catalog;
  const info = pdf.context.lookup(pdf.context.trailerInfo.Info, PDFDict);
  const facts: PdfAFacts['info'] = {};
  for (const key of INFO_KEYS) {
    const value = info.lookup(PDFName.of(key));
    if (value instanceof PDFString || value instanceof PDFHexString) facts[key] = value.decodeText();
    else if (value !== undefined) throw new Error(`Info /${key} is not a string: ${String(value)}`);
  }
  const metadata = rawStream(catalog.lookup(PDFName.of('Metadata')));
  const intents = catalog.lookupMaybe(PDFName.of('OutputIntents'), PDFArray);
  const outputProfiles = [];
  for (let index = 0; index < (intents?.size() ?? 0); index++) {
    const intent = intents!.lookup(index, PDFDict);
    const profile = rawStream(intent.lookup(PDFName.of('DestOutputProfile')));
    if (!profile) throw new Error('An output intent without a DestOutputProfile stream.');
    const n = profile.dict.lookup(PDFName.of('N'));
    outputProfiles.push({
      subtype: nameOf(intent.lookup(PDFName.of('S'))),
      n: n instanceof PDFNumber ? n.asNumber() : null,
      icc: Buffer.from(decodePDFRawStream(profile).decode()),
    });
  }
  const id = pdf.context.trailerInfo.ID;
  const ids = id
    ? pdf.context
        .lookup(id, PDFArray)
        .asArray()
        .map((part) => (part instanceof PDFHexString ? part.asString() : String(part)))
    : [];
  return {
    headerVersion: lines?.[1] ?? null,
    binaryComment: lines ? Buffer.from(lines[2]!, 'latin1') : null,
    catalogVersion: nameOf(catalog.lookup(PDFName.of('Version')))?.slice(1) ?? null,
    info: facts,
    metadata: {
      type: metadata ? nameOf(metadata.dict.lookup(PDFName.of('Type'))) : null,
      subtype: metadata ? nameOf(metadata.dict.lookup(PDFName.of('Subtype'))) : null,
      hasFilter: metadata?.dict.has(PDFName.of('Filter')) ?? false,
      bytes: Buffer.from(metadata?.getContents() ?? []),
    },
    outputProfiles,
    trailerId: ids,
  };
}

function rawStream(value: unknown): PDFRawStream | null {
  return value instanceof PDFRawStream ? value : null;
}

function nameOf(value: unknown): string | null {
  return value instanceof PDFName ? value.asString() : null;
}

/** The XMP packet as text: UTF-8, strictly (a byte sequence that is not UTF-8 throws). */
export function xmpText(facts: PdfAFacts): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(facts.metadata.bytes);
}

/** An XMP packet parsed as XML, for XPath over it. */
export interface ParsedXmp {
  values(xpath: string): string[];
}

export async function parseXmp(text: string): Promise<ParsedXmp> {
  const document = await SaxonJS.getResource({ text, type: 'xml' });
  return { values: (xpath) => SaxonJS.XPath.evaluate(xpath, document, { namespaceContext: XMP_NAMESPACES, resultForm: 'array' }) };
}

/** A simple XMP property's values (none, one, or, wrongly, several). */
export function xmpValues(xmp: ParsedXmp, name: string): string[] {
  return xmp.values(simple(name));
}

/**
 * Where the information dictionary and the XMP disagree (ISO 19005-3
 * 6.6.2.3.1): an Info entry without its XMP twin or with another value, or
 * an XMP twin without its Info entry. Dates must be the same instant in the
 * same time zone. Empty when they agree.
 */
export function infoXmpDisagreements(facts: PdfAFacts, xmp: ParsedXmp): string[] {
  const problems: string[] = [];
  for (const key of INFO_KEYS) {
    const twin = XMP_TWIN[key];
    const info = facts.info[key];
    const values = xmp.values(twin.xpath);
    if (info === undefined) {
      if (values.length > 0) problems.push(`${twin.property} ${JSON.stringify(values)} without Info /${key}`);
      continue;
    }
    if (values.length !== 1) {
      problems.push(`Info /${key} ${JSON.stringify(info)}: ${values.length} values of ${twin.property} ${JSON.stringify(values)}`);
      continue;
    }
    const same = twin.kind === 'date' ? sameDate(pdfDate(info), xmpDate(values[0]!)) : info === values[0];
    if (!same) problems.push(`Info /${key} ${JSON.stringify(info)} but ${twin.property} ${JSON.stringify(values[0])}`);
  }
  return problems;
}

/** A moment as a date string gives it: the instant and the time zone offset it was written in. */
interface WrittenDate {
  epochMs: number;
  offsetMinutes: number;
}

function sameDate(a: WrittenDate | null, b: WrittenDate | null): boolean {
  return a !== null && b !== null && a.epochMs === b.epochMs && a.offsetMinutes === b.offsetMinutes;
}

/** A PDF date (ISO 32000-1 7.9.4) with its time and zone: `D:YYYYMMDDHHmmSSZ` or `D:YYYYMMDDHHmmSS+HH'mm'`. */
export function pdfDate(text: string): WrittenDate | null {
  const match = /^D:(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:(Z)(?:00'?00'?)?|([+-])(\d{2})'?(\d{2})'?)$/.exec(text);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, zulu, sign, offsetHours, offsetMins] = match;
  const offsetMinutes = zulu ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMins));
  const local = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  return { epochMs: local - offsetMinutes * 60_000, offsetMinutes };
}

/** An XMP date (ISO 8601 as XMP writes it) with its time and zone: `YYYY-MM-DDThh:mm:ss[.s]Z` or `...+hh:mm`. */
export function xmpDate(text: string): WrittenDate | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHours, offsetMins] = match;
  const offsetMinutes = zulu ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMins));
  const millis = fraction ? Math.round(Number(`0.${fraction}`) * 1000) : 0;
  const local = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), millis);
  return { epochMs: local - offsetMinutes * 60_000, offsetMinutes };
}

/** The colour components of an ICC colour space signature (ICC.1 7.2.6), for the ones PDF/A output intents use. */
const ICC_COMPONENTS: Record<string, number> = { GRAY: 1, 'RGB ': 3, 'Lab ': 3, CMYK: 4 };

/** The number of colour components an ICC profile's header declares, or null when it names no known colour space. */
export function iccComponents(icc: Buffer): number | null {
  return icc.length >= 20 ? (ICC_COMPONENTS[icc.toString('latin1', 16, 20)] ?? null) : null;
}

/**
 * What is wrong with an ICC profile used as an output intent's
 * DestOutputProfile (ISO 19005-3 6.2.3, ICC.1:2010 7 and 9): the header
 * (size, `acsp`, version 2 or 4, class `mntr` or `prtr`, a colour space and
 * a PCS), the tag table inside the profile, and the tags a matrix/TRC RGB
 * display profile needs. Empty when it is sound.
 */
export function iccProblems(icc: Buffer): string[] {
  if (icc.length < 132) return [`${icc.length} bytes: shorter than an ICC header and tag count`];
  const problems: string[] = [];
  const ascii = (start: number) => icc.toString('latin1', start, start + 4);
  if (icc.readUInt32BE(0) !== icc.length) problems.push(`header size ${icc.readUInt32BE(0)}, stream ${icc.length} bytes`);
  if (ascii(36) !== 'acsp') problems.push(`signature ${JSON.stringify(ascii(36))}, not "acsp"`);
  if (![2, 4].includes(icc[8]!)) problems.push(`version ${icc[8]}.${icc[9]! >> 4}`);
  if (!['mntr', 'prtr'].includes(ascii(12))) problems.push(`class ${JSON.stringify(ascii(12))}, not "mntr" or "prtr"`);
  if (iccComponents(icc) === null) problems.push(`colour space ${JSON.stringify(ascii(16))}`);
  if (!['XYZ ', 'Lab '].includes(ascii(20))) problems.push(`PCS ${JSON.stringify(ascii(20))}`);
  const count = icc.readUInt32BE(128);
  if (132 + count * 12 > icc.length) return [...problems, `tag table of ${count} tags runs past the profile`];
  const tags = new Set<string>();
  for (let index = 0; index < count; index++) {
    const entry = 132 + index * 12;
    const [signature, offset, size] = [ascii(entry), icc.readUInt32BE(entry + 4), icc.readUInt32BE(entry + 8)];
    if (offset < 132 + count * 12 || offset + size > icc.length) problems.push(`tag ${signature} at ${offset}+${size} outside the profile`);
    tags.add(signature);
  }
  if (ascii(16) === 'RGB ' && ascii(12) === 'mntr') {
    const needed = tags.has('A2B0') ? ['desc', 'wtpt', 'cprt', 'A2B0'] : ['desc', 'wtpt', 'cprt', 'rXYZ', 'gXYZ', 'bXYZ', 'rTRC', 'gTRC', 'bTRC'];
    for (const tag of needed) if (!tags.has(tag)) problems.push(`no ${tag} tag`);
  }
  return problems;
}
