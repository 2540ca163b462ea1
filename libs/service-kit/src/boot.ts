/**
 * The common boot of a service's main.ts: logger, PostgreSQL pool, NATS connection and
 * topology, the app the service builds, listen, and shutdown on SIGTERM in the right order.
 */
import { ensureTopology, inboxPrefix, type ServiceName } from "@dos/contracts";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createDatabase, type Database } from "./db.ts";
import { type InternalListener, listenInternal } from "./internal-listener.ts";
import { createLifecycle, exitOnSignals, type Lifecycle } from "./lifecycle.ts";
import { createLogger } from "./logger.ts";
import { connectNats, type NatsCredentialsConfig, type NatsHandle, natsCredentials } from "./nats.ts";
import { initTracing, type Tracing, type TracingConfig } from "./tracing.ts";

/** The variables boot needs; every service's config has them (see commonConfig). */
export interface BootConfig extends TracingConfig, NatsCredentialsConfig {
  DATABASE_URL: string;
  NATS_URL: string;
  NATS_NAMESPACE: string;
  NATS_STREAM_REPLICAS: number;
  LOG_LEVEL: string;
  HOST: string;
  PORT: number;
  SHUTDOWN_TIMEOUT_MS: number;
  DATABASE_POOL_SIZE: number;
}

export interface ServiceDeps<C extends BootConfig> {
  config: C;
  logger: Logger;
  lifecycle: Lifecycle;
  database: Database<unknown>;
  nats: NatsHandle;
}

export interface BuiltService {
  app: FastifyInstance;
  /** Starts background work (consumers, relays) once the app listens. */
  start?(): Promise<void>;
  /** Stops background work after the HTTP server has closed, before NATS drains. */
  stop?(): Promise<void>;
  /** Port of the internal listener (see createHttpApp's internalPrefix); omitted: none. */
  internalPort?: number;
}

export interface BootOptions<C extends BootConfig> {
  service: ServiceName;
  /** The schema the service owns in PostgreSQL. */
  schema: string;
  config: C;
  /** Background JetStream publishing on a NATS connection of its own (NatsHandle.publisher). */
  separatePublisher?: boolean;
  build(deps: ServiceDeps<C>): Promise<BuiltService>;
}

/** Boots the service; a failure to boot is one log line and exit code 1, never a stack on stderr. */
export async function bootService<C extends BootConfig>(options: BootOptions<C>): Promise<void> {
  // Tracing first: the instrumentations hook what is created afterwards, the logger included.
  const tracing = await initTracing(options.service, options.config);
  const logger = createLogger(options.service, options.config.LOG_LEVEL);
  try {
    await boot(options, logger, tracing);
  } catch (error) {
    logger.fatal({ error: (error as Error).message }, "boot failed");
    logger.flush?.();
    process.exit(1);
  }
}

async function boot<C extends BootConfig>(options: BootOptions<C>, logger: Logger, tracing: Tracing): Promise<void> {
  const { config } = options;
  process.on("unhandledRejection", (error) => logger.error({ err: error }, "unhandled rejection"));
  const lifecycle = createLifecycle(logger);
  exitOnSignals(lifecycle, logger, config.SHUTDOWN_TIMEOUT_MS);
  if (tracing.enabled) logger.info("tracing on");

  const database = createDatabase({
    url: config.DATABASE_URL,
    schema: options.schema,
    poolSize: config.DATABASE_POOL_SIZE,
    applicationName: options.service,
  });
  await database.check().catch((error: Error) => {
    throw new Error(`cannot reach PostgreSQL (DATABASE_URL): ${error.message}`);
  });
  const nats = await connectNats(config.NATS_URL, options.service, logger, {
    ...natsCredentials(config),
    // Replies to this service arrive under its own prefix, which only its NATS user may read.
    inboxPrefix: inboxPrefix(options.service, config.NATS_NAMESPACE),
    separatePublisher: options.separatePublisher,
  }).catch((error: Error) => {
    throw new Error(`cannot reach NATS (NATS_URL): ${error.message}`);
  });
  const topology = await ensureTopology(nats.nc, {
    namespace: config.NATS_NAMESPACE,
    replicas: config.NATS_STREAM_REPLICAS,
    service: options.service,
  });
  logger.info(topology, "NATS topology ensured");

  const built = await options.build({ config, logger, lifecycle, database, nats });
  let internal: InternalListener | undefined;
  lifecycle.onShutdown("http", () => Promise.all([built.app.close(), internal?.close()]));
  if (built.stop) lifecycle.onShutdown("background work", () => built.stop?.());
  lifecycle.onShutdown("nats", () => nats.drain());
  lifecycle.onShutdown("postgres", () => database.close());
  if (tracing.enabled) lifecycle.onShutdown("tracing", () => tracing.shutdown());

  await built.app.listen({ host: config.HOST, port: config.PORT });
  if (built.internalPort !== undefined) {
    internal = await listenInternal(built.app, { host: config.HOST, port: built.internalPort });
  }
  await built.start?.();
  logger.info({ url: `http://${config.HOST}:${config.PORT}`, internal_url: internal?.url }, `${options.service} ready`);
}
