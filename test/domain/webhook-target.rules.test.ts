/**
 * What a webhook URL may be (issue 18): the syntax rules and the host rules
 * that need no DNS, in tables, then property tests that generate hostile
 * spellings of non-public addresses (every IPv4 notation the WHATWG parser
 * reads, IPv6 full, compressed, mapped and embedding forms, `localhost` with
 * trailing dots and mixed case) and public ones. Seeds are fixed.
 */
import fc from 'fast-check';
import {
  dotted,
  forbiddenHost,
  publicHost,
  urlWith,
  v4From,
  FORBIDDEN_V4,
  PUBLIC_V4,
  PUBLIC_V6,
  FORBIDDEN_V6,
  ipv6Spelling,
  embeddingSpellings,
} from '../support/hostile-webhook-urls.js';
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

  it.each([
    'https://localhost.example.com/in',
    'https://mylocalhost/in',
    'https://127.0.0.1.example.com/in',
    'https://[2001:4860::1]/in',
    'https://[::ffff:8.8.8.8]/in',
    'https://[64:ff9b::808:808]/in',
  ])('when the url is %s, then no rule without DNS refuses it', (raw) => {
    expect(messageOf(raw, STRICT)).toBeNull();
  });

  it('when the host is a name, then the check says so and gives it without trailing dots, for DNS to judge', () => {
    expect(checkWebhookUrl('https://Hooks.Example.com../in', STRICT)).toMatchObject({ ok: true, host: 'hooks.example.com', ipLiteral: false });
  });
});

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.100.100.200',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '255.255.255.255',
    '224.0.0.251',
    '239.255.255.250',
    '240.0.0.1',
    '192.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.1',
    '203.0.113.1',
    '::1',
    '::',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    'ff05::2',
    'fec0::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:0:7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::808:808',
    '2002:a00:1::',
    '2002:7f00:1::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '::127.0.0.1',
    '::8.8.8.8',
    '::8.8.8.8%eth0',
    '::ffff:010.0.0.1',
    '2001:db8::1',
    '3fff::1',
    '100::1',
    '1::1',
    '4000::1',
    '',
    'localhost',
    'example.com',
    '2130706433',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '127.1',
    '010.0.0.1',
    ' 8.8.8.8',
    '8.8.8.8 ',
    '1.2.3.4.5',
    '::1::',
    'garbage',
  ])('when the address is %j, then it is forbidden', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '192.169.0.1',
    '223.255.255.254',
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '[2001:4860::1]',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '::ffff:8.8.8.8%eth0',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('when the address is %s, then it is public', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

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
      fc.property(
        urlWith(forbiddenHost).map((raw) => raw.replace(/^https/i, 'http')),
        (raw) => {
          expect(checkWebhookUrl(raw, STRICT).ok, raw).toBe(false);
          expect(messageOf(raw, LENIENT), raw).toBeNull();
        },
      ),
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
    const forbidden = fc.oneof(
      v4From(FORBIDDEN_V4).map(dotted),
      FORBIDDEN_V6.chain((g) => ipv6Spelling(g)),
      v4From(FORBIDDEN_V4).chain((n) => embeddingSpellings(n, true)),
    );
    const allowed = fc.oneof(
      v4From(PUBLIC_V4).map(dotted),
      PUBLIC_V6.chain((g) => ipv6Spelling(g)),
      v4From(PUBLIC_V4).chain((n) => embeddingSpellings(n, false)),
    );
    fc.assert(
      fc.property(forbidden, (address) => {
        expect(isForbiddenAddress(address), address).toBe(true);
      }),
      { seed: 127, ...RUNS },
    );
    fc.assert(
      fc.property(allowed, (address) => {
        expect(isForbiddenAddress(address), address).toBe(false);
      }),
      { seed: 8, ...RUNS },
    );
  });

  it('when the text is not an address at all, then it is forbidden', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((s) => !/^[\d.]+$/.test(s) && !s.includes(':')),
        (text) => {
          expect(isForbiddenAddress(text), text).toBe(true);
        },
      ),
      { seed: 404, numRuns: 300 },
    );
  });
});
