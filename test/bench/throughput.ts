import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { ApiProcess } from './api-process.js';
import { serviceEnv } from './api-process.js';
import { ROOT } from './config.js';
import { keepAliveAgent, load, request, type HttpRequest } from './http.js';
import { log, percentile } from './progress.js';
import { OutputTail, spawnTracked, stopChild } from './processes.js';
import type { BenchDatabase } from './seed.js';

/** What the floor needs of a database: where it is and whose rows it serves. */
export type FloorTarget = Pick<BenchDatabase, 'label' | 'databaseUrl' | 'dataDir' | 'directory'>;

/** The floor server (floor-server.ts) as a child process, on the database the API reads. */
export class FloorProcess {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  static async start(db: FloorTarget): Promise<FloorProcess> {
    const output = new OutputTail();
    const child = spawnTracked(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/floor-server.ts')], {
      cwd: ROOT,
      env: serviceEnv(
        db.databaseUrl
          ? { FLOOR_DATABASE_URL: db.databaseUrl, FLOOR_DIRECTORY: db.directory }
          : { FLOOR_SQLITE_FILE: path.join(db.dataDir, 'app.sqlite'), FLOOR_DIRECTORY: db.directory },
      ),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output.push(chunk);
      process.stderr.write(chunk);
    });
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`floor server did not start:\n${output.toString()}`)), 60_000);
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^listening (\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`floor server exited with ${code}:\n${output.toString()}`));
      });
    });
    return new FloorProcess(port, child);
  }

  stop(): Promise<void> {
    return stopChild(this.child, 5_000);
  }
}

export interface ThroughputRow {
  database: string;
  endpoint: string;
  path: string;
  connections: number;
  requests: number;
  apiPerSecond: number;
  floorPerSecond: number;
  ratio: number;
  apiP50Ms: number;
  floorP50Ms: number;
  /** The API's body and the floor's were the same bytes. */
  sameBody: boolean;
}

/**
 * A fixed number of requests at a fixed concurrency against the API and the
 * floor, alternated (API, floor, API, floor) so drift hits both; the better
 * round of each counts. `pathFor` gives request i its own path (the same
 * sequence to both); the bodies are compared on `path`.
 */
export async function compareThroughput(
  db: FloorTarget,
  api: ApiProcess,
  endpoint: { name: string; path: string; expectStatus?: number; pathFor?: (i: number) => string },
  options: { requests: number; connections: number; rounds?: number },
): Promise<ThroughputRow> {
  const floor = await FloorProcess.start(db);
  try {
    const pathFor = endpoint.pathFor ?? (() => endpoint.path);
    const apiRequest = (i: number): HttpRequest => ({ path: pathFor(i), headers: api.auth });
    const floorRequest = (i: number): HttpRequest => ({ path: pathFor(i) });
    // The floor must answer what the API answers, byte for byte, or the comparison means little.
    const agent = keepAliveAgent(1);
    const [apiAnswer, floorAnswer] = [await api.call({ path: endpoint.path }), await request(agent, floor.port, { path: endpoint.path })];
    agent.destroy();
    const sameBody = apiAnswer.body.equals(floorAnswer.body);
    if (!sameBody) {
      log(`WARNING ${db.label} ${endpoint.name}: the floor's answer differs from the API's (${floorAnswer.body.length} vs ${apiAnswer.body.length} bytes)`);
    }
    const warm = Math.min(50, options.requests);
    await load(api.port, warm, options.connections, apiRequest, endpoint.expectStatus);
    await load(floor.port, warm, options.connections, floorRequest, endpoint.expectStatus);
    let bestApi = { perSecond: 0, latencies: [] as number[] };
    let bestFloor = { perSecond: 0, latencies: [] as number[] };
    for (let round = 0; round < (options.rounds ?? 2); round++) {
      const a = await load(api.port, options.requests, options.connections, apiRequest, endpoint.expectStatus);
      const f = await load(floor.port, options.requests, options.connections, floorRequest, endpoint.expectStatus);
      if (a.perSecond > bestApi.perSecond) bestApi = a;
      if (f.perSecond > bestFloor.perSecond) bestFloor = f;
    }
    api.assertRunning();
    const row: ThroughputRow = {
      database: db.label,
      endpoint: endpoint.name,
      path: endpoint.path,
      connections: options.connections,
      requests: options.requests,
      apiPerSecond: bestApi.perSecond,
      floorPerSecond: bestFloor.perSecond,
      ratio: bestApi.perSecond / bestFloor.perSecond,
      apiP50Ms: percentile(bestApi.latencies, 50),
      floorP50Ms: percentile(bestFloor.latencies, 50),
      sameBody,
    };
    log(
      `${db.label} ${endpoint.name}: API ${row.apiPerSecond.toFixed(0)}/s, floor ${row.floorPerSecond.toFixed(0)}/s -> ${row.ratio.toFixed(2)} ` +
        `(${options.requests} requests, ${options.connections} connections)`,
    );
    return row;
  } finally {
    await floor.stop();
  }
}
