/**
 * Tracking SMS: one per task start, recorded in `sms_messages` in the transaction of the start
 * (the unique task_id makes it once per task, whatever retries happen), then sent after commit
 * and retried from the table when the provider fails. In a test-environment account the row is
 * written as `suppressed` and nothing is ever sent (spec: no text messages in the test
 * environment).
 */
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB, Db } from "../../db/database.ts";
import { claimDueSms, insertSmsOnce, updateSms } from "./sms.repository.ts";
import type { SmsSender } from "./sms.sender.ts";

const MAX_ATTEMPTS = 5;

export interface TrackingSms {
  taskId: number;
  to: string;
  senderName: string;
  trackingUrl: string;
  environment: "production" | "test";
}

function trackingSmsText(senderName: string, trackingUrl: string) {
  return `${senderName}: your delivery is on its way. Follow it here: ${trackingUrl}`;
}

/** Records the SMS of a task start; call inside the start's transaction. */
export async function recordTrackingSms(db: Db, sms: TrackingSms) {
  await insertSmsOnce(db, {
    task_id: sms.taskId,
    recipient: sms.to,
    sender: sms.senderName,
    body: trackingSmsText(sms.senderName, sms.trackingUrl),
    status: sms.environment === "test" ? "suppressed" : "pending",
  });
}

export interface SmsDispatcher {
  /** Sends every due pending SMS; returns how many left. */
  sendDue(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export function createSmsDispatcher(options: {
  db: Kysely<DB>;
  sender: SmsSender;
  logger: Logger;
  retryMs: number;
}): SmsDispatcher {
  const { db, sender, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<number> | undefined;

  async function sendOne(): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const row = await claimDueSms(trx);
      if (!row) return false;
      try {
        await sender.send({ to: row.recipient, from: row.sender, text: row.body });
        await updateSms(trx, row.id, { status: "sent", sent_at: new Date(), attempts: row.attempts + 1 });
      } catch (error) {
        const attempts = row.attempts + 1;
        logger.warn({ err: error, sms: row.id, attempts }, "SMS not accepted by the provider");
        await updateSms(trx, row.id, {
          attempts,
          last_error: String((error as Error).message ?? error).slice(0, 500),
          status: attempts >= MAX_ATTEMPTS ? "failed" : "pending",
          next_attempt_at: new Date(Date.now() + options.retryMs),
        });
      }
      return true;
    });
  }

  async function sendDue() {
    let sent = 0;
    while (await sendOne()) sent++;
    return sent;
  }

  const run = () => {
    pass ??= sendDue()
      .catch((error) => {
        logger.warn({ err: error }, "SMS pass failed");
        return 0;
      })
      .finally(() => {
        pass = undefined;
      });
    return pass;
  };

  return {
    sendDue: run,
    start() {
      timer ??= setInterval(run, Math.min(options.retryMs, 5000));
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await pass;
    },
  };
}
