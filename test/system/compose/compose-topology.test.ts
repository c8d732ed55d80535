import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { readZip } from '../../support/zip-reader.js';
import { ComposeStack, REPO_ROOT, podmanOk } from './compose-stack.js';

/**
 * The image the Dockerfile builds, run as docker-compose.yml runs it: scripts/test.sh's image step
 * (test/system/compose/run.sh) builds the image and the stand-ins, then runs this file alone
 * (`--config test/system/compose/vitest.config.ts`). Everything is driven through the API's
 * published port, the image's CLI and Podman, as an operator would.
 */

const PROJECT = 'logi-image-test';
const AUTH = { Authorization: 'Bearer demo-key-baltic', 'X-Client-Directory': 'baltic-haulage' };
const FIGURES = path.join(REPO_ROOT, '.tmp/image-test-figures.json');
/** How often a test asks for an export's state: the demo key may make 60 requests a minute (RATE_LIMIT_MAX). */
const POLL_MS = 1_500;

interface Envelope<T> {
  status: number;
  message: string;
  data: T;
}
interface ExportView {
  id: number;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  total: number | null;
  done: number;
  size: number | null;
  sha256: string | null;
  error: string | null;
}

async function call<T>(stack: ComposeStack, pathAndQuery: string, init: RequestInit = {}): Promise<{ status: number; body: Envelope<T> }> {
  const response = await fetch(`${stack.apiUrl}/v1${pathAndQuery}`, { ...init, headers: { ...AUTH, ...init.headers } });
  return { status: response.status, body: (await response.json()) as Envelope<T> };
}

async function exportOf(stack: ComposeStack, id: number): Promise<ExportView> {
  const { status, body } = await call<ExportView>(stack, `/exports/${id}`);
  expect(status).toBe(200);
  return body.data;
}

/** Downloads a succeeded export and checks its bytes against the size and sha256 the API states. */
async function downloadChecked(stack: ComposeStack, done: ExportView): Promise<Map<string, Buffer>> {
  const response = await fetch(`${stack.apiUrl}/v1/exports/${done.id}/download`, { headers: AUTH });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/zip');
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(bytes.length).toBe(done.size);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(done.sha256);
  return readZip(bytes);
}

/** The sum of a metric's series on a worker's own metrics listener (METRICS_PORT 9465, not published). */
async function metricOf(stack: ComposeStack, worker: number, name: string): Promise<number> {
  const address = await stack.address(stack.container('worker', worker));
  const text = await (await fetch(`http://${address}:9465/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** The PDFs a worker has rendered. */
function rendersOf(stack: ComposeStack, worker: number): Promise<number> {
  return metricOf(stack, worker, 'logistics_pdf_render_duration_seconds_count');
}

/** A webhook receiver on the host's address on the project's network, where the workers reach it. */
class HostReceiver {
  /** The deliveries whose signature verified with `secret`; others are answered 400 and not kept. */
  readonly events: Array<{ type: string; data: { object: Record<string, unknown> } }> = [];
  secret = '';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        new Webhook(this.secret).verify(body, req.headers as Record<string, string>);
      } catch {
        res.writeHead(400).end();
        return;
      }
      this.events.push(JSON.parse(body) as HostReceiver['events'][number]);
      res.writeHead(204).end();
    });
  });
  url = '';

  async start(host: string): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, host, resolve));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  /** The object of the first event of `type` received. */
  objectOf(type: string): Record<string, unknown> | undefined {
    return this.events.find((event) => event.type === type)?.data.object;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('the image and docker-compose.yml, run with Podman', () => {
  let stack: ComposeStack;
  let receiver: HostReceiver | undefined;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    stack = new ComposeStack(PROJECT, await freePort());
    // A run that died before its clean-up left its containers: start from nothing.
    await stack.down();
    const started = performance.now();
    await stack.up();
    figures.upToReadySeconds = Math.round((performance.now() - started) / 100) / 10;
    figures.imageBytes = Number((await podmanOk(['image', 'inspect', '--format', '{{.Size}}', 'logistics-api:latest'])).trim());
    console.log(`image logistics-api:latest ${(Number(figures.imageBytes) / 2 ** 20).toFixed(0)} MiB; up to ready ${String(figures.upToReadySeconds)} s`);
  }, 900_000);

  afterAll(async () => {
    await receiver?.close();
    await mkdir(path.dirname(FIGURES), { recursive: true });
    await writeFile(FIGURES, `${JSON.stringify({ ...figures, cpus: os.cpus().length, measured: new Date().toISOString() }, null, 2)}\n`);
    const problems = await stack.down();
    expect(problems).toEqual([]);
  }, 300_000);

  it('when the demo data is loaded with the image CLI, then the API serves it through the published port', async () => {
    // podman-compose 1.0.3 drops `run -v`, so the file is copied into the API's container.
    await podmanOk(['cp', path.join(REPO_ROOT, 'fixtures/demo.json'), `${stack.container('api')}:/tmp/demo.json`]);
    const loaded = await stack.cli(['fixtures:load', '/tmp/demo.json']);
    expect(loaded.code, loaded.stderr).toBe(0);
    const { status, body } = await call<{ invoices: Array<{ id: number }> }>(stack, '/invoices?per_page=5');
    expect(status).toBe(200);
    expect(body.data.invoices).toHaveLength(5);
  }, 300_000);

  it('when a webhook endpoint is registered and a file uploaded, then the file is stored and the signed event reaches the host', async () => {
    receiver = await new HostReceiver().start(await stack.gateway());
    const allowed = await stack.cli(['webhooks:allow-private', '--directory', 'baltic-haulage']);
    expect(allowed.code, allowed.stderr).toBe(0);
    const endpoint = await call<{ id: number; secret: string }>(stack, '/webhook-endpoints', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, event_types: ['order.file_attached', 'export.succeeded'] }),
    });
    expect(endpoint.status).toBe(201);
    receiver.secret = endpoint.body.data.secret;

    const sample = await readFile(path.join(REPO_ROOT, 'fixtures/samples/cmr.pdf'));
    const form = new FormData();
    form.append('files', new Blob([sample], { type: 'application/pdf' }), 'cmr.pdf');
    form.append('category_id', '1');
    const uploaded = await call<{ uploaded: Array<{ id: number; name: string }>; failed: unknown[] }>(stack, '/orders/3001/files', {
      method: 'POST',
      body: form,
    });
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.data.failed).toEqual([]);
    const [file] = uploaded.body.data.uploaded;
    expect(file!.name).toBe('cmr.pdf');

    const stored = await fetch(`${stack.apiUrl}/v1/orders/3001/files/${file!.id}`, { headers: AUTH });
    expect(stored.status).toBe(200);
    expect(Buffer.from(await stored.arrayBuffer()).equals(sample)).toBe(true);

    await expect.poll(() => receiver!.objectOf('order.file_attached')?.id, { timeout: 60_000, interval: 200 }).toBe(file!.id);
  }, 120_000);

  it('when an invoice PDF is asked for, then a worker renders it', async () => {
    const response = await fetch(`${stack.apiUrl}/v1/invoices/100001/pdf`, { headers: AUTH });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await response.arrayBuffer());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // The invoice's number, read back from the PDF (poppler-utils' pdftotext).
    const file = path.join(os.tmpdir(), 'image-test-invoice.pdf');
    await writeFile(file, pdf);
    const { stdout: text } = await promisify(execFile)('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    await rm(file);
    const demo = JSON.parse(await readFile(path.join(REPO_ROOT, 'fixtures/demo.json'), 'utf8')) as { invoices: Array<{ id: number; nr: string }> };
    expect(text).toContain(demo.invoices.find((invoice) => invoice.id === 100001)!.nr);
    expect(await rendersOf(stack, 1)).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('when an export is made, then its archive downloads with the sha256 the API states and the webhook reports it', async () => {
    const created = await call<ExportView>(stack, '/exports', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ filters: { types: 'c' }, documents: ['pdf', 'ubl'] }),
    });
    expect(created.status).toBe(202);
    const id = created.body.data.id;
    await expect.poll(async () => (await exportOf(stack, id)).status, { timeout: 300_000, interval: POLL_MS }).toBe('succeeded');
    const done = await exportOf(stack, id);
    const members = await downloadChecked(stack, done);
    const manifest = JSON.parse(members.get('manifest.json')!.toString('utf8')) as { export_id: number; invoices: unknown[] };
    expect(manifest.export_id).toBe(id);
    expect(manifest.invoices).toHaveLength(done.total!);
    await expect.poll(() => receiver!.objectOf('export.succeeded')?.id, { timeout: 60_000, interval: 200 }).toBe(id);
  }, 360_000);

  it('when the worker service is scaled to two, then both replicas are healthy', async () => {
    await stack.scaleWorkers();
    expect(await stack.state(stack.container('worker', 1))).toBe('running');
    expect(await stack.state(stack.container('worker', 2))).toBe('running');
    const workers = (
      await podmanOk(['ps', '-q', '--filter', `label=io.podman.compose.project=${PROJECT}`, '--filter', 'label=com.docker.compose.service=worker'])
    )
      .split('\n')
      .filter(Boolean);
    expect(workers).toHaveLength(2);
  }, 300_000);

  it('when the worker container making an export is killed, then the other worker finishes it', async () => {
    // Every invoice of the directory, in a language no earlier test rendered: PDFs for half a minute or more.
    const created = await call<ExportView>(stack, '/exports', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents: ['pdf'], lang: 'pl', csv: false }),
    });
    expect(created.status).toBe(202);
    const id = created.body.data.id;
    await expect.poll(async () => (await exportOf(stack, id)).done, { timeout: 300_000, interval: POLL_MS }).toBeGreaterThan(0);
    const running = await exportOf(stack, id);
    expect(running.status).toBe('running');
    expect(running.done).toBeLessThan(running.total!);
    // The replica making it says so in its metrics; the renders themselves go on the queue, to either replica.
    const making = [await metricOf(stack, 1, 'logistics_exports_running'), await metricOf(stack, 2, 'logistics_exports_running')];
    expect([...making].sort()).toEqual([0, 1]);
    const maker = making[0] === 1 ? 1 : 2;
    const other = maker === 1 ? 2 : 1;
    const now = [await rendersOf(stack, 1), await rendersOf(stack, 2)];
    await podmanOk(['kill', '--signal', 'KILL', stack.container('worker', maker)]);
    expect(await stack.state(stack.container('worker', maker))).toMatch(/^(exited|stopped)$/);

    // Its lease runs out (EXPORT_LEASE_SECONDS, 30 s by default), then the other replica makes it again.
    await expect.poll(async () => (await exportOf(stack, id)).status, { timeout: 300_000, interval: POLL_MS }).toBe('succeeded');
    const done = await exportOf(stack, id);
    expect(done.done).toBe(done.total);
    // The other replica rendered what the killed one had not stored yet (the PDFs it finished are in the PDF cache).
    expect(await rendersOf(stack, other)).toBeGreaterThan(now[other - 1]!);
    expect(await stack.state(stack.container('worker', maker))).toMatch(/^(exited|stopped)$/);
    // The operator's view: the export took a second attempt.
    const listed = await stack.cli(['exports:list', '--directory', 'baltic-haulage']);
    expect(listed.code, listed.stderr).toBe(0);
    const row = listed.stdout
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .find((cells) => cells[0] === String(id));
    expect(row?.[2]).toBe('succeeded');
    expect(Number(row?.[4])).toBeGreaterThanOrEqual(2);
    const members = await downloadChecked(stack, done);
    expect([...members.keys()].filter((name) => name.startsWith('pdf/'))).toHaveLength(done.total!);
    figures.killedExportInvoices = done.total;
  }, 600_000);
});
