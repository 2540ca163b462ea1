/**
 * Sessions: a random cookie (only its SHA-256 is stored) that ends at sign-out, after
 * CONSOLE_SESSION_IDLE_MINUTES unused or CONSOLE_SESSION_MAX_MINUTES after sign-in. Each session
 * calls delivery-api's client API as its user with an API token of its own, minted at sign-in
 * through the operator API and revoked when the session is over (by the sweep, which retries
 * while delivery-api does not answer), so the client API's own rules, isolation and rate
 * limit apply to everything the console does for the user.
 */
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import { deleteOldFailures, deleteOldLinks } from "../people/people.repository.ts";
import { newToken, type Sealer, sha256 } from "../secrets.ts";
import {
  deleteSession,
  endSessions,
  endSessionsBeyond,
  findLiveSession,
  insertSession,
  listOverSessions,
  touchSession,
} from "./sessions.repository.ts";

export interface SessionUser {
  sessionId: number;
  userId: number;
  email: string;
  accountId: number;
  apiUserId: number;
  /** The client API token of this session, unsealed. */
  apiToken: string;
}

/** A session's last use is written at most this often: not on every request of a busy page. */
const TOUCH_EVERY_MS = 60_000;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 100;
/**
 * Live sessions per person: each holds an API token in delivery-api, so signing in again and
 * again must not pile them up. Beyond it, the oldest session ends.
 */
export const MAX_SESSIONS_PER_USER = 10;

export interface Sessions {
  /** Starts a session for the user; the cookie value is returned once and stored hashed. */
  start(user: { id: number; account_id: number; api_user_id: number }): Promise<{ cookie: string; expiresAt: Date }>;
  resolve(cookie: string | undefined): Promise<SessionUser | undefined>;
  end(sessionId: number): Promise<void>;
  endAll(userId: number): Promise<void>;
  sweep(): Promise<number>;
  startSweeping(): void;
  stopSweeping(): Promise<void>;
}

export function createSessions(deps: {
  db: Db;
  ops: OpsClient;
  sealer: Sealer;
  config: Config;
  logger: Logger;
}): Sessions {
  const { db, ops, sealer, config, logger } = deps;
  const idle = config.CONSOLE_SESSION_IDLE_MINUTES;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();

  const sessions: Sessions = {
    async start(user) {
      const minted = await ops.createToken(user.account_id, user.api_user_id);
      const cookie = newToken();
      const row = await insertSession(db, {
        token_sha256: sha256(cookie),
        user_id: user.id,
        expires_at: new Date(Date.now() + config.CONSOLE_SESSION_MAX_MINUTES * 60_000),
        api_token_id: minted.id,
        api_token_sealed: sealer.seal(minted.token),
      });
      const ended = await endSessionsBeyond(db, user.id, MAX_SESSIONS_PER_USER);
      if (ended.some((result) => Number(result.numUpdatedRows) > 0)) void sessions.sweep().catch(() => undefined);
      return { cookie, expiresAt: row.expires_at };
    },
    async resolve(cookie) {
      if (!cookie || cookie.length > 100) return undefined;
      const row = await findLiveSession(db, sha256(cookie), idle);
      if (!row) return undefined;
      if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) await touchSession(db, row.id);
      return {
        sessionId: row.id,
        userId: row.user_id,
        email: row.email,
        accountId: row.account_id,
        apiUserId: row.api_user_id,
        apiToken: sealer.open(row.api_token_sealed),
      };
    },
    async end(sessionId) {
      await endSessions(db, "id", sessionId);
      void sessions.sweep().catch(() => undefined);
    },
    async endAll(userId) {
      await endSessions(db, "user_id", userId);
      void sessions.sweep().catch(() => undefined);
    },
    /** Revokes the API tokens of sessions that are over and deletes them; old failures and links too. */
    sweep() {
      const run = sweeping.then(async () => {
        const over = await listOverSessions(db, idle, SWEEP_BATCH);
        let done = 0;
        for (const session of over) {
          try {
            await ops.revokeToken(session.account_id, session.api_user_id, session.api_token_id);
            await deleteSession(db, session.id);
            done++;
          } catch (error) {
            logger.warn({ err: error, session_id: session.id }, "session's API token not revoked yet; retried later");
            break;
          }
        }
        await deleteOldFailures(db, config.CONSOLE_SIGN_IN_WINDOW_SECONDS);
        await deleteOldLinks(db);
        return done;
      });
      sweeping = run.catch(() => undefined);
      return run;
    },
    startSweeping() {
      timer ??= setInterval(() => {
        sessions.sweep().catch((error) => logger.warn({ err: error }, "session sweep failed"));
      }, SWEEP_EVERY_MS);
      timer.unref();
    },
    async stopSweeping() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await sweeping;
    },
  };
  return sessions;
}
