import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { vi } from 'vitest';

const run = promisify(execFile);

/** The repository's root: where docker-compose.yml is, and podman-compose's project directory. */
export const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');
const HERE = 'test/system/compose';
/** Podman's settings for these machines (containers.conf says why). */
const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: path.join(REPO_ROOT, HERE, 'containers.conf') };

/** The outcome of one command: its output, and its exit code (0 or not; never thrown). */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function command(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: REPO_ROOT, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? failed.message };
  }
}

/** `podman <args>` with the machine's settings. */
export function podman(args: string[], timeoutMs = 120_000): Promise<CommandResult> {
  return command('podman', args, PODMAN_ENV, timeoutMs);
}

/** The same, failing with its stderr unless it exits 0; its stdout. */
export async function podmanOk(args: string[], timeoutMs = 120_000): Promise<string> {
  const result = await podman(args, timeoutMs);
  if (result.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${result.code}: ${result.stderr.trim()}`);
  return result.stdout;
}

/**
 * docker-compose.yml and the test override (the third-party images replaced by local stand-ins),
 * run by podman-compose as project `project`, with the API published on `apiPort` of the host.
 * podman-compose 1.0.3 starts services in dependency order but ignores `depends_on`'s conditions
 * and `--scale`: up() applies the conditions as compose would (each service's own health check,
 * migrate's exit code) and scaleWorkers() adds the file that gives the worker two replicas.
 */
export class ComposeStack {
  private readonly files = ['-f', 'docker-compose.yml', '-f', `${HERE}/docker-compose.test.yml`];
  private workerReplicas = 1;

  constructor(
    readonly project: string,
    readonly apiPort: number,
  ) {}

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /** The name podman-compose gives replica `n` of `service`. */
  container(service: string, n = 1): string {
    return `${this.project}_${service}_${n}`;
  }

  async compose(args: string[], timeoutMs = 300_000): Promise<CommandResult> {
    const files = this.workerReplicas > 1 ? [...this.files, '-f', `${HERE}/docker-compose.scale.yml`] : this.files;
    return command('podman-compose', ['-p', this.project, ...files, ...args], { ...PODMAN_ENV, API_HOST_PORT: String(this.apiPort) }, timeoutMs);
  }

  private async composeOk(args: string[], timeoutMs?: number): Promise<void> {
    const result = await this.compose(args, timeoutMs);
    if (result.code !== 0) throw new Error(`podman-compose ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  }

  /**
   * What `docker compose up -d` does with the file's conditions: MariaDB, Redis and the S3 server
   * until their health checks pass (service_healthy), migrate until it exits 0
   * (service_completed_successfully), then the API and a worker until both are healthy and the API's
   * /health/ready answers 200 through the published port.
   */
  async up(): Promise<void> {
    await this.composeOk(['up', '-d', '--no-build', 'mariadb', 'redis', 's3']);
    await Promise.all(['mariadb', 'redis', 's3'].map((service) => this.waitHealthy(this.container(service))));
    await this.composeOk(['up', '-d', '--no-build', 'migrate']);
    const migrate = await podmanOk(['wait', this.container('migrate')], 600_000);
    if (migrate.trim() !== '0') throw new Error(`migrate exited ${migrate.trim()}:\n${await this.logs('migrate')}`);
    await this.composeOk(['up', '-d', '--no-build', 'api', 'worker']);
    await Promise.all([this.waitHealthy(this.container('api')), this.waitHealthy(this.container('worker'))]);
    await vi.waitFor(
      async () => {
        const status = (await fetch(`${this.apiUrl}/health/ready`).catch(() => null))?.status;
        if (status !== 200) throw new Error(`the API's /health/ready answers ${status ?? 'nothing'} through port ${this.apiPort}`);
      },
      { timeout: 120_000, interval: 250 },
    );
  }

  /** The worker service at two replicas (`--scale worker=2`), the new one healthy. */
  async scaleWorkers(): Promise<void> {
    this.workerReplicas = 2;
    await this.composeOk(['up', '-d', '--no-build', '--no-deps', 'worker']);
    await this.waitHealthy(this.container('worker', 2));
  }

  /**
   * Runs the container's health check (compose's, else the image's HEALTHCHECK) until it passes:
   * Podman schedules health checks through systemd timers, which these machines do not have,
   * so the test runs them as the engine would, and fails on a container that stopped.
   */
  async waitHealthy(container: string, timeoutMs = 180_000): Promise<void> {
    const stopped = await vi.waitFor(
      async () => {
        const state = await this.state(container);
        if (state !== 'running') return state;
        const check = await podman(['healthcheck', 'run', container]);
        if (check.code !== 0) throw new Error(`${container} is not healthy within ${timeoutMs} ms: ${check.stdout.trim()} ${check.stderr.trim()}`);
        return null;
      },
      { timeout: timeoutMs, interval: 500 },
    );
    if (stopped !== null) throw new Error(`${container} is ${stopped}:\n${await this.containerLogs(container)}`);
  }

  /** `node cli.js <args>` in the API's container: the image's CLI with the API's configuration. */
  async cli(args: string[]): Promise<CommandResult> {
    return podman(['exec', this.container('api'), 'node', 'cli.js', ...args], 300_000);
  }

  async state(container: string): Promise<string> {
    return (await podmanOk(['inspect', '--format', '{{.State.Status}}', container])).trim();
  }

  /** The container's address on the project's network (reachable from the host: a rootful bridge). */
  async address(container: string): Promise<string> {
    return (await podmanOk(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', container])).trim();
  }

  /** The host's address on the project's network: where the containers reach a server of the test. */
  async gateway(): Promise<string> {
    return (await podmanOk(['network', 'inspect', '--format', '{{range .Subnets}}{{.Gateway}}{{end}}', `${this.project}_default`])).trim();
  }

  async logs(service: string, n = 1): Promise<string> {
    return this.containerLogs(this.container(service, n));
  }

  private async containerLogs(container: string): Promise<string> {
    const result = await podman(['logs', '--tail', '60', container]);
    return `${result.stdout}${result.stderr}`;
  }

  /**
   * Everything of the project gone, whatever state it is in: its containers, volumes and network
   * (podman-compose 1.0.3's `down -v` leaves the network). Failures are reported, not thrown.
   */
  async down(): Promise<string[]> {
    const problems: string[] = [];
    const label = `label=io.podman.compose.project=${this.project}`;
    const note = (result: CommandResult, what: string): void => {
      if (result.code !== 0) problems.push(`${what}: ${result.stderr.trim()}`);
    };
    const containers = (await podman(['ps', '-a', '-q', '--filter', label])).stdout.split('\n').filter(Boolean);
    if (containers.length > 0) note(await podman(['rm', '-f', '-t', '5', ...containers]), 'containers');
    const volumes = (await podman(['volume', 'ls', '-q', '--filter', label])).stdout.split('\n').filter(Boolean);
    if (volumes.length > 0) note(await podman(['volume', 'rm', '-f', ...volumes]), 'volumes');
    if ((await podman(['network', 'exists', `${this.project}_default`])).code === 0)
      note(await podman(['network', 'rm', '-f', `${this.project}_default`]), 'network');
    return problems;
  }
}
