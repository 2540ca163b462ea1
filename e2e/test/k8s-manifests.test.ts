/**
 * deploy/k8s: every overlay renders with the real kustomize (`kubectl kustomize`), every object
 * passes its kind's schema, custom resources included (e2e/src/k8s.ts), and the policy an SRE
 * would check by hand holds: probes, resources, security context, a PDB, a NetworkPolicy, an HPA
 * and a migration Job per Deployment, pinned images, no secret values, generated ConfigMaps that
 * roll the pods, and a bus on which each service is its own NATS user.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { natsPermissions, SERVICE_NAMES } from "@dos/contracts";
import { loadConfig } from "@dos/service-kit";
import type { TObject } from "@sinclair/typebox";
import { parseAllDocuments } from "yaml";
import { NATS_AUTHORIZATION_FILE, natsAuthorizationValues } from "../../scripts/nats-authorization.ts";
import {
  generatedName,
  type K8sObject,
  k8sDir as k8s,
  kustomize,
  podTemplate,
  splitImage,
  validateObject,
} from "../src/k8s.ts";

const root = join(import.meta.dirname, "..", "..");
const overlays = ["base", "overlays/staging", "overlays/production"];
const services = ["console", "delivery-api", "geo-ingest", "pricing", "webhook-dispatcher"];
const readme = readFileSync(join(root, "deploy", "README.md"), "utf8");

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are untyped YAML, read field by field
type Any = any;
const of = (objects: K8sObject[], kind: string): Any[] => objects.filter((o) => o.kind === kind);
const key = (o: K8sObject) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
const containersOf = (objects: K8sObject[]): Any[] =>
  objects.flatMap((o) => ((podTemplate(o)?.spec as Any)?.containers ?? []) as Any[]);

/** Checks one ConfigMap value as the boot does (loadConfig on that variable alone); throws its message. */
function checkValue(schema: TObject, name: string, value: string) {
  const alone = { ...schema, properties: { [name]: schema.properties[name] }, required: [] } as TObject;
  loadConfig(alone, { prefix: name, env: { [name]: value } });
}

async function configSchemaOf(service: string): Promise<{ schema: TObject; prefix: string }> {
  const module = await import(`../../services/${service}/src/config.ts`);
  return { schema: module.configSchema, prefix: module.CONFIG_PREFIX };
}

for (const overlay of overlays) {
  describe(`deploy/k8s/${overlay}`, () => {
    const objects = kustomize(join(k8s, overlay));
    const deployments = of(objects, "Deployment");
    const configMap = (name: string) => of(objects, "ConfigMap").find((c) => generatedName(c.metadata.name) === name);
    const common = configMap("dos-common");

    test("renders the five services", () => {
      assert.deepEqual(deployments.map((d) => d.metadata.name).sort(), services);
    });

    test("every object is valid against its kind's schema", () => {
      for (const object of objects) assert.doesNotThrow(() => validateObject(object), key(object));
    });

    test("ConfigMaps are generated with a hash of their content, which the pods reference: a change rolls them", () => {
      for (const map of of(objects, "ConfigMap")) {
        assert.notEqual(generatedName(map.metadata.name), map.metadata.name, `${map.metadata.name}: hashed name`);
      }
      const names = new Set(of(objects, "ConfigMap").map((c) => c.metadata.name));
      for (const object of objects) {
        for (const container of ((podTemplate(object)?.spec as Any)?.containers ?? []) as Any[]) {
          for (const source of container.envFrom ?? []) {
            if (source.configMapRef)
              assert.ok(names.has(source.configMapRef.name), `${key(object)}: ${source.configMapRef.name}`);
          }
        }
      }
    });

    /** The HPA, or the KEDA ScaledObject (which creates the HPA), scaling a Deployment, with its bounds. */
    const autoscalerOf = (name: string) => {
      const hpa = of(objects, "HorizontalPodAutoscaler").find((h) => h.spec.scaleTargetRef.name === name);
      if (hpa) return { min: hpa.spec.minReplicas, max: hpa.spec.maxReplicas };
      const scaled = of(objects, "ScaledObject").find((o) => o.spec.scaleTargetRef.name === name);
      return scaled && { min: scaled.spec.minReplicaCount, max: scaled.spec.maxReplicaCount };
    };

    test("no Deployment that an autoscaler scales sets replicas: an apply or a sync never resets a scaled-out service", () => {
      for (const deployment of deployments) {
        assert.ok(autoscalerOf(deployment.metadata.name), deployment.metadata.name);
        assert.equal(deployment.spec.replicas, undefined, `${deployment.metadata.name}: replicas`);
      }
    });

    test("geo-ingest scales on its write queue and its request rate (KEDA, Prometheus), not only CPU", () => {
      const [scaled] = of(objects, "ScaledObject").filter((o) => o.spec.scaleTargetRef.name === "geo-ingest");
      const prometheus = scaled.spec.triggers.filter((t: Any) => t.type === "prometheus");
      const query = (metric: string) => prometheus.find((t: Any) => t.metadata.query.includes(metric))?.metadata;
      assert.match(query("geo_write_queue_rows")?.query ?? "", /service="geo-ingest"/);
      assert.match(query("http_request_duration_seconds_count")?.query ?? "", /rate\(.*service="geo-ingest"/);
      for (const trigger of prometheus) {
        assert.ok(Number(trigger.metadata.threshold) > 0, trigger.name);
        assert.match(trigger.metadata.serverAddress, /^http:\/\/.+\.monitoring\.svc:9090$/);
      }
      assert.ok(readme.includes("`geo_write_queue_rows`"), "the metric is documented");
      assert.equal(scaled.spec.advanced.horizontalPodAutoscalerConfig.name, "geo-ingest");
    });

    test("every Deployment has probes, resources, a locked-down security context and a drain-aware shutdown", () => {
      const drainSeconds = Number(common.data.SHUTDOWN_TIMEOUT_MS) / 1000;
      for (const deployment of deployments) {
        const name = deployment.metadata.name;
        const pod = deployment.spec.template.spec;
        assert.equal(pod.automountServiceAccountToken, false, name);
        assert.equal(pod.securityContext.runAsNonRoot, true, name);
        assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault", name);
        assert.ok(pod.topologySpreadConstraints?.length > 0, `${name}: topology spread`);
        for (const container of pod.containers) {
          assert.equal(container.startupProbe?.httpGet?.path, "/livez", `${name}: startup probe`);
          assert.equal(container.livenessProbe?.httpGet?.path, "/livez", `${name}: liveness probe`);
          assert.equal(container.readinessProbe?.httpGet?.path, "/readyz", `${name}: readiness probe`);
          for (const kind of ["requests", "limits"]) {
            assert.ok(container.resources?.[kind]?.cpu && container.resources?.[kind]?.memory, `${name}: ${kind}`);
          }
          const security = container.securityContext;
          assert.equal(security.runAsNonRoot, true, name);
          assert.equal(security.readOnlyRootFilesystem, true, name);
          assert.equal(security.allowPrivilegeEscalation, false, name);
          assert.deepEqual(security.capabilities.drop, ["ALL"], name);
          assert.equal(security.seccompProfile.type, "RuntimeDefault", name);
          assert.ok(
            container.volumeMounts.some((m: Any) => m.mountPath === "/tmp"),
            `${name}: writable /tmp`,
          );
          const preStop = container.lifecycle?.preStop?.sleep?.seconds;
          assert.ok(preStop > 0, `${name}: preStop pause`);
          assert.ok(
            pod.terminationGracePeriodSeconds > preStop + drainSeconds,
            `${name}: grace period covers the drain`,
          );
        }
      }
    });

    test("every Deployment has a Service, ServiceAccount, PDB, NetworkPolicy, an autoscaler and a migration Job", () => {
      for (const deployment of deployments) {
        const name = deployment.metadata.name;
        const labels = deployment.spec.template.metadata.labels;
        assert.ok(
          of(objects, "Service").some((s) => selects(s.spec.selector, labels)),
          `${name}: Service`,
        );
        const account = of(objects, "ServiceAccount").find(
          (a) => a.metadata.name === deployment.spec.template.spec.serviceAccountName,
        );
        assert.equal(account?.automountServiceAccountToken, false, `${name}: ServiceAccount`);
        assert.ok(
          of(objects, "PodDisruptionBudget").some((p) => selects(p.spec.selector.matchLabels, labels)),
          `${name}: PodDisruptionBudget`,
        );
        assert.ok(
          of(objects, "NetworkPolicy").some((p) => selects(p.spec.podSelector.matchLabels ?? {}, labels)),
          `${name}: NetworkPolicy`,
        );
        const scaler = autoscalerOf(name);
        assert.ok(scaler, `${name}: a HorizontalPodAutoscaler or a KEDA ScaledObject`);
        assert.ok(scaler.min >= 2 && scaler.max >= scaler.min, `${name}: ${scaler.min}..${scaler.max} replicas`);
        const job = of(objects, "Job").find((j) => j.metadata.name === `${name}-migrate`);
        assert.ok(job, `${name}: migration Job`);
        const [migrate] = job.spec.template.spec.containers;
        assert.equal(migrate.image, deployment.spec.template.spec.containers[0].image, `${name}: same image`);
        assert.deepEqual(migrate.command, ["/nodejs/bin/node", `services/${name}/dist/src/migrate.js`]);
        // Argo CD: the ConfigMaps the Job reads (wave -2), then the Job, awaited (-1), then the rollout (0).
        const wave = (o: Any) => Number(o.metadata.annotations?.["argocd.argoproj.io/sync-wave"] ?? 0);
        assert.ok(wave(job) < wave(deployment), `${name}: migrates before the rollout`);
        for (const source of migrate.envFrom) {
          const map = of(objects, "ConfigMap").find((c) => c.metadata.name === source.configMapRef.name);
          assert.ok(wave(map) < wave(job), `${name}: ${map.metadata.name} is applied before the Job reads it`);
          assert.equal(map.metadata.labels["app.kubernetes.io/component"], "configuration");
        }
        assert.equal(job.metadata.annotations["argocd.argoproj.io/sync-options"], "Replace=true", `${name}: recreated`);
      }
      const denyAll = of(objects, "NetworkPolicy").find(
        (p) => Object.keys(p.spec.podSelector).length === 0 && !p.spec.ingress && !p.spec.egress,
      );
      assert.deepEqual(denyAll?.spec.policyTypes, ["Ingress", "Egress"], "a default-deny NetworkPolicy");
    });

    test("images are pinned, and no secret value is committed", () => {
      for (const container of containersOf(objects)) {
        const [, tag] = splitImage(container.image);
        assert.ok(tag && tag !== "latest", `${container.image}: pinned tag`);
      }
      assert.equal(of(objects, "Secret").length, 0, "Secrets are created out of band, never committed");
      for (const container of containersOf(objects)) {
        for (const variable of container.env ?? []) {
          if (/TOKEN|SECRET|PASSWORD/.test(variable.name)) {
            assert.ok(variable.valueFrom?.secretKeyRef, `${variable.name} comes from a Secret`);
            assert.ok(readme.includes(variable.valueFrom.secretKeyRef.name), `${variable.name}: Secret documented`);
          }
          if (typeof variable.value === "string") {
            assert.doesNotMatch(variable.value, /:\/\/[^:/@]+:(?!\$\()[^@]*@/, `${variable.name}: no inline password`);
          }
        }
      }
      for (const map of of(objects, "ConfigMap")) {
        for (const name of Object.keys(map.data ?? {})) assert.doesNotMatch(name, /TOKEN|SECRET|PASSWORD/);
      }
    });

    test("every service's ConfigMap holds only variables its configuration knows (a typo stops the boot)", async () => {
      for (const service of services) {
        const { schema, prefix } = await configSchemaOf(service);
        const map = configMap(service);
        for (const name of Object.keys({ ...map.data, ...common.data })) {
          // OTEL_ too: a misspelt or retired one (OTEL_TRACES_SAMPLE_RATIO) would be ignored without a word.
          if (name.startsWith(prefix) || name.startsWith("OTEL_")) {
            assert.ok(name in schema.properties, `${service}: ${name} is unknown`);
          }
        }
        for (const [name, value] of Object.entries(common.data as Record<string, string>)) {
          if (name.startsWith("OTEL_"))
            assert.doesNotThrow(() => checkValue(schema, name, value), `${service}: ${name}`);
        }
        assert.equal(Number(map.data.PORT), schema.properties.PORT?.default, `${service}: PORT`);
      }
    });

    test("the Gateway serves /api, /track and /media from delivery-api and /external from geo-ingest, over TLS, and never /ops", () => {
      const [gateway] = of(objects, "Gateway");
      const https = gateway.spec.listeners.find((l: Any) => l.name === "https");
      assert.equal(https.port, 443);
      assert.equal(https.tls.mode, "Terminate");
      assert.match(https.tls.certificateRefs[0].name, /tls$/);
      const hostname = https.hostname;
      const routes = of(objects, "HTTPRoute").flatMap((route) =>
        route.spec.rules.flatMap((rule: Any) =>
          (rule.matches ?? [{ path: { type: "PathPrefix", value: "/" } }]).map((match: Any) => ({
            route,
            path: match.path.value,
            backends: (rule.backendRefs ?? []).map((b: Any) => `${b.name}:${b.port}`),
            redirect: rule.filters?.find((f: Any) => f.type === "RequestRedirect")?.requestRedirect,
          })),
        ),
      );
      const consoleListeners = gateway.spec.listeners.filter((l: Any) => l.name.startsWith("console-"));
      for (const { route } of routes) {
        const listener = gateway.spec.listeners.find((l: Any) => l.name === route.spec.parentRefs[0].sectionName);
        const expected = consoleListeners.includes(listener) ? listener.hostname : hostname;
        assert.deepEqual(route.spec.hostnames, [expected], `${route.metadata.name}: its listener's hostname`);
        assert.ok(route.spec.parentRefs.every((p: Any) => p.name === gateway.metadata.name));
      }
      const served = routes.filter((r) => r.route.spec.parentRefs.some((p: Any) => p.sectionName === https.name));
      const to = (path: string) => served.find((r) => r.path === path)?.backends;
      for (const path of ["/api", "/track", "/media"]) assert.deepEqual(to(path), ["delivery-api:80"], path);
      assert.deepEqual(to("/external"), ["geo-ingest:80"]);
      assert.deepEqual(
        served.map((r) => r.path).sort(),
        ["/api", "/external", "/media", "/track"],
        "nothing else is public",
      );
      // The services' port 80 is their public one ("http"); the operator API is on delivery-api-ops only.
      for (const route of served) assert.ok(!route.backends.some((b: string) => b.startsWith("delivery-api-ops")));
      // The console has a hostname of its own, over TLS, where everything goes to it.
      const consoleHttps = consoleListeners.find((l: Any) => l.protocol === "HTTPS");
      assert.equal(consoleHttps.tls.mode, "Terminate");
      assert.notEqual(consoleHttps.hostname, hostname);
      const consoleServed = routes.filter((r) =>
        r.route.spec.parentRefs.some((p: Any) => p.sectionName === consoleHttps.name),
      );
      assert.deepEqual(
        consoleServed.map((r) => [r.path, r.backends]),
        [["/", ["console:80"]]],
      );
      // Plain HTTP only redirects to HTTPS.
      const plain = routes.filter((r) => !served.includes(r) && !consoleServed.includes(r));
      assert.ok(plain.length > 0 && plain.every((r) => r.redirect?.scheme === "https" && r.backends.length === 0));
    });

    test("one tracker's positions reach one geo-ingest replica: consistent hashing on the source address", () => {
      const [policy] = of(objects, "BackendTrafficPolicy");
      assert.deepEqual(policy.spec.targetRefs, [
        { group: "gateway.networking.k8s.io", kind: "HTTPRoute", name: "geo-ingest" },
      ]);
      assert.equal(policy.spec.loadBalancer.type, "ConsistentHash");
      assert.equal(policy.spec.loadBalancer.consistentHash.type, "SourceIP");
      // The route it names is the one serving /external.
      const route = of(objects, "HTTPRoute").find((r) => r.metadata.name === "geo-ingest");
      assert.equal(route.spec.rules[0].matches[0].path.value, "/external");
    });

    test("only the Gateway's Envoy pods reach the services' public ports", () => {
      for (const name of ["console", "delivery-api", "geo-ingest"]) {
        const policy = of(objects, "NetworkPolicy").find((p) => p.metadata.name === name);
        const fromGateway = policy.spec.ingress.find((rule: Any) =>
          rule.from.some((peer: Any) => peer.podSelector?.matchLabels?.["gateway.envoyproxy.io/owning-gateway-name"]),
        );
        assert.deepEqual(fromGateway.from[0].podSelector.matchLabels, {
          "gateway.envoyproxy.io/owning-gateway-name": "dos",
          "gateway.envoyproxy.io/owning-gateway-namespace": "dos",
        });
      }
    });

    test("every Deployment connects to NATS over TLS as its own user, its password from its own Secret", () => {
      assert.match(common.data.NATS_URL, /^tls:\/\//);
      for (const deployment of deployments) {
        const name = deployment.metadata.name;
        const pod = deployment.spec.template.spec;
        const [container] = pod.containers;
        const variable = (n: string) => container.env.find((v: Any) => v.name === n);
        assert.equal(variable("NATS_USER")?.value, name, `${name}: NATS_USER`);
        assert.deepEqual(variable("NATS_PASSWORD")?.valueFrom?.secretKeyRef, { name: `${name}-nats`, key: "password" });
        const caVolume = pod.volumes.find((v: Any) => v.secret?.secretName === "nats-ca");
        const mount = container.volumeMounts.find((m: Any) => m.name === caVolume?.name);
        assert.equal(`${mount?.mountPath}/ca.crt`, common.data.NATS_TLS_CA_FILE, `${name}: the NATS CA is mounted`);
      }
    });

    test("the console's System page reads every replica of each service: headless Services it may reach", () => {
      const config = configMap("console");
      const variables: Record<string, string> = {
        "delivery-api": "CONSOLE_SYSTEM_DELIVERY_API_URL",
        "geo-ingest": "CONSOLE_SYSTEM_GEO_INGEST_URL",
        pricing: "CONSOLE_SYSTEM_PRICING_URL",
        "webhook-dispatcher": "CONSOLE_SYSTEM_WEBHOOK_DISPATCHER_URL",
      };
      const consolePolicy = of(objects, "NetworkPolicy").find((p) => p.metadata.name === "console");
      for (const [name, variable] of Object.entries(variables)) {
        const url = new URL(config.data[variable]);
        const deployment = deployments.find((d) => d.metadata.name === name);
        const port = deployment.spec.template.spec.containers[0].ports.find(
          (p: Any) => p.name === "http",
        ).containerPort;
        // The port the pods listen on: a headless Service's DNS answers are the pods' own addresses.
        assert.equal(Number(url.port), port, `${variable}: the pods' http port`);
        const headless = of(objects, "Service").find((s) => s.metadata.name === url.hostname);
        assert.ok(headless, `${variable}: Service ${url.hostname}`);
        assert.equal(headless.spec.clusterIP, "None", `${url.hostname} is headless: one address per pod`);
        assert.equal(headless.spec.publishNotReadyAddresses, true, `${url.hostname}: a pod not ready is read too`);
        assert.ok(
          selects(headless.spec.selector, deployment.spec.template.metadata.labels),
          `${url.hostname}: its pods`,
        );
        const consoleLabels = { "app.kubernetes.io/name": "console", "app.kubernetes.io/component": "server" };
        const egress = consolePolicy.spec.egress.some(
          (rule: Any) =>
            rule.to.some(
              (peer: Any) =>
                peer.podSelector && selects(peer.podSelector.matchLabels, deployment.spec.template.metadata.labels),
            ) && rule.ports.some((p: Any) => p.port === port),
        );
        assert.ok(egress, `the console may reach ${name}:${port}`);
        const policy = of(objects, "NetworkPolicy").find((p) => p.metadata.name === name);
        const ingress = policy.spec.ingress.some(
          (rule: Any) =>
            rule.from.some((peer: Any) => peer.podSelector && selects(peer.podSelector.matchLabels, consoleLabels)) &&
            rule.ports.some((p: Any) => p.port === port),
        );
        assert.ok(ingress, `${name} admits the console on ${port}`);
      }
    });

    test("the operator API's port is served by a ClusterIP Service only, reachable from ops-cli pods and the console", () => {
      const api = deployments.find((d) => d.metadata.name === "delivery-api");
      const [container] = api.spec.template.spec.containers;
      const config = configMap("delivery-api");
      const opsPort = container.ports.find((p: Any) => p.name === "ops")?.containerPort;
      assert.equal(String(opsPort), config.data.API_OPS_PORT);
      const services_ = of(objects, "Service").filter((s) => s.spec.ports.some((p: Any) => p.targetPort === "ops"));
      assert.deepEqual(services_.map((s) => [s.metadata.name, s.spec.type]).sort(), [
        ["console-ops", "ClusterIP"],
        ["delivery-api-ops", "ClusterIP"],
      ]);
      const policy = of(objects, "NetworkPolicy").find((p) => p.metadata.name === "delivery-api");
      const opsRules = policy.spec.ingress.filter((rule: Any) => rule.ports.some((p: Any) => p.port === opsPort));
      assert.deepEqual(
        opsRules.map((rule: Any) => rule.from.map((peer: Any) => peer.podSelector?.matchLabels)),
        [
          [{ "app.kubernetes.io/name": "ops-cli" }],
          [{ "app.kubernetes.io/name": "console", "app.kubernetes.io/component": "server" }],
        ],
      );
      // The console's own operator port: from ops-cli pods only.
      const consolePolicy = of(objects, "NetworkPolicy").find((p) => p.metadata.name === "console");
      const consoleOps = consolePolicy.spec.ingress.filter((rule: Any) => rule.ports.some((p: Any) => p.port === 3006));
      assert.deepEqual(
        consoleOps.map((rule: Any) => rule.from.map((peer: Any) => peer.podSelector?.matchLabels)),
        [[{ "app.kubernetes.io/name": "ops-cli" }]],
      );
    });
  });
}

test("production runs streams with three replicas; staging with one", () => {
  const replicas = (overlay: string) =>
    (
      kustomize(join(k8s, overlay)).find(
        (o) => o.kind === "ConfigMap" && generatedName(o.metadata.name) === "dos-common",
      ) as Any
    ).data.NATS_STREAM_REPLICAS;
  assert.equal(replicas("overlays/production"), "3");
  assert.equal(replicas("overlays/staging"), "1");
});

describe("dependencies and observability", () => {
  const readYaml = (path: string): Any[] =>
    parseAllDocuments(readFileSync(join(root, "deploy", path), "utf8")).map((d) => d.toJS());

  test("the NATS chart's authorization is generated from the contracts: one user per service, with its permissions", () => {
    assert.equal(
      readFileSync(NATS_AUTHORIZATION_FILE, "utf8"),
      natsAuthorizationValues(),
      "run node scripts/nats-authorization.ts",
    );
    const [values] = readYaml("k8s/nats/authorization.values.yaml");
    const users = values.config.merge.authorization.users as Any[];
    for (const service of Object.values(SERVICE_NAMES)) {
      const user = users.find((u) => u.user === service);
      assert.deepEqual(user?.permissions, natsPermissions(service), service);
      // The password is the server's environment variable, filled from the Secret nats-users.
      const variable = /^<< \$([A-Z_]+) >>$/.exec(user.password)?.[1] as string;
      assert.deepEqual(values.container.env[variable]?.valueFrom?.secretKeyRef, { name: "nats-users", key: service });
    }
    const geoIngest = users.find((u) => u.user === "geo-ingest").permissions;
    assert.ok(
      !geoIngest.publish.allow.some((s: string) => s.startsWith("delivery.")),
      "geo-ingest publishes no delivery event",
    );
    // The live map: the console reads geo-ingest's latest positions and nothing else of the bus.
    const consoleUser = users.find((u) => u.user === "console").permissions;
    assert.deepEqual(consoleUser.subscribe.allow, ["_INBOX.console.>", "geo.positions.>"]);
    assert.deepEqual(
      consoleUser.publish.allow.filter((s: string) => !s.startsWith("$JS.API.STREAM.") && s !== "$JS.API.INFO"),
      [],
      "the console publishes nothing but its topology check",
    );
  });

  test("NATS is a 3-node JetStream cluster with file storage, TLS for clients and routes", () => {
    const [values] = readYaml("k8s/nats/values.yaml");
    assert.equal(values.config.cluster.enabled, true);
    assert.equal(values.config.cluster.replicas, 3);
    assert.equal(values.config.jetstream.enabled, true);
    assert.equal(values.config.jetstream.fileStore.pvc.enabled, true);
    assert.equal(values.config.nats.tls.enabled, true);
    assert.equal(values.config.cluster.tls.enabled, true);
  });

  test("the database and monitoring objects are valid against their kinds' schemas (the CNPG Cluster only on a cluster)", () => {
    const objects = [
      ...kustomize(join(k8s, "database")),
      ...kustomize(join(k8s, "database", "restore")),
      ...kustomize(join(root, "deploy", "monitoring")),
    ];
    for (const object of objects) {
      // No schema here for the Cluster (deploy/k8s/schemas/README.md): a server-side dry run checks it.
      if (object.kind === "Cluster") continue;
      assert.doesNotThrow(() => validateObject(object), key(object));
    }
  });

  test("TimescaleDB runs on CloudNativePG from an image pinned by digest, backed up by the Barman Cloud Plugin", () => {
    const objects = kustomize(join(k8s, "database"));
    const one = (kind: string) => objects.find((o) => o.kind === kind) as Any;
    const cluster = one("Cluster");
    assert.equal(cluster.apiVersion, "postgresql.cnpg.io/v1");
    assert.equal(cluster.spec.instances, 3);
    assert.equal(cluster.spec.imageName, undefined, "the image comes from the catalog, by digest");
    const catalog = one("ImageCatalog");
    assert.equal(cluster.spec.imageCatalogRef.name, catalog.metadata.name);
    const image = catalog.spec.images.find((i: Any) => i.major === cluster.spec.imageCatalogRef.major).image;
    assert.match(image, /^docker\.io\/timescale\/timescaledb-ha@sha256:[0-9a-f]{64}$/);
    assert.ok(cluster.spec.postgresql.shared_preload_libraries.includes("timescaledb"));
    // Backups through the plugin only: the in-tree barmanObjectStore is deprecated since CNPG 1.26.
    assert.equal(cluster.spec.backup, undefined);
    const store = one("ObjectStore");
    assert.match(store.spec.configuration.destinationPath, /^s3:\/\//);
    assert.deepEqual(cluster.spec.plugins, [
      {
        name: "barman-cloud.cloudnative-pg.io",
        isWALArchiver: true,
        parameters: { barmanObjectName: store.metadata.name },
      },
    ]);
    const backup = one("ScheduledBackup");
    assert.equal(backup.spec.cluster.name, cluster.metadata.name);
    assert.equal(backup.spec.method, "plugin");
    assert.equal(backup.spec.pluginConfiguration.name, "barman-cloud.cloudnative-pg.io");
    const roles = cluster.spec.managed.roles.map((r: Any) => r.passwordSecret.name).sort();
    assert.deepEqual(roles, services.map((s) => `${s}-db`).sort());

    // The restore drill recovers from those backups and never archives into them.
    const [restore] = kustomize(join(k8s, "database", "restore")) as Any[];
    const source = restore.spec.externalClusters.find((c: Any) => c.name === restore.spec.bootstrap.recovery.source);
    assert.deepEqual(source.plugin.parameters, {
      barmanObjectName: store.metadata.name,
      serverName: cluster.metadata.name,
    });
    const archive = restore.spec.plugins.find((p: Any) => p.isWALArchiver).parameters;
    assert.equal(archive.barmanObjectName, store.metadata.name);
    assert.notEqual(archive.serverName, cluster.metadata.name, "the drill archives under its own server name");
    assert.deepEqual(restore.spec.imageCatalogRef, cluster.spec.imageCatalogRef);
  });

  test("the NATS chart version is pinned", () => {
    const values = readFileSync(join(k8s, "nats", "values.yaml"), "utf8");
    assert.match(values, /helm upgrade --install nats nats\/nats --version \d+\.\d+\.\d+ /);
    assert.ok(
      readme.includes(`nats/nats --version ${/--version (\S+)/.exec(values)?.[1]}`),
      "the README installs the same version",
    );
  });

  test("kube-prometheus-stack picks the monitors up: its release label, a dashboard for the Grafana sidecar, absolute runbook links", () => {
    const objects = kustomize(join(root, "deploy", "monitoring"));
    for (const kind of ["PodMonitor", "PrometheusRule"]) {
      const [object] = of(objects, kind);
      // The chart's default selectors (…SelectorNilUsesHelmValues) match `release: <release name>`.
      assert.equal(object?.metadata.labels?.release, "kube-prometheus-stack", kind);
      assert.equal(object.metadata.namespace, "dos", kind);
    }
    const [monitor] = of(objects, "PodMonitor");
    assert.deepEqual(monitor.spec.selector.matchLabels, {
      "app.kubernetes.io/part-of": "delivery-ordering-service",
      "app.kubernetes.io/component": "server",
    });
    const dashboards = of(objects, "ConfigMap").filter((c) => c.metadata.labels?.grafana_dashboard === "1");
    assert.equal(dashboards.length, 1, "one ConfigMap for the sidecar");
    assert.equal(dashboards[0].metadata.namespace, "monitoring");
    const [json] = Object.values(dashboards[0].data) as string[];
    assert.deepEqual(
      JSON.parse(json as string),
      JSON.parse(readFileSync(join(root, "deploy", "monitoring", "dashboard.json"), "utf8")),
    );
    // Each runbook link is absolute and names a section of this README that exists.
    const anchors = new Set(
      [...readme.matchAll(/^#{2,3} (.+)$/gm)].map(([, title]) =>
        (title as string)
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, "")
          .replaceAll(" ", "-"),
      ),
    );
    const [rule] = of(objects, "PrometheusRule");
    for (const alert of rule.spec.groups.flatMap((g: Any) => g.rules)) {
      const url = new URL(alert.annotations.runbook_url);
      assert.equal(url.protocol, "https:", alert.alert);
      assert.match(url.pathname, /\/deploy\/README\.md$/, alert.alert);
      assert.ok(anchors.has(url.hash.slice(1)), `${alert.alert}: ${url.hash} is a section of deploy/README.md`);
    }
  });

  test("alerts cover error rate, latency, outbox age, consumer lag, dead letters, queued database connections and readiness", () => {
    const [rule] = readYaml("monitoring/alerts.yaml");
    const exprs = rule.spec.groups.flatMap((g: Any) => g.rules.map((r: Any) => r.expr)).join("\n");
    for (const metric of [
      "http_request_duration_seconds_count",
      "http_request_duration_seconds_bucket",
      "outbox_oldest_age_seconds",
      "webhook_consumer_pending_messages",
      "webhook_dead_letters_total",
      "db_connection_waiters",
      "kube_deployment_status_replicas_available",
    ]) {
      assert.ok(exprs.includes(metric), metric);
    }
    const dashboard = JSON.parse(readFileSync(join(root, "deploy", "monitoring", "dashboard.json"), "utf8"));
    const used = JSON.stringify(dashboard.panels);
    for (const metric of [
      "deliveries_created_total",
      "geo_positions_total",
      "webhook_attempts_total",
      "pricing_quote_duration_seconds",
    ]) {
      assert.ok(used.includes(metric), `dashboard: ${metric}`);
      assert.ok(readme.includes(`\`${metric}\``), `README lists ${metric}`);
    }
  });
});
