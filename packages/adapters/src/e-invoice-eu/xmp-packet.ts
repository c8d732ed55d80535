import { create } from 'xmlbuilder2';

const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const XML = 'http://www.w3.org/XML/1998/namespace';
/** The packet header XMP asks for: the byte order mark, UTF-8 encoded, and the fixed id (XMP part 1, 7.3.2). */
const PACKET_BEGIN = 'begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"';

/** An XMP property's namespace and the prefix to write it with. */
export interface XmpName {
  namespace: string;
  prefix: string;
  name: string;
}

/** The few DOM members used here; xmlbuilder2 types its nodes with a package of its own. */
interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly childNodes: ArrayLike<DomNode>;
  readonly parentNode: DomNode | null;
  data: string;
  appendChild(child: DomNode): DomNode;
  removeChild(child: DomNode): DomNode;
}
interface DomElement extends DomNode {
  readonly namespaceURI: string | null;
  readonly localName: string;
  textContent: string | null;
  getAttributeNS(namespace: string | null, name: string): string | null;
  setAttributeNS(namespace: string | null, name: string, value: string): void;
  removeAttributeNS(namespace: string | null, name: string): void;
  getElementsByTagNameNS(namespace: string, name: string): ArrayLike<DomElement>;
}
interface DomDocument extends DomNode {
  readonly documentElement: DomElement;
  createElementNS(namespace: string, qualifiedName: string): DomElement;
  getElementsByTagNameNS(namespace: string, name: string): ArrayLike<DomElement>;
}
const ELEMENT = 1;
const PROCESSING_INSTRUCTION = 7;

/**
 * An XMP packet, parsed as XML, whose simple properties can be set to one
 * value and written back as UTF-8. Properties it is not asked about stay as
 * they were.
 */
export class XmpPacket {
  private constructor(
    private readonly builder: ReturnType<typeof create>,
    private readonly document: DomDocument,
  ) {}

  /**
   * Reads a packet's bytes: UTF-8 when they are UTF-8. Otherwise one
   * character a byte: @e-invoice-eu/core hands pdf-lib its packet as a string,
   * which pdf-lib writes one byte a character, so Latin-1 reads back what it
   * wrote (a character past U+00FF lost its high byte; the properties it could
   * hold that way are the ones set again from the information dictionary).
   */
  static parse(bytes: Uint8Array): XmpPacket {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = Buffer.from(bytes).toString('latin1');
    }
    const builder = create(text);
    return new XmpPacket(builder, builder.node as unknown as DomDocument);
  }

  /** A simple property (XMP Text, Date or AgentName). */
  setText(property: XmpName, value: string): void {
    this.replace(property).textContent = value;
  }

  /** A language alternative (rdf:Alt) with the one `x-default` entry, as PDF/A maps Title and Subject. */
  setDefaultLanguage(property: XmpName, value: string): void {
    const li = this.item(this.container(this.replace(property), 'Alt'));
    li.setAttributeNS(XML, 'xml:lang', 'x-default');
    li.textContent = value;
  }

  /** An ordered array (rdf:Seq), as PDF/A maps Author to dc:creator. */
  setSequence(property: XmpName, values: string[]): void {
    const seq = this.container(this.replace(property), 'Seq');
    for (const value of values) this.item(seq).textContent = value;
  }

  /** Takes a property out, wherever and however often it is written. */
  remove(property: XmpName): void {
    for (const description of this.descriptions()) {
      description.removeAttributeNS(property.namespace, property.name);
      for (const element of this.children(description)) {
        if (element.namespaceURI === property.namespace && element.localName === property.name) description.removeChild(element);
      }
    }
  }

  /** The packet as UTF-8, with the header's byte order mark as XMP asks for it. */
  toBytes(): Buffer {
    const header = Array.from(this.document.childNodes).find(
      (node) => node.nodeType === PROCESSING_INSTRUCTION && node.nodeName === 'xpacket' && node.data.startsWith('begin='),
    );
    if (!header) throw new Error('The XMP packet has no <?xpacket begin=...?> header.');
    header.data = PACKET_BEGIN;
    return Buffer.from(this.builder.end({ headless: true, prettyPrint: true, indent: '\t' }), 'utf8');
  }

  /** A fresh element for the property, where it was (or in a description of its namespace, or a new one). */
  private replace(property: XmpName): DomElement {
    const descriptions = this.descriptions();
    const home =
      descriptions.find((description) =>
        this.children(description).some((child) => child.namespaceURI === property.namespace && child.localName === property.name),
      ) ??
      descriptions.find((description) => this.children(description).some((child) => child.namespaceURI === property.namespace)) ??
      this.newDescription(property);
    this.remove(property);
    const element = this.document.createElementNS(property.namespace, `${property.prefix}:${property.name}`);
    home.appendChild(element);
    return element;
  }

  private descriptions(): DomElement[] {
    return Array.from(this.document.getElementsByTagNameNS(RDF, 'Description'));
  }

  private children(element: DomElement): DomElement[] {
    return (Array.from(element.childNodes) as DomElement[]).filter((child) => child.nodeType === ELEMENT);
  }

  private newDescription(property: XmpName): DomElement {
    const rdf = this.document.getElementsByTagNameNS(RDF, 'RDF')[0];
    if (!rdf) throw new Error('The XMP packet has no rdf:RDF.');
    const description = this.document.createElementNS(RDF, 'rdf:Description');
    description.setAttributeNS('http://www.w3.org/2000/xmlns/', `xmlns:${property.prefix}`, property.namespace);
    description.setAttributeNS(RDF, 'rdf:about', '');
    rdf.appendChild(description);
    return description;
  }

  private container(property: DomElement, kind: 'Alt' | 'Seq'): DomElement {
    return property.appendChild(this.document.createElementNS(RDF, `rdf:${kind}`)) as DomElement;
  }

  private item(container: DomElement): DomElement {
    return container.appendChild(this.document.createElementNS(RDF, 'rdf:li')) as DomElement;
  }
}
