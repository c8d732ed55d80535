import { describe, expect, it } from 'vitest';
import { createLogger, maskSecrets } from '@logi/adapters';

function capture(): { lines: Array<Record<string, unknown>>; logger: ReturnType<typeof createLogger> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { lines, logger };
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KEY = 'lgk_3q2-Vb_x8Yz0PqR7sT1uW4vX6yZ9aB2cD5eF8gH1iJ4';

describe('the process logger', () => {
  it('when a line carries credentials in known fields, then they are redacted', () => {
    const { lines, logger } = capture();
    logger.info(
      { secret: SECRET, endpoint: { secret: SECRET, url: 'https://example.com' }, headers: { authorization: `Bearer ${KEY}` }, password: 'hunter2' },
      'fields',
    );
    expect(lines[0]).toMatchObject({
      secret: '[redacted]',
      endpoint: { secret: '[redacted]', url: 'https://example.com' },
      headers: { authorization: '[redacted]' },
      password: '[redacted]',
    });
  });

  it('when an error or a message holds a secret, a key or a URL password in its text, then the value is masked and the rest kept', () => {
    const { lines, logger } = capture();
    const cause = Object.assign(new Error(`insert into t values ('${SECRET}') - lock wait`), { sql: `insert into t values ('${SECRET}')` });
    logger.error({ err: new Error('wrapped', { cause }) }, `failed for Bearer ${KEY} at mysql://app:s3cret@db:3306/logi`);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(SECRET.slice(6));
    expect(text).not.toContain(KEY.slice(4));
    expect(text).not.toContain('s3cret');
    const line = lines[0] as { msg: string; err: { message: string; sql: string } };
    expect(line.msg).toBe('failed for Bearer [redacted] at mysql://app:[redacted]@db:3306/logi');
    expect(line.err.message).toBe("wrapped: insert into t values ('whsec_[redacted]') - lock wait");
  });

  it("when a message or an error holds a file link's URL, then its token is masked and the rest kept", () => {
    const { lines, logger } = capture();
    const token = 'WzIsMTcsImJhbHRpYyIsMTc2NDE1MjEwMCw3XQ.Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXhx';
    logger.warn({ err: new Error(`fetch http://api:3000/v1/file-links/${token} failed`) }, `GET /v1/file-links/${token}?x=1`);
    expect(JSON.stringify(lines)).not.toContain(token.slice(0, 20));
    const line = lines[0] as { msg: string; err: { message: string } };
    expect(line.msg).toBe('GET /v1/file-links/[redacted]?x=1');
    expect(line.err.message).toBe('fetch http://api:3000/v1/file-links/[redacted] failed');
  });

  it('when text has no secret, then maskSecrets leaves it alone', () => {
    expect(maskSecrets('GET /v1/invoices 200 https://example.com/a?b=c')).toBe('GET /v1/invoices 200 https://example.com/a?b=c');
  });
});
