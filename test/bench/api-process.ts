import type { ChildProcess } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import { ROOT } from './config.js';
import { freePort } from '../support/free-port.js';
import { HOST, keepAliveAgent, request, type HttpAnswer, type HttpRequest } from './http.js';
import { childNodeArgs, OutputTail, spawnTracked, stopChild } from './processes.js';

/** Variables of the API's own configuration: none leaks in from the shell that runs the benchmark. */
const CONFIG_VARIABLES =
  /^(HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_READ_URL|DB_.*|REDIS_URL|REDIS_PREFIX|REDIS_SENTINEL.*|S3_.*|CHROMIUM_PATH|APP_TIMEZONE|RATE_LIMIT_.*|UPLOAD_MAX_FILES|UPLOAD_QUOTA_MB_PER_DAY|JOB_.*|WORKER_CONCURRENCY|PDF_.*|METRICS_.*|DASHBOARD_.*|TRUST_PROXY|LOG_LEVEL|EVENTS_.*|WEBHOOK_.*|SECRETS_.*|HTTP_.*)$/;

export function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!CONFIG_VARIABLES.test(key)) env[key] = value;
  return { ...env, ...extra };
}

/**
 * The real API (`pnpm start` without pnpm) as a child process on a free
 * loopback port: jobs in-process unless REDIS_URL is given, rate limits out
 * of the way, metrics listener off.
 */
export class ApiProcess {
  private readonly agent: http.Agent;

  private constructor(
    readonly label: string,
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly output: OutputTail,
    readonly auth: Record<string, string>,
  ) {
    this.agent = keepAliveAgent(1);
  }

  static async start(label: string, env: Record<string, string>, auth: { key: string; directory: string }): Promise<ApiProcess> {
    const port = await freePort();
    const output = new OutputTail();
    const child = spawnTracked(process.execPath, [...childNodeArgs(), '--import', 'tsx', path.join(ROOT, 'packages/api/src/main.ts')], {
      cwd: ROOT,
      env: serviceEnv({
        HOST,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        METRICS_PORT: '0',
        RATE_LIMIT_MAX: '1000000000',
        CHROMIUM_PATH: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
        ...env,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
    const api = new ApiProcess(label, port, child, output, { Authorization: `Bearer ${auth.key}`, 'X-Client-Directory': auth.directory });
    await api.waitReady(60_000);
    return api;
  }

  private async waitReady(limitMs: number): Promise<void> {
    const deadline = Date.now() + limitMs;
    const agent = keepAliveAgent(1);
    try {
      for (;;) {
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          throw new Error(`${this.label}: the API exited (${this.child.exitCode ?? this.child.signalCode}) before it was ready:\n${this.output.toString()}`);
        }
        try {
          const answer = await request(agent, this.port, { path: '/health/ready', timeoutMs: 5_000 });
          if (answer.status === 200) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`${this.label}: the API was not ready within ${limitMs / 1000} s:\n${this.output.toString()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      agent.destroy();
    }
  }

  /**
   * A request with the client's credentials, on this API's one keep-alive connection, or on `agent`'s: calls in
   * flight at once need an agent with as many sockets, or they queue on the one connection and run one at a time.
   */
  async call(req: HttpRequest, agent: http.Agent = this.agent): Promise<HttpAnswer> {
    this.assertRunning();
    const full = { ...req, headers: { ...this.auth, ...req.headers } };
    try {
      return await request(agent, this.port, full);
    } catch (error) {
      // A kept-alive socket the server closed (idle timeout) just as a GET went out: send it once more.
      const code = (error as NodeJS.ErrnoException).code;
      if ((req.method ?? 'GET') !== 'GET' || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw error;
      this.assertRunning();
      return request(agent, this.port, full);
    }
  }

  assertRunning(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      throw new Error(`${this.label}: the API process died (${this.child.exitCode ?? this.child.signalCode}):\n${this.output.toString()}`);
    }
  }

  /** The API's own process (spawned directly, not through a shell or pnpm). */
  get pid(): number {
    return this.child.pid!;
  }

  get logTail(): string {
    return this.output.toString();
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    await stopChild(this.child, 15_000);
  }
}
