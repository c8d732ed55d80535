import { describe, expect, it } from 'vitest';
import {
  FileLinkExpiredError,
  FileLinkInvalidError,
  FileLinkRevokedError,
  OrderFileNotFoundError,
  OrderFilesUseCase,
  OrderNotFoundError,
  ValidationError,
  type FileLinkClaims,
  type ApiKey,
  type FileLinkSignerPort,
  type PresignOptions,
} from '@logi/domain';
import { FakeOrderFiles, FakeOrders, FakeStorage } from './fakes.js';

/** Tokens that spell their claims out, so a test can read and forge them; `verify` refuses anything not made here. */
class ReadableSigner implements FileLinkSignerPort {
  private readonly made = new Set<string>();
  sign(claims: FileLinkClaims): string {
    const token = JSON.stringify(claims);
    this.made.add(token);
    return token;
  }
  verify(token: string): FileLinkClaims | null {
    return this.made.has(token) ? (JSON.parse(token) as FileLinkClaims) : null;
  }
}

function setUp(options: { presign?: boolean } = {}) {
  const orders = new FakeOrders();
  const files = new FakeOrderFiles();
  const storage = new FakeStorage();
  const presigned: Array<{ key: string; options: PresignOptions }> = [];
  if (options.presign) {
    storage.presignGet = async (key: string, presign: PresignOptions) => {
      presigned.push({ key, options: presign });
      return `https://s3.example/${key}?expires=${presign.ttlSeconds}`;
    };
  }
  let now = new Date('2026-11-26T12:00:00Z');
  const key = (id: number, directory = 'd1'): ApiKey => ({
    id,
    directory,
    name: `k${id}`,
    scopes: ['read'],
    created: 1,
    expires: null,
    lastUsed: null,
    revoked: null,
  });
  const keys = [key(5), key(6)];
  const useCase = new OrderFilesUseCase({
    orders,
    files,
    storage,
    signer: new ReadableSigner(),
    keys: { findById: async (directory, id) => keys.find((k) => k.directory === directory && k.id === id) ?? null },
    clock: { now: () => now },
    disposition: (name) => `attachment; name=${name}`,
  });
  const add = (orderId: number, name: string, bytes: Buffer, directory = 'd1') => {
    const key = `orders/${directory}/${orderId}/${files.rows.length + 1}`;
    storage.set(key, bytes);
    const row = {
      id: files.rows.length + 1,
      directory,
      orderId,
      categoryId: null,
      name,
      size: bytes.length,
      contentType: 'application/pdf',
      sha256: 'x',
      storageKey: key,
      createdAt: 1,
    };
    files.rows.push(row);
    return row;
  };
  return { orders, files, storage, presigned, useCase, add, keys, setNow: (date: Date) => (now = date), nowSeconds: () => Math.floor(now.getTime() / 1000) };
}

const read = async (stream: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

describe('OrderFilesUseCase', () => {
  it("when files are listed, then the order's files only, and a missing order is OrderNotFound", async () => {
    const { orders, useCase, add } = setUp();
    orders.orders.push({ id: 1, directory: 'd1', nr: 'A', ownnr: '' }, { id: 2, directory: 'd1', nr: 'B', ownnr: '' });
    const a = add(1, 'a.pdf', Buffer.from('aa'));
    add(2, 'b.pdf', Buffer.from('bb'));
    const c = add(1, 'c.pdf', Buffer.from('cc'));
    expect((await useCase.list('d1', 1)).map((file) => file.id)).toEqual([a.id, c.id]);
    await expect(useCase.list('d2', 1)).rejects.toBeInstanceOf(OrderNotFoundError);
  });

  it("when a file is downloaded, then its bytes (or a range) stream from storage; another order's file is FileNotFound", async () => {
    const { orders, useCase, add } = setUp();
    orders.orders.push({ id: 1, directory: 'd1', nr: 'A', ownnr: '' }, { id: 2, directory: 'd1', nr: 'B', ownnr: '' });
    const file = add(1, 'a.pdf', Buffer.from('0123456789'));
    const download = await useCase.download('d1', 1, file.id);
    expect(await read(await download.open())).toBe('0123456789');
    expect(await read(await download.open({ start: 2, end: 4 }))).toBe('234');
    await expect(useCase.download('d1', 2, file.id)).rejects.toBeInstanceOf(OrderFileNotFoundError);
    await expect(useCase.download('d2', 1, file.id)).rejects.toBeInstanceOf(OrderNotFoundError);
  });

  it('when the storage presigns, then the link is its URL with the name and type the API sends', async () => {
    const { orders, useCase, add, presigned, nowSeconds } = setUp({ presign: true });
    orders.orders.push({ id: 1, directory: 'd1', nr: 'A', ownnr: '' });
    const file = add(1, 'a.pdf', Buffer.from('x'));
    const link = await useCase.link('d1', 1, file.id, { ttl: 60 }, 5);
    expect(link).toEqual({ kind: 'presigned', url: `https://s3.example/${file.storageKey}?expires=60`, expires: nowSeconds() + 60 });
    expect(presigned).toEqual([
      { key: file.storageKey, options: { ttlSeconds: 60, contentDisposition: 'attachment; name=a.pdf', contentType: 'application/pdf' } },
    ]);
  });

  it('when the storage cannot presign, then a signed token opens the file until it expires', async () => {
    const { orders, files, useCase, add, setNow, nowSeconds } = setUp();
    orders.orders.push({ id: 1, directory: 'd1', nr: 'A', ownnr: '' });
    const file = add(1, 'a.pdf', Buffer.from('bytes'));
    const link = await useCase.link('d1', 1, file.id, {}, 5);
    expect(link).toEqual({ kind: 'token', token: expect.any(String), expires: nowSeconds() + 900 });
    const token = (link as { token: string }).token;
    expect(await read(await (await useCase.openLink(token)).open())).toBe('bytes');
    await expect(useCase.openLink(token.replace('"fileId":1', '"fileId":2'))).rejects.toBeInstanceOf(FileLinkInvalidError);
    setNow(new Date((link.expires - 1) * 1000));
    await expect(useCase.openLink(token)).resolves.toBeDefined();
    setNow(new Date(link.expires * 1000));
    await expect(useCase.openLink(token)).rejects.toBeInstanceOf(FileLinkExpiredError);
    setNow(new Date('2026-11-26T12:00:00Z'));
    files.rows.length = 0;
    await expect(useCase.openLink(token)).rejects.toBeInstanceOf(OrderFileNotFoundError);
  });

  it('when the API key that made a token link is revoked or expires, then the link is refused; a link of another key still opens', async () => {
    const { orders, useCase, add, keys, nowSeconds } = setUp();
    orders.orders.push({ id: 1, directory: 'd1', nr: 'A', ownnr: '' });
    const file = add(1, 'a.pdf', Buffer.from('bytes'));
    const ofFive = (await useCase.link('d1', 1, file.id, {}, 5)) as { token: string };
    const ofSix = (await useCase.link('d1', 1, file.id, {}, 6)) as { token: string };
    expect(JSON.parse(ofFive.token)).toMatchObject({ keyId: 5 });
    await expect(useCase.openLink(ofFive.token)).resolves.toBeDefined();
    keys[0]!.revoked = nowSeconds();
    await expect(useCase.openLink(ofFive.token)).rejects.toBeInstanceOf(FileLinkRevokedError);
    expect(await read(await (await useCase.openLink(ofSix.token)).open())).toBe('bytes');
    keys[1]!.expires = nowSeconds();
    await expect(useCase.openLink(ofSix.token)).rejects.toBeInstanceOf(FileLinkRevokedError);
    keys.length = 0;
    await expect(useCase.openLink(ofSix.token)).rejects.toBeInstanceOf(FileLinkRevokedError);
  });

  it('when ttl is out of range or the body is not an object, then a validation error naming it', async () => {
    const { orders, useCase, add } = setUp();
    orders.orders.push({ id: 1, directory: 'd1', nr: 'A', ownnr: '' });
    const file = add(1, 'a.pdf', Buffer.from('x'));
    for (const [body, field] of [
      [{ ttl: 0 }, 'ttl'],
      [{ ttl: 604_801 }, 'ttl'],
      [{ ttl: '5' }, 'ttl'],
      [[], 'body'],
      [null, 'body'],
    ] as const) {
      const error = await useCase.link('d1', 1, file.id, body, 5).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ValidationError);
      expect(Object.keys((error as ValidationError).errors)).toEqual([field]);
    }
  });
});
