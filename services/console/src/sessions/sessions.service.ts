/**
 * Sessions: a random cookie (only its SHA-256 is stored) that ends at sign-out, after
 * CONSOLE_SESSION_IDLE_MINUTES unused or CONSOLE_SESSION_MAX_MINUTES after sign-in. Each session
 * calls delivery-api's client API as its user with an API token of its own, minted at sign-in
 * through the operator API and revoked when the session is over (by the sweep, which retries
 * while delivery-api does not answer), so the client API's own rules, isolation and rate
 * limit apply to everything the console does for the user.
 *
 * A staff person's session (kind staff) holds a staff token instead, minted through the operator
 * API (`console session <id>`, expiring with the session at the latest) and revoked the same way:
 * everything the person does goes through the operator API as them, roles and audit included.
 */
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import { deleteOldFailures, deleteOldLinks } from "../people/people.repository.ts";
import { newToken, type Sealer, sha256 } from "../secrets.ts";
import { deleteOldStaffRows } from "../staff/staff.repository.ts";
import {
  deleteSession,
  endSessionByCookie,
  endSessions,
  endSessionsBeyond,
  findLiveSession,
  findLiveStaffSession,
  insertSession,
  insertStaffSession,
  listOverSessions,
  liveSessionIds,
  reserveSessionId,
  staffSessionTokenIds,
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

export interface StaffSessionUser {
  sessionId: number;
  /** delivery-api's staff id. */
  staffId: number;
  email: string;
  /** The staff token of this session, unsealed: the bearer of its operator API calls. */
  staffToken: string;
}

/** A session's last use is written at most this often: not on every request of a busy page. */
const TOUCH_EVERY_MS = 60_000;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 100;
const HOUR_SECONDS = 3600;
/**
 * Live sessions per person: each holds an API token in delivery-api, so signing in again and
 * again must not pile them up. Beyond it, the oldest session ends.
 */
const MAX_SESSIONS_PER_USER = 10;

export interface Sessions {
  /** Starts a session for the user; the cookie value is returned once and stored hashed. */
  start(user: { id: number; account_id: number; api_user_id: number }): Promise<{ cookie: string; expiresAt: Date }>;
  /** Starts a staff session for a person who gave their password and a second factor. */
  startStaff(staffId: number): Promise<{ cookie: string; expiresAt: Date }>;
  /** The live shop session of this cookie (a staff session is none). */
  resolve(cookie: string | undefined): Promise<SessionUser | undefined>;
  /** The live staff session of this cookie (a shop session is none). */
  resolveStaff(cookie: string | undefined): Promise<StaffSessionUser | undefined>;
  end(sessionId: number): Promise<void>;
  endAll(userId: number): Promise<void>;
  endAllStaff(staffId: number): Promise<void>;
  /** Ends the session this cookie names, whatever its kind: a new sign-in in the browser replaces it. */
  endByCookie(cookie: string): Promise<void>;
  /** Ids of the staff tokens the person's console sessions call with (not their personal tokens). */
  staffTokenIds(staffId: number): Promise<number[]>;
  /** Which of these sessions are still live. */
  liveOf(sessionIds: number[]): Promise<Set<number>>;
  /** Calls `listener` after this replica ends sessions (sign-out, disabling, a newer sign-in): open streams check theirs. */
  onEnded(listener: () => void): void;
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
  const endedListeners: Array<() => void> = [];
  /** After sessions ended: the listeners, then the sweep that revokes their tokens. */
  const ended = () => {
    for (const listener of endedListeners) listener();
    void sessions.sweep().catch(() => undefined);
  };

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
      const over = await endSessionsBeyond(db, "user_id", user.id, MAX_SESSIONS_PER_USER);
      if (over.some((result) => Number(result.numUpdatedRows) > 0)) ended();
      return { cookie, expiresAt: row.expires_at };
    },
    async startStaff(staffId) {
      const id = await reserveSessionId(db);
      const expiresAt = new Date(Date.now() + config.CONSOLE_SESSION_MAX_MINUTES * 60_000);
      // The token dies with the session even if the sweep never got to revoke it.
      const minted = await ops.createStaffToken(staffId, `console session ${id}`, expiresAt);
      const cookie = newToken();
      await insertStaffSession(db, {
        id,
        token_sha256: sha256(cookie),
        staff_id: staffId,
        expires_at: expiresAt,
        api_token_id: minted.id,
        api_token_sealed: sealer.seal(minted.token),
      });
      const over = await endSessionsBeyond(db, "staff_id", staffId, MAX_SESSIONS_PER_USER);
      if (over.some((result) => Number(result.numUpdatedRows) > 0)) ended();
      return { cookie, expiresAt };
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
    async resolveStaff(cookie) {
      if (!cookie || cookie.length > 100) return undefined;
      const row = await findLiveStaffSession(db, sha256(cookie), idle);
      if (!row) return undefined;
      if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) await touchSession(db, row.id);
      return {
        sessionId: row.id,
        staffId: row.staff_id,
        email: row.email,
        staffToken: sealer.open(row.api_token_sealed),
      };
    },
    async end(sessionId) {
      await endSessions(db, "id", sessionId);
      ended();
    },
    async endAll(userId) {
      await endSessions(db, "user_id", userId);
      ended();
    },
    async endAllStaff(staffId) {
      await endSessions(db, "staff_id", staffId);
      ended();
    },
    async endByCookie(cookie) {
      if (cookie.length > 100) return;
      await endSessionByCookie(db, sha256(cookie));
      ended();
    },
    staffTokenIds: (staffId) => staffSessionTokenIds(db, staffId),
    liveOf: (sessionIds) => liveSessionIds(db, sessionIds, idle),
    onEnded(listener) {
      endedListeners.push(listener);
    },
    /** Revokes the API tokens of sessions that are over and deletes them; old failures and links too. */
    sweep() {
      const run = sweeping.then(async () => {
        const over = await listOverSessions(db, idle, SWEEP_BATCH);
        let done = 0;
        for (const session of over) {
          try {
            if (session.kind === "staff") await ops.revokeStaffToken(session.staff_id as number, session.api_token_id);
            else
              await ops.revokeToken(session.account_id as number, session.api_user_id as number, session.api_token_id);
            await deleteSession(db, session.id);
            done++;
          } catch (error) {
            logger.warn({ err: error, session_id: session.id }, "session's API token not revoked yet; retried later");
            break;
          }
        }
        // Kept for the longest window any of them is counted over: reset e-mails and staff second
        // factors are counted per hour (deleting after the sign-in window lifted those limits).
        await deleteOldFailures(db, Math.max(config.CONSOLE_SIGN_IN_WINDOW_SECONDS, HOUR_SECONDS));
        await deleteOldLinks(db);
        await deleteOldStaffRows(db);
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
