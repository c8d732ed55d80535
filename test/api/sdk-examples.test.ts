import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const EXAMPLES = [
  'packages/client/examples/quick-start.ts',
  'packages/client/examples/readme-example.ts',
  'packages/client/examples/events-example.ts',
  'packages/client/examples/files-example.ts',
];

describe("the SDK's example programs", () => {
  it('when the SDK guide shows an example, then it is the example file it names, word for word', async () => {
    const guide = await readFile('docs/integrate/sdk.md', 'utf8');
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks[0]).toBe(await readFile('packages/client/examples/readme-example.ts', 'utf8'));
    expect(blocks.filter((block) => block.startsWith('// packages/client/examples/'))).toHaveLength(3);
    expect(guide).toContain('`packages/client/examples/quick-start.ts`');
    // Every block that names an example file (its first line) shows that file as it is.
    for (const block of blocks) {
      const named = /^\/\/ (packages\/client\/examples\/[\w.-]+\.ts) \(compiled by the tests\)\n/.exec(block)?.[1];
      if (named) expect(block).toBe(await readFile(named, 'utf8'));
    }
  });

  it('when compiled with tsc --strict as a client would (no project settings), then they have no type errors', async () => {
    const tsc = path.resolve('node_modules/typescript/bin/tsc');
    const options = [
      '--strict',
      '--noEmit',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--skipLibCheck',
      '--types',
      'node',
    ];
    const result = await run(process.execPath, [tsc, ...options, ...EXAMPLES]).catch((error: { stdout: string }) => error);
    expect(result.stdout).toBe('');
  });

  it('when built as a packed copy is (pnpm pack), then plain Node imports the compiled ESM and it makes a request', async () => {
    // Inside the package's node_modules, so that the build finds its dependencies as an installed copy would.
    const outDir = path.resolve(`packages/client/node_modules/.cache/build-${randomUUID()}`);
    try {
      const tsc = path.resolve('node_modules/typescript/bin/tsc');
      await run(process.execPath, [tsc, '-p', 'packages/client/tsconfig.build.json', '--outDir', outDir]);
      const program = `
        import { createClient, verifyWebhook, WebhookVerificationError } from ${JSON.stringify(path.join(outDir, 'index.js'))};
        const fetch = async (request) => Response.json({ status: 200, message: 'OK', data: [{ id: 1, name: request.url, visible_customer: 1 }] });
        const api = createClient({ baseUrl: 'http://api.test/v1', token: 'k', clientDirectory: 'd', fetch });
        // The standardwebhooks package (CommonJS) as the compiled ESM imports it.
        let refused = null;
        try { verifyWebhook('{}', { 'webhook-id': '1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }, 'whsec_a2V5'); } catch (error) { refused = error instanceof WebhookVerificationError && error.message; }
        console.log(JSON.stringify([await api.orders.fileCategories(), refused]));`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program]);
      expect(JSON.parse(stdout)).toEqual([[{ id: 1, name: 'http://api.test/v1/orders/file-categories', visible_customer: 1 }], 'Message timestamp too old']);
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });
});
