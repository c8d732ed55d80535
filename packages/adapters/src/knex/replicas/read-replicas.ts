import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { withTimeout } from '@logi/domain';
import { isTransientInfrastructureError } from '../../shared/transient-errors.js';
import { judgeReplicaStatus, readReplicaStatus, type ReplicaCheck, type ReplicaState } from './replica-status.js';

/** How often each replica is asked for its status. */
const CHECK_EVERY_MS = 1_000;
/** A replica that has not answered its check by then counts as unreachable. */
const CHECK_TIMEOUT_MS = 2_000;

/** A database reads can go to: the primary (`primary`) or a replica (`replica_1`, ... in DATABASE_READ_URL's order). */
export interface ReadTarget {
  readonly name: string;
  readonly knex: Knex;
}

/** One replica as `/health/ready` and the metrics show it. */
export interface ReplicaStatus {
  name: string;
  state: ReplicaState;
  lagSeconds: number | null;
}

/** Why a read ran on the primary although replicas are configured. */
export type FallbackReason = 'no_healthy_replica' | 'replica_failed';

export interface ReadReplicasOptions {
  /** DB_REPLICA_MAX_LAG_SECONDS: a replica further behind is skipped. */
  maxLagSeconds: number;
  logger: Pick<Logger, 'info' | 'warn'>;
  checkEveryMs?: number;
  checkTimeoutMs?: number;
  /**
   * Where this process starts looking among healthy replicas (default: its
   * pid), so that processes spread over the replicas while each keeps to one.
   */
  offset?: number;
}

interface Replica extends ReadTarget {
  /** host:port, for the log only (the name is what health and metrics show). */
  readonly address: string;
  state: ReplicaState;
  lagSeconds: number | null;
  /** A check under way: the next one waits for it, so a hung server is not asked again and again. */
  checking: Promise<void> | null;
  /** That check's verdict, until it is recorded (at the latest when the check's bound runs out). */
  verdict: Promise<void> | null;
  statement: { index: number };
}

/**
 * The databases this process reads from: the primary (DATABASE_URL) and the
 * read replicas (DATABASE_READ_URL). Every second each replica is asked for
 * its replication status (bounded by a short timeout); reads go to one
 * healthy replica, the same one while it stays healthy, else to the
 * primary. A replica's change of state is logged once, not per request.
 * A read that loses its connection to a replica, or whose replica was found
 * unfit while it waited, is run again on the primary.
 */
export class ReadReplicas {
  readonly primary: ReadTarget;
  private readonly replicas: Replica[];
  private readonly checkEveryMs: number;
  private readonly checkTimeoutMs: number;
  private readonly offset: number;
  private current: ReadTarget;
  /** Bumped whenever reads move to another database (see `read`). */
  private epoch = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly switchListeners = new Set<() => void>();
  private readonly reads = new Map<string, number>();
  private readonly fallbacks = new Map<FallbackReason, number>();

  constructor(
    primary: Knex,
    replicas: ReadonlyArray<{ knex: Knex; url: string }>,
    private readonly options: ReadReplicasOptions,
  ) {
    this.primary = { name: 'primary', knex: primary };
    this.replicas = replicas.map(({ knex, url }, i) => {
      const { hostname, port } = new URL(url);
      return {
        name: `replica_${i + 1}`,
        knex,
        address: `${hostname}:${port || 3306}`,
        state: 'unknown',
        lagSeconds: null,
        checking: null,
        verdict: null,
        statement: { index: 0 },
      };
    });
    this.checkEveryMs = options.checkEveryMs ?? CHECK_EVERY_MS;
    this.checkTimeoutMs = options.checkTimeoutMs ?? CHECK_TIMEOUT_MS;
    this.offset = options.offset ?? process.pid;
    // Until a replica has passed its first check, reads go to the primary.
    this.current = this.primary;
  }

  /** Every database, primary first. */
  get targets(): ReadTarget[] {
    return [this.primary, ...this.replicas];
  }

  /**
   * One `make(knex)` per database, built when first read from: a repository
   * of each, so state a repository keeps (cached totals, a long poll's
   * watcher) belongs to one database.
   */
  each<T>(make: (knex: Knex) => T): (target: ReadTarget) => T {
    const built = new Map<ReadTarget, T>();
    return (target) => {
      let instance = built.get(target);
      if (instance === undefined) {
        instance = make(target.knex);
        built.set(target, instance);
      }
      return instance;
    };
  }

  /** Starts the periodic checks (the first one at once); the timer does not keep the process alive. */
  start(): this {
    if (this.timer || this.closed) return this;
    this.timer = setInterval(() => void this.checkAll(), this.checkEveryMs);
    this.timer.unref();
    void this.checkAll();
    return this;
  }

  /**
   * Runs `read` on the database reads go to now. `epoch` changes whenever
   * reads move to another database, so a value derived from one database
   * (a data version) can be told from the same-looking value of another.
   */
  async read<T>(read: (target: ReadTarget, epoch: number) => Promise<T>): Promise<T> {
    const target = this.current;
    const epoch = this.epoch;
    this.count(target);
    if (target === this.primary) {
      if (this.replicas.length > 0) this.fallback('no_healthy_replica');
      return read(target, epoch);
    }
    try {
      return await read(target, epoch);
    } catch (error) {
      if (this.closed || !(await this.worthAnotherTry(target as Replica, error))) throw error;
      this.count(this.primary);
      this.fallback('replica_failed');
      return read(this.primary, epoch + 1);
    }
  }

  /** Calls `listener` whenever reads move to another database (a replica went bad or came back). */
  onSwitch(listener: () => void): () => void {
    this.switchListeners.add(listener);
    return () => this.switchListeners.delete(listener);
  }

  /** Each replica's state, in DATABASE_READ_URL's order. */
  status(): ReplicaStatus[] {
    return this.replicas.map(({ name, state, lagSeconds }) => ({ name, state, lagSeconds }));
  }

  /** Where reads ran so far, by database name, and how many fell back to the primary, by reason. */
  counts(): { reads: ReadonlyMap<string, number>; fallbacks: ReadonlyMap<FallbackReason, number> } {
    return { reads: this.reads, fallbacks: this.fallbacks };
  }

  /** Stops the checks and closes the replicas' connections (not the primary's: it belongs to the process). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(this.replicas.map((replica) => replica.knex.destroy()));
  }

  /**
   * A lost or refused connection says the replica is gone; a statement that
   * timed out says so only when the replica fails its check too (the one
   * under way, or one made now, bounded like every check): otherwise it is a
   * slow query, and would be as slow on the primary.
   */
  private async worthAnotherTry(replica: Replica, error: unknown): Promise<boolean> {
    if (!isTransientInfrastructureError(error)) return false;
    if ((error as { code?: unknown }).code !== 'PROTOCOL_SEQUENCE_TIMEOUT' || replica.state !== 'ok') {
      // Asked now rather than at the next round, so that reads leave a replica that is gone within one check.
      void this.check(replica);
      return true;
    }
    await (replica.verdict ?? this.check(replica));
    return replica.state !== 'ok';
  }

  private async checkAll(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => this.check(replica)));
  }

  private check(replica: Replica): Promise<void> {
    // Still waiting on a late check's connection: its deadline has already marked the replica unreachable.
    if (replica.checking) return Promise.resolve();
    const answered = readReplicaStatus(replica.knex, this.checkTimeoutMs, replica.statement).then(
      (rows) => judgeReplicaStatus(rows, this.options.maxLagSeconds),
      (error: unknown): ReplicaCheck => ({ state: 'unreachable', lagSeconds: null, reason: messageOf(error) }),
    );
    // The statement is bounded by mysql2, but getting a connection to a hung server is not: the check is, as a whole.
    const checking = withTimeout(answered, this.checkTimeoutMs, {
      onTimeout: (): ReplicaCheck => ({ state: 'unreachable', lagSeconds: null, reason: `no answer within ${this.checkTimeoutMs} ms` }),
      unref: true,
    }).then((result) => {
      replica.verdict = null;
      this.record(replica, result);
    });
    replica.verdict = checking;
    // A late check's connection may still be pending: no other check starts until it settles, however it ends.
    replica.checking = answered.then(() => {
      replica.checking = null;
    });
    return checking;
  }

  private record(replica: Replica, result: ReplicaCheck): void {
    if (this.closed) return;
    const before = replica.state;
    replica.state = result.state;
    replica.lagSeconds = result.lagSeconds;
    if (before === result.state) return;
    const fields = { replica: replica.name, address: replica.address, state: result.state, was: before, lagSeconds: result.lagSeconds, reason: result.reason };
    if (result.state === 'ok') this.options.logger.info(fields, before === 'unknown' ? 'read replica in use' : 'read replica back: reads go to it again');
    else this.options.logger.warn(fields, 'read replica skipped: reads go elsewhere until it is fit again');
    this.choose();
  }

  /** The first healthy replica from this process's offset, else the primary; reads stay where they are while it stays healthy. */
  private choose(): void {
    if (this.closed) return;
    const stay = this.current !== this.primary && (this.current as Replica).state === 'ok';
    if (stay) return;
    const n = this.replicas.length;
    let next: ReadTarget = this.primary;
    for (let i = 0; i < n; i++) {
      const replica = this.replicas[(this.offset + i) % n]!;
      if (replica.state === 'ok') {
        next = replica;
        break;
      }
    }
    if (next === this.current) return;
    this.current = next;
    this.epoch += 1;
    for (const listener of this.switchListeners) listener();
  }

  private count(target: ReadTarget): void {
    this.reads.set(target.name, (this.reads.get(target.name) ?? 0) + 1);
  }

  private fallback(reason: FallbackReason): void {
    this.fallbacks.set(reason, (this.fallbacks.get(reason) ?? 0) + 1);
  }
}

function messageOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
