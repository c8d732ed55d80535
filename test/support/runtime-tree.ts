import { execFile } from 'node:child_process';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  name: string | null;
  instructions: Instruction[];
}

/** The Dockerfile's stages: comment lines dropped, continued lines joined, as Docker reads them. */
export async function dockerfileStages(file = path.join(ROOT, 'Dockerfile')): Promise<Stage[]> {
  const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => !line.trimStart().startsWith('#'));
  const joined: string[] = [];
  let current = '';
  for (const line of lines) {
    current += line.trimEnd();
    if (current.endsWith('\\')) {
      current = `${current.slice(0, -1)} `;
      continue;
    }
    if (current.trim() !== '') joined.push(current.trim().replace(/\s+/g, ' '));
    current = '';
  }
  const stages: Stage[] = [];
  for (const line of joined) {
    const [keyword, ...rest] = line.split(' ');
    const instruction = { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') stages.push({ name: /\bAS (\S+)$/i.exec(instruction.args)?.[1] ?? null, instructions: [] });
    stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** An exec-form argument list (`["node", "api.js"]`). */
export function execForm(args: string): string[] {
  const list = JSON.parse(args.replace(/^--\S+ /g, '')) as unknown;
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) throw new Error(`not an exec-form list: ${args}`);
  return list;
}

/** What .dockerignore keeps out of the build context: `name` at the top, `**\/name` anywhere; a name may hold `*`. */
async function contextFilter(): Promise<(relative: string) => boolean> {
  const patterns = (await readFile(path.join(ROOT, '.dockerignore'), 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const rules = patterns.map((pattern) => {
    const match = /^(\*\*\/)?([\w.*-]+)$/.exec(pattern);
    if (!match) throw new Error(`.dockerignore: the runtime-tree test reads "name" and "**/name" patterns only, not "${pattern}"`);
    const name = new RegExp(`^${match[2]!.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`);
    return { anywhere: match[1] !== undefined, name };
  });
  return (relative) => {
    const parts = relative.split(path.sep);
    return !rules.some((rule) => (rule.anywhere ? parts.some((part) => rule.name.test(part)) : rule.name.test(parts[0]!)));
  };
}

export interface RuntimeTree {
  /** The runtime stage's /app: what `pnpm deploy --prod` laid out. */
  dir: string;
  /** The runtime stage's ENV. */
  env: Record<string, string>;
  /** The image's CMD and its HEALTHCHECK command. */
  cmd: string[];
  healthcheck: string[];
  /** The runtime stage's user. */
  user: string | null;
  remove(): Promise<void>;
}

/**
 * The image's runtime tree, made as the Dockerfile makes it: the build
 * stage's COPY lines copy from this repository (less what .dockerignore
 * names) into a temporary directory standing for its WORKDIR, and its
 * `pnpm` RUN lines run there as written. The other RUN lines install the
 * toolchain (build tools, the pinned pnpm), which this machine has: the pnpm
 * version is checked, any other step fails the build.
 */
export async function buildRuntimeTree(log: (line: string) => void = () => undefined): Promise<RuntimeTree> {
  const stages = await dockerfileStages();
  const build = stages.find((stage) => stage.name === 'build');
  const runtime = stages.at(-1)!;
  if (!build || build === runtime) throw new Error('the Dockerfile has no build stage before its runtime stage');
  const keep = await contextFilter();
  const temp = await mkdtemp(path.join(os.tmpdir(), 'logi-runtime-tree-'));
  let workdir: string | null = null;
  let buildWorkdir = '';
  const at = (target: string) => {
    if (!workdir) throw new Error('a COPY or RUN before WORKDIR in the build stage');
    return path.resolve(workdir, target);
  };
  try {
    for (const { keyword, args } of build.instructions) {
      if (keyword === 'FROM') continue;
      if (keyword === 'WORKDIR') {
        buildWorkdir = args;
        workdir = path.join(temp, args);
        await mkdir(workdir, { recursive: true });
      } else if (keyword === 'COPY') {
        const parts = args.split(' ');
        if (parts.some((part) => part.startsWith('--'))) throw new Error(`COPY with flags in the build stage: ${args}`);
        const destination = parts.pop()!;
        // As Docker copies: a directory's contents into the destination, a file into it (a name ending in / or .).
        if (!/[/.]$/.test(destination)) throw new Error(`COPY to a file name, which the runtime-tree test does not copy: ${args}`);
        for (const source of parts) {
          const from = path.join(ROOT, source);
          if (!keep(source)) throw new Error(`COPY of ${source}, which .dockerignore leaves out of the context`);
          if ((await stat(from)).isDirectory()) {
            await cp(from, at(destination), { recursive: true, filter: (file) => keep(path.relative(ROOT, file)) });
          } else {
            await mkdir(at(destination), { recursive: true });
            await cp(from, path.join(at(destination), path.basename(source)));
          }
        }
      } else if (keyword === 'RUN') {
        const pin = /^npm install -g pnpm@(\S+)$/.exec(args);
        if (pin) {
          const { stdout } = await run('pnpm', ['--version']);
          if (stdout.trim() !== pin[1]) throw new Error(`the Dockerfile pins pnpm ${pin[1]}, this machine has ${stdout.trim()}`);
        } else if (args.startsWith('apt-get update ')) {
          // The build tools for better-sqlite3: scripts/test.sh installs them here.
        } else if (args.startsWith('pnpm ')) {
          log(args);
          await run('bash', ['-c', args], { cwd: at('.'), env: buildEnv(), maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
        } else {
          throw new Error(`a build step the runtime-tree test does not know: RUN ${args}`);
        }
      } else {
        throw new Error(`an instruction the runtime-tree test does not know in the build stage: ${keyword} ${args}`);
      }
    }

    const env: Record<string, string> = {};
    let dir: string | null = null;
    let cmd: string[] = [];
    let healthcheck: string[] = [];
    let user: string | null = null;
    for (const { keyword, args } of runtime.instructions) {
      if (keyword === 'ENV') for (const [, name, value] of args.matchAll(/(?<!\w)(\w+)=(\S+)/g)) env[name!] = value!;
      if (keyword === 'COPY') {
        const copied = new RegExp(`^--from=build (${buildWorkdir}/\\S+) /app$`).exec(args);
        if (!copied) throw new Error(`the runtime stage copies something other than the build stage's tree: COPY ${args}`);
        dir = path.join(temp, copied[1]!);
      }
      if (keyword === 'CMD') cmd = execForm(args);
      if (keyword === 'HEALTHCHECK') healthcheck = execForm(args.replace(/^(--\S+ )*CMD /, ''));
      if (keyword === 'USER') user = args;
    }
    if (!dir) throw new Error('the runtime stage copies no tree from the build stage');
    return { dir, env, cmd, healthcheck, user, remove: () => rm(temp, { recursive: true, force: true }) };
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
}

/** pnpm as a shell would run it: nothing of the test run's own pnpm invocation leaks in. */
function buildEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(npm_|PNPM_|NODE_OPTIONS$|VITEST|API_TEST_)/i.test(key)) env[key] = value;
  return { ...env, CI: '1' };
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

async function manifest(dir: string): Promise<Manifest> {
  return JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** Where Node finds `name` from `dir`: the nearest node_modules up the tree, as a real path. */
async function locate(name: string, dir: string): Promise<string | null> {
  for (let at = dir; ; at = path.dirname(at)) {
    const candidate = path.join(at, 'node_modules', name);
    try {
      return await realpath(candidate);
    } catch {
      // not here: one level up
    }
    if (path.dirname(at) === at) return null;
  }
}

/**
 * Every package name reachable from `roots` (as installed in this repository),
 * through what each package needs to run; with `optionalPeers`, also the
 * optional peers pnpm bound beside a package (debug uses supports-color when
 * it is there).
 */
async function closure(roots: Array<{ dir: string; names: string[] }>, optionalPeers: boolean): Promise<Set<string>> {
  const seen = new Set<string>();
  const names = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const { dir, names: wanted } = queue.pop()!;
    for (const name of wanted) {
      const found = await locate(name, dir);
      if (!found || seen.has(found)) continue;
      seen.add(found);
      names.add(name);
      const pkg = await manifest(found);
      // An optional peer may be named in peerDependenciesMeta alone (debug's supports-color is).
      const declared = new Set([...Object.keys(pkg.peerDependencies ?? {}), ...(optionalPeers ? Object.keys(pkg.peerDependenciesMeta ?? {}) : [])]);
      const peers = [...declared].filter((peer) => optionalPeers || !pkg.peerDependenciesMeta?.[peer]?.optional);
      queue.push({ dir: found, names: [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}), ...peers] });
    }
  }
  return names;
}

export interface DevelopmentPackages {
  /** The workspace's devDependencies that no production package needs: the compiler, tsx, vitest, type packages. */
  tools: Set<string>;
  /** What only those bring: packages their dependencies reach and production's do not. */
  broughtByTools: Set<string>;
}

/**
 * The packages of development, read from the workspace's package.json files
 * and what is installed here. A devDependency that production needs as well
 * is not one: `@types/node` is a root devDependency and also a dependency of
 * `@types/co-body`, which `@koa/bodyparser` depends on.
 */
export async function developmentPackages(): Promise<DevelopmentPackages> {
  const workspace = [ROOT, ...(await readdir(path.join(ROOT, 'packages'))).map((name) => path.join(ROOT, 'packages', name)), path.join(ROOT, 'test')];
  const manifests = await Promise.all(workspace.map(async (dir) => ({ dir, pkg: await manifest(dir) })));
  const byName = new Map(manifests.map((entry) => [entry.pkg.name, entry]));
  // The service and the workspace packages it runs, through their workspace dependencies.
  const runtime = new Set<string>();
  const pending = ['@logi/service'];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (runtime.has(name)) continue;
    runtime.add(name);
    for (const [dependency, spec] of Object.entries(byName.get(name)?.pkg.dependencies ?? {})) if (spec.startsWith('workspace:')) pending.push(dependency);
  }
  const productionRoots = manifests.filter((entry) => runtime.has(entry.pkg.name)).map(({ dir, pkg }) => ({ dir, names: Object.keys(pkg.dependencies ?? {}) }));
  const devRoots = manifests.map(({ dir, pkg }) => ({ dir, names: Object.keys(pkg.devDependencies ?? {}) }));
  const required = await closure(productionRoots, false);
  const tools = new Set(devRoots.flatMap((root) => root.names).filter((name) => !required.has(name) && !byName.has(name)));
  const production = await closure(productionRoots, true);
  const development = await closure(devRoots, false);
  return { tools, broughtByTools: new Set([...development].filter((name) => !production.has(name) && !byName.has(name))) };
}

/** The packages installed in a pnpm tree (its virtual store), by name. */
export async function installedPackages(tree: string): Promise<Set<string>> {
  const names = new Set<string>();
  const store = path.join(tree, 'node_modules', '.pnpm');
  for (const entry of await readdir(store)) {
    const modules = path.join(store, entry, 'node_modules');
    const found = await readdir(modules).catch(() => [] as string[]);
    for (const name of found) {
      const scoped = name.startsWith('@') ? (await readdir(path.join(modules, name))).map((inner) => `${name}/${inner}`) : [name];
      // A package's own directory, not the links to its dependencies beside it.
      for (const candidate of scoped) if (!(await lstat(path.join(modules, candidate))).isSymbolicLink()) names.add(candidate);
    }
  }
  return names;
}

/** Every file under `dir`, relative to it (links not followed). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}
