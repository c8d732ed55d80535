import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BULK_QUEUE_NAME_BY_JOB, QUEUE_NAME_BY_JOB } from '@logi/adapters';
import { loadConfig, requireSecretKeys, type AppConfig } from '@logi/config';
import { stopLimitMs } from '../../packages/api/src/server.js';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { applyJsonPatch, configMapHash, containersOf, podSpecs, renderKustomization, type KubeObject } from '../support/kustomize-subset.js';
import { TEST_SECRETS_ENCRYPTION_KEYS } from '../support/test-secret-key.js';

/**
 * deploy/kubernetes as `kubectl apply -k` would send it: the base and the production overlay rendered
 * (test/support/kustomize-subset.ts, the kustomize fields they use), every object validated like kubeconform
 * against the schemas of a pinned Kubernetes release (kubernetes-models 5.1.0: Kubernetes 1.36.0) or KEDA's own
 * CRDs (test/fixtures/kubernetes: KEDA 2.20.2, unknown fields refused as the API server prunes them), then the
 * references between the objects and to the code: selectors, scale targets, variables the configuration reads,
 * probes on the paths and ports the processes serve, shutdown timeouts, the queue key KEDA counts.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPLOY = path.join(ROOT, 'deploy/kubernetes');
const TARGETS = ['base', 'overlays/production'] as const;
const KEDA_CRDS = path.join(ROOT, 'test/fixtures/kubernetes/keda-v2.20.2');
const SECRET_NAME = 'logistics-secrets';
const SECRETS_EXAMPLE = path.join(DEPLOY, 'overlays/production/secrets.env.example');

// ---- Validation against the schemas -------------------------------------------------------------------------------

type ModelClass = new (data: unknown) => { validate(): void };
type ModelModule = Record<string, ModelClass | undefined>;

/** kubernetes-models' class for an apiVersion and kind (`kubernetes-models/apps/v1` exports `Deployment`), or null. */
async function kubernetesModel(apiVersion: string, kind: string): Promise<ModelClass | null> {
  if (!/^(?:[a-z0-9.-]+\/)?v\d+(?:(?:alpha|beta)\d+)?$/.test(apiVersion)) return null;
  const module = (await import(`kubernetes-models/${apiVersion}`).catch(() => null)) as ModelModule | null;
  return module?.[kind] ?? null;
}

type Schema = Record<string, unknown>;

/**
 * A CRD's openAPIV3Schema as JSON Schema, as kubeconform's strict mode reads it: an object with properties and
 * no `x-kubernetes-preserve-unknown-fields` admits no other property (the API server would prune it silently).
 */
function strictCrdSchema(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, Schema>).map(([name, sub]) => [name, strictCrdSchema(sub)]));
    } else if ((key === 'items' || key === 'additionalProperties') && value && typeof value === 'object') {
      out[key] = strictCrdSchema(value as Schema);
    } else if ((key === 'anyOf' || key === 'allOf' || key === 'oneOf') && Array.isArray(value)) {
      out[key] = (value as Schema[]).map(strictCrdSchema);
    } else {
      out[key] = value;
    }
  }
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) out.additionalProperties = false;
  return out;
}

let crdValidators: Promise<Map<string, ValidateFunction>> | null = null;

/** KEDA's CRDs by `apiVersion kind`. */
function kedaValidators(): Promise<Map<string, ValidateFunction>> {
  crdValidators ??= (async () => {
    // x-kubernetes-* are annotations to JSON Schema (strict: false lets them be); int32 and int64 are checked as such.
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
    const validators = new Map<string, ValidateFunction>();
    for (const file of ['keda.sh_scaledobjects.yaml', 'keda.sh_triggerauthentications.yaml']) {
      const crd = parse(await readFile(path.join(KEDA_CRDS, file), 'utf8')) as {
        spec: { group: string; names: { kind: string }; versions: Array<{ name: string; schema: { openAPIV3Schema: Schema } }> };
      };
      for (const version of crd.spec.versions) {
        validators.set(`${crd.spec.group}/${version.name} ${crd.spec.names.kind}`, ajv.compile(strictCrdSchema(version.schema.openAPIV3Schema)));
      }
    }
    return validators;
  })();
  return crdValidators;
}

/** What is wrong with an object by its schema; empty when it is valid. An object no schema knows is an error. */
async function schemaErrors(object: KubeObject): Promise<string[]> {
  const where = `${object.kind}/${object.metadata?.name}`;
  const crd = (await kedaValidators()).get(`${object.apiVersion} ${object.kind}`);
  if (crd) {
    return crd(object) ? [] : (crd.errors ?? []).map((e) => `${where}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  }
  const Model = await kubernetesModel(object.apiVersion, object.kind);
  if (!Model) return [`${where}: no schema for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [`${where}: ${error instanceof Error ? error.message : String(error)}`];
  }
}

// ---- Reading the rendered objects ---------------------------------------------------------------------------------

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: number | string };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes?: Array<{ name: string; emptyDir?: { medium?: string; sizeLimit?: string } }>;
}

const rendered = new Map<string, Promise<KubeObject[]>>();
function render(target: string): Promise<KubeObject[]> {
  if (!rendered.has(target)) rendered.set(target, renderKustomization(path.join(DEPLOY, target)));
  return rendered.get(target)!;
}

function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found;
}

function podOf(object: KubeObject): PodSpec {
  const [pod] = podSpecs(object);
  if (!pod) throw new Error(`${object.kind}/${object.metadata.name} has no pod template`);
  return pod as unknown as PodSpec;
}

function templateLabels(object: KubeObject): Record<string, string> {
  return (object.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** The workloads whose pods a selector picks. */
function workloadsSelected(objects: KubeObject[], selector: Record<string, string>): string[] {
  return objects.filter((o) => podSpecs(o).length > 0 && selects(selector, templateLabels(o))).map((o) => `${o.kind}/${o.metadata.name}`);
}

/** `KEY=value` lines of an env file. */
async function readEnvFile(file: string): Promise<Record<string, string>> {
  const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** The ENV of the Dockerfile's last stage (the image every container runs). */
async function imageEnvironment(): Promise<Record<string, string>> {
  const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
  const stage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env = /\nENV ((?:[^\n]*\\\n)*[^\n]*)/.exec(stage)?.[1] ?? '';
  const assignments = env
    .replace(/\\\n/g, ' ')
    .split(/\s+/)
    .filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word));
  return Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
}

/** Well-formed stand-ins for the Secret's values (the example's are placeholders the processes refuse). */
const SECRET_VALUES: Record<string, string> = {
  DATABASE_URL: 'mysql://logistics:password@mariadb:3306/logistics',
  REDIS_URL: 'redis://:password@redis:6379',
  REDIS_PASSWORD: 'password',
  S3_ACCESS_KEY: 'logistics',
  S3_SECRET_KEY: 'secret',
  SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_ENCRYPTION_KEYS,
};

/** The environment a container's process sees: the image's ENV, then envFrom, then env (secrets from SECRET_VALUES). */
async function containerEnvironment(objects: KubeObject[], container: Container): Promise<Record<string, string>> {
  const env: Record<string, string> = await imageEnvironment();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, find(objects, 'ConfigMap', source.configMapRef.name).data as Record<string, string>);
  }
  for (const variable of container.env ?? []) {
    const secret = variable.valueFrom?.secretKeyRef;
    const configMap = variable.valueFrom?.configMapKeyRef;
    if (secret) env[variable.name] = SECRET_VALUES[secret.key] ?? '';
    else if (configMap) env[variable.name] = (find(objects, 'ConfigMap', configMap.name).data as Record<string, string>)[configMap.key] ?? '';
    else env[variable.name] = variable.value ?? '';
  }
  return env;
}

/** Every variable the configuration schema reads: loadConfig asks the environment for each of its keys. */
function configurationVariables(): Set<string> {
  const asked = new Set<string>();
  loadConfig(
    new Proxy<NodeJS.ProcessEnv>(
      {},
      {
        get(_target, key) {
          if (typeof key === 'string') asked.add(key);
          return undefined;
        },
      },
    ),
  );
  return asked;
}

/** Bytes or cores of a Kubernetes quantity (`512Mi`, `1Gi`, `250m`, `2`). */
function quantity(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(text);
  if (!match) throw new Error(`not a quantity: ${text}`);
  const factor: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(match[1]) * (match[2] ? factor[match[2]]! : 1);
}

/** The port a probe asks: a number, or the name of one of the container's ports. */
function probePort(container: Container, probe: Probe): number | undefined {
  const port = probe.httpGet?.port;
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** Names that hold a credential: never given a value in a manifest. */
const CREDENTIAL_NAME = /PASSWORD|SECRET|ACCESS_KEY|_TOKEN|^DATABASE(_READ)?_URL$|^REDIS_URL$|^FILE_LINK_SECRET$/;

interface ScaledObjectSpec {
  scaleTargetRef: { apiVersion?: string; kind?: string; name: string };
  minReplicaCount?: number;
  maxReplicaCount?: number;
  triggers: Array<{ type: string; name?: string; metadata: Record<string, string>; authenticationRef?: { name: string; kind?: string } }>;
}

// ---- The tests ----------------------------------------------------------------------------------------------------

describe('the kustomize renderer of the manifest test', () => {
  it('when a ConfigMap is generated, then its name suffix is the hash kustomize v5.5.0 (kubectl 1.32) gives the same data', () => {
    // Names printed by `kubectl kustomize` for these literals.
    expect(configMapHash({ A: 'b' })).toBe('b9t2424hkf');
    expect(
      configMapHash({
        APP_TIMEZONE: 'UTC',
        DATA_DIR: '/data',
        LOG_LEVEL: 'info',
        METRICS_HOST: '0.0.0.0',
        METRICS_PORT: '9464',
        REDIS_PREFIX: 'logistics',
        S3_BUCKET: 'logistics',
        S3_ENDPOINT: 'http://s3:7070',
        S3_REGION: 'us-east-1',
      }),
    ).toBe('5f282c4mhh');
  });

  it('when JSON 6902 operations are applied, then add, replace, remove and test behave as the RFC says', () => {
    const document = { spec: { replicas: 1, list: ['a', 'c'], 'a/b': { '~x': 1 } } };
    applyJsonPatch(document, [
      { op: 'add', path: '/spec/list/1', value: 'b' },
      { op: 'add', path: '/spec/list/-', value: 'd' },
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'remove', path: '/spec/a~1b/~0x' },
      { op: 'test', path: '/spec/replicas', value: 3 },
    ]);
    expect(document).toEqual({ spec: { replicas: 3, list: ['a', 'b', 'c', 'd'], 'a/b': {} } });
    expect(() => applyJsonPatch(document, [{ op: 'replace', path: '/spec/missing', value: 1 }])).toThrow(/nothing at \/spec\/missing/);
    expect(() => applyJsonPatch(document, [{ op: 'test', path: '/spec/replicas', value: 4 }])).toThrow(/test failed/);
    expect(() => applyJsonPatch(document, [{ op: 'remove', path: '/spec/list/9' }])).toThrow(/no index 9/);
  });

  it('when a kustomization uses a field the renderer does not support, then rendering stops naming the field', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'logi-kustomize-'));
    try {
      await writeFile(path.join(dir, 'kustomization.yaml'), 'resources: []\ncommonLabels:\n  team: x\n');
      await expect(renderKustomization(dir)).rejects.toThrow(/not supported by the test's renderer: commonLabels/);
      await writeFile(
        path.join(dir, 'kustomization.yaml'),
        'patches:\n  - target: {kind: Deployment, name: x}\n    patch: "- {op: move, from: /a, path: /b}"\n',
      );
      await expect(renderKustomization(dir)).rejects.toThrow(/patch target Deployment\/x not found/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.each(TARGETS)('deploy/kubernetes/%s', (target) => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await render(target);
  });

  it('when rendered, then it holds the API, the worker and the migration Job with their Service, budgets and scalers', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>')}`).sort()).toEqual([
      'ConfigMap/logistics-config-<hash>',
      'Deployment/logistics-api',
      'Deployment/logistics-worker',
      'HorizontalPodAutoscaler/logistics-api',
      'Job/logistics-migrate',
      'PodDisruptionBudget/logistics-api',
      'PodDisruptionBudget/logistics-worker',
      'ScaledObject/logistics-worker',
      'Service/logistics-api',
      'TriggerAuthentication/logistics-redis',
    ]);
  });

  it('when each object is validated, then it conforms to Kubernetes 1.36 or to KEDA 2.20 CRDs', async () => {
    const errors = (await Promise.all(objects.map(schemaErrors))).flat();
    expect(errors).toEqual([]);
  });

  it('when the Service, budgets and autoscalers select or target workloads, then each finds the Deployment it is for', () => {
    const service = find(objects, 'Service', 'logistics-api');
    const serviceSpec = service.spec as { selector: Record<string, string>; ports: Array<{ targetPort: string | number }> };
    expect(workloadsSelected(objects, serviceSpec.selector)).toEqual(['Deployment/logistics-api']);
    const api = podOf(find(objects, 'Deployment', 'logistics-api')).containers[0]!;
    for (const port of serviceSpec.ports) expect(api.ports?.some((p) => p.name === port.targetPort || p.containerPort === port.targetPort)).toBe(true);

    for (const [name, deployment] of [
      ['logistics-api', 'Deployment/logistics-api'],
      ['logistics-worker', 'Deployment/logistics-worker'],
    ]) {
      const pdb = find(objects, 'PodDisruptionBudget', name!).spec as { selector: { matchLabels: Record<string, string> } };
      expect(workloadsSelected(objects, pdb.selector.matchLabels), name).toEqual([deployment]);
    }
    // Each Deployment's selector picks its own pods (the API server refuses one that does not).
    for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
      const selector = (deployment.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
      expect(workloadsSelected(objects, selector)).toEqual([`Deployment/${deployment.metadata.name}`]);
    }

    const hpa = find(objects, 'HorizontalPodAutoscaler', 'logistics-api').spec as {
      scaleTargetRef: { apiVersion: string; kind: string; name: string };
      minReplicas: number;
      maxReplicas: number;
    };
    expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'logistics-api' });
    expect(hpa.minReplicas).toBeLessThanOrEqual(hpa.maxReplicas);
    // CPU utilization is measured against the request.
    expect(api.resources?.requests?.cpu).toBeDefined();

    const scaled = find(objects, 'ScaledObject', 'logistics-worker').spec as ScaledObjectSpec;
    expect(find(objects, scaled.scaleTargetRef.kind ?? 'Deployment', scaled.scaleTargetRef.name).metadata.name).toBe('logistics-worker');
    // KEDA's CRD says this in a CEL rule, which schemas alone do not check.
    expect(scaled.minReplicaCount ?? 0).toBeLessThanOrEqual(scaled.maxReplicaCount ?? 100);
    for (const trigger of scaled.triggers) {
      expect(find(objects, trigger.authenticationRef?.kind ?? 'TriggerAuthentication', trigger.authenticationRef!.name).kind).toBe('TriggerAuthentication');
    }
    // Replicas are the autoscalers': a `replicas` in the Deployment would undo their choice at every apply.
    for (const deployment of objects.filter((o) => o.kind === 'Deployment')) expect((deployment.spec as { replicas?: number }).replicas).toBeUndefined();
  });

  it('when the containers run, then all three run the one image with the service entry point each needs', async () => {
    const commands = Object.fromEntries(
      objects.flatMap((o) => podSpecs(o).flatMap((pod) => containersOf(pod).map((c) => [`${o.kind}/${o.metadata.name}`, c as unknown as Container]))),
    );
    expect(Object.fromEntries(Object.entries(commands).map(([name, c]) => [name, c.args]))).toEqual({
      'Deployment/logistics-api': ['node', 'api.js'],
      'Deployment/logistics-worker': ['node', 'worker.js'],
      'Job/logistics-migrate': ['node', 'cli.js', 'db:migrate'],
    });
    // `args` keep the image's ENTRYPOINT (tini), which reaps Chromium's processes and forwards SIGTERM.
    expect(Object.values(commands).every((c) => c.command === undefined)).toBe(true);
    expect(new Set(Object.values(commands).map((c) => c.image)).size).toBe(1);
    // The image's /app is packages/service deployed: the entry points are there.
    for (const c of Object.values(commands)) await expect(readFile(path.join(ROOT, 'packages/service', c.args![1]!), 'utf8')).resolves.toContain('import');
  });

  it('when a container sets a variable, then the configuration reads it, and each container starts with what it is given', async () => {
    const known = configurationVariables();
    // The image's own variables come first (the Dockerfile's ENV).
    expect(await imageEnvironment()).toMatchObject({ NODE_ENV: 'production', PORT: '3000', DATA_DIR: '/data' });
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    const set = new Set(Object.keys(configMap.data as Record<string, string>));
    for (const object of objects)
      for (const pod of podSpecs(object)) for (const c of containersOf(pod)) for (const v of (c.env ?? []) as EnvVar[]) set.add(v.name);
    expect([...set].filter((name) => !known.has(name))).toEqual([]);

    const configs: Record<string, AppConfig> = {};
    for (const name of ['Deployment/logistics-api', 'Deployment/logistics-worker', 'Job/logistics-migrate']) {
      const [kind, objectName] = name.split('/') as [string, string];
      const container = podOf(find(objects, kind, objectName)).containers[0]!;
      configs[name] = loadConfig(await containerEnvironment(objects, container));
    }
    const api = configs['Deployment/logistics-api']!;
    const worker = configs['Deployment/logistics-worker']!;
    for (const config of [api, worker]) {
      // The production profile: MariaDB, Redis, S3, and the webhook secrets' key.
      expect(config.databaseUrl).not.toBeNull();
      expect(config.redis).not.toBeNull();
      expect(config.s3).not.toBeNull();
      expect(() => requireSecretKeys(config)).not.toThrow();
      // Metrics and the worker's probes are asked from outside the pod.
      expect(config.metrics.host).toBe('0.0.0.0');
    }
    expect(api.host).toBe('0.0.0.0');
    // The API and the workers must meet on the same queues, storage and database.
    expect({ prefix: worker.redisPrefix, s3: worker.s3, timeZone: worker.timeZone }).toEqual({ prefix: api.redisPrefix, s3: api.s3, timeZone: api.timeZone });
    expect(configs['Job/logistics-migrate']!.databaseUrl).toBe(api.databaseUrl);
  });

  it('when a credential is needed, then it comes from the Secret by reference and the example names every key', async () => {
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    expect(Object.keys(configMap.data as Record<string, string>).filter((name) => CREDENTIAL_NAME.test(name))).toEqual([]);
    expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([]);
    const keys = new Set<string>();
    for (const object of objects) {
      for (const pod of podSpecs(object)) {
        for (const c of containersOf(pod) as unknown as Container[]) {
          for (const variable of c.env ?? []) {
            if (CREDENTIAL_NAME.test(variable.name)) expect(variable.valueFrom?.secretKeyRef, `${object.metadata.name}: ${variable.name}`).toBeDefined();
            const ref = variable.valueFrom?.secretKeyRef;
            if (ref) {
              expect(ref.name).toBe(SECRET_NAME);
              keys.add(ref.key);
            }
          }
          expect(c.envFrom?.filter((source) => source.secretRef) ?? []).toEqual([]);
        }
      }
    }
    const auth = find(objects, 'TriggerAuthentication', 'logistics-redis').spec as { secretTargetRef: Array<{ parameter: string; name: string; key: string }> };
    expect(auth.secretTargetRef).toEqual([{ parameter: 'password', name: SECRET_NAME, key: 'REDIS_PASSWORD' }]);
    keys.add('REDIS_PASSWORD');
    const example = await readEnvFile(SECRETS_EXAMPLE);
    expect(Object.keys(example).sort()).toEqual([...keys].sort());
    // KEDA's password is the one in the processes' REDIS_URL.
    expect(decodeURIComponent(new URL(example.REDIS_URL!).password)).toBe(example.REDIS_PASSWORD);
    // The key's placeholder cannot be used by mistake: the processes refuse it, naming the variable.
    expect(() => loadConfig({ DATABASE_URL: example.DATABASE_URL!, SECRETS_ENCRYPTION_KEYS: example.SECRETS_ENCRYPTION_KEYS! })).toThrow(
      /^Configuration error: SECRETS_ENCRYPTION_KEYS /,
    );
  });

  it('when the kubelet probes a container, then it asks the health paths on the port the process listens on', async () => {
    const expected = {
      'logistics-api': { port: 'http', config: 'port' },
      'logistics-worker': { port: 'metrics', config: 'metrics' },
    } as const;
    for (const [name, { config: which }] of Object.entries(expected)) {
      const container = podOf(find(objects, 'Deployment', name)).containers[0]!;
      const config = loadConfig(await containerEnvironment(objects, container));
      const listening = which === 'port' ? config.port : config.metrics.port;
      const probes = { startup: container.startupProbe!, liveness: container.livenessProbe!, readiness: container.readinessProbe! };
      expect(Object.fromEntries(Object.entries(probes).map(([kind, probe]) => [kind, probe?.httpGet?.path])), name).toEqual({
        startup: '/health/live',
        liveness: '/health/live',
        readiness: '/health/ready',
      });
      for (const probe of Object.values(probes)) expect(probePort(container, probe), name).toBe(listening);
    }
  });

  it("when a pod is stopped, then its grace period covers the process's own stop limit", async () => {
    const apiPod = podOf(find(objects, 'Deployment', 'logistics-api'));
    const api = apiPod.containers[0]!;
    const apiConfig = loadConfig(await containerEnvironment(objects, api));
    const preStop = api.lifecycle?.preStop?.sleep?.seconds ?? 0;
    expect(preStop).toBeGreaterThan(0);
    expect(apiPod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + stopLimitMs(apiConfig.jobTimeoutMs) / 1000);

    // The worker's limit is a constant of its entry point, which runs on import: read from the source.
    const source = await readFile(path.join(ROOT, 'packages/worker/src/main.ts'), 'utf8');
    const workerLimitMs = Number(/const SHUTDOWN_LIMIT_MS = ([\d_]+);/.exec(source)?.[1]?.replace(/_/g, ''));
    expect(workerLimitMs).toBeGreaterThan(0);
    const workerPod = podOf(find(objects, 'Deployment', 'logistics-worker'));
    expect(workerPod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(workerLimitMs / 1000);
    // Not so long that a stuck pod holds a node drain for minutes.
    for (const pod of [apiPod, workerPod]) expect(pod.terminationGracePeriodSeconds).toBeLessThanOrEqual(120);
  });

  it("when a container runs, then it runs as the image's node user on a read-only root with writable room where the processes write", async () => {
    for (const object of objects.filter((o) => podSpecs(o).length > 0)) {
      const pod = podOf(object);
      const name = object.metadata.name;
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      for (const container of pod.containers) {
        expect(container.securityContext, name).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        const mounts = Object.fromEntries((container.volumeMounts ?? []).map((m) => [m.mountPath, pod.volumes?.find((v) => v.name === m.name)]));
        expect(mounts['/tmp']?.emptyDir, `${name}: /tmp`).toBeDefined();
        // Requests and limits for both resources, requests within limits.
        for (const resource of ['cpu', 'memory']) {
          const request = container.resources?.requests?.[resource];
          const limit = container.resources?.limits?.[resource];
          expect(request && limit, `${name}: ${resource}`).toBeTruthy();
          expect(quantity(request!), `${name}: ${resource}`).toBeLessThanOrEqual(quantity(limit!));
        }
        if (object.kind === 'Deployment') {
          const config = loadConfig(await containerEnvironment(objects, container));
          expect(mounts[config.dataDir]?.emptyDir, `${name}: DATA_DIR`).toBeDefined();
        }
      }
    }
    // Chromium: shared memory in RAM (the runtime's 64 MiB default is too small) and a writable home.
    const worker = podOf(find(objects, 'Deployment', 'logistics-worker'));
    const mounts = Object.fromEntries(worker.containers[0]!.volumeMounts!.map((m) => [m.mountPath, worker.volumes?.find((v) => v.name === m.name)]));
    expect(mounts['/dev/shm']?.emptyDir?.medium).toBe('Memory');
    expect(mounts['/home/node']?.emptyDir).toBeDefined();
  });

  it('when KEDA counts the queues, then it reads the keys where BullMQ keeps the waiting render and upload jobs', async () => {
    const scaled = find(objects, 'ScaledObject', 'logistics-worker').spec as ScaledObjectSpec;
    const container = podOf(find(objects, 'Deployment', 'logistics-worker')).containers[0]!;
    const config = loadConfig(await containerEnvironment(objects, container));
    expect(scaled.triggers.map((t) => [t.type, t.metadata.listName])).toEqual([
      ['redis', `${config.redisPrefix}:${QUEUE_NAME_BY_JOB['render-invoice-pdf']}:prioritized`],
      ['redis', `${config.redisPrefix}:${QUEUE_NAME_BY_JOB['store-order-file']}:prioritized`],
      // The worker takes every queue (WORKER_QUEUES=all): exports' renders too.
      ['redis', `${config.redisPrefix}:${BULK_QUEUE_NAME_BY_JOB['render-invoice-pdf']}:prioritized`],
    ]);
    expect(config.workerQueues).toContain(BULK_QUEUE_NAME_BY_JOB['render-invoice-pdf']);
    for (const trigger of scaled.triggers) {
      expect(trigger.metadata.address).toMatch(/^[a-z0-9.-]+:\d+$/);
      expect(Number(trigger.metadata.listLength)).toBeGreaterThan(0);
    }
  });
});

describe('a broken manifest', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await render('overlays/production');
  });

  /** The production render with one change. */
  function broken(kind: string, name: string, change: (object: KubeObject) => void): KubeObject {
    const object = structuredClone(find(objects, kind, name));
    change(object);
    return object;
  }

  it.each([
    [
      'a container port given as a name',
      'Deployment',
      'logistics-api',
      (o: KubeObject) => (podOf(o).containers[0]!.ports![0]!.containerPort = 'http' as unknown as number),
      /containerPort must be integer/,
    ],
    [
      'a pod with no containers list',
      'Job',
      'logistics-migrate',
      (o: KubeObject) => delete (podOf(o) as Partial<PodSpec>).containers,
      /must have required property '?containers'?/,
    ],
    [
      'an autoscaler with its minimum given as text',
      'HorizontalPodAutoscaler',
      'logistics-api',
      (o: KubeObject) => ((o.spec as { minReplicas: unknown }).minReplicas = 'three'),
      /minReplicas must be integer/,
    ],
    [
      'a ScaledObject with a misspelt field',
      'ScaledObject',
      'logistics-worker',
      (o: KubeObject) => ((o.spec as Record<string, unknown>).maxReplicas = 3),
      /must NOT have additional properties.*maxReplicas/,
    ],
    [
      'a trigger without its type',
      'ScaledObject',
      'logistics-worker',
      (o: KubeObject) => delete (o.spec as { triggers: Array<{ type?: string }> }).triggers[0]!.type,
      /must have required property 'type'/,
    ],
    [
      'a TriggerAuthentication whose secret reference has no key',
      'TriggerAuthentication',
      'logistics-redis',
      (o: KubeObject) => delete (o.spec as { secretTargetRef: Array<{ key?: string }> }).secretTargetRef[0]!.key,
      /must have required property 'key'/,
    ],
  ])('when it has %s, then validation fails naming it', async (_what, kind, name, change, message) => {
    const errors = await schemaErrors(broken(kind, name, change));
    expect(errors.join('\n')).toMatch(message);
  });

  it('when an object has a kind no pinned schema knows, then validation fails rather than passing it unchecked', async () => {
    const errors = await schemaErrors({ apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } });
    expect(errors).toEqual(['Deploymnet/x: no schema for apps/v1 Deploymnet']);
  });

  it('when a Service selects no pods, then the cross-reference check finds no Deployment for it', () => {
    const service = broken(
      'Service',
      'logistics-api',
      (o) => ((o.spec as { selector: Record<string, string> }).selector['app.kubernetes.io/component'] = 'apí'),
    );
    expect(workloadsSelected(objects, (service.spec as { selector: Record<string, string> }).selector)).toEqual([]);
  });
});

describe('the manifests against the running processes', () => {
  let api: TestApi;
  let objects: KubeObject[];
  let redis: Redis;
  beforeAll(async () => {
    objects = await render('overlays/production');
    // The request below waits while a worker starts (and its Chromium, on a loaded machine): time enough for both.
    api = await startTestApi({ JOB_TIMEOUT_MS: '120000' }, { profile: 'production', worker: false, label: 'k8s' });
    redis = new Redis(api.stack!.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await api?.stop();
  });

  it("when the kubelet asks the API's probe paths, then the API answers each with 200", async () => {
    const container = podOf(find(objects, 'Deployment', 'logistics-api')).containers[0]!;
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      const response = await fetch(`${api.root}${probe!.httpGet!.path}`);
      expect(response.status, probe!.httpGet!.path).toBe(200);
    }
  });

  it('when a PDF waits for a worker, then the key KEDA counts holds it; once a worker runs, the PDF is served and the worker answers its probes', async () => {
    const scaled = find(objects, 'ScaledObject', 'logistics-worker').spec as ScaledObjectSpec;
    const workerContainer = podOf(find(objects, 'Deployment', 'logistics-worker')).containers[0]!;
    const manifestPrefix = loadConfig(await containerEnvironment(objects, workerContainer)).redisPrefix;
    // The test's queues live under a prefix of their own: the same key with it.
    const key = scaled.triggers[0]!.metadata.listName!.replace(`${manifestPrefix}:`, `${api.stack!.env.REDIS_PREFIX}:`);
    const pending = api.call('/invoices/9001/pdf?lang=de');
    await expect.poll(() => kedaListLength(redis, key), { timeout: 15_000, interval: 100 }).toBe(1);

    const metricsPort = await freePort();
    await api.stack!.startWorker(api.dataDir, { METRICS_PORT: String(metricsPort) });
    const response = await pending;
    expect(response.status).toBe(200);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    await expect.poll(() => kedaListLength(redis, key), { timeout: 15_000, interval: 100 }).toBe(0);

    for (const probe of [workerContainer.startupProbe, workerContainer.livenessProbe, workerContainer.readinessProbe]) {
      const answer = await fetch(`http://127.0.0.1:${metricsPort}${probe!.httpGet!.path}`);
      expect(answer.status, probe!.httpGet!.path).toBe(200);
    }
  }, 180_000);
});

/** The length KEDA's redis scaler reads for a key: ZCARD of a sorted set, SCARD, HLEN, else LLEN (pkg/scalers/redis_scaler.go). */
async function kedaListLength(redis: Redis, key: string): Promise<number> {
  const type = await redis.type(key);
  if (type === 'zset') return redis.zcard(key);
  if (type === 'set') return redis.scard(key);
  if (type === 'hash') return redis.hlen(key);
  return redis.llen(key);
}
