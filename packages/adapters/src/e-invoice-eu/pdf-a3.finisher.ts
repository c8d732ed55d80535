import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFHeader, PDFName, PDFNumber, PDFRawStream, PDFRef } from '@cantoo/pdf-lib';
import { XmpPacket, type XmpName } from './xmp-packet.js';

/** PDF/A-3 is based on PDF 1.7 (ISO 19005-3 6.1.2); the header and the XMP's pdf:PDFVersion say so. */
const PDF_VERSION = { major: 1, minor: 7 } as const;

const DC = 'http://purl.org/dc/elements/1.1/';
const PDF = 'http://ns.adobe.com/pdf/1.3/';
const XMP = 'http://ns.adobe.com/xap/1.0/';
const xmp = (namespace: string, prefix: string, name: string): XmpName => ({ namespace, prefix, name });
const DC_TITLE = xmp(DC, 'dc', 'title');
const DC_CREATOR = xmp(DC, 'dc', 'creator');
const DC_DESCRIPTION = xmp(DC, 'dc', 'description');
const DC_DATE = xmp(DC, 'dc', 'date');
const PDF_KEYWORDS = xmp(PDF, 'pdf', 'Keywords');
const PDF_PRODUCER = xmp(PDF, 'pdf', 'Producer');
const PDF_VERSION_PROPERTY = xmp(PDF, 'pdf', 'PDFVersion');
const XMP_CREATOR_TOOL = xmp(XMP, 'xmp', 'CreatorTool');
const XMP_CREATE_DATE = xmp(XMP, 'xmp', 'CreateDate');
const XMP_MODIFY_DATE = xmp(XMP, 'xmp', 'ModifyDate');
const XMP_METADATA_DATE = xmp(XMP, 'xmp', 'MetadataDate');

/** The colour components of an ICC profile's colour space (ICC.1 7.2.6), for those an output intent can have. */
const ICC_COMPONENTS: Record<string, number> = { GRAY: 1, 'RGB ': 3, 'Lab ': 3, CMYK: 4 };

/**
 * Makes the library's Factur-X PDF what a PDF/A-3 validator accepts (XMP twins written from the information dictionary,
 * the ICC stream's `/N`, the PDF 1.7 header) (docs/contribute/decisions/0031-pdf-a3-finishing.md).
 */
export async function finishPdfA3(pdf: Uint8Array): Promise<Buffer> {
  const document = await PDFDocument.load(pdf, { updateMetadata: false });
  document.context.header = PDFHeader.forVersion(PDF_VERSION.major, PDF_VERSION.minor);
  const packet = metadataOf(document);
  writeInfoTwins(document, packet.xmp);
  packet.xmp.setText(PDF_VERSION_PROPERTY, `${PDF_VERSION.major}.${PDF_VERSION.minor}`);
  document.context.assign(packet.ref, document.context.stream(packet.xmp.toBytes(), { Type: 'Metadata', Subtype: 'XML' }));
  declareProfileComponents(document);
  return Buffer.from(await document.save());
}

function metadataOf(document: PDFDocument): { ref: PDFRef; xmp: XmpPacket } {
  const ref = document.catalog.get(PDFName.of('Metadata'));
  if (!(ref instanceof PDFRef)) throw new Error('The Factur-X PDF has no XMP metadata stream.');
  const stream = document.context.lookup(ref);
  if (!(stream instanceof PDFRawStream)) throw new Error("The Factur-X PDF's /Metadata is not a stream.");
  return { ref, xmp: XmpPacket.parse(decodePDFRawStream(stream).decode()) };
}

/**
 * Writes each information-dictionary entry's XMP twin, as ISO 19005-3
 * 6.6.2.3.1 maps them; a twin whose entry is absent goes. The dates are
 * written again to the dictionary too, both in UTC, so that their instant
 * and zone are the same however the dictionary had them.
 */
function writeInfoTwins(document: PDFDocument, packet: XmpPacket): void {
  const title = document.getTitle();
  const author = document.getAuthor();
  const subject = document.getSubject();
  const keywords = document.getKeywords();
  const creator = document.getCreator();
  const producer = document.getProducer();
  const created = document.getCreationDate();
  const modified = document.getModificationDate();

  twin(packet, DC_TITLE, title, (value) => packet.setDefaultLanguage(DC_TITLE, value));
  twin(packet, DC_CREATOR, author, (value) => packet.setSequence(DC_CREATOR, [value]));
  twin(packet, DC_DESCRIPTION, subject, (value) => packet.setDefaultLanguage(DC_DESCRIPTION, value));
  twin(packet, PDF_KEYWORDS, keywords, (value) => packet.setText(PDF_KEYWORDS, value));
  twin(packet, XMP_CREATOR_TOOL, creator, (value) => packet.setText(XMP_CREATOR_TOOL, value));
  twin(packet, PDF_PRODUCER, producer, (value) => packet.setText(PDF_PRODUCER, value));
  if (created) {
    document.setCreationDate(created);
    packet.setText(XMP_CREATE_DATE, xmpDate(created));
    packet.setSequence(DC_DATE, [xmpDate(created)]);
  } else packet.remove(XMP_CREATE_DATE);
  if (modified) {
    document.setModificationDate(modified);
    packet.setText(XMP_MODIFY_DATE, xmpDate(modified));
    packet.setText(XMP_METADATA_DATE, xmpDate(modified));
  } else packet.remove(XMP_MODIFY_DATE);
}

/** Writes a text entry's twin, or takes the twin out when the dictionary has no such entry. */
function twin(packet: XmpPacket, property: XmpName, value: string | undefined, write: (value: string) => void): void {
  if (value === undefined) packet.remove(property);
  else write(value);
}

/** An XMP date in UTC to the second, as pdf-lib writes the dictionary's (`D:YYYYMMDDHHmmSSZ`). */
function xmpDate(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** Sets each output intent profile's `/N` to the components its ICC header declares. */
function declareProfileComponents(document: PDFDocument): void {
  const intents = document.catalog.lookupMaybe(PDFName.of('OutputIntents'), PDFArray);
  for (let index = 0; index < (intents?.size() ?? 0); index++) {
    const profile = intents!.lookup(index, PDFDict).lookup(PDFName.of('DestOutputProfile'));
    if (!(profile instanceof PDFRawStream)) continue;
    const icc = decodePDFRawStream(profile).decode();
    const space = Buffer.from(icc.subarray(16, 20)).toString('latin1');
    const components = ICC_COMPONENTS[space];
    if (components === undefined) throw new Error(`An output intent's ICC profile has colour space ${JSON.stringify(space)}.`);
    profile.dict.set(PDFName.of('N'), PDFNumber.of(components));
  }
}
