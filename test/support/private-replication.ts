import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { vi } from 'vitest';
import { createKnex } from '@logi/adapters';
import { freePort } from './free-port.js';
import { answers, mariadbdArgs, PausableProcess } from './private-services.js';

/** The server's greeting packet carries its version string. */
const greetsAsMariadb = (port: number) => answers(port, '', (reply) => reply.includes('MariaDB'));

type Knex = ReturnType<typeof createKnex>;

/**
 * One private MariaDB server of a replication set: its own data directory,
 * port and socket, no configuration files read. Grant tables are on (a
 * primary without them writes triggers with an empty DEFINER, which a replica
 * refuses), and mariadb-install-db's root has no password over TCP
 * (root@127.0.0.1), which is also how a replica's I/O thread reaches the
 * primary.
 */
export class ReplicatedMariadb extends PausableProcess {
  private constructor(
    child: ChildProcess,
    readonly role: string,
    readonly port: number,
    readonly directory: string,
    private readonly args: string[],
  ) {
    super(`mariadbd (${role})`, child);
  }

  static async start(role: string, directory: string, port: number, args: string[]): Promise<ReplicatedMariadb> {
    const child = spawn('mariadbd', mariadbdArgs(directory, port, '32M', args), { stdio: ['ignore', 'pipe', 'pipe'] });
    const server = new ReplicatedMariadb(child, role, port, directory, args);
    await server.untilAnswering();
    return server;
  }

  /** A new server on the same data directory and port (after kill()): a replica resumes replicating where it stopped. */
  restart(): Promise<ReplicatedMariadb> {
    return ReplicatedMariadb.start(this.role, this.directory, this.port, this.args);
  }

  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  /** The server's greeting packet carries its version string. */
  private async untilAnswering(): Promise<void> {
    await vi.waitFor(
      async () => {
        if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`${this.name} exited: ${this.output.join('').slice(-2000)}`);
        if (!(await greetsAsMariadb(this.port))) throw new Error(`${this.name} did not come up within 30 s: ${this.output.join('').slice(-2000)}`);
      },
      { timeout: 30_000, interval: 50 },
    );
  }
}

/**
 * A MariaDB primary with a binary log (server-id 1) and `replicaCount`
 * replicas (server-id 2, 3, ...) replicating from it by GTID, each in its
 * own directory under one `logi-replication-*` temp directory, which
 * destroy() removes.
 */
export class PrivateReplication {
  private readonly admins = new Map<ReplicatedMariadb, Knex>();

  private constructor(
    private readonly root: string,
    readonly primary: ReplicatedMariadb,
    readonly replicas: ReplicatedMariadb[],
  ) {}

  static async start(replicaCount: number): Promise<PrivateReplication> {
    const root = await mkdtemp(path.join(os.tmpdir(), 'logi-replication-'));
    const started: ReplicatedMariadb[] = [];
    let replication: PrivateReplication | null = null;
    try {
      const roles = ['primary', ...Array.from({ length: replicaCount }, (_, i) => `replica-${i + 1}`)];
      // Every step is waited for in full, so nothing still writes in the directory when a failed set is removed.
      const installs = await Promise.allSettled(roles.map((role) => install(path.join(root, role))));
      const notInstalled = installs.find((result) => result.status === 'rejected');
      if (notInstalled) throw notInstalled.reason;
      const ports = await Promise.all(roles.map(() => freePort()));
      const results = await Promise.allSettled(
        roles.map((role, i) => {
          const directory = path.join(root, role);
          const args =
            i === 0
              ? ['--server-id=1', `--log-bin=${path.join(directory, 'binlog')}`, '--binlog-format=MIXED']
              : [`--server-id=${i + 1}`, '--skip-log-bin', `--relay-log=${path.join(directory, 'relay')}`];
          return ReplicatedMariadb.start(role, directory, ports[i]!, args);
        }),
      );
      for (const result of results) if (result.status === 'fulfilled') started.push(result.value);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      const servers = started;
      replication = new PrivateReplication(root, servers[0]!, servers.slice(1));
      for (const replica of replication.replicas) {
        await replication.sql(
          replica,
          `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${replication.primary.port}, MASTER_USER = 'root', MASTER_PASSWORD = '', ` +
            'MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1',
        );
        await replication.sql(replica, 'START SLAVE');
      }
      await Promise.all(replication.replicas.map((replica) => replication!.untilReplicating(replica)));
      return replication;
    } catch (error) {
      // Nothing of a set that did not come up may stay behind: its servers, connections and directories.
      // Its own failure is what the caller hears, whatever the clean-up meets.
      if (replication) await replication.destroy().catch(() => undefined);
      else {
        await Promise.allSettled(started.map((server) => server.kill()));
        await rm(root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
      }
      throw error;
    }
  }

  /** Runs `statement` as root on `server` (database `mysql`); gives the rows of a SELECT or SHOW. */
  async sql<T = Record<string, unknown>>(server: ReplicatedMariadb, statement: string, bindings: unknown[] = []): Promise<T[]> {
    let admin = this.admins.get(server);
    if (!admin) {
      admin = createKnex({
        databaseUrl: server.url('mysql'),
        dataDir: os.tmpdir(),
        queryTimeoutMs: 10_000,
        logger: { warn: () => undefined, error: () => undefined },
      });
      this.admins.set(server, admin);
    }
    const [rows] = (await admin.raw(statement, bindings as never)) as [unknown];
    return Array.isArray(rows) ? (rows as T[]) : [];
  }

  /** SHOW SLAVE STATUS of a replica, its one row. */
  async status(replica: ReplicatedMariadb): Promise<{ Slave_IO_Running: string; Slave_SQL_Running: string; Seconds_Behind_Master: number | null }> {
    const [row] = await this.sql<{ Slave_IO_Running: string; Slave_SQL_Running: string; Seconds_Behind_Master: number | null }>(replica, 'SHOW SLAVE STATUS');
    if (!row) throw new Error(`${replica.name} is not replicating`);
    return row;
  }

  /** Resolves once both of the replica's threads run, with no lag; rejects after 30 s with its status. */
  async untilReplicating(replica: ReplicatedMariadb): Promise<void> {
    await vi.waitFor(
      async () => {
        const status = await this.status(replica);
        if (status.Slave_IO_Running !== 'Yes' || status.Slave_SQL_Running !== 'Yes' || status.Seconds_Behind_Master !== 0) {
          throw new Error(`${replica.name} is not replicating: ${JSON.stringify(status)}`);
        }
      },
      { timeout: 30_000, interval: 100 },
    );
  }

  /** Resolves once the replica has applied every transaction the primary had committed when this was called; rejects with its status after `timeoutMs`. */
  async untilCaughtUp(replica: ReplicatedMariadb, timeoutMs = 30_000): Promise<void> {
    const [{ pos }] = (await this.sql<{ pos: string }>(this.primary, 'SELECT @@gtid_binlog_pos AS pos')) as [{ pos: string }];
    await vi.waitFor(
      async () => {
        const [{ applied }] = (await this.sql<{ applied: string }>(replica, 'SELECT @@gtid_slave_pos AS applied')) as [{ applied: string }];
        if (applied === pos) return;
        const status = await this.status(replica).catch((error: unknown) => error);
        throw new Error(`${replica.name} did not reach the primary's position ${pos} within ${timeoutMs} ms (at ${applied}): ${JSON.stringify(status)}`);
      },
      { timeout: timeoutMs, interval: 50 },
    );
  }

  /** Kills a replica and starts it again on its data directory and port; it resumes replicating by itself. */
  async restartReplica(index: number): Promise<ReplicatedMariadb> {
    const old = this.replicas[index]!;
    await old.kill();
    await this.forget(old);
    const fresh = await old.restart();
    this.replicas[index] = fresh;
    return fresh;
  }

  /** Stops every server (resumed first when paused) and removes their directories. */
  async destroy(): Promise<void> {
    await Promise.allSettled([...this.admins.keys()].map((server) => this.forget(server)));
    await Promise.allSettled([this.primary, ...this.replicas].map((server) => server.kill()));
    await rm(this.root, { recursive: true, force: true });
  }

  private async forget(server: ReplicatedMariadb): Promise<void> {
    const admin = this.admins.get(server);
    this.admins.delete(server);
    await admin?.destroy();
  }
}

/** Each install gets a temp dir of its own: installs sharing one failed now and then (1 in 15 with three at once). */
async function install(directory: string): Promise<void> {
  const tmp = path.join(directory, 'tmp');
  await mkdir(tmp, { recursive: true });
  await run(
    'mariadb-install-db',
    ['--no-defaults', `--datadir=${path.join(directory, 'data')}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=root'],
    { ...process.env, TMPDIR: tmp },
  );
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const output: string[] = [];
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${output.join('').slice(-2000)}`))));
  });
}
