/**
 * Rounds: a messenger, optionally a vehicle, and an ordered list of delivery tasks. Assigning a
 * delivery schedules it; starting and ending a round changes its vehicle's FLEET entry, written
 * through the fleet outbox in the same transaction.
 */
import { DeliveryStatus, formatTimestamp, Timestamp } from "@dos/contracts";
import { isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB, Db } from "../../db/database.ts";
import type { DeliveriesPort } from "../deliveries.port.ts";
import { lockVehicles, recordFleetState } from "../fleet/fleet.repository.ts";
import { findMessenger } from "../messengers/messengers.repository.ts";
import {
  appendRoundTasks,
  findRound,
  insertRound,
  listRoundIds,
  lockRound,
  removeRoundTasks,
  roundOfDelivery,
  roundTasks,
  updateRound,
} from "./rounds.repository.ts";
import type { RoundStatus } from "./rounds.table.ts";

const stamp = (date: Date | null) => (date ? formatTimestamp(date) : null);

const Stamp = Type.Union([Timestamp, Type.Null()]);
/** A round as the operator API shows it, its tasks in order. */
export const Round = Type.Object(
  {
    id: Type.Integer(),
    status: Type.Union(["planned", "active", "ended"].map((status) => Type.Literal(status))),
    messenger_id: Type.Integer(),
    vehicle_id: Type.Union([Type.Integer(), Type.Null()]),
    started_at: Stamp,
    ended_at: Stamp,
    created_at: Timestamp,
    tasks: Type.Array(
      Type.Object({
        position: Type.Integer(),
        task_id: Type.Integer(),
        delivery_id: Type.Integer(),
        kind: Type.Union([Type.Literal("pickup"), Type.Literal("dropoff")]),
        delivery_status: DeliveryStatus,
        started_at: Stamp,
        completed_at: Stamp,
        eta: Stamp,
      }),
    ),
  },
  { title: "Round" },
);

export async function roundView(db: Db, id: number): Promise<Static<typeof Round>> {
  const round = await findRound(db, id);
  if (!round) throw notFound(`round ${id}`);
  const tasks = await roundTasks(db, id);
  return {
    id: round.id,
    status: round.status,
    messenger_id: round.messenger_id,
    vehicle_id: round.vehicle_id,
    started_at: stamp(round.started_at),
    ended_at: stamp(round.ended_at),
    created_at: formatTimestamp(round.created_at),
    tasks: tasks.map((t) => ({
      position: t.position,
      task_id: t.task_id,
      delivery_id: t.delivery_id,
      kind: t.kind,
      delivery_status: t.status,
      started_at: stamp(t.started_at),
      completed_at: stamp(t.completed_at),
      eta: stamp(t.eta),
    })),
  };
}
export type RoundView = Awaited<ReturnType<typeof roundView>>;

export interface NewRound {
  messenger_id: number;
  vehicle_id?: number | null;
  delivery_ids?: number[];
  simulated?: boolean;
}

export interface RoundsServiceDeps {
  db: Kysely<DB>;
  deliveries: DeliveriesPort;
}

/** Rounds listed at most (newest first). */
const LIST_LIMIT = 500;

export function createRoundsService({ db, deliveries }: RoundsServiceDeps) {
  async function requireRound(trx: Db, id: number) {
    const round = await lockRound(trx, id);
    if (!round) throw notFound(`round ${id}`);
    return round;
  }

  /** Schedules a saved delivery and appends its tasks (pickup first) to the round. */
  async function assign(trx: Db, roundId: number, deliveryId: number) {
    const delivery = await deliveries.lock(trx, deliveryId);
    const current = await roundOfDelivery(trx, deliveryId);
    if (current) throw unprocessable(`delivery ${deliveryId} is already in round ${current.round_id}`);
    await delivery.changeStatus({ status: "scheduled" });
    const order = ["pickup", "dropoff"];
    const tasks = [...delivery.tasks].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
    await appendRoundTasks(
      trx,
      roundId,
      tasks.map((t) => t.id),
    );
  }

  return {
    async create(body: NewRound): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const messenger = await findMessenger(trx, body.messenger_id);
        if (!messenger) throw unprocessable(`messenger_id ${body.messenger_id} is not a messenger`);
        if (body.vehicle_id != null && (await lockVehicles(trx, [body.vehicle_id])).length === 0) {
          throw unprocessable(`vehicle_id ${body.vehicle_id} is not a vehicle`);
        }
        const roundId = await insertRound(trx, {
          messenger_id: body.messenger_id,
          vehicle_id: body.vehicle_id ?? null,
          simulated: body.simulated,
        });
        for (const deliveryId of new Set(body.delivery_ids ?? [])) await assign(trx, roundId, deliveryId);
        return roundView(trx, roundId);
      });
    },

    async list(status: RoundStatus | undefined) {
      const ids = await listRoundIds(db, status, LIST_LIMIT);
      return Promise.all(ids.map((id) => roundView(db, id)));
    },

    get: (id: number) => roundView(db, id),

    async addDelivery(roundId: number, deliveryId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status === "ended") throw unprocessable(`round ${roundId} has ended; deliveries cannot be added`);
        await assign(trx, roundId, deliveryId);
        return roundView(trx, roundId);
      });
    },

    /** Takes a delivery none of whose tasks started out of the round: it is saved again. */
    async removeDelivery(roundId: number, deliveryId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        await requireRound(trx, roundId);
        const delivery = await deliveries.lock(trx, deliveryId);
        const current = await roundOfDelivery(trx, deliveryId);
        if (current?.round_id !== roundId) throw notFound(`delivery ${deliveryId} in round ${roundId}`);
        if (delivery.tasks.some((t) => t.started_at)) {
          throw unprocessable(`delivery ${deliveryId} cannot leave round ${roundId}: a task of it has started`);
        }
        await removeRoundTasks(
          trx,
          delivery.tasks.map((t) => t.id),
        );
        await delivery.changeStatus({ status: "saved" });
        return roundView(trx, roundId);
      });
    },

    async start(roundId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status !== "planned")
          throw unprocessable(`round ${roundId} is ${round.status}; only a planned round starts`);
        if (round.vehicle_id !== null) await lockVehicles(trx, [round.vehicle_id]);
        try {
          await updateRound(trx, roundId, { status: "active", started_at: new Date() });
        } catch (error) {
          if (isUniqueViolation(error, "rounds_one_active_per_vehicle")) {
            throw unprocessable(`vehicle ${round.vehicle_id} is already in an active round`);
          }
          if (isUniqueViolation(error, "rounds_one_active_per_messenger")) {
            throw unprocessable(`messenger ${round.messenger_id} is already in an active round`);
          }
          throw error;
        }
        if (round.vehicle_id !== null) await recordFleetState(trx, [round.vehicle_id]);
        return roundView(trx, roundId);
      });
    },

    /**
     * Ends an active round. Refused while goods are on board or a task is under way; deliveries
     * whose tasks never started leave the round and are saved again, for another round.
     */
    async end(roundId: number): Promise<RoundView> {
      return db.transaction().execute(async (trx) => {
        const round = await requireRound(trx, roundId);
        if (round.status !== "active")
          throw unprocessable(`round ${roundId} is ${round.status}; only an active round ends`);
        const tasks = await roundTasks(trx, roundId);
        const open = tasks.filter((t) => t.status === "scheduled" || t.status === "picked_up");
        const busy = open.find((t) => t.status === "picked_up" || (t.started_at && !t.completed_at));
        if (busy) {
          throw unprocessable(
            `round ${roundId} cannot end: delivery ${busy.delivery_id} is ${busy.status} and under way`,
          );
        }
        for (const deliveryId of new Set(open.map((t) => t.delivery_id))) {
          const delivery = await deliveries.lock(trx, deliveryId);
          await removeRoundTasks(
            trx,
            delivery.tasks.map((t) => t.id),
          );
          await delivery.changeStatus({ status: "saved" });
        }
        if (round.vehicle_id !== null) await lockVehicles(trx, [round.vehicle_id]);
        await updateRound(trx, roundId, { status: "ended", ended_at: new Date() });
        if (round.vehicle_id !== null) await recordFleetState(trx, [round.vehicle_id]);
        return roundView(trx, roundId);
      });
    },
  };
}
export type RoundsService = ReturnType<typeof createRoundsService>;
