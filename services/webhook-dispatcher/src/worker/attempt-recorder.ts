/**
 * Group commit of attempt records: the attempts that finish while a batch is being written are
 * written together in the next transaction, so the cost per attempt falls as the load rises.
 * A failed write (a deadlock, the database away) is retried; after the last try the attempt is
 * left unrecorded and its message is sent again once its lease ends.
 */
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../db/database.ts";
import { type AttemptInput, type RecordedAttempt, recordAttempts } from "./attempts.repository.ts";

const MAX_BATCH = 256;
const MAX_TRIES = 5;

export interface AttemptRecorder {
  /** Resolves once the attempt is recorded (null when it could not be). */
  record(input: AttemptInput): Promise<RecordedAttempt | null>;
}

export function createAttemptRecorder(options: {
  db: Kysely<DB>;
  logger: Logger;
  disableAfterMs: number;
}): AttemptRecorder {
  const waiting: Array<{ input: AttemptInput; done: (result: RecordedAttempt | null) => void }> = [];
  let writing = false;

  async function writeAll() {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, MAX_BATCH);
      const results = await writeBatch(batch.map((entry) => entry.input));
      batch.forEach((entry, i) => {
        entry.done(results?.[i] ?? null);
      });
    }
    writing = false;
  }

  async function writeBatch(inputs: AttemptInput[]): Promise<RecordedAttempt[] | null> {
    for (let tries = 1; ; tries++) {
      try {
        return await options.db.transaction().execute((tx) => recordAttempts(tx, inputs, options.disableAfterMs));
      } catch (error) {
        if (tries >= MAX_TRIES) {
          options.logger.error(
            { err: error, attempts: inputs.length },
            "cannot record webhook attempts; they will be re-sent",
          );
          return null;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * tries));
      }
    }
  }

  return {
    record(input) {
      return new Promise((done) => {
        waiting.push({ input, done });
        if (!writing) void writeAll();
      });
    },
  };
}
