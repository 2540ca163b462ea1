/** SQL of the live map's snapshot. */
import type { Db } from "../../db/database.ts";

/**
 * The active rounds that have a vehicle, by vehicle id after `afterVehicleId`: the vehicle, the
 * messenger, the round's latest tracker and phone positions, and its next task (the first, in
 * order, not completed, of a delivery under way, as the ETA is computed for). One statement:
 * the active rounds come in vehicle order from the unique index of active rounds per vehicle,
 * and every other row is an index lookup.
 */
export function listLiveRounds(db: Db, afterVehicleId: number, limit: number) {
  return db
    .selectFrom("rounds as r")
    .innerJoin("vehicles as v", "v.id", "r.vehicle_id")
    .innerJoin("messengers as m", "m.id", "r.messenger_id")
    .leftJoin("round_positions as tp", (join) => join.onRef("tp.round_id", "=", "r.id").on("tp.source", "=", "tracker"))
    .leftJoin("round_positions as pp", (join) => join.onRef("pp.round_id", "=", "r.id").on("pp.source", "=", "phone"))
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("round_tasks as rt")
          .innerJoin("tasks as t", "t.id", "rt.task_id")
          .innerJoin("deliveries as d", "d.id", "t.delivery_id")
          .select(["t.id as task_id", "t.delivery_id", "t.kind", "t.slot_ending_at", "t.eta"])
          .whereRef("rt.round_id", "=", "r.id")
          .where("t.completed_at", "is", null)
          .where("d.status", "in", ["scheduled", "picked_up"])
          .orderBy("rt.position")
          .limit(1)
          .as("nt"),
      (join) => join.onTrue(),
    )
    .select([
      "v.id as vehicle_id",
      "v.external_id",
      "v.label",
      "r.id as round_id",
      "r.started_at",
      "m.id as messenger_id",
      "m.name as messenger_name",
      "tp.latitude as tracker_latitude",
      "tp.longitude as tracker_longitude",
      "tp.recorded_at as tracker_recorded_at",
      "pp.latitude as phone_latitude",
      "pp.longitude as phone_longitude",
      "pp.recorded_at as phone_recorded_at",
      "nt.task_id",
      "nt.delivery_id",
      "nt.kind",
      "nt.slot_ending_at",
      "nt.eta",
    ])
    .where("r.status", "=", "active")
    .where("r.vehicle_id", ">", afterVehicleId)
    .orderBy("r.vehicle_id")
    .limit(limit)
    .execute();
}
