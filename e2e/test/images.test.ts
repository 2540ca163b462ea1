/**
 * The images of `npm run images` (deploy/images/Dockerfile), built here with podman (installed by
 * scripts/images.ts as root when missing) and run as the manifests run them: read-only root
 * filesystem, uid 65532, no capabilities, against the machine's PostgreSQL and NATS. Built once per
 * run; podman's layer cache makes a rebuild of unchanged sources take seconds.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  createTestDatabase,
  randomNamespace,
  randomSuffix,
  type TestDatabase,
  testInfra,
  waitFor,
} from "@dos/service-kit/testing";
import { stringify } from "yaml";
import { type BuiltImage, buildImages, IMAGES_DIR, imageServices } from "../../scripts/images.ts";
import { listenEnv, PORTS_PER_SYSTEM, root, SERVICES } from "../../scripts/system.ts";
import { call, clientHeaders, outboundDelivery, type SeededAccount, seedDemo } from "../src/client.ts";
import { podman, podmanResult, removeContainers, runToCompletion, startContainer } from "../src/containers.ts";
import { type K8sObject, k8sDir, kustomize } from "../src/k8s.ts";
import { localPlay } from "../src/kube-play.ts";
import { freePortRange } from "../src/ports.ts";
import { systemEnv } from "../src/system.ts";
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from "../src/webhook-receiver.ts";

// A fresh machine builds the two bases and every image from nothing, beside the other tests.
const BUILD_TIMEOUT_MS = 20 * 60_000;

let images: BuiltImage[];
before(
  async () => {
    images = await buildImages({ say: (line) => process.stderr.write(`images: ${line}\n`) });
  },
  { timeout: BUILD_TIMEOUT_MS },
);

/** The test system's variables on the machine's own NATS (no users there), in a namespace of its own. */
function machineSystemEnv(databaseUrl: string, basePort: number): Record<string, string> {
  return systemEnv({ databaseUrl, basePort, natsUrl: testInfra().natsUrl, natsNamespace: randomNamespace() });
}

function manifest(service: string): { dependencies?: Record<string, string>; scripts: { start: string } } {
  return JSON.parse(readFileSync(path.join(root, "services", service, "package.json"), "utf8"));
}

/** The command of the service's migration Job, as deploy/k8s renders it. */
function migrateCommand(rendered: K8sObject[], service: string): string[] {
  const job = rendered.find((object) => object.kind === "Job" && object.metadata.name === `${service}-migrate`) as
    | { spec: { template: { spec: { containers: Array<{ command: string[] }> } } } }
    | undefined;
  assert.ok(job, `deploy/k8s has a migration Job for ${service}`);
  return job.spec.template.spec.containers[0]?.command ?? [];
}

function specOf(service: string) {
  const spec = SERVICES.find((s) => s.name === service);
  assert.ok(spec, `services/${service} has an image but no port in scripts/system.ts SERVICES`);
  return spec;
}

describe("the images", () => {
  test("every workspace under services/ has one, with a CycloneDX SBOM of its production dependencies", () => {
    assert.deepEqual(
      images.map((image) => image.service),
      imageServices().map((service) => service.name),
    );
    const rootManifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
    for (const image of images) {
      const sbom = JSON.parse(readFileSync(image.sbom, "utf8"));
      assert.equal(sbom.bomFormat, "CycloneDX", image.service);
      const names = new Set((sbom.components as Array<{ name: string; group?: string }>).map(qualifiedName));
      for (const dependency of Object.keys(manifest(image.service).dependencies ?? {})) {
        if (dependency.startsWith("@dos/")) continue;
        assert.ok(names.has(dependency), `${image.service}: ${dependency} in its SBOM`);
      }
      // The repository's build tools (types may also come with a production dependency).
      for (const tool of Object.keys(rootManifest.devDependencies).filter((name) => !name.startsWith("@types/"))) {
        assert.ok(!names.has(tool), `${image.service}: the repository's ${tool} is not in its SBOM`);
      }
    }
  });

  test("each runs as uid 65532 with Node's V8 flags from its start script, and cannot write its root filesystem", () => {
    for (const image of images) {
      const config = JSON.parse(podman(["image", "inspect", "--format", "{{json .Config}}", image.ref]));
      assert.equal(config.User, "65532:65532", image.service);
      assert.deepEqual(config.Entrypoint, ["/nodejs/bin/node"], image.service);
      const probe = runToCompletion(
        image.ref,
        [
          "/nodejs/bin/node",
          ...(config.Cmd as string[]).filter((arg) => arg.startsWith("--env-file")),
          "--input-type=module",
          "--eval",
          `import { writeFileSync } from "node:fs";
           let write = "written";
           try { writeFileSync("/app/probe", "x"); } catch (error) { write = error.code; }
           writeFileSync("/tmp/probe", "x");
           process.stdout.write(JSON.stringify({ uid: process.getuid(), nodeOptions: process.env.NODE_OPTIONS ?? "", write }));`,
        ],
        {},
      );
      const flags = manifest(image.service).scripts.start.split(/\s+/).slice(1, -1).join(" ");
      assert.deepEqual(JSON.parse(probe), { uid: 65532, nodeOptions: flags, write: "EROFS" }, image.service);
    }
  });

  test("delivery-api's carries the operator CLI that the runbook runs in the cluster", () => {
    const image = images.find((built) => built.service === "delivery-api");
    assert.ok(image);
    const help = runToCompletion(image.ref, ["/nodejs/bin/node", "tools/ops-cli/dist/src/ops.js", "help"], {});
    assert.match(help, /accounts/);
  });

  describe("booted against the machine's PostgreSQL and NATS", () => {
    let database: TestDatabase;
    const containers: string[] = [];
    let env: Record<string, string>;
    let basePort: number;
    before(async () => {
      database = await createTestDatabase("images");
      basePort = await freePortRange(PORTS_PER_SYSTEM);
      env = machineSystemEnv(database.url, basePort);
    });
    after(async () => {
      removeContainers(containers);
      await database?.drop();
    });

    test("each applies its migrations with the Job's command, then answers /readyz with 200", async () => {
      const rendered = kustomize(path.join(k8sDir, "base"));
      for (const image of images) runToCompletion(image.ref, migrateCommand(rendered, image.service), env);
      const suffix = randomSuffix();
      for (const image of images) {
        const spec = specOf(image.service);
        containers.push(
          startContainer(image.ref, `dos-${image.service}-${suffix}`, { ...env, ...listenEnv(spec, basePort, env) }),
        );
      }
      for (const image of images) {
        const url = `http://127.0.0.1:${basePort + specOf(image.service).offset}/readyz`;
        const ready = await waitFor(
          async () => {
            const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
            return response.status === 200 && ((await response.json()) as { checks: Record<string, string> });
          },
          60_000,
          `${image.service}'s /readyz`,
        ).catch((error: Error) => {
          const logs = podmanResult(["logs", "--tail", "30", `dos-${image.service}-${suffix}`]).output;
          throw new Error(`${error.message}\n${logs}`);
        });
        assert.equal(ready.checks.postgres, "ok", image.service);
        assert.equal(ready.checks.nats, "ok", image.service);
      }
    });
  });
});

describe("podman kube play of deploy/k8s's production rendering (e2e/src/kube-play.ts says what differs)", () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver | undefined;
  let suffix = "";
  const playFiles: string[] = [];
  after(async () => {
    // kube play names a Deployment's pods itself (<name>-pod-<n>); every name carries the suffix.
    const pods = suffix ? podman(["pod", "ps", "--filter", `name=${suffix}`, "--format", "{{.Name}}"]) : "";
    if (pods) podmanResult(["pod", "rm", "--force", "--time", "15", ...pods.split("\n")]);
    for (const file of playFiles) rmSync(file, { force: true });
    const volumes = suffix ? podman(["volume", "ls", "--filter", `name=${suffix}`, "--format", "{{.Name}}"]) : "";
    if (volumes) podmanResult(["volume", "rm", "--force", ...volumes.split("\n")]);
    await receiver?.close();
    await database?.drop();
  });

  test("migrations first, every pod ready, and a delivery created through the pods reaches a webhook receiver", {
    timeout: 5 * 60_000,
  }, async () => {
    database = await createTestDatabase("kubeplay");
    const basePort = await freePortRange(PORTS_PER_SYSTEM);
    const env = machineSystemEnv(database.url, basePort);
    suffix = randomSuffix();
    const play = localPlay(kustomize(path.join(k8sDir, "overlays", "production")), {
      images: Object.fromEntries(images.map((image) => [image.service, image.ref])),
      env,
      serviceEnv: Object.fromEntries(SERVICES.map((spec) => [spec.name, listenEnv(spec, basePort, env)])),
      suffix,
    });
    assert.deepEqual(
      play.deployments.map((deployment) => deployment.metadata.labels?.["app.kubernetes.io/name"]).sort(),
      images.map((image) => image.service),
      "a Deployment per image",
    );
    mkdirSync(IMAGES_DIR, { recursive: true });
    const playFile = (name: string, objects: K8sObject[]) => {
      const file = path.join(IMAGES_DIR, `kube-play-${suffix}-${name}.yaml`);
      writeFileSync(file, objects.map((object) => stringify(object)).join("---\n"));
      playFiles.push(file);
      return file;
    };

    podman(["kube", "play", playFile("migrations", play.migrations)]);
    for (const pod of play.migrations) {
      const container = `${pod.metadata.name}-migrate`;
      const code = podman(["wait", container]);
      assert.equal(code, "0", `${pod.metadata.name}: ${podmanResult(["logs", "--tail", "30", container]).output}`);
    }

    podman(["kube", "play", playFile("deployments", play.deployments)]);
    for (const spec of SERVICES) {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${basePort + spec.offset}/readyz`)).status === 200,
        90_000,
        `${spec.name}'s pod ready`,
      ).catch((error: Error) => {
        const pod = podman(["pod", "ps", "--filter", `name=${spec.name}-${suffix}`, "--format", "{{.Name}}"]);
        throw new Error(`${error.message}\n${podmanResult(["pod", "logs", "--tail", "20", pod]).output}`);
      });
    }

    const [account] = seedDemo({ env }).accounts as [SeededAccount];
    const api = `http://127.0.0.1:${basePort}`;
    receiver = await startWebhookReceiver();
    await registerReceiver(api, clientHeaders(account), receiver);
    const created = await call(`${api}/api/v2/deliveries`, "POST", clientHeaders(account), outboundDelivery(account));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: number }).id;
    const arrived = receiver;
    const event = await waitFor(
      async () => arrived.received.find((arrival) => arrival.event.delivery_id === id),
      60_000,
      "the delivery's webhook",
    );
    assert.equal(event.event.payload.delivery.id, id);
  });
});

function qualifiedName(component: { name: string; group?: string }): string {
  return component.group ? `${component.group}/${component.name}` : component.name;
}
