/**
 * A renderer for the subset of kustomize that deploy/k8s uses, so the manifests can be rendered
 * and checked on a machine without kubectl (the manifest test compares it with
 * `kubectl kustomize` where kubectl exists). Supported kustomization fields: `resources` (files
 * or directories), `namespace`, `labels` (pairs, optionally `includeTemplates`), `images`
 * (`name`, `newName`, `newTag`), `replicas` and `patches` (`path` to a strategic-merge patch
 * that names its target by kind and metadata.name). Any other field is refused rather than
 * silently ignored, so the manifests cannot drift outside what is checked.
 *
 * Usage: node deploy/k8s/render.ts deploy/k8s/overlays/production > production.yaml
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
};
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const SUPPORTED = new Set(["apiVersion", "kind", "resources", "namespace", "labels", "images", "replicas", "patches"]);
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"]);
const SCALABLE = new Set(["Deployment", "StatefulSet", "ReplicaSet"]);

interface Kustomization {
  resources?: string[];
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  replicas?: Array<{ name: string; count: number }>;
  patches?: Array<{ path: string }>;
}

/** Renders the kustomization in `dir` (and everything it includes) to a list of objects. */
export function render(dir: string): K8sObject[] {
  const kustomization = readKustomization(dir);
  let objects: K8sObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(dir, resource);
    objects.push(...(statSync(path).isDirectory() ? render(path) : readObjects(path)));
  }
  for (const patch of kustomization.patches ?? []) {
    for (const document of readObjects(join(dir, patch.path))) objects = applyPatch(objects, document);
  }
  if (kustomization.namespace) {
    for (const object of objects) {
      if (!CLUSTER_SCOPED.has(object.kind)) object.metadata.namespace = kustomization.namespace;
    }
  }
  for (const label of kustomization.labels ?? []) {
    if (label.includeSelectors)
      throw new Error(`${dir}: labels.includeSelectors is not supported (selectors are immutable)`);
    for (const object of objects) {
      object.metadata.labels = { ...object.metadata.labels, ...label.pairs };
      const template = podTemplate(object);
      if (label.includeTemplates && template) {
        template.metadata = {
          ...(template.metadata as JsonObject | undefined),
          labels: { ...labelsOf(template), ...label.pairs },
        };
      }
    }
  }
  for (const image of kustomization.images ?? []) {
    for (const object of objects) setImage(object as unknown as Json, image);
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const targets = objects.filter((o) => SCALABLE.has(o.kind) && o.metadata.name === name);
    if (targets.length === 0) throw new Error(`${dir}: replicas names ${name}, which is not rendered`);
    for (const target of targets) (target.spec as JsonObject).replicas = count;
  }
  return objects;
}

function readKustomization(dir: string): Kustomization {
  const file = ["kustomization.yaml", "kustomization.yml"].map((name) => join(dir, name)).find((p) => existsSync(p));
  if (!file) throw new Error(`${dir}: no kustomization.yaml`);
  const [document] = readObjects(file) as unknown as Array<Record<string, unknown>>;
  for (const key of Object.keys(document ?? {})) {
    if (!SUPPORTED.has(key)) throw new Error(`${file}: field "${key}" is outside the supported kustomize subset`);
  }
  return (document ?? {}) as Kustomization;
}

function readObjects(path: string): K8sObject[] {
  return parseAllDocuments(readFileSync(path, "utf8"))
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0]?.message}`);
      return document.toJS() as K8sObject | null;
    })
    .filter((object): object is K8sObject => object !== null);
}

function applyPatch(objects: K8sObject[], patch: K8sObject): K8sObject[] {
  const index = objects.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
  if (index < 0) throw new Error(`patch targets ${patch.kind}/${patch.metadata.name}, which is not rendered`);
  const merged = strategicMerge(objects[index] as unknown as Json, patch as unknown as Json) as unknown as K8sObject;
  return objects.map((object, i) => (i === index ? merged : object));
}

/**
 * Strategic merge as far as these manifests need it: maps merge key by key (null deletes),
 * lists of named items (containers, env, volumes) merge by `name`, other lists are replaced.
 */
export function strategicMerge(base: Json, patch: Json): Json {
  if (isObject(base) && isObject(patch)) {
    const result: JsonObject = { ...base };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete result[key];
      else result[key] = key in base ? strategicMerge(base[key] as Json, value) : value;
    }
    return result;
  }
  if (Array.isArray(base) && Array.isArray(patch) && [...base, ...patch].every(isNamed)) {
    const result = base.map((item) => {
      const update = patch.find((p) => (p as JsonObject).name === (item as JsonObject).name);
      return update === undefined ? item : strategicMerge(item, update);
    });
    const added = patch.filter((p) => !base.some((b) => (b as JsonObject).name === (p as JsonObject).name));
    return [...result, ...added];
  }
  return patch;
}

function setImage(node: Json, image: { name: string; newName?: string; newTag?: string }): void {
  if (Array.isArray(node)) {
    for (const item of node) setImage(item, image);
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if ((key === "containers" || key === "initContainers") && Array.isArray(value)) {
      for (const container of value) {
        if (!isObject(container) || typeof container.image !== "string") continue;
        const [name, tag] = splitImage(container.image);
        if (name !== image.name) continue;
        container.image = `${image.newName ?? name}:${image.newTag ?? tag}`;
      }
    } else setImage(value, image);
  }
}

/** `registry:5000/repo/name:tag` → [`registry:5000/repo/name`, `tag`]. */
export function splitImage(image: string): [string, string | undefined] {
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  return colon > slash ? [image.slice(0, colon), image.slice(colon + 1)] : [image, undefined];
}

/** The pod template of a workload (Deployment, Job, …), if it has one. */
export function podTemplate(object: K8sObject): JsonObject | undefined {
  const template = (object.spec as JsonObject | undefined)?.template;
  return isObject(template) ? template : undefined;
}

function labelsOf(template: JsonObject): Record<string, string> {
  return ((template.metadata as JsonObject | undefined)?.labels ?? {}) as Record<string, string>;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNamed(value: Json): boolean {
  return isObject(value) && typeof value.name === "string";
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write("usage: node deploy/k8s/render.ts <kustomization directory>\n");
    process.exit(64);
  }
  process.stdout.write(
    render(dir)
      .map((object) => stringify(object, { lineWidth: 0 }))
      .join("---\n"),
  );
}
