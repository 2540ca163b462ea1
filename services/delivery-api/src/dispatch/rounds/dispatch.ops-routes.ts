/**
 * The operator's dispatch routes under /ops/v1: rounds and their deliveries, the task
 * lifecycle with proof uploads, phone positions, and the fleet rebuild.
 */
import { Delivery, LongText, ShortText, Timestamp } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { pathId } from "../../http/request-input.ts";
import { FleetRebuilt, type FleetRelay } from "../fleet/fleet.relay.ts";
import { PhonePositionRecorded, recordPhonePosition } from "../positions/phone-positions.ts";
import type { PositionsService } from "../positions/positions.service.ts";
import { ROUND_MAX_DELIVERIES, Round, type RoundsService } from "./rounds.service.ts";
import { proofImage, TaskProof, type TasksService } from "./tasks.service.ts";

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Text = Type.Optional(Type.Union([LongText(), Type.Null()]));
const CreateRoundBody = Type.Object(
  {
    messenger_id: Id,
    vehicle_id: Type.Optional(Type.Union([Id, Type.Null()])),
    delivery_ids: Type.Optional(Type.Array(Id, { maxItems: ROUND_MAX_DELIVERIES })),
  },
  { additionalProperties: false },
);
const AddDeliveryBody = Type.Object({ delivery_id: Id }, { additionalProperties: false });
const OrderBody = Type.Object(
  {
    task_ids: Type.Array(Id, {
      minItems: 1,
      // A delivery has at most two tasks on a round.
      maxItems: 2 * ROUND_MAX_DELIVERIES,
      description: "Every task of the round, once, in the new order; a pickup before its dropoff.",
    }),
  },
  { additionalProperties: false },
);
const CompleteBody = Type.Object(
  { accepted_by: Type.Optional(Type.Union([ShortText(), Type.Null()])), notes: Text, completion_text: Text },
  { additionalProperties: false },
);
const FailBody = Type.Object({ failure_reason: ShortText(), notes: Text }, { additionalProperties: false });
const PositionBody = Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    timestamp: Type.Optional(Type.Union([Timestamp, Type.Null()])),
  },
  { additionalProperties: false },
);
const RoundsQuery = Type.Object(
  { status: Type.Optional(Type.Union([Type.Literal("planned"), Type.Literal("active"), Type.Literal("ended")])) },
  { additionalProperties: false },
);

const IMAGE_SIGNATURES: Record<string, Buffer> = {
  "image/jpeg": Buffer.from([0xff, 0xd8, 0xff]),
  "image/png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
};

export interface DispatchOpsOptions {
  db: Kysely<DB>;
  rounds: RoundsService;
  tasks: TasksService;
  positions: PositionsService;
  fleet: FleetRelay;
  mediaMaxBytes: number;
}

type P = { Params: { id: string } };

export async function dispatchOpsRoutes(app: FastifyInstance, options: DispatchOpsOptions) {
  const { rounds, tasks } = options;
  const roundId = (params: { id: string }) => pathId(params.id, "round");
  const taskId = (params: { id: string }) => pathId(params.id, "task");

  app.post<{ Body: Static<typeof CreateRoundBody> }>(
    "/rounds",
    {
      schema: {
        operationId: "rounds.create",
        response: { 201: Round },
        summary: "Plan a round for a messenger (and a vehicle)",
        body: CreateRoundBody,
      },
    },
    async (request, reply) => reply.code(201).send(await rounds.create(request.body)),
  );
  app.get<{ Querystring: Static<typeof RoundsQuery> }>(
    "/rounds",
    {
      schema: {
        operationId: "rounds.list",
        response: { 200: Type.Array(Round) },
        summary: "List rounds, newest first",
        querystring: RoundsQuery,
      },
    },
    (request) => rounds.list(request.query.status),
  );
  app.get<P>(
    "/rounds/:id",
    { schema: { operationId: "rounds.get", response: { 200: Round }, summary: "Show a round and its tasks" } },
    (request) => rounds.get(roundId(request.params)),
  );
  app.post<P & { Body: Static<typeof AddDeliveryBody> }>(
    "/rounds/:id/deliveries",
    {
      schema: {
        operationId: "rounds.add-delivery",
        response: { 200: Round },
        summary: "Assign a saved delivery to the round (it becomes scheduled)",
        body: AddDeliveryBody,
      },
    },
    (request) => rounds.addDelivery(roundId(request.params), request.body.delivery_id),
  );
  app.delete<{ Params: { id: string; deliveryId: string } }>(
    "/rounds/:id/deliveries/:deliveryId",
    {
      schema: {
        operationId: "rounds.remove-delivery",
        response: { 200: Round },
        summary: "Take a delivery out of a planned round",
      },
    },
    (request) => rounds.removeDelivery(roundId(request.params), pathId(request.params.deliveryId, "delivery")),
  );
  app.put<P & { Body: Static<typeof OrderBody> }>(
    "/rounds/:id/tasks",
    {
      schema: {
        operationId: "rounds.reorder",
        response: { 200: Round },
        summary: "Put the round's tasks in a new order (the whole order; started tasks keep their place)",
        description:
          "409 when the round has ended, or when the order moves a task that has started; 422 naming a task " +
          "that is not on the round, one listed twice, one left out, or a dropoff before its pickup.",
        body: OrderBody,
      },
    },
    (request) => rounds.reorder(roundId(request.params), request.body.task_ids),
  );
  app.post<P>(
    "/rounds/:id/start",
    { schema: { operationId: "rounds.start", response: { 200: Round }, summary: "Start a round" } },
    (request) => rounds.start(roundId(request.params)),
  );
  app.post<P>(
    "/rounds/:id/end",
    { schema: { operationId: "rounds.end", response: { 200: Round }, summary: "End a round" } },
    (request) => rounds.end(roundId(request.params)),
  );

  app.post<P>(
    "/tasks/:id/start",
    {
      schema: {
        operationId: "tasks.start",
        response: { 200: Delivery },
        summary: "Start a task (tracking SMS to the recipient)",
      },
    },
    (request) => tasks.start(taskId(request.params)),
  );
  app.post<P & { Body: Static<typeof CompleteBody> }>(
    "/tasks/:id/complete",
    {
      schema: {
        operationId: "tasks.complete",
        response: { 200: Delivery },
        summary: "Complete a task (pickup: picked_up, dropoff: delivered)",
        body: CompleteBody,
      },
    },
    (request) => tasks.complete(taskId(request.params), request.body ?? {}),
  );
  app.post<P & { Body: Static<typeof FailBody> }>(
    "/tasks/:id/fail",
    {
      schema: {
        operationId: "tasks.fail",
        response: { 200: Delivery },
        summary: "Fail a task (the delivery becomes failed)",
        body: FailBody,
      },
    },
    (request) => tasks.fail(taskId(request.params), request.body),
  );

  // Proof images: raw JPEG or PNG bodies, only on these two routes.
  await app.register(async (uploads) => {
    uploads.addContentTypeParser(
      ["image/jpeg", "image/png"],
      { parseAs: "buffer", bodyLimit: options.mediaMaxBytes },
      (_request, body, done) => done(null, body),
    );
    const image = (contentType: string | undefined, body: unknown) => {
      const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
      const magic = IMAGE_SIGNATURES[type];
      if (!magic || !Buffer.isBuffer(body)) throw unprocessable("body must be a JPEG or PNG image");
      if (body.length === 0 || !body.subarray(0, magic.length).equals(magic)) {
        throw unprocessable(`body is not a ${type === "image/png" ? "PNG" : "JPEG"} image`);
      }
      return { type: type as "image/jpeg" | "image/png", bytes: body };
    };
    uploads.put<P>(
      "/tasks/:id/signature",
      {
        schema: {
          operationId: "tasks.upload-signature",
          response: { 201: TaskProof },
          summary: "Upload the recipient's signature (a JPEG or PNG body)",
        },
      },
      async (request, reply) => {
        const { type, bytes } = image(request.headers["content-type"], request.body);
        return reply.code(201).send(await tasks.upload(taskId(request.params), "signature", type, bytes));
      },
    );
    uploads.post<P>(
      "/tasks/:id/pictures",
      {
        schema: {
          operationId: "tasks.add-picture",
          response: { 201: TaskProof },
          summary: "Add a proof picture (a JPEG or PNG body)",
        },
      },
      async (request, reply) => {
        const { type, bytes } = image(request.headers["content-type"], request.body);
        return reply.code(201).send(await tasks.upload(taskId(request.params), "picture", type, bytes));
      },
    );
  });

  // The staff console shows proofs through its own origin, with the person's token: the same
  // bytes as the public /media/{id}, which the console's pages may not load from elsewhere.
  app.get<P>(
    "/media/:id",
    {
      schema: {
        operationId: "media.get",
        summary: "A proof image (the `media_id` of a round's task proof): its JPEG or PNG bytes",
        response: {
          200: {
            description: "The image",
            content: {
              "image/jpeg": { schema: { type: "string", format: "binary" } },
              "image/png": { schema: { type: "string", format: "binary" } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const media = await proofImage(options.db, request.params.id);
      return reply
        .header("content-type", media.content_type)
        .header("cache-control", "private, max-age=3600")
        .header("content-security-policy", "default-src 'none'")
        .send(media.bytes);
    },
  );

  app.post<P & { Body: Static<typeof PositionBody> }>(
    "/messengers/:id/positions",
    {
      config: { audited: false },
      schema: {
        operationId: "messengers.record-position",
        response: { 200: PhonePositionRecorded },
        summary: "Record a messenger's phone position",
        body: PositionBody,
      },
    },
    async (request) =>
      recordPhonePosition(options.db, options.positions, pathId(request.params.id, "messenger"), request.body),
  );

  app.post(
    "/fleet/rebuild",
    {
      schema: {
        operationId: "fleet.rebuild",
        response: { 200: FleetRebuilt },
        summary: "Rewrite the FLEET bucket from the database",
      },
    },
    () => options.fleet.rebuild(),
  );
}
