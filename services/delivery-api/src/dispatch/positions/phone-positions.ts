/**
 * Positions from the messenger's phone (operator API): stored for the messenger's active round,
 * where a fresh tracker position still wins (positions.service.ts). Without an active round
 * nothing is stored, like the geolocation interface.
 */
import { parseTimestamp } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { requireMessenger } from "../messengers/messengers.service.ts";
import { activeRoundIdsOf } from "../rounds/rounds.repository.ts";
import type { PositionsService } from "./positions.service.ts";

const FUTURE_TOLERANCE_MS = 120_000;

/** stored: the position reached at least one active round of the messenger. */
export const PhonePositionRecorded = Type.Object(
  { stored: Type.Boolean(), round_ids: Type.Array(Type.Integer()) },
  { title: "PhonePositionRecorded" },
);

export async function recordPhonePosition(
  db: Kysely<DB>,
  positions: PositionsService,
  messengerId: number,
  body: { latitude: number; longitude: number; timestamp?: string | null },
): Promise<Static<typeof PhonePositionRecorded>> {
  await requireMessenger(db, messengerId);
  const now = new Date();
  const recordedAt = body.timestamp ? parseTimestamp(body.timestamp) : now;
  if (!recordedAt) throw unprocessable("timestamp is not a real date");
  if (recordedAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
    throw unprocessable("timestamp must not be more than 120 seconds in the future");
  }
  const roundIds = await activeRoundIdsOf(db, "messenger_id", messengerId);
  for (const roundId of roundIds) {
    await positions.record({
      roundId,
      source: "phone",
      latitude: body.latitude,
      longitude: body.longitude,
      recordedAt,
    });
  }
  return { stored: roundIds.length > 0, round_ids: roundIds };
}
