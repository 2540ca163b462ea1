/**
 * What the dispatch board and the round page share: the day and time zone they ask about, their
 * query keys, the words for a round's and a task's state, and the proof upload.
 */
import type { components } from "@dos/api-types/ops-v1";
import { ApiError, csrfHeader } from "../../bff.ts";
import { errorsOf } from "../ops-api.ts";

export type Round = components["schemas"]["Round"];
export type RoundTask = Round["tasks"][number];

/** Every dispatch read: a change anywhere on the board or a round refreshes them all. */
export const DISPATCH = ["staff", "dispatch"];

/** The browser's time zone (an IANA name): the day on the board is a day of it. */
export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** Today in the browser's time zone, YYYY-MM-DD. */
export function today(): string {
  // en-CA writes a date as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", { timeZone: timeZone() }).format(new Date());
}

/** A round's state in words: an active round has started. */
export const ROUND_STATES: Record<Round["status"], string> = {
  planned: "planned",
  active: "started",
  ended: "ended",
};

export const TASK_STATES: Record<RoundTask["state"], string> = {
  to_do: "to do",
  started: "started",
  completed: "completed",
  failed: "failed",
};

export const KINDS: Record<RoundTask["kind"], string> = { pickup: "pickup", dropoff: "drop-off" };

/** How a round is named in the board's select: `Round #4 · Paul · VAN-1`. */
export const roundLabel = (round: {
  id: number;
  messenger: { name: string };
  vehicle: { external_id: string } | null;
}) => `Round #${round.id} · ${round.messenger.name} · ${round.vehicle?.external_id ?? "no vehicle"}`;

/** The task as a button's name carries it: `Delivery #12, drop-off`. */
export const taskName = (task: { delivery_id: number; kind: RoundTask["kind"] }) =>
  `Delivery #${task.delivery_id}, ${KINDS[task.kind]}`;

/** The proof images delivery-api takes, and its upload limit (PROOF_IMAGE_MAX_BYTES, which the console forwards). */
const PROOF_TYPES = ["image/jpeg", "image/png"];
const PROOF_MAX_BYTES = 5 * 1024 * 1024;

/**
 * Uploads a proof picture of a task as its bytes (the operator API takes the image itself, not
 * JSON; the console forwards it as it is). A refusal is an ApiError with the API's messages.
 */
export async function uploadProofPicture(taskId: number, file: File): Promise<void> {
  if (!PROOF_TYPES.includes(file.type)) throw new ApiError(422, ["proof photo must be a JPEG or PNG image"]);
  if (file.size > PROOF_MAX_BYTES) throw new ApiError(422, ["proof photo must be 5 MB at most"]);
  const response = await fetch(`/ops/v1/tasks/${taskId}/pictures`, {
    method: "POST",
    headers: { "content-type": file.type, accept: "application/json", ...csrfHeader() },
    body: file,
    credentials: "same-origin",
  });
  if (!response.ok) {
    const body = await response.json().catch(() => undefined);
    throw new ApiError(response.status, errorsOf(body, response.status));
  }
}
