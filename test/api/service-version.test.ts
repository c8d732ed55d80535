import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_VERSION } from '@logi/config';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the service version', () => {
  it('when the changelog is read, then its newest release is SERVICE_VERSION, semver, with upgrade notes', async () => {
    const changelog = await readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    const releases = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((match) => match[1]);
    expect(releases[0]).toBe('Unreleased');
    expect(releases[1]).toBe(SERVICE_VERSION);
    expect(SERVICE_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    const newest = changelog.slice(changelog.indexOf(`## [${SERVICE_VERSION}]`), changelog.indexOf(`## [${releases[2]}]`));
    expect(newest).toContain('### Upgrade notes');
  });
});
