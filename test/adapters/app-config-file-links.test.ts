import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@logi/config';

const S3 = { S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY: 'a', S3_SECRET_KEY: 'b', S3_BUCKET: 'files' };

describe('FILE_LINK_SECRET', () => {
  it('when it is unset, then null (a key is kept in DATA_DIR); when set, then that secret', () => {
    expect(loadConfig({}).fileLinkSecret).toBeNull();
    expect(loadConfig({ FILE_LINK_SECRET: 'k'.repeat(32) }).fileLinkSecret).toBe('k'.repeat(32));
  });

  it('when it is shorter than 32 characters, then the error names it and does not echo it', () => {
    let error: unknown;
    try {
      loadConfig({ FILE_LINK_SECRET: 'short-secret' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^Configuration error: FILE_LINK_SECRET .*at least 32 characters/);
    expect((error as Error).message).not.toContain('short-secret');
  });
});

describe('S3_PUBLIC_ENDPOINT', () => {
  it('when it is unset, then links are signed for S3_ENDPOINT (null); when set, then for it', () => {
    expect(loadConfig(S3).s3!.publicEndPoint).toBeNull();
    expect(loadConfig({ ...S3, S3_PUBLIC_ENDPOINT: 'https://files.example.com' }).s3!.publicEndPoint).toBe('https://files.example.com');
  });

  it.each(['files.example.com', 'ftp://files.example.com'])('when it is %j, then the error names it', (value) => {
    expect(() => loadConfig({ ...S3, S3_PUBLIC_ENDPOINT: value })).toThrow(/^Configuration error: S3_PUBLIC_ENDPOINT /);
  });
});
