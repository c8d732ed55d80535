import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'minio';
import { freePort } from './free-port.js';
import { S3RVER_ACCESS_KEY, S3RVER_SECRET_KEY } from './s3rver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Resolves once `probe` resolves true, polling every 50 ms; rejects after `timeoutMs` naming `what`. */
async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>, child: ChildProcess, output: string[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}): ${output.join('').slice(-2000)}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms: ${output.join('').slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** True when something accepts a TCP connection and sends `expect` (a prefix of its first bytes) back after `send`. */
export function answers(port: number, send: string, expect: (reply: string) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => send && socket.write(send));
    socket.on('data', (data) => done(expect(data.toString('latin1'))));
  });
}

/**
 * A service in a child process of this test that can be paused (SIGSTOP) and
 * resumed (SIGCONT): the kernel keeps its sockets open and accepting, so
 * clients see a server that takes connections and bytes but never answers,
 * which is what a hung or swapped-out host looks like, unlike a stopped one.
 */
export class PausableProcess {
  protected readonly output: string[] = [];
  private paused = false;

  protected constructor(
    readonly name: string,
    protected readonly child: ChildProcess,
  ) {
    for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The state letter of /proc/<pid>/stat (T once the stop has taken effect). */
  async state(): Promise<string> {
    const { readFile } = await import('node:fs/promises');
    const stat = await readFile(`/proc/${this.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  }

  /** SIGSTOP, and waits until the kernel reports the process stopped. */
  async pause(): Promise<void> {
    this.child.kill('SIGSTOP');
    this.paused = true;
    const deadline = Date.now() + 5_000;
    while ((await this.state()) !== 'T') {
      if (Date.now() > deadline) throw new Error(`${this.name} did not stop`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async resume(): Promise<void> {
    this.child.kill('SIGCONT');
    this.paused = false;
    const deadline = Date.now() + 5_000;
    while ((await this.state()) === 'T') {
      if (Date.now() > deadline) throw new Error(`${this.name} did not continue`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Kills it (resumed first, so nothing stays stopped), and waits for the exit. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    if (this.paused) this.child.kill('SIGCONT');
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** A private `redis-server` on a free port, nothing persisted. */
export class PrivateRedis extends PausableProcess {
  private constructor(
    child: ChildProcess,
    readonly port: number,
  ) {
    super('redis-server', child);
  }

  /** On a free port, or on `port` (a restart of one that was killed). */
  static async start(port?: number): Promise<PrivateRedis> {
    port ??= await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const redis = new PrivateRedis(child, port);
    await until('redis-server', 10_000, () => answers(port, 'PING\r\n', (reply) => reply.startsWith('+PONG')), child, redis.output);
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}

/**
 * The command line of a private mariadbd: no configuration files, its own
 * data directory (`<directory>/data`), socket and pid file under
 * `directory`, a TCP port on 127.0.0.1, a small buffer pool, the
 * service's character set, then `extra`.
 */
export function mariadbdArgs(directory: string, port: number, bufferPool: string, extra: string[]): string[] {
  return [
    '--no-defaults',
    `--datadir=${path.join(directory, 'data')}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${path.join(directory, 'mariadb.sock')}`,
    `--pid-file=${path.join(directory, 'mariadb.pid')}`,
    '--user=root',
    `--innodb-buffer-pool-size=${bufferPool}`,
    '--innodb-flush-log-at-trx-commit=2',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_unicode_ci',
    ...extra,
  ];
}

/**
 * A private MariaDB server (its own data directory, port and socket; no
 * configuration files read, no grant tables, so root connects over TCP
 * without a password), for tests that must stop it without touching the
 * shared one.
 */
export class PrivateMariadb extends PausableProcess {
  private constructor(
    child: ChildProcess,
    readonly port: number,
    private readonly directory: string,
  ) {
    super('mariadbd', child);
  }

  /**
   * `grants`: the grant tables are read (root@localhost without a password, as mariadb-install-db makes it), so users
   * made with REQUIRE SSL or X509 are held to it; `extra`: more mariadbd options (TLS files, say).
   */
  static async start(options: { grants?: boolean; extra?: string[] } = {}): Promise<PrivateMariadb> {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'private-mariadb-'));
    const dataDir = path.join(directory, 'data');
    await run('mariadb-install-db', ['--no-defaults', `--datadir=${dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=root']);
    const port = await freePort();
    const extra = [...(options.grants ? [] : ['--skip-grant-tables']), '--skip-log-bin', ...(options.extra ?? [])];
    const child = spawn('mariadbd', mariadbdArgs(directory, port, '64M', extra), { stdio: ['ignore', 'pipe', 'pipe'] });
    const mariadb = new PrivateMariadb(child, port, directory);
    // The server's greeting packet carries its version string.
    await until('mariadbd', 30_000, () => answers(port, '', (reply) => reply.includes('MariaDB')), child, mariadb.output);
    return mariadb;
  }

  /** The server's Unix socket (root@localhost over it, when the grant tables are read). */
  get socketPath(): string {
    return path.join(this.directory, 'mariadb.sock');
  }

  /** A URL for `database` on this server (create it first with the admin URL, database `mysql`). */
  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  async destroy(): Promise<void> {
    await this.kill();
    await rm(this.directory, { recursive: true, force: true });
  }
}

/**
 * The test S3 server (s3rver, with the fixes of s3rver.ts) in a child
 * process of its own, so that it can be paused without pausing the test.
 */
export class ChildS3Server extends PausableProcess {
  private constructor(
    child: ChildProcess,
    readonly endPoint: string,
  ) {
    super('s3rver', child);
  }

  static async start(): Promise<ChildS3Server> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/s3rver-process.ts')], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const endPoint = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`s3rver process did not start: ${output.join('')}`)), 30_000);
      readline.createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { endPoint: string }).endPoint);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver process exited with ${code}: ${output.join('')}`));
      });
    });
    return new ChildS3Server(child, endPoint);
  }

  /** Keys of every object in `bucket` (empty when there is no such bucket). */
  async objectKeys(bucket: string): Promise<string[]> {
    const client = new Client({
      endPoint: '127.0.0.1',
      port: Number(new URL(this.endPoint).port),
      useSSL: false,
      accessKey: S3RVER_ACCESS_KEY,
      secretKey: S3RVER_SECRET_KEY,
      pathStyle: true,
    });
    const keys: string[] = [];
    if (!(await client.bucketExists(bucket))) return keys;
    for await (const item of client.listObjectsV2(bucket, '', true)) {
      const name = (item as { name?: string }).name;
      if (name) keys.push(name);
    }
    return keys.sort();
  }

  /** Stops the process; it removes its data when its stdin closes, and is killed if it does not exit in time. */
  async destroy(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGCONT');
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const output: string[] = [];
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${output.join('').slice(-2000)}`))));
  });
}
