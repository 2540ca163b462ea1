/**
 * deploy/k8s as the cluster receives it: rendered by the real kustomize (`kubectl kustomize`),
 * and each object checked against its kind's schema — the Kubernetes API's own (kubernetes-models)
 * and the custom resources' (Gateway API, prometheus-operator, KEDA from their @kubernetes-models
 * packages; CloudNativePG and the Barman Cloud Plugin from the JSON schemas vendored in
 * deploy/k8s/schemas, validated with ajv). There is no network at test time: every schema is here.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Gateway as GatewayV1, HTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { PodMonitor, PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Ajv } from "ajv";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Job } from "kubernetes-models/batch/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Service, ServiceAccount } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";
import { root } from "../../scripts/system.ts";

export const k8sDir = path.join(root, "deploy", "k8s");

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
};

/**
 * kubectl carries kustomize (v5 here). It is on every machine of this kind; it is not installed
 * by the test because no registry these machines reach carries a kustomize that reads these
 * files (Debian's kubernetes-client is 1.20, with kustomize 2.0, which knows neither `labels`
 * nor `behavior: merge` on generators).
 */
export function kustomize(dir: string): K8sObject[] {
  const result = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.error) {
    throw new Error(
      `kubectl is missing (${result.error.message}): deploy/k8s is rendered with the real kustomize, install kubectl ≥ 1.27`,
    );
  }
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((document) => document.toJS() as K8sObject);
}

type Validator = (object: K8sObject) => void;
const model =
  (Model: { new (data: never): { validate(): void } }): Validator =>
  (object) =>
    new Model(object as never).validate();

/** The vendored JSON schemas (deploy/k8s/schemas/README.md says where each comes from). */
function vendored(file: string): Validator {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(JSON.parse(readFileSync(path.join(k8sDir, "schemas", file), "utf8")));
  return (object) => {
    if (!validate(object)) throw new Error(ajv.errorsText(validate.errors));
  };
}

/** Every kind the manifests may contain, with its schema; an unknown kind has none. */
const validators: Record<string, () => Validator> = {
  "v1/ConfigMap": () => model(ConfigMap),
  "v1/Service": () => model(Service),
  "v1/ServiceAccount": () => model(ServiceAccount),
  "apps/v1/Deployment": () => model(Deployment),
  "batch/v1/Job": () => model(Job),
  "autoscaling/v2/HorizontalPodAutoscaler": () => model(HorizontalPodAutoscaler),
  "policy/v1/PodDisruptionBudget": () => model(PodDisruptionBudget),
  "networking.k8s.io/v1/NetworkPolicy": () => model(NetworkPolicy),
  "gateway.networking.k8s.io/v1/Gateway": () => model(GatewayV1),
  "gateway.networking.k8s.io/v1/HTTPRoute": () => model(HTTPRoute),
  "monitoring.coreos.com/v1/PodMonitor": () => model(PodMonitor),
  "monitoring.coreos.com/v1/PrometheusRule": () => model(PrometheusRule),
  "keda.sh/v1alpha1/ScaledObject": () => model(ScaledObject),
  "postgresql.cnpg.io/v1/ScheduledBackup": () => vendored("postgresql.cnpg.io/scheduledbackup_v1.json"),
  "postgresql.cnpg.io/v1/ImageCatalog": () => vendored("postgresql.cnpg.io/imagecatalog_v1.json"),
  "barmancloud.cnpg.io/v1/ObjectStore": () => vendored("barmancloud.cnpg.io/objectstore_v1.json"),
};
const compiled = new Map<string, Validator>();

/**
 * Kinds whose published schema is not in this repository (deploy/k8s/schemas/README.md says why):
 * only a cluster with their operator installed checks them (`kubectl apply --dry-run=server`).
 */
const CHECKED_BY_A_CLUSTER_ONLY = [
  "postgresql.cnpg.io/v1/Cluster",
  "gateway.envoyproxy.io/v1alpha1/BackendTrafficPolicy",
];

/**
 * Throws when the object's kind has no schema here or the object does not satisfy it; the kinds
 * of CHECKED_BY_A_CLUSTER_ONLY pass unchecked.
 */
export function validateObject(object: K8sObject): void {
  const kind = `${object.apiVersion}/${object.kind}`;
  if (CHECKED_BY_A_CLUSTER_ONLY.includes(kind)) return;
  const make = validators[kind];
  if (!make) throw new Error(`${kind}: no schema for this kind`);
  let validator = compiled.get(kind);
  if (!validator) {
    validator = make();
    compiled.set(kind, validator);
  }
  validator(object);
}

export function splitImage(image: string): [string, string | undefined] {
  const at = image.indexOf("@");
  if (at >= 0) return [image.slice(0, at), image.slice(at + 1)];
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  return colon > slash ? [image.slice(0, colon), image.slice(colon + 1)] : [image, undefined];
}

/** The pod template of a workload (Deployment, Job, …), if it has one. */
export function podTemplate(object: K8sObject): Record<string, unknown> | undefined {
  const template = (object.spec as { template?: unknown } | undefined)?.template;
  return typeof template === "object" && template !== null ? (template as Record<string, unknown>) : undefined;
}

/** The base name of a generated ConfigMap (`dos-common-5ddd94hf7m` → `dos-common`). */
export function generatedName(name: string): string {
  return name.replace(/-[a-z0-9]{10}$/, "");
}
