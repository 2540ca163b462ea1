/**
 * The test-environment courier: for a test account that opted in, every new delivery is taken
 * through dispatch by a simulated messenger on a clock of `step_ms` per step: scheduled in a
 * round of its own, pickup started and completed (picked_up), dropoff started (tracking link;
 * no SMS leaves a test account), positions moving from the pickup place to the dropoff place,
 * then delivered — or failed when the recipient's name contains `[fail]`. Every step goes
 * through the same services as the operator's, so events and webhooks are the real ones.
 */
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { DB } from "../../db/database.ts";
import type { PositionsService } from "../positions/positions.service.ts";
import type { RoundsService } from "../rounds/rounds.service.ts";
import type { TasksService } from "../rounds/tasks.service.ts";
import {
  advanceSimulation,
  claimDueSimulation,
  enqueueSimulatedDeliveries,
  simulatedMessengerId,
  simulatedTaskPlaces,
} from "./simulator.repository.ts";

const FAIL_MARKER = "[fail]";
/** A 1×1 PNG: the simulated signature and picture. */
const SIMULATED_PROOF_PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);
const MOVES = 5;
const LAST_STEP = 4 + MOVES;

export interface SimulatorDeps {
  db: Kysely<DB>;
  rounds: RoundsService;
  tasks: TasksService;
  positions: PositionsService;
  logger: Logger;
  tickMs: number;
}

export function createCourierSimulator(deps: SimulatorDeps) {
  const { db, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;

  async function step(row: { delivery_id: number; round_id: number | null; step: number }) {
    const tasks = await simulatedTaskPlaces(db, row.delivery_id);
    const pickup = tasks.find((t) => t.kind === "pickup");
    const dropoff = tasks.find((t) => t.kind === "dropoff");
    if (!pickup || !dropoff) return { done: true };
    let roundId = row.round_id;
    if (row.step === 0) {
      const round = await deps.rounds.create({
        messenger_id: await simulatedMessengerId(db),
        delivery_ids: [row.delivery_id],
        simulated: true,
      });
      roundId = round.id;
      await deps.rounds.start(round.id);
    } else if (row.step === 1) await deps.tasks.start(pickup.id);
    else if (row.step === 2) await deps.tasks.complete(pickup.id, { notes: "Simulated pickup" });
    else if (row.step === 3) await deps.tasks.start(dropoff.id);
    if (row.step >= 3 && row.step < LAST_STEP && roundId !== null) {
      const from = pickup.latitude !== null && pickup.longitude !== null ? pickup : dropoff;
      if (
        from.latitude !== null &&
        from.longitude !== null &&
        dropoff.latitude !== null &&
        dropoff.longitude !== null
      ) {
        const f = (row.step - 3) / MOVES;
        await deps.positions.record({
          roundId,
          source: "phone",
          latitude: from.latitude + (dropoff.latitude - from.latitude) * f,
          longitude: from.longitude + (dropoff.longitude - from.longitude) * f,
          recordedAt: new Date(),
        });
      }
    }
    if (row.step === LAST_STEP) {
      if (dropoff.recipient_name.toLowerCase().includes(FAIL_MARKER)) {
        await deps.tasks.fail(dropoff.id, {
          failure_reason: "recipient absent (simulated)",
          notes: "Simulated failure",
        });
      } else {
        // Proof as a real messenger leaves it, so integrators see every completion field filled.
        await deps.tasks.upload(dropoff.id, "signature", "image/png", SIMULATED_PROOF_PNG);
        await deps.tasks.upload(dropoff.id, "picture", "image/png", SIMULATED_PROOF_PNG);
        await deps.tasks.complete(dropoff.id, { accepted_by: dropoff.recipient_name, notes: "Simulated delivery" });
      }
      if (roundId !== null) await deps.rounds.end(roundId);
    }
    return { done: row.step >= LAST_STEP, roundId };
  }

  async function runDue() {
    await enqueueSimulatedDeliveries(db);
    for (;;) {
      const advanced = await db.transaction().execute(async (trx) => {
        const row = await claimDueSimulation(trx);
        if (!row) return false;
        let result: { done: boolean; roundId?: number | null };
        try {
          result = await step(row);
        } catch (error) {
          // A client may cancel or change the delivery meanwhile: the simulation of it stops.
          logger.info({ err: error, delivery: row.delivery_id, step: row.step }, "courier simulation stopped");
          result = { done: true };
        }
        await advanceSimulation(trx, row.delivery_id, {
          step: row.step + 1,
          round_id: result.roundId ?? row.round_id,
          done: result.done,
          next_at: new Date(Date.now() + row.step_ms),
        });
        return true;
      });
      if (!advanced) return;
    }
  }

  const tick = () => {
    pass ??= runDue()
      .catch((error) => logger.warn({ err: error }, "courier simulator pass failed"))
      .finally(() => {
        pass = undefined;
      });
  };

  return {
    runDue,
    start() {
      timer ??= setInterval(tick, deps.tickMs);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await pass;
    },
  };
}
