/**
 * A messenger's progress on a task of an active round: start (tracking link by SMS, tracking_url
 * appears), proof uploads, completion and failure. Status changes go through
 * applyStatusChange, so the state machine and the outbox event are the deliveries feature's.
 */
import { randomBytes } from "node:crypto";
import type { Delivery } from "@dos/contracts";
import { notFound, unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import { findAccountById } from "../../accounts/accounts.repository.ts";
import type { DB, Db } from "../../db/database.ts";
import type { DeliveriesPort } from "../deliveries.port.ts";
import type { PositionsService } from "../positions/positions.service.ts";
import { recordTrackingSms } from "../sms/sms.outbox.ts";
import { deliveryIdOfTask, roundOfTask } from "./rounds.repository.ts";
import type { MediaKind } from "./rounds.table.ts";
import {
  countPictures,
  deleteSignature,
  findTaskMedia,
  insertTaskMedia,
  listTaskMedia,
} from "./task-media.repository.ts";

/** A stored proof image of a dropoff: its public URL, which the delivery's task lists. */
export const TaskProof = Type.Object(
  {
    task_id: Type.Integer(),
    kind: Type.Union([Type.Literal("signature"), Type.Literal("picture")]),
    url: Type.String(),
  },
  { title: "TaskProof" },
);

const MAX_PICTURES = 10;
/** A proof image's id: 18 random bytes in base64url, and its type's extension. */
const MEDIA_ID = /^[A-Za-z0-9_-]{24}\.(png|jpg)$/;

/** A stored proof image (its type and bytes), or a 404: the public `/media/{id}` and the operator's. */
export async function proofImage(db: Db, id: string) {
  // Checked before the query: a NUL byte or a huge id would make PostgreSQL fail the request.
  if (!MEDIA_ID.test(id)) throw notFound("image");
  const row = await findTaskMedia(db, id);
  if (!row) throw notFound("image");
  return row;
}

export interface TasksServiceDeps {
  db: Kysely<DB>;
  deliveries: DeliveriesPort;
  positions: PositionsService;
  /** `<API_PUBLIC_URL>/media`: base of proof image URLs. */
  mediaBaseUrl: string;
  /** Called after a start committed: sends the SMS it recorded. */
  onSmsRecorded(): void;
}

export interface Completion {
  accepted_by?: string | null;
  notes?: string | null;
  completion_text?: string | null;
}

export function createTasksService(deps: TasksServiceDeps) {
  const { db } = deps;

  /** The task, its locked delivery and its round; refuses tasks outside an active round. */
  async function lockTask(trx: Db, taskId: number) {
    const deliveryId = await deliveryIdOfTask(trx, taskId);
    if (deliveryId === undefined) throw notFound(`task ${taskId}`);
    const delivery = await deps.deliveries.lock(trx, deliveryId);
    const task = delivery.tasks.find((t) => t.id === taskId);
    const round = await roundOfTask(trx, taskId);
    if (!task || !round) throw unprocessable(`task ${taskId} is in no round; assign its delivery to a round first`);
    if (round.status !== "active")
      throw unprocessable(`task ${taskId} is in round ${round.id}, which is ${round.status}`);
    return { delivery, task, round };
  }

  function requireUnderWay(task: { id: number; started_at: Date | null; completed_at: Date | null }) {
    if (!task.started_at) throw unprocessable(`task ${task.id} has not started; start it first`);
    if (task.completed_at) throw unprocessable(`task ${task.id} is already completed`);
  }

  return {
    async start(taskId: number): Promise<Delivery> {
      const delivery = await db.transaction().execute(async (trx) => {
        const { delivery, task, round } = await lockTask(trx, taskId);
        const status = delivery.status;
        const allowed = task.kind === "pickup" ? ["scheduled"] : ["scheduled", "picked_up"];
        if (!allowed.includes(status)) {
          throw unprocessable(`task ${taskId} cannot start: delivery ${delivery.id} is ${status}`);
        }
        if (task.started_at) throw unprocessable(`task ${taskId} has already started`);
        // tracking_url appears in the representation: clients learn it from this event.
        const view = await delivery.startTask(taskId);
        const trackingUrl = view[task.kind === "pickup" ? "pickup" : "dropoff"]?.tracking_url;
        // The task at the account's own default place is the client's: no SMS to itself.
        if (task.recipient_phone && trackingUrl && !task.at_default_place) {
          const account = await findAccountById(trx, delivery.accountId);
          if (!account) throw new Error(`account ${delivery.accountId} of delivery ${delivery.id} is missing`);
          await recordTrackingSms(trx, {
            taskId,
            to: task.recipient_phone,
            senderName: delivery.senderDisplayName ?? account.company_name,
            trackingUrl,
            environment: account.environment,
          });
        }
        await deps.positions.refreshEta(trx, round.id, { force: true });
        return view;
      });
      deps.onSmsRecorded();
      return delivery;
    },

    /** Stores a proof image of a dropoff under way; a signature replaces the previous one. */
    async upload(
      taskId: number,
      kind: MediaKind,
      contentType: "image/jpeg" | "image/png",
      bytes: Buffer,
    ): Promise<Static<typeof TaskProof>> {
      return db.transaction().execute(async (trx) => {
        const { task } = await lockTask(trx, taskId);
        if (task.kind !== "dropoff") throw unprocessable(`task ${taskId} is a pickup; proof belongs to the dropoff`);
        requireUnderWay(task);
        if (kind === "signature") {
          await deleteSignature(trx, taskId);
        } else if ((await countPictures(trx, taskId)) >= MAX_PICTURES) {
          throw unprocessable(`task ${taskId} already has ${MAX_PICTURES} pictures`);
        }
        const id = `${randomBytes(18).toString("base64url")}.${contentType === "image/png" ? "png" : "jpg"}`;
        await insertTaskMedia(trx, { id, task_id: taskId, kind, content_type: contentType, bytes });
        return { task_id: taskId, kind, url: `${deps.mediaBaseUrl}/${id}` };
      });
    },

    /** Completes a task: the pickup → picked_up; the dropoff → delivered, with its proof. */
    async complete(taskId: number, body: Completion): Promise<Delivery> {
      return db.transaction().execute(async (trx) => {
        const { delivery, task } = await lockTask(trx, taskId);
        requireUnderWay(task);
        const media = await listTaskMedia(trx, taskId);
        const signature = media.find((m) => m.kind === "signature");
        const acceptedBy = body.accepted_by?.trim() || null;
        if (signature && !acceptedBy) throw unprocessable("accepted_by is required: a signature was uploaded");
        return delivery.changeStatus({
          status: task.kind === "pickup" ? "picked_up" : "delivered",
          completion: {
            notes: body.notes?.trim() || null,
            completion_text: body.completion_text?.trim() || null,
            accepted_by: acceptedBy,
            signature_url: signature ? `${deps.mediaBaseUrl}/${signature.id}` : null,
            pictures: media.filter((m) => m.kind === "picture").map((m) => `${deps.mediaBaseUrl}/${m.id}`),
          },
        });
      });
    },

    async fail(taskId: number, body: { failure_reason: string; notes?: string | null }): Promise<Delivery> {
      return db.transaction().execute(async (trx) => {
        const { delivery, task } = await lockTask(trx, taskId);
        requireUnderWay(task);
        const reason = body.failure_reason.trim();
        if (!reason) throw unprocessable("failure_reason must not be blank");
        return delivery.changeStatus({
          status: "failed",
          task: task.kind,
          failure_reason: reason,
          completion: { notes: body.notes?.trim() || null },
        });
      });
    },
  };
}
export type TasksService = ReturnType<typeof createTasksService>;
