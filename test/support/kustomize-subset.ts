import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/**
 * Renders a kustomization as `kubectl kustomize` (kustomize v5) does, for the fields deploy/kubernetes uses
 * and no others: no kustomize binary can be installed on the machines that run the tests. Supported:
 * `resources` (files and directories with a kustomization.yaml), `namespace`, `images` (newName, newTag,
 * digest), `configMapGenerator` (literals, `behavior: create|merge`, `options.labels`; the name gets
 * kustomize's content hash, and references in envFrom, configMapKeyRef and configMap volumes follow it)
 * and `patches` given inline as JSON 6902 (add, remove, replace, test) with a `target` of kind and name.
 * Any other field is refused by name, so a manifest never relies on something this renderer skips.
 */

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

interface ImageRule {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

interface ConfigMapGenerator {
  name: string;
  behavior?: 'create' | 'merge';
  literals?: string[];
  options?: { labels?: Record<string, string> };
}

interface Patch {
  target: { kind: string; name: string };
  patch: string;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  images?: ImageRule[];
  configMapGenerator?: ConfigMapGenerator[];
  patches?: Patch[];
}

const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'configMapGenerator', 'patches']);
const SUPPORTED_GENERATOR_FIELDS = new Set(['name', 'behavior', 'literals', 'options']);

/** A generated ConfigMap, by the name its kustomization gives it (before the hash). */
type Generated = Map<string, KubeObject>;

export async function renderKustomization(dir: string): Promise<KubeObject[]> {
  const { objects, generated } = await build(dir);
  return withHashedNames(objects, generated);
}

async function build(dir: string): Promise<{ objects: KubeObject[]; generated: Generated }> {
  const file = path.join(dir, 'kustomization.yaml');
  const kustomization = parse(await readFile(file, 'utf8')) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((key) => !SUPPORTED_FIELDS.has(key));
  if (unsupported.length > 0) throw new Error(`${file}: kustomize field(s) not supported by the test's renderer: ${unsupported.join(', ')}`);

  let objects: KubeObject[] = [];
  const generated: Generated = new Map();
  for (const entry of kustomization.resources ?? []) {
    if (/^[a-z]+:\/\//.test(entry) || entry.includes('?ref=')) throw new Error(`${file}: remote resource ${entry} not supported`);
    const target = path.resolve(dir, entry);
    if ((await stat(target)).isDirectory()) {
      const child = await build(target);
      objects.push(...child.objects);
      for (const [name, configMap] of child.generated) generated.set(name, configMap);
    } else {
      objects.push(...(await readObjects(target)));
    }
  }
  for (const generator of kustomization.configMapGenerator ?? []) generate(file, generator, generated);
  // The transformers of this level apply to what the levels below made too.
  objects = [...objects.filter((o) => !isGenerated(o, generated)), ...generated.values()];
  for (const object of objects) {
    if (kustomization.namespace) object.metadata.namespace = kustomization.namespace;
    for (const rule of kustomization.images ?? []) setImages(object, rule);
  }
  for (const patch of kustomization.patches ?? []) {
    const targets = objects.filter((o) => o.kind === patch.target.kind && o.metadata.name === patch.target.name);
    if (targets.length === 0) throw new Error(`${file}: patch target ${patch.target.kind}/${patch.target.name} not found`);
    const operations = parse(patch.patch) as JsonPatchOperation[];
    if (!Array.isArray(operations)) throw new Error(`${file}: only JSON 6902 patches (a list of operations) are supported`);
    for (const target of targets) applyJsonPatch(target, operations);
  }
  return { objects, generated };
}

async function readObjects(file: string): Promise<KubeObject[]> {
  const documents = parseAllDocuments(await readFile(file, 'utf8'));
  return documents
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
      return document.toJS() as KubeObject | null;
    })
    .filter((object): object is KubeObject => object !== null);
}

function isGenerated(object: KubeObject, generated: Generated): boolean {
  return [...generated.values()].includes(object);
}

function generate(file: string, generator: ConfigMapGenerator, generated: Generated): void {
  const unsupported = Object.keys(generator).filter((key) => !SUPPORTED_GENERATOR_FIELDS.has(key));
  if (unsupported.length > 0) throw new Error(`${file}: configMapGenerator field(s) not supported: ${unsupported.join(', ')}`);
  const data: Record<string, string> = {};
  for (const literal of generator.literals ?? []) {
    const equals = literal.indexOf('=');
    if (equals < 1) throw new Error(`${file}: literal ${literal} is not KEY=VALUE`);
    data[literal.slice(0, equals)] = literal.slice(equals + 1);
  }
  const existing = generated.get(generator.name);
  if ((generator.behavior ?? 'create') === 'create') {
    if (existing) throw new Error(`${file}: ConfigMap ${generator.name} is generated twice (behavior: merge?)`);
    const metadata: KubeObject['metadata'] = { name: generator.name };
    if (generator.options?.labels) metadata.labels = { ...generator.options.labels };
    generated.set(generator.name, { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: sortedKeys(data) });
  } else if (generator.behavior === 'merge') {
    if (!existing) throw new Error(`${file}: ConfigMap ${generator.name} to merge is not generated below`);
    existing.data = sortedKeys({ ...(existing.data as Record<string, string>), ...data });
    if (generator.options?.labels) existing.metadata.labels = { ...existing.metadata.labels, ...generator.options.labels };
  } else {
    throw new Error(`${file}: behavior ${String(generator.behavior)} not supported`);
  }
}

function sortedKeys(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * kustomize's name suffix for a generated ConfigMap: the first 10 hex digits of the SHA-256 of
 * `{"data":...,"kind":"ConfigMap","name":""}` (Go's json.Marshal: sorted keys, <, > and & escaped; kustomize v5
 * reads the name as empty), with 0, 1, 3, a and e swapped for letters that make no words.
 */
export function configMapHash(data: Record<string, string>): string {
  const json = JSON.stringify({ data: sortedKeys(data), kind: 'ConfigMap', name: '' }).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  const hex = createHash('sha256').update(json).digest('hex').slice(0, 10);
  return hex.replace(/[013ae]/g, (c) => ({ '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' })[c]!);
}

function withHashedNames(objects: KubeObject[], generated: Generated): KubeObject[] {
  const renamed = new Map<string, string>();
  for (const [name, configMap] of generated) {
    configMap.metadata.name = `${name}-${configMapHash(configMap.data as Record<string, string>)}`;
    renamed.set(name, configMap.metadata.name);
  }
  for (const object of objects) {
    for (const pod of podSpecs(object)) {
      for (const container of containersOf(pod)) {
        for (const source of (container.envFrom ?? []) as Array<{ configMapRef?: { name: string } }>) {
          if (source.configMapRef) source.configMapRef.name = renamed.get(source.configMapRef.name) ?? source.configMapRef.name;
        }
        for (const variable of (container.env ?? []) as Array<{ valueFrom?: { configMapKeyRef?: { name: string } } }>) {
          const ref = variable.valueFrom?.configMapKeyRef;
          if (ref) ref.name = renamed.get(ref.name) ?? ref.name;
        }
      }
      for (const volume of (pod.volumes ?? []) as Array<{ configMap?: { name: string } }>) {
        if (volume.configMap) volume.configMap.name = renamed.get(volume.configMap.name) ?? volume.configMap.name;
      }
    }
  }
  return objects;
}

type PodSpec = Record<string, unknown> & { containers?: Container[]; initContainers?: Container[]; volumes?: unknown[] };
type Container = Record<string, unknown> & { image?: string; envFrom?: unknown[]; env?: unknown[] };

/** The pod specs an object holds: a Pod's own, a Deployment's or Job's template. */
export function podSpecs(object: KubeObject): PodSpec[] {
  const spec = object.spec as { template?: { spec?: PodSpec } } | undefined;
  if (object.kind === 'Pod') return [object.spec as PodSpec];
  return spec?.template?.spec ? [spec.template.spec] : [];
}

export function containersOf(pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
}

function setImages(object: KubeObject, rule: ImageRule): void {
  for (const pod of podSpecs(object)) {
    for (const container of containersOf(pod)) {
      if (!container.image) continue;
      const { name, tag, digest } = imageParts(container.image);
      if (name !== rule.name) continue;
      const suffix = rule.digest ? `@${rule.digest}` : rule.newTag ? `:${rule.newTag}` : digest ? `@${digest}` : tag ? `:${tag}` : '';
      container.image = `${rule.newName ?? name}${suffix}`;
    }
  }
}

function imageParts(image: string): { name: string; tag: string | null; digest: string | null } {
  const [withoutDigest, digest = null] = image.split('@') as [string, string?];
  const colon = withoutDigest.indexOf(':', withoutDigest.lastIndexOf('/') + 1);
  return colon === -1 ? { name: withoutDigest, tag: null, digest } : { name: withoutDigest.slice(0, colon), tag: withoutDigest.slice(colon + 1), digest };
}

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}

/** RFC 6902 on a parsed document, in place: add, remove, replace and test (move and copy are not used here). */
export function applyJsonPatch(document: object, operations: JsonPatchOperation[]): void {
  for (const operation of operations) {
    if (!['add', 'remove', 'replace', 'test'].includes(operation.op)) throw new Error(`JSON patch op ${String(operation.op)} not supported`);
    const tokens = operation.path
      .split('/')
      .slice(1)
      .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (!operation.path.startsWith('/') || tokens.length === 0) throw new Error(`JSON patch path ${operation.path} must point inside the document`);
    const last = tokens.pop()!;
    let parent: unknown = document;
    for (const token of tokens) {
      parent = child(parent, token, operation.path);
    }
    const value = structuredClone(operation.value);
    if (Array.isArray(parent)) {
      const index = last === '-' && operation.op === 'add' ? parent.length : arrayIndex(last, parent.length + (operation.op === 'add' ? 1 : 0), operation.path);
      if (operation.op === 'add') parent.splice(index, 0, value);
      else if (operation.op === 'remove') parent.splice(index, 1);
      else if (operation.op === 'replace') parent[index] = value;
      else if (JSON.stringify(parent[index]) !== JSON.stringify(value)) throw new Error(`JSON patch test failed at ${operation.path}`);
    } else if (parent !== null && typeof parent === 'object') {
      const record = parent as Record<string, unknown>;
      const exists = Object.hasOwn(record, last);
      if (operation.op !== 'add' && !exists) throw new Error(`JSON patch ${operation.op}: nothing at ${operation.path}`);
      if (operation.op === 'remove') delete record[last];
      else if (operation.op === 'test') {
        if (JSON.stringify(record[last]) !== JSON.stringify(value)) throw new Error(`JSON patch test failed at ${operation.path}`);
      } else record[last] = value;
    } else {
      throw new Error(`JSON patch: ${operation.path} is not inside an object or a list`);
    }
  }
}

function child(parent: unknown, token: string, fullPath: string): unknown {
  if (Array.isArray(parent)) return parent[arrayIndex(token, parent.length, fullPath)];
  if (parent !== null && typeof parent === 'object' && Object.hasOwn(parent, token)) return (parent as Record<string, unknown>)[token];
  throw new Error(`JSON patch: nothing at ${fullPath}`);
}

function arrayIndex(token: string, size: number, fullPath: string): number {
  if (!/^(?:0|[1-9]\d*)$/.test(token) || Number(token) >= size) throw new Error(`JSON patch: no index ${token} at ${fullPath}`);
  return Number(token);
}
