/**
 * `npm run openapi -w @dos/delivery-api`: writes the client and operator API documents to
 * libs/contracts/openapi/, the files consumers build from (the console's typed client, the
 * operator CLI). test/openapi-documents.test.ts fails when they differ from what the routes say.
 *
 * The app is built, never listened on or started: it connects to NATS (building subscribes to
 * connection status) but publishes nothing and runs no query.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { connectNats, createDatabase, createLifecycle, createLogger, loadConfig } from "@dos/service-kit";
import { testInfra } from "@dos/service-kit/testing";
import type { FastifyInstance } from "fastify";
import { SCHEMA } from "../../migrations/index.ts";
import { buildApp } from "../app.ts";
import { CONFIG_PREFIX, configSchema } from "../config.ts";

export const DOCUMENTS_DIR = fileURLToPath(new URL("../../../../libs/contracts/openapi/", import.meta.url));
export const DOCUMENT_FILES = { client: "client-v2.json", ops: "ops-v1.json" } as const;

/** Both documents of a built app, serialised as the files hold them. */
export function renderDocuments(app: FastifyInstance): Record<keyof typeof DOCUMENT_FILES, string> {
  const render = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;
  return { client: render(app.swagger()), ops: render(app.opsSwagger()) };
}

/**
 * Builds the app as the tests do (NATS_URL and DATABASE_URL, else the local defaults) without
 * starting it: the routes are registered, nothing is published and no query runs.
 */
async function documentsOfTheRoutes() {
  const infra = testInfra();
  const config = loadConfig(configSchema, {
    prefix: CONFIG_PREFIX,
    env: {
      DATABASE_URL: infra.databaseUrl,
      NATS_URL: infra.natsUrl,
      API_OPS_TOKEN: "document-generation-never-serves-a-request",
      LOG_LEVEL: "silent",
    },
  });
  const logger = createLogger("delivery-api-openapi", "silent");
  const database = createDatabase({
    url: config.DATABASE_URL,
    schema: SCHEMA,
    applicationName: "delivery-api-openapi",
  });
  const nats = await connectNats(config.NATS_URL, "delivery-api-openapi", logger);
  try {
    const built = await buildApp({ config, logger, lifecycle: createLifecycle(logger), database, nats });
    await built.app.ready();
    const documents = renderDocuments(built.app);
    await built.app.close();
    return documents;
  } finally {
    await nats.nc.close();
    await database.pool.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const documents = await documentsOfTheRoutes();
  for (const [name, file] of Object.entries(DOCUMENT_FILES)) {
    writeFileSync(`${DOCUMENTS_DIR}${file}`, documents[name as keyof typeof DOCUMENT_FILES]);
    process.stdout.write(`wrote libs/contracts/openapi/${file}\n`);
  }
}
