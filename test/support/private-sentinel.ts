import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { vi } from 'vitest';
import { freePort } from './free-port.js';
import { PausableProcess } from './private-services.js';

const REDIS_SERVER = '/usr/bin/redis-server';

/** Sentinel's timings for the tests: a master silent for 1 s is down; a failover that stalls is retried after 5 s. */
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 5_000;

export interface Address {
  host: string;
  port: number;
}

/** A `redis-server` of the group (a data server or a sentinel), with its own config file in the group's directory. */
export class RedisNode extends PausableProcess {
  private constructor(
    name: string,
    child: ReturnType<typeof spawn>,
    readonly port: number,
    readonly configFile: string,
  ) {
    super(name, child);
  }

  static async start(name: string, configFile: string, port: number, sentinel: boolean, extraArgs: string[] = []): Promise<RedisNode> {
    const child = spawn(REDIS_SERVER, sentinel ? [configFile, '--sentinel'] : [configFile, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    const node = new RedisNode(name, child, port, configFile);
    await node.until(10_000, `${name} answers PING`, async () => (await node.command(['PING'])) === 'PONG');
    return node;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** One command on a connection of its own, bounded (1 s to connect, 2 s to answer). */
  async command(args: [string, ...Array<string | number>]): Promise<unknown> {
    const client = new Redis({
      host: '127.0.0.1',
      port: this.port,
      lazyConnect: true,
      connectTimeout: 1_000,
      commandTimeout: 2_000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await client.call(...args);
    } finally {
      client.disconnect();
    }
  }

  /** The fields of `INFO <section>`. */
  async info(section: string): Promise<Record<string, string>> {
    const text = String(await this.command(['INFO', section]));
    return Object.fromEntries(
      text
        .split('\r\n')
        .filter((line) => line.includes(':') && !line.startsWith('#'))
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
    );
  }

  /** Polls `probe` every 50 ms until it is true; rejects after `timeoutMs` naming `what`, with the end of the process's output. */
  async until(timeoutMs: number, what: string, probe: () => Promise<boolean>): Promise<void> {
    await vi.waitFor(
      async () => {
        if (!this.alive) throw new Error(`${this.name} exited before "${what}": ${this.output.join('').slice(-2000)}`);
        if (!(await probe().catch(() => false)))
          throw new Error(`${this.name}: "${what}" not seen within ${timeoutMs} ms: ${this.output.join('').slice(-2000)}`);
      },
      { timeout: timeoutMs, interval: 50 },
    );
  }
}

/**
 * A private Sentinel group: a Redis primary, one replica (`replicaof`) and
 * three sentinels (quorum 2), each a child process on a free port with its
 * config file in a temp directory of the group (removed by `stop`). Nothing
 * is persisted; the replica's full sync writes its temp file there too.
 */
export class PrivateSentinelGroup {
  private constructor(
    readonly name: string,
    private readonly directory: string,
    readonly servers: RedisNode[],
    readonly sentinels: RedisNode[],
  ) {}

  static async start(name = 'logi-primary'): Promise<PrivateSentinelGroup> {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'logi-sentinel-'));
    const servers: RedisNode[] = [];
    const sentinels: RedisNode[] = [];
    const group = new PrivateSentinelGroup(name, directory, servers, sentinels);
    try {
      const [primaryPort, replicaPort] = [await freePort(), await freePort()];
      for (const [index, port] of [primaryPort, replicaPort].entries()) {
        const lines = [
          `port ${port}`,
          'bind 127.0.0.1',
          'protected-mode no',
          `dir ${directory}`,
          `dbfilename dump-${port}.rdb`,
          'save ""',
          'appendonly no',
          ...(index === 1 ? [`replicaof 127.0.0.1 ${primaryPort}`] : []),
        ];
        const file = path.join(directory, `redis-${port}.conf`);
        await writeFile(file, `${lines.join('\n')}\n`);
        servers.push(await RedisNode.start(`redis-server :${port}`, file, port, false));
      }
      await servers[1]!.until(15_000, 'replica in sync', async () => (await servers[1]!.info('replication')).master_link_status === 'up');
      for (let i = 0; i < 3; i++) {
        const port = await freePort();
        const lines = [
          `port ${port}`,
          'bind 127.0.0.1',
          'protected-mode no',
          `dir ${directory}`,
          `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${name} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${name} ${FAILOVER_TIMEOUT_MS}`,
          `sentinel parallel-syncs ${name} 1`,
        ];
        // Sentinel rewrites its config file (what it learns about the group), so each has its own.
        const file = path.join(directory, `sentinel-${port}.conf`);
        await writeFile(file, `${lines.join('\n')}\n`);
        sentinels.push(await RedisNode.start(`sentinel :${port}`, file, port, true));
      }
      await group.untilSettled(30_000);
      return group;
    } catch (error) {
      await group.stop();
      throw error;
    }
  }

  /** REDIS_SENTINELS for this group. */
  get sentinelList(): string {
    return this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  /** The master as each live sentinel names it now (`SENTINEL get-master-addr-by-name`). */
  async masterAddresses(): Promise<Address[]> {
    const answers = await Promise.all(
      this.sentinels.filter((s) => s.alive).map(async (s) => (await s.command(['SENTINEL', 'get-master-addr-by-name', this.name])) as [string, string] | null),
    );
    return answers.filter((a) => a !== null).map(([host, port]) => ({ host, port: Number(port) }));
  }

  /** The data server the sentinels agree is the master (throws while they disagree). */
  async master(): Promise<RedisNode> {
    const ports = new Set((await this.masterAddresses()).map((a) => a.port));
    if (ports.size !== 1) throw new Error(`sentinels disagree on the master: ${[...ports].join(', ')}`);
    const node = this.servers.find((s) => s.port === [...ports][0]);
    if (!node) throw new Error(`sentinels name an unknown master :${[...ports][0]}`);
    return node;
  }

  /**
   * Resolves once the group is whole: every live sentinel names the same
   * master, which reports itself master; every other live server is its
   * replica with the link up; every sentinel knows the others and the replica.
   */
  async untilSettled(timeoutMs: number): Promise<RedisNode> {
    return vi.waitFor(
      async () => {
        const master = await this.master();
        const role = (await master.info('replication')).role;
        const replicas = this.servers.filter((s) => s !== master && s.alive);
        const links = await Promise.all(replicas.map(async (r) => await r.info('replication')));
        const views = await Promise.all(
          this.sentinels.filter((s) => s.alive).map(async (s) => fields((await s.command(['SENTINEL', 'master', this.name])) as string[])),
        );
        const liveSentinels = this.sentinels.filter((s) => s.alive).length;
        const settled =
          role === 'master' &&
          links.every((l) => Number(l.master_port) === master.port && l.master_link_status === 'up') &&
          views.every((v) => v.flags === 'master' && Number(v['num-other-sentinels']) === liveSentinels - 1 && Number(v['num-slaves']) >= replicas.length);
        if (settled) return master;
        const seen = {
          master: master.port,
          role,
          links: links.map((l) => [l.master_port, l.master_link_status]),
          views: views.map((v) => [v['num-other-sentinels'], v['num-slaves'], v.flags]),
        };
        throw new Error(`sentinel group not settled within ${timeoutMs} ms: ${JSON.stringify(seen)}`);
      },
      { timeout: timeoutMs, interval: 100 },
    );
  }

  /**
   * `SENTINEL FAILOVER` on one sentinel, then waits until every sentinel names
   * another master. Returns the old and new masters and how long the switch took.
   */
  async failover(timeoutMs = 30_000): Promise<{ from: RedisNode; to: RedisNode; switchedMs: number }> {
    const from = await this.master();
    const started = Date.now();
    await this.sentinels[0]!.until(
      timeoutMs,
      'SENTINEL FAILOVER accepted',
      async () => (await this.sentinels[0]!.command(['SENTINEL', 'FAILOVER', this.name])) === 'OK',
    );
    const to = await this.untilMasterIsNot(from, started + timeoutMs);
    return { from, to, switchedMs: Date.now() - started };
  }

  /** SIGKILL to the master, then waits until every live sentinel names another one. */
  async killMaster(timeoutMs = 30_000): Promise<{ from: RedisNode; to: RedisNode; switchedMs: number }> {
    const from = await this.master();
    const started = Date.now();
    await from.kill();
    const to = await this.untilMasterIsNot(from, started + timeoutMs);
    return { from, to, switchedMs: Date.now() - started };
  }

  /**
   * Starts every data server that was killed again, on its port, as a replica
   * of the master the sentinels name now, and waits until the group is whole.
   */
  async reviveServers(timeoutMs = 30_000): Promise<void> {
    const master = await this.master();
    for (const [index, node] of this.servers.entries()) {
      if (node.alive) continue;
      this.servers[index] = await RedisNode.start(node.name, node.configFile, node.port, false, ['--replicaof', '127.0.0.1', String(master.port)]);
    }
    await this.untilSettled(timeoutMs);
  }

  private async untilMasterIsNot(old: RedisNode, deadline: number): Promise<RedisNode> {
    return vi.waitFor(
      async () => {
        const addresses = await this.masterAddresses().catch(() => []);
        if (addresses.length > 0 && addresses.every((a) => a.port !== old.port && a.port === addresses[0]!.port)) return this.master();
        throw new Error(`the sentinels still name :${old.port} (answers: ${addresses.map((a) => a.port).join(', ')})`);
      },
      { timeout: Math.max(0, deadline - Date.now()), interval: 50 },
    );
  }

  /** Kills every process and removes the directory. */
  async stop(): Promise<void> {
    await Promise.allSettled([...this.sentinels, ...this.servers].map((node) => node.kill()));
    await rm(this.directory, { recursive: true, force: true });
  }
}

/** A flat `[key, value, key, value, ...]` reply as an object. */
function fields(reply: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) record[reply[i]!] = reply[i + 1]!;
  return record;
}
