/**
 * Keeps the auth guard's trusted tokens up to date with the database: every active token at
 * start, then those created since (on any replica) every `intervalMs`. A token an operator
 * just created is thus trusted within that delay, before its holder ever used it here, and a
 * flood on its e-mail or address does not hold its first request back.
 */
import type { Logger } from "@dos/service-kit";
import type { Db } from "../db/database.ts";
import { listActiveTokensAfter } from "./auth.repository.ts";
import type { AuthGuard } from "./auth-guard.ts";

/** Active tokens created after `afterId` (at most `limit`, oldest first): ids and hashes. */
export type ActiveTokensAfter = (
  afterId: number,
  limit: number,
) => Promise<Array<{ id: number; token_sha256: Buffer }>>;

/** Tokens read per query; a backlog is read in several. */
const PAGE = 10_000;

export function createTrustedTokens(options: {
  db: Db;
  guard: AuthGuard;
  intervalMs: number;
  logger: Logger;
  /** Which tokens: the client API's by default; the operator API passes its staff tokens'. */
  list?: ActiveTokensAfter;
}) {
  const { db, guard, logger } = options;
  const list: ActiveTokensAfter = options.list ?? ((afterId, limit) => listActiveTokensAfter(db, afterId, limit));
  let lastId = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const load = async () => {
    for (;;) {
      const rows = await list(lastId, PAGE);
      guard.trust(rows.map((row) => row.token_sha256));
      lastId = rows.at(-1)?.id ?? lastId;
      if (rows.length < PAGE) return;
    }
  };
  const tick = () => {
    running = load()
      .catch((error: unknown) => logger.warn({ err: error }, "trusted tokens not refreshed"))
      .finally(() => {
        running = undefined;
      });
  };

  return {
    async start() {
      await load();
      timer = setInterval(() => running ?? tick(), options.intervalMs).unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
