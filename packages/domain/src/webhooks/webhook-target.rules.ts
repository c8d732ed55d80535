import ipaddr from 'ipaddr.js';

/**
 * What a webhook URL may be (project issue 18): a webhook URL is a way into the
 * operator's network, so a target must be a public host unless the operator
 * runs on-premise receivers (WEBHOOK_ALLOW_PRIVATE_TARGETS). These are the
 * rules that need no DNS; the addresses a name resolves to, and the address a
 * delivery actually connects to, are judged with `isForbiddenAddress`.
 */

const URL_MAX_LENGTH = 2048;

export const WebhookUrlMessages = {
  INVALID: 'The url must be a valid URL.',
  NOT_HTTPS: 'The url must be an https URL.',
  TOO_LONG: `The url must not be greater than ${URL_MAX_LENGTH} characters.`,
  USER_INFO: 'The url must not contain user info.',
  PRIVATE_TARGET: 'The url must not point to a private, loopback or link-local address.',
} as const;

export type WebhookUrlCheck =
  | {
      ok: true;
      url: URL;
      /** The host to resolve and connect to: an address without brackets, or a lower-case name without trailing dots. */
      host: string;
      /** The host is an IP address (in whatever spelling it was written), so no DNS is involved. */
      ipLiteral: boolean;
    }
  | { ok: false; message: string };

export interface WebhookTargetOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: http and non-public hosts are allowed (tests, on-premise receivers). */
  allowPrivateTargets: boolean;
}

/**
 * Checks a webhook URL as far as it can be checked without DNS.
 *
 * A fragment is accepted: it is never sent over HTTP (the sender drops it),
 * and the contract does not forbid it. Any port is accepted: the address, not
 * the port, is what keeps requests out of the operator's network, and public
 * receivers do listen on ports other than 443.
 */
export function checkWebhookUrl(raw: string, options: WebhookTargetOptions): WebhookUrlCheck {
  if (raw.length > URL_MAX_LENGTH) return refuse(WebhookUrlMessages.TOO_LONG);
  // The WHATWG parser silently drops surrounding spaces, tabs and newlines and
  // reads `https:host` and `https:\\host` as `https://host`: refusing those
  // spellings keeps what is stored equal to what is sent and to what any other
  // URL parser would read.
  // eslint-disable-next-line no-control-regex -- a URL with control characters is what this refuses
  const controlOrSpace = /[\u0000-\u0020\u007f-\u009f]/;
  if (controlOrSpace.test(raw) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return refuse(WebhookUrlMessages.INVALID);
  const url = parseUrl(raw);
  if (url === null) return refuse(WebhookUrlMessages.INVALID);

  const schemes = options.allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return refuse(WebhookUrlMessages.NOT_HTTPS);
  if (url.username !== '' || url.password !== '') return refuse(WebhookUrlMessages.USER_INFO);

  const target = targetHost(url.hostname);
  if (target === null) return refuse(WebhookUrlMessages.INVALID);
  if (!options.allowPrivateTargets && isForbiddenHost(target)) return refuse(WebhookUrlMessages.PRIVATE_TARGET);
  return { ok: true, url, host: target.host, ipLiteral: target.ipLiteral };
}

/**
 * Whether a resolved or connected address must not be a webhook target: anything but a public unicast address, IPv4 read
 * only in canonical form, IPv6 judged by the IPv4 address it carries (docs/contribute/decisions/0033-webhook-target-addresses.md).
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return !isPublicIPv4(ipaddr.IPv4.parse(bare));
  const ipv6 = withHexTail(bare);
  if (ipv6 !== null && ipaddr.IPv6.isValid(ipv6)) return !isPublicIPv6(ipaddr.IPv6.parse(ipv6));
  return true;
}

/**
 * ipaddr.js reads any dotted tail after `::` as IPv4-mapped (`::8.8.8.8` as
 * `::ffff:8.8.8.8`), while it is the IPv4-compatible `::808:808`; writing the
 * tail as two hex groups first gets every form read as what it is.
 */
function withHexTail(address: string): string | null {
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)(%.*)?$/.exec(address);
  if (tail === null) return address;
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail[2]!)) return null;
  const [a, b, c, d] = ipaddr.IPv4.parse(tail[2]!).octets as [number, number, number, number];
  return `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}${tail[3] ?? ''}`;
}

function refuse(message: string): WebhookUrlCheck {
  return { ok: false, message };
}

function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

interface TargetHost {
  host: string;
  ipLiteral: boolean;
}

/**
 * The WHATWG parser has already turned every IPv4 spelling (decimal, octal,
 * hex, short forms, full-width dots) into dotted decimal and lower-cased
 * names. One spelling it leaves as a name: an address followed by more than
 * one dot (`127.0.0.1..`), so trailing dots are dropped and the rest parsed
 * as a host again.
 */
function targetHost(hostname: string): TargetHost | null {
  if (hostname.startsWith('[')) return { host: hostname.slice(1, -1), ipLiteral: true };
  const name = hostname.replace(/(?<!\.)\.+$/, '');
  if (name === '') return null;
  const reparsed = parseUrl(`http://${name}/`)?.hostname;
  if (reparsed === undefined) return null;
  if (ipaddr.IPv4.isValidFourPartDecimal(reparsed)) return { host: reparsed, ipLiteral: true };
  return { host: name, ipLiteral: false };
}

function isForbiddenHost(target: TargetHost): boolean {
  if (target.ipLiteral) return isForbiddenAddress(target.host);
  // RFC 6761: these names are loopback whatever DNS says, and resolvers may answer them without asking DNS.
  return target.host === 'localhost' || target.host.endsWith('.localhost');
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  const parts = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return isPublicIPv4(embeddedIPv4(parts[6]!, parts[7]!));
    case 'rfc6052':
      // Only the well-known prefix 64:ff9b::/96 says where the IPv4 address sits; the local-use /48 is the operator's own.
      return parts[2] === 0 && parts[3] === 0 && parts[4] === 0 && parts[5] === 0 && isPublicIPv4(embeddedIPv4(parts[6]!, parts[7]!));
    case '6to4':
      return isPublicIPv4(embeddedIPv4(parts[1]!, parts[2]!));
    case 'unicast':
      // Only 2000::/3 is allocated as global unicast; what ipaddr.js calls unicast outside it (the IPv4-compatible ::/96 among it) is not public.
      return (parts[0]! & 0xe000) === 0x2000;
    default:
      return false;
  }
}

function embeddedIPv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}
