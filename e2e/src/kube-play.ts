/**
 * deploy/k8s's production rendering, turned into what `podman kube play` can run on this machine
 * against its PostgreSQL and NATS. What changes, and why (deploy/README.md, "What runs here"):
 *   - only the migration Jobs (as Pods: kube play has no Job) and the Deployments are played;
 *     Services, autoscalers, policies, the Gateway and monitoring need a cluster;
 *   - host network, each service on free loopback ports (PORT and API_OPS_PORT overridden, container
 *     ports dropped: podman maps none on the host network), since the machine's PostgreSQL and NATS
 *     listen on loopback only;
 *   - the ConfigMaps' values are given as each container's env (envFrom resolved here); Secrets are
 *     replaced by test values and their CA volumes dropped: the machine's PostgreSQL and NATS have
 *     neither TLS nor the services' users, so DATABASE_URL and NATS_URL point at them directly;
 *   - NATS_STREAM_REPLICAS=1: the machine runs one NATS server, not a cluster of three; the
 *     console's e-mail adapter is `log`: no SMTP server here (e-mail lies outside the system);
 *   - each pod's /tmp emptyDir gets a name of its own (podman 4.3 makes it a named volume);
 *   - probes are dropped: podman runs an httpGet probe as curl inside the container, and the image
 *     has none; the test polls /readyz itself as the readiness probe does; preStop likewise;
 *   - the images are the ones `npm run images` built; names carry a suffix so runs do not collide.
 * Everything else is played as rendered: the image's command, securityContext (uid 65532,
 * read-only root filesystem, no capabilities), the /tmp emptyDir, resources.
 */
import type { K8sObject } from "./k8s.ts";

type Container = {
  name: string;
  image: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  volumeMounts?: Array<{ name: string }>;
  ports?: unknown;
  [field: string]: unknown;
};
type PodSpec = {
  containers: Container[];
  volumes?: Array<{ name: string; emptyDir?: unknown }>;
  [field: string]: unknown;
};
type Workload = K8sObject & { spec: { template: { metadata?: unknown; spec: PodSpec }; [field: string]: unknown } };

export interface LocalPlayOptions {
  /** The local image of each service, by the service's name. */
  images: Record<string, string>;
  /** Variables every container gets over the rendered ones (database, NATS, test secrets). */
  env: Record<string, string>;
  /** Variables of one service over those (its ports). */
  serviceEnv: Record<string, Record<string, string>>;
  /** Appended to every object's name. */
  suffix: string;
}

export interface LocalPlay {
  /** One Pod per migration Job, to run to completion first. */
  migrations: K8sObject[];
  deployments: K8sObject[];
}

const LOCAL_OVERRIDES = {
  // One NATS server here, not a cluster of three: streams get one replica.
  NATS_STREAM_REPLICAS: "1",
  // No SMTP server here (e-mail lies outside the system): the console writes its e-mails to its log.
  CONSOLE_MAIL_ADAPTER: "log",
};

export function localPlay(rendered: K8sObject[], options: LocalPlayOptions): LocalPlay {
  const configMaps = new Map(
    rendered
      .filter((object) => object.kind === "ConfigMap")
      .map((object) => [object.metadata.name, (object as { data?: Record<string, string> }).data ?? {}]),
  );
  const serviceOf = (object: K8sObject) => object.metadata.labels?.["app.kubernetes.io/name"] as string;
  const local = (object: Workload): PodSpec => {
    const service = serviceOf(object);
    const image = options.images[service];
    if (!image) throw new Error(`${object.kind} ${object.metadata.name}: no image built for ${service}`);
    const spec = object.spec.template.spec;
    // podman 4.3 plays an emptyDir as a named volume: one per pod, not one /tmp shared by all.
    const own = (volume: string) => `${volume}-${object.metadata.name}-${options.suffix}`;
    const volumes = (spec.volumes ?? [])
      .filter((volume) => volume.emptyDir !== undefined)
      .map((volume) => ({ ...volume, name: own(volume.name) }));
    const kept = new Set(volumes.map((volume) => volume.name));
    return {
      ...spec,
      hostNetwork: true,
      volumes,
      containers: spec.containers.map((container) => {
        const {
          livenessProbe: _liveness,
          readinessProbe: _readiness,
          startupProbe: _startup,
          lifecycle: _lifecycle,
          envFrom: _envFrom,
          ports: _ports,
          ...rest
        } = container;
        const values: Record<string, string> = {};
        for (const source of container.envFrom ?? []) {
          const name = source.configMapRef?.name;
          const data = name === undefined ? undefined : configMaps.get(name);
          if (!data) throw new Error(`${object.metadata.name}: envFrom names no rendered ConfigMap (${name})`);
          Object.assign(values, data);
        }
        for (const variable of container.env ?? [])
          if (variable.value !== undefined) values[variable.name] = variable.value;
        Object.assign(values, LOCAL_OVERRIDES, options.env, options.serviceEnv[service]);
        for (const secret of ["NATS_USER", "NATS_PASSWORD", "NATS_TLS_CA_FILE", "DATABASE_USER", "DATABASE_PASSWORD"]) {
          if (!(secret in options.env)) delete values[secret];
        }
        return {
          ...rest,
          image,
          env: Object.entries(values).map(([name, value]) => ({ name, value })),
          volumeMounts: (container.volumeMounts ?? [])
            .map((mount) => ({ ...mount, name: own(mount.name) }))
            .filter((mount) => kept.has(mount.name)),
        };
      }),
    };
  };
  const named = (object: K8sObject) => ({
    ...object.metadata,
    name: `${object.metadata.name}-${options.suffix}`,
    namespace: undefined,
    annotations: undefined,
  });
  const workloads = (kind: string) => rendered.filter((object) => object.kind === kind) as Workload[];
  return {
    migrations: workloads("Job").map((job) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: named(job),
      spec: { ...local(job), restartPolicy: "Never" },
    })),
    deployments: workloads("Deployment").map((deployment) => ({
      ...deployment,
      metadata: named(deployment),
      spec: { ...deployment.spec, template: { ...deployment.spec.template, spec: local(deployment) } },
    })),
  };
}
