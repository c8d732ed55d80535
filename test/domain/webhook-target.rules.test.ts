/**
 * What a webhook URL may be (issue 18): the syntax rules and the host rules
 * that need no DNS, in tables, then property tests that generate hostile
 * spellings of non-public addresses (every IPv4 notation the WHATWG parser
 * reads, IPv6 full, compressed, mapped and embedding forms, `localhost` with
 * trailing dots and mixed case) and public ones. Seeds are fixed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isForbiddenAddress, WebhookUrlMessages } from '@logi/domain';

const STRICT = { allowPrivateTargets: false };
const LENIENT = { allowPrivateTargets: true };
const RUNS = { numRuns: 400 };

function messageOf(raw: string, options = STRICT): string | null {
  const check = checkWebhookUrl(raw, options);
  return check.ok ? null : check.message;
}

describe('checkWebhookUrl: syntax', () => {
  it.each([
    ['https://hooks.example.com/in', 'hooks.example.com', false],
    ['HTTPS://Hooks.EXAMPLE.com./in?x=1', 'hooks.example.com', false],
    ['https://hooks.example.com:8443/in', 'hooks.example.com', false],
    ['https://8.8.8.8/in', '8.8.8.8', true],
    ['https://134744072/in', '8.8.8.8', true],
    ['https://[2001:4860:4860::8888]:443/in', '2001:4860:4860::8888', true],
    ['https://hooks.example.com/in#section', 'hooks.example.com', false],
  ])('when the url is %s, then it is accepted with host %s', (raw, host, ipLiteral) => {
    const check = checkWebhookUrl(raw, STRICT);
    expect(check).toMatchObject({ ok: true, host, ipLiteral });
  });

  it.each([
    ['', WebhookUrlMessages.INVALID],
    ['hooks.example.com/in', WebhookUrlMessages.INVALID],
    ['/in', WebhookUrlMessages.INVALID],
    ['//hooks.example.com/in', WebhookUrlMessages.INVALID],
    ['https:hooks.example.com/in', WebhookUrlMessages.INVALID],
    ['https:\\\\hooks.example.com/in', WebhookUrlMessages.INVALID],
    [' https://hooks.example.com/in', WebhookUrlMessages.INVALID],
    ['https://hooks.example.com/in\n', WebhookUrlMessages.INVALID],
    ['https://hooks.exa\tmple.com/in', WebhookUrlMessages.INVALID],
    ['https://hooks.example.com/a b', WebhookUrlMessages.INVALID],
    ['https://./in', WebhookUrlMessages.INVALID],
    ['https://[fe80::1%25eth0]/in', WebhookUrlMessages.INVALID],
    ['https://1.2.3.4.5/in', WebhookUrlMessages.INVALID],
    ['https://hooks.example.com:99999/in', WebhookUrlMessages.INVALID],
    ['http://hooks.example.com/in', WebhookUrlMessages.NOT_HTTPS],
    ['ftp://hooks.example.com/in', WebhookUrlMessages.NOT_HTTPS],
    ['wss://hooks.example.com/in', WebhookUrlMessages.NOT_HTTPS],
    ['https://user@hooks.example.com/in', WebhookUrlMessages.USER_INFO],
    ['https://user:secret@hooks.example.com/in', WebhookUrlMessages.USER_INFO],
    ['https://:secret@hooks.example.com/in', WebhookUrlMessages.USER_INFO],
  ])('when the url is %j, then it is refused with %j', (raw, message) => {
    expect(messageOf(raw)).toBe(message);
  });

  it('when the url has 2048 characters, then it is accepted; with 2049, then it is refused as too long', () => {
    const prefix = 'https://hooks.example.com/';
    const atLimit = prefix + 'a'.repeat(2048 - prefix.length);
    expect(atLimit).toHaveLength(2048);
    expect(messageOf(atLimit)).toBeNull();
    expect(messageOf(`${atLimit}a`)).toBe(WebhookUrlMessages.TOO_LONG);
    expect(WebhookUrlMessages.TOO_LONG).toBe('The url must not be greater than 2048 characters.');
  });

  it('when private targets are allowed, then http is accepted, and user info and bad syntax are still refused', () => {
    expect(messageOf('http://hooks.example.com/in', LENIENT)).toBeNull();
    expect(messageOf('ftp://hooks.example.com/in', LENIENT)).toBe(WebhookUrlMessages.NOT_HTTPS);
    expect(messageOf('http://user:pw@127.0.0.1/in', LENIENT)).toBe(WebhookUrlMessages.USER_INFO);
    expect(messageOf('http:127.0.0.1/in', LENIENT)).toBe(WebhookUrlMessages.INVALID);
  });

  it('when the messages are read, then they are in the API style', () => {
    expect(WebhookUrlMessages).toEqual({
      INVALID: 'The url must be a valid URL.',
      NOT_HTTPS: 'The url must be an https URL.',
      TOO_LONG: 'The url must not be greater than 2048 characters.',
      USER_INFO: 'The url must not contain user info.',
      PRIVATE_TARGET: 'The url must not point to a private, loopback or link-local address.',
    });
  });
});

describe('checkWebhookUrl: hosts that need no DNS', () => {
  it.each([
    'https://127.0.0.1/in',
    'https://127.1/in',
    'https://2130706433/in',
    'https://0177.0.0.1/in',
    'https://0x7f.1/in',
    'https://0X7F.0X0.0X0.0X1/in',
    'https://127.0.0.1./in',
    'https://127.0.0.1../in',
    'https://127。0。0。1/in',
    'https://①②⑦.0.0.1/in',
    'https://0/in',
    'https://0.0.0.0:443/in',
    'https://10.1.2.3/in',
    'https://172.16.0.1/in',
    'https://172.31.255.254/in',
    'https://192.168.1.1/in',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.100.100.200/in',
    'https://100.64.0.1/in',
    'https://224.0.0.1/in',
    'https://255.255.255.255/in',
    'https://198.18.0.1/in',
    'https://192.0.2.1/in',
    'https://[::1]/in',
    'https://[0:0:0:0:0:0:0:1]/in',
    'https://[::]/in',
    'https://[::ffff:127.0.0.1]/in',
    'https://[::ffff:7f00:1]/in',
    'https://[::FFFF:A9FE:A9FE]/in',
    'https://[::127.0.0.1]/in',
    'https://[fe80::1]/in',
    'https://[fd00:ec2::254]/in',
    'https://[fc00::1]/in',
    'https://[ff02::1]/in',
    'https://[64:ff9b::7f00:1]/in',
    'https://[2002:7f00:1::1]/in',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/in',
    'https://localhost/in',
    'https://LocalHost/in',
    'https://localhost./in',
    'https://localhost.../in',
    'https://api.localhost/in',
    'https://a.b.LOCALHOST./in',
    'https://localhost:8443/in',
  ])('when the url is %s, then it is refused unless private targets are allowed', (raw) => {
    expect(messageOf(raw, STRICT)).toBe(WebhookUrlMessages.PRIVATE_TARGET);
    expect(messageOf(raw, LENIENT)).toBeNull();
  });

  it.each(['https://localhost.example.com/in', 'https://mylocalhost/in', 'https://127.0.0.1.example.com/in', 'https://[2001:4860::1]/in', 'https://[::ffff:8.8.8.8]/in', 'https://[64:ff9b::808:808]/in'])(
    'when the url is %s, then no rule without DNS refuses it',
    (raw) => {
      expect(messageOf(raw, STRICT)).toBeNull();
    },
  );

  it('when the host is a name, then the check says so and gives it without trailing dots, for DNS to judge', () => {
    expect(checkWebhookUrl('https://Hooks.Example.com../in', STRICT)).toMatchObject({ ok: true, host: 'hooks.example.com', ipLiteral: false });
  });
});

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '169.254.0.1',
    '100.64.0.1', '100.100.100.200', '100.127.255.255', '0.0.0.0', '0.1.2.3', '255.255.255.255', '224.0.0.251', '239.255.255.250',
    '240.0.0.1', '192.0.0.1', '192.0.2.1', '198.18.0.1', '198.19.255.255', '198.51.100.1', '203.0.113.1',
    '::1', '::', '[::1]', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', 'ff05::2', 'fec0::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:0:7f00:1', '64:ff9b::a00:1',
    '64:ff9b:1::808:808', '2002:a00:1::', '2002:7f00:1::1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '::127.0.0.1', '::8.8.8.8', '::8.8.8.8%eth0', '::ffff:010.0.0.1', '2001:db8::1', '3fff::1', '100::1', '1::1', '4000::1',
    '', 'localhost', 'example.com', '2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1', '010.0.0.1', ' 8.8.8.8', '8.8.8.8 ', '1.2.3.4.5', '::1::', 'garbage',
  ])('when the address is %j, then it is forbidden', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '169.253.0.1', '192.169.0.1', '223.255.255.254',
    '2001:4860:4860::8888', '2606:4700:4700::1111', '2a00:1450:4001::200e', '[2001:4860::1]', '::ffff:8.8.8.8', '::ffff:808:808', '::ffff:8.8.8.8%eth0', '64:ff9b::808:808', '2002:808:808::1'])(
    'when the address is %s, then it is public',
    (address) => {
      expect(isForbiddenAddress(address)).toBe(false);
    },
  );
});

// ---------------------------------------------------------------- generated spellings

type Cidr4 = readonly [number, number];
const ip4 = (a: number, b: number, c: number, d: number): number => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

/** Every IPv4 range that is not public, the metadata and CGNAT ranges among them. */
const FORBIDDEN_V4: readonly Cidr4[] = [
  [ip4(127, 0, 0, 0), 8], [ip4(10, 0, 0, 0), 8], [ip4(172, 16, 0, 0), 12], [ip4(192, 168, 0, 0), 16], [ip4(169, 254, 0, 0), 16],
  [ip4(100, 64, 0, 0), 10], [ip4(0, 0, 0, 0), 8], [ip4(224, 0, 0, 0), 4], [ip4(240, 0, 0, 0), 4], [ip4(192, 0, 0, 0), 24],
  [ip4(192, 0, 2, 0), 24], [ip4(198, 18, 0, 0), 15], [ip4(198, 51, 100, 0), 24], [ip4(203, 0, 113, 0), 24],
];
const PUBLIC_V4: readonly Cidr4[] = [[ip4(8, 8, 0, 0), 16], [ip4(1, 1, 1, 0), 24]];

function inCidr([base, bits]: Cidr4): fc.Arbitrary<number> {
  const hostBits = 32 - bits;
  return fc.nat({ max: 2 ** hostBits - 1 }).map((host) => (base + host) >>> 0);
}
const v4From = (ranges: readonly Cidr4[]) => fc.constantFrom(...ranges).chain(inCidr);

const dotted = (n: number): string => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
const randomCase = (text: string) => fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((ups) => [...text].map((ch, i) => (ups[i] ? ch.toUpperCase() : ch.toLowerCase())).join(''));

/** One number in a radix the WHATWG IPv4 parser (and inet_aton) reads: decimal, octal with a leading 0, or hex with 0x. */
function numberSpelling(value: number): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(String(value)),
    fc.constant(`0${value.toString(8)}`),
    fc.nat({ max: 3 }).chain((zeros) => randomCase(`0x${'0'.repeat(zeros)}${value.toString(16)}`)),
  );
}

/** 1 to 4 parts, the last one holding the remaining bits (`127.1`, `2130706433`, `0x7f.0.1`), each in its own radix, maybe with one trailing dot. */
function ipv4Spelling(n: number): fc.Arbitrary<string> {
  return fc.integer({ min: 1, max: 4 }).chain((count) => {
    const bytes = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
    const leading = bytes.slice(0, count - 1);
    const restBits = 8 * (5 - count);
    const rest = restBits === 32 ? n : n % 2 ** restBits;
    return fc.tuple(fc.tuple(...[...leading, rest].map(numberSpelling)), fc.constantFrom('', '.')).map(([parts, dot]) => parts.join('.') + dot);
  });
}

function groupsOf(n: number): [number, number] {
  return [n >>> 16, n & 0xffff];
}

/** An IPv6 address written full or compressed (any one run of zero groups), padded or not, in any case; the last 32 bits maybe dotted. */
function ipv6Spelling(groups: readonly number[], allowDottedTail = true): fc.Arbitrary<string> {
  const runs: Array<[number, number]> = [];
  for (let i = 0; i < 8; i++) {
    if (groups[i] !== 0) continue;
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    for (let start = i; start < j; start++) for (let end = start + 1; end <= j; end++) runs.push([start, end]);
    i = j;
  }
  return fc.record({
    pad: fc.boolean(),
    upper: fc.boolean(),
    dottedTail: allowDottedTail ? fc.boolean() : fc.constant(false),
    run: runs.length > 0 ? fc.option(fc.constantFrom(...runs), { nil: null }) : fc.constant(null),
  }).map(({ pad, upper, dottedTail, run }) => {
    const text = (g: number) => {
      const hex = pad ? g.toString(16).padStart(4, '0') : g.toString(16);
      return upper ? hex.toUpperCase() : hex;
    };
    const head = dottedTail ? groups.slice(0, 6) : groups;
    const tail = dottedTail ? [dotted(((groups[6]! << 16) | groups[7]!) >>> 0)] : [];
    const written = head.map(text);
    if (run && run[1] <= head.length) {
      const [start, end] = run;
      const before = written.slice(0, start).join(':');
      const after = [...written.slice(end), ...tail].join(':');
      return `${before}::${after}`;
    }
    return [...written, ...tail].join(':');
  });
}

/** IPv6 forms that carry an IPv4 address: mapped, translated, NAT64 well-known prefix, 6to4; and the deprecated compatible form for non-public ones. */
function embeddingSpellings(n: number, includeCompatible: boolean): fc.Arbitrary<string> {
  const [high, low] = groupsOf(n);
  const forms = [
    [0, 0, 0, 0, 0, 0xffff, high, low],
    [0, 0, 0, 0, 0xffff, 0, high, low],
    [0x64, 0xff9b, 0, 0, 0, 0, high, low],
  ].map((g) => ipv6Spelling(g));
  const sixToFour = fc.nat({ max: 0xffff }).chain((suffix) => ipv6Spelling([0x2002, high, low, 0, 0, 0, 0, suffix], false));
  const compatible = includeCompatible ? [ipv6Spelling([0, 0, 0, 0, 0, 0, high, low])] : [];
  return fc.oneof(...forms, sixToFour, ...compatible);
}

function v6In(prefix: readonly number[], prefixBits: number): fc.Arbitrary<number[]> {
  return fc.array(fc.nat({ max: 0xffff }), { minLength: 8, maxLength: 8 }).map((random) =>
    random.map((value, i) => {
      const bitsHere = Math.max(0, Math.min(16, prefixBits - 16 * i));
      const mask = bitsHere === 0 ? 0 : (0xffff << (16 - bitsHere)) & 0xffff;
      return ((prefix[i] ?? 0) & mask) | (value & ~mask & 0xffff);
    }),
  );
}

// Groups past the prefix are often zero, so runs of zeros (and so compression) are common.
const sparseV6 = (prefix: readonly number[], bits: number) => v6In(prefix, bits).chain((groups) => fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }).map((zero) => groups.map((g, i) => (16 * i >= bits && zero[i] ? 0 : g))));
const FORBIDDEN_V6 = fc.oneof(
  fc.constant([0, 0, 0, 0, 0, 0, 0, 1]),
  fc.constant([0, 0, 0, 0, 0, 0, 0, 0]),
  sparseV6([0xfe80], 10),
  sparseV6([0xfc00], 7),
  sparseV6([0xff00], 8),
  sparseV6([0x2001, 0], 32),
  sparseV6([0x2001, 0xdb8], 32),
  sparseV6([0x100, 0, 0, 0], 64),
);
const PUBLIC_V6 = sparseV6([0x2001, 0x4860], 32);

const trailingDots = fc.constantFrom('', '.', '..', '...');
const label = fc.stringMatching(/^[a-z0-9]{1,12}$/);
const localhostName = fc
  .tuple(fc.array(label, { maxLength: 3 }), randomCase('localhost'), trailingDots)
  .map(([labels, name, dots]) => [...labels, name].join('.') + dots);

const forbiddenHost = fc.oneof(
  { weight: 4, arbitrary: v4From(FORBIDDEN_V4).chain(ipv4Spelling) },
  { weight: 1, arbitrary: v4From(FORBIDDEN_V4).map((n) => `${dotted(n)}..`) },
  { weight: 3, arbitrary: v4From(FORBIDDEN_V4).chain((n) => embeddingSpellings(n, true)).map((a) => `[${a}]`) },
  { weight: 3, arbitrary: FORBIDDEN_V6.chain((g) => ipv6Spelling(g)).map((a) => `[${a}]`) },
  { weight: 2, arbitrary: localhostName },
);
const publicHost = fc.oneof(
  v4From(PUBLIC_V4).chain(ipv4Spelling),
  v4From(PUBLIC_V4).chain((n) => embeddingSpellings(n, false)).map((a) => `[${a}]`),
  PUBLIC_V6.chain((g) => ipv6Spelling(g)).map((a) => `[${a}]`),
);

const port = fc.option(fc.integer({ min: 1, max: 65535 }).map((p) => `:${p}`), { nil: '' });
const pathAndQuery = fc.constantFrom('', '/', '/hooks', '/a/b/c?x=1', '/latest/meta-data/iam?x=y#frag', '/%2e%2e/in');
const urlWith = (host: fc.Arbitrary<string>) => fc.tuple(randomCase('https'), host, port, pathAndQuery).map(([scheme, h, p, rest]) => `${scheme}://${h}${p}${rest}`);

describe('checkWebhookUrl and isForbiddenAddress with generated spellings', () => {
  it('when a non-public address or localhost is spelt in any way, then the url is refused, and allowed when private targets are', () => {
    fc.assert(
      fc.property(urlWith(forbiddenHost), (raw) => {
        expect(messageOf(raw, STRICT), raw).toBe(WebhookUrlMessages.PRIVATE_TARGET);
        expect(messageOf(raw, LENIENT), raw).toBeNull();
      }),
      { seed: 18, ...RUNS },
    );
  });

  it('when the same url uses http, then it is refused without private targets and allowed with them', () => {
    fc.assert(
      fc.property(urlWith(forbiddenHost).map((raw) => raw.replace(/^https/i, 'http')), (raw) => {
        expect(checkWebhookUrl(raw, STRICT).ok, raw).toBe(false);
        expect(messageOf(raw, LENIENT), raw).toBeNull();
      }),
      { seed: 1818, numRuns: 150 },
    );
  });

  it('when a public address is spelt in any way, then the url is accepted and its host is the canonical address', () => {
    fc.assert(
      fc.property(urlWith(publicHost), (raw) => {
        const check = checkWebhookUrl(raw, STRICT);
        expect(check.ok, raw).toBe(true);
        if (check.ok) {
          expect(check.ipLiteral, raw).toBe(true);
          expect(isForbiddenAddress(check.host), raw).toBe(false);
        }
      }),
      { seed: 8888, ...RUNS },
    );
  });

  it('when a resolver or a socket reports a non-public address in its usual form, then it is forbidden; a public one is not', () => {
    const forbidden = fc.oneof(v4From(FORBIDDEN_V4).map(dotted), FORBIDDEN_V6.chain((g) => ipv6Spelling(g)), v4From(FORBIDDEN_V4).chain((n) => embeddingSpellings(n, true)));
    const allowed = fc.oneof(v4From(PUBLIC_V4).map(dotted), PUBLIC_V6.chain((g) => ipv6Spelling(g)), v4From(PUBLIC_V4).chain((n) => embeddingSpellings(n, false)));
    fc.assert(fc.property(forbidden, (address) => {
      expect(isForbiddenAddress(address), address).toBe(true);
    }), { seed: 127, ...RUNS });
    fc.assert(fc.property(allowed, (address) => {
      expect(isForbiddenAddress(address), address).toBe(false);
    }), { seed: 8, ...RUNS });
  });

  it('when the text is not an address at all, then it is forbidden', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }).filter((s) => !/^[\d.]+$/.test(s) && !s.includes(':')), (text) => {
        expect(isForbiddenAddress(text), text).toBe(true);
      }),
      { seed: 404, numRuns: 300 },
    );
  });
});
