import { Readable } from 'node:stream';
import { StoredObjectMissingError } from '@logi/domain';
import type {
  PresignOptions,
  Client,
  ClientRepositoryPort,
  ContentHasherPort,
  FileCategory,
  FileCategoryRepositoryPort,
  FileStoragePort,
  IdempotencyClaim,
  IdempotencyScope,
  IdempotencyStorePort,
  InvoiceCriteria,
  InvoiceDetail,
  InvoicePage,
  InvoiceRepositoryPort,
  JobName,
  JobHandlers,
  JobPayloads,
  JobQueuePort,
  JobResults,
  NewOrderFile,
  Order,
  OrderFile,
  OrderFileRepositoryPort,
  OrderRepositoryPort,
  RunJobOptions,
} from '@logi/domain';

/** In-memory fakes of the domain's ports, for unit tests only. */

export class FakeOrders implements OrderRepositoryPort {
  constructor(readonly orders: Order[] = []) {}
  async findById(directory: string, id: number) {
    return this.orders.find((o) => o.directory === directory && o.id === id) ?? null;
  }
  async findFirstByNr(directory: string, fragment: string) {
    const mine = this.orders.filter((o) => o.directory === directory).sort((a, b) => a.id - b.id);
    const f = fragment.toLocaleLowerCase();
    return mine.find((o) => o.nr.toLocaleLowerCase() === f) ?? mine.find((o) => o.nr.toLocaleLowerCase().includes(f)) ?? null;
  }
}

export class FakeCategories implements FileCategoryRepositoryPort {
  constructor(readonly categories: FileCategory[] = []) {}
  async list() {
    return this.categories;
  }
  async findById(id: number) {
    return this.categories.find((c) => c.id === id) ?? null;
  }
}

export class FakeOrderFiles implements OrderFileRepositoryPort {
  readonly rows: OrderFile[] = [];
  /** The clock the deadline is read on. */
  clock = () => Date.now();
  async insertOnce(file: NewOrderFile, deadline: number) {
    const existing = this.rows.find((r) => r.storageKey === file.storageKey);
    if (existing) return existing;
    if (this.clock() > deadline) return null;
    const row = { ...file, id: this.rows.length + 1 };
    this.rows.push(row);
    return row;
  }
  /** Every key findByStorageKey was asked for, in order. */
  readonly lookups: string[] = [];
  async findByStorageKey(key: string) {
    this.lookups.push(key);
    return this.rows.find((r) => r.storageKey === key) ?? null;
  }
  async listByOrder(directory: string, orderId: number) {
    return this.rows.filter((r) => r.directory === directory && r.orderId === orderId);
  }
  async findById(directory: string, id: number) {
    return this.rows.find((r) => r.directory === directory && r.id === id) ?? null;
  }
  /** Set to make row reads fail, as a database that is down would. */
  unavailable: Error | null = null;
  async keysWithRows(keys: readonly string[]) {
    if (this.unavailable) throw this.unavailable;
    return new Set(keys.filter((key) => this.rows.some((r) => r.storageKey === key)));
  }
}

export class FakeStorage implements FileStoragePort {
  readonly objects = new Map<string, Buffer>();
  /** When each object was written (Unix ms), for sweeping. */
  readonly writtenAt = new Map<string, number>();
  clock = () => Date.now();
  /** Keys whose writes fail, as a storage that is down would. */
  failing = false;
  /** The object holds `size` bytes (the job checks the size), repeating the file's path. */
  async putFile(key: string, localPath: string, size: number) {
    if (this.failing) throw new Error('Storage unavailable: connection refused');
    this.set(key, Buffer.alloc(size, `bytes of ${localPath}`));
  }
  set(key: string, data: Buffer) {
    this.objects.set(key, data);
    this.writtenAt.set(key, this.clock());
  }
  async deleteStale(prefix: string, olderThan: Date, limit: number) {
    const stale = [...this.objects.keys()].filter((key) => key.startsWith(prefix) && this.writtenAt.get(key)! < olderThan.getTime()).slice(0, limit);
    for (const key of stale) this.objects.delete(key);
    return stale.length;
  }
  /** The pages asked for by listOlderThan, in order: the work a caller did. */
  readonly listings: Array<{ prefix: string; limit: number; after: string | null }> = [];
  /** Keys in string order (as S3 lists them); the marker is the last key looked at. */
  async listOlderThan(prefix: string, olderThan: Date, page: { limit: number; after: string | null }) {
    this.listings.push({ prefix, ...page });
    const under = [...this.objects.keys()].filter((key) => key.startsWith(prefix) && (page.after === null || key > page.after)).sort();
    const looked = under.slice(0, page.limit);
    return {
      keys: looked.filter((key) => this.writtenAt.get(key)! < olderThan.getTime()),
      next: under.length > page.limit ? looked.at(-1)! : null,
    };
  }
  async listObjects(prefix: string, page: { limit: number; after: string | null }) {
    this.listings.push({ prefix, ...page });
    const under = [...this.objects.keys()].filter((key) => key.startsWith(prefix) && (page.after === null || key > page.after)).sort();
    const looked = under.slice(0, page.limit);
    return {
      objects: looked.map((key) => ({ key, writtenAt: new Date(this.writtenAt.get(key)!) })),
      next: under.length > page.limit ? looked.at(-1)! : null,
    };
  }
  async putBuffer(key: string, data: Buffer, _contentType?: string) {
    if (this.failing) throw new Error('Storage unavailable: connection refused');
    this.set(key, data);
  }
  async getBuffer(key: string) {
    const value = this.objects.get(key);
    if (!value) throw new StoredObjectMissingError(key);
    return value;
  }
  async copy(from: string, to: string) {
    if (this.failing) throw new Error('Storage unavailable: connection refused');
    this.set(to, await this.getBuffer(from));
  }
  async delete(key: string) {
    this.objects.delete(key);
  }
  async exists(key: string) {
    return this.objects.has(key);
  }
  async ping() {}
  async stat(key: string) {
    return { size: (await this.getBuffer(key)).length };
  }
  async getStream(key: string, range?: { start: number; end: number }): Promise<NodeJS.ReadableStream> {
    const bytes = await this.getBuffer(key);
    return Readable.from([range ? bytes.subarray(range.start, range.end + 1) : bytes]);
  }
  async presignGet(_key: string, _options: PresignOptions): Promise<string | null> {
    return null;
  }
}

/** Runs handlers directly; `unavailable` makes it behave like a queue that is down. */
export class FakeQueue implements JobQueuePort {
  unavailable: Error | null = null;
  readonly jobs: Array<{ name: JobName; jobId: string }> = [];
  constructor(private readonly handlers: () => Partial<JobHandlers>) {}
  async runAndWait<N extends JobName>(name: N, payload: JobPayloads[N], options: RunJobOptions): Promise<JobResults[N]> {
    if (this.unavailable) throw this.unavailable;
    this.jobs.push({ name, jobId: options.jobId });
    const handler = this.handlers()[name];
    if (!handler) throw new Error(`no handler for ${name}`);
    return handler(payload);
  }
  async ping() {}
  async close() {}
}

export class FakeInvoices implements InvoiceRepositoryPort {
  lastCriteria: InvoiceCriteria | null = null;
  constructor(readonly invoices: InvoiceDetail[] = []) {}
  async list(criteria: InvoiceCriteria): Promise<InvoicePage> {
    this.lastCriteria = criteria;
    const mine = this.invoices.filter((i) => i.directory === criteria.directory);
    const start = (criteria.page - 1) * criteria.perPage;
    return { invoices: mine.slice(start, start + criteria.perPage), total: mine.length };
  }
  async exists(directory: string, id: number) {
    return this.invoices.some((i) => i.directory === directory && i.id === id);
  }
  async findDetail(directory: string, id: number) {
    return this.invoices.find((i) => i.directory === directory && i.id === id) ?? null;
  }
  /** Bumped by a test that changes the data behind the use case's back, as the triggers do. */
  version = 1;
  async dataVersion(_directory: string) {
    return String(this.version);
  }
}

export function sampleInvoice(overrides: Partial<InvoiceDetail> = {}): InvoiceDetail {
  return {
    id: 9001,
    directory: 'baltic',
    nr: 'FV/11/2026/0007',
    type: 's',
    status: 'issued',
    branchId: 2,
    issueDate: 1763510400,
    serviceDate: 1763424000,
    paymentTerm: 1764720000,
    paymentDate: null,
    customerName: 'Rheinfracht GmbH',
    customerVat: 'DE811111111',
    customerCountry: 'de',
    customerAddress: 'Hafenstrasse 9\n47119 Duisburg',
    currency: 'EUR',
    amountNet: 1450,
    amountTax: 0,
    amountGross: 1450,
    paid: 0,
    leftToPay: 1450,
    correctOf: null,
    addedTime: 1763512000,
    orders: [{ type: 'FTL', nr: 'BH/2026/0412', cmr: 'CMR 778120', tasks: [], files: [], contacts: [] }],
    items: [
      { name: 'Road freight Gdansk - Duisburg', quantity: 1, unit: 'pcs', unitPriceNet: 1450, taxRate: 'np', amountNet: 1450, amountTax: 0, amountGross: 1450 },
    ],
    ...overrides,
  };
}

/** Idempotency keys in a map, answers kept as JSON (as the real stores do), on a clock a test can move. */
export class FakeIdempotencyStore implements IdempotencyStorePort {
  readonly records = new Map<string, { fingerprint: string; token: string | null; answer: string | null; expiresAt: number }>();
  clock = () => Date.now();
  private tokens = 0;
  async claim(scope: IdempotencyScope, fingerprint: string, lockMs: number): Promise<IdempotencyClaim> {
    const id = JSON.stringify([scope.directory, scope.key]);
    const record = this.records.get(id);
    if (!record || record.expiresAt <= this.clock()) {
      const token = `token-${++this.tokens}`;
      this.records.set(id, { fingerprint, token, answer: null, expiresAt: this.clock() + lockMs });
      return { kind: 'claimed', token };
    }
    if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (record.answer !== null) return { kind: 'replay', answer: JSON.parse(record.answer) };
    return { kind: 'in-flight' };
  }
  async complete(scope: IdempotencyScope, token: string, answer: unknown, keepMs: number) {
    const record = this.records.get(JSON.stringify([scope.directory, scope.key]));
    if (record?.token !== token) return;
    Object.assign(record, { token: null, answer: JSON.stringify(answer), expiresAt: this.clock() + keepMs });
  }
  async release(scope: IdempotencyScope, token: string) {
    const id = JSON.stringify([scope.directory, scope.key]);
    if (this.records.get(id)?.token === token) this.records.delete(id);
  }
  async deleteExpired() {
    const expired = [...this.records].filter(([, record]) => record.expiresAt <= this.clock());
    for (const [id] of expired) this.records.delete(id);
    return expired.length;
  }
}

/**
 * A stand-in for SHA-256: 64 hex digits from eight FNV-1a rounds with
 * different seeds. Deterministic and sensitive to every character, which is
 * all the PDF version needs from it in a unit test.
 */
export class FakeHasher implements ContentHasherPort {
  readonly hashed: string[] = [];
  sha256Hex(text: string): string {
    this.hashed.push(text);
    let out = '';
    for (let seed = 0; seed < 8; seed++) {
      let h = (0x811c9dc5 ^ seed) >>> 0;
      for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
      out += h.toString(16).padStart(8, '0');
    }
    return out;
  }
}

export class FakeClients implements ClientRepositoryPort {
  constructor(readonly clients: Client[]) {}
  async findByDirectory(directory: string) {
    return this.clients.find((c) => c.directory === directory) ?? null;
  }
  async upsert(): Promise<Client> {
    throw new Error('not used');
  }
  async list() {
    return this.clients;
  }
}

export const balticClient: Client = {
  id: 1,
  directory: 'baltic',
  name: 'Baltic',
  company: { name: 'Baltic Haulage Sp. z o.o.', address: 'ul. Portowa 4', vat: 'PL5860000000', bankAccount: 'PL61 1090', bankName: 'Santander' },
};

/** A store job's payload: one byte under `orders/d/1/a`, its deadline a minute away, unless told otherwise. */
export const storeJob = (overrides: Partial<JobPayloads['store-order-file']> = {}): JobPayloads['store-order-file'] => ({
  directory: 'd',
  orderId: 1,
  categoryId: null,
  name: 'a.pdf',
  size: 1,
  contentType: 'application/pdf',
  sha256: 'x',
  storageKey: 'orders/d/1/a',
  requestId: 'r',
  deadline: Date.now() + 60_000,
  ...overrides,
});
