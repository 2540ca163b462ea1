/**
 * Messengers (the operator's couriers) under /ops/v1: create, list, show, rename. A messenger's
 * phone positions arrive through POST /messengers/{id}/positions (src/positions).
 */
import { formatTimestamp, ShortText } from "@dos/contracts";
import { notFound } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely, Selectable } from "kysely";
import type { DB } from "../../db/database.ts";
import { pathId } from "../../http/request-input.ts";
import { optionalText, requiredText } from "../../lib/text.ts";
import type { MessengersTable } from "./messengers.table.ts";

const MessengerBody = Type.Object(
  { name: ShortText(), phone: Type.Optional(Type.Union([ShortText(), Type.Null()])) },
  { additionalProperties: false },
);
type MessengerBody = Static<typeof MessengerBody>;
const MessengerPatch = Type.Partial(MessengerBody, { additionalProperties: false });

export function messengerView(row: Selectable<MessengersTable>) {
  return { id: row.id, name: row.name, phone: row.phone, created_at: formatTimestamp(row.created_at) };
}

export async function requireMessenger(db: Kysely<DB>, id: number) {
  const row = await db.selectFrom("messengers").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`messenger ${id}`);
  return row;
}

export async function messengersOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const { db } = options;
  app.post<{ Body: MessengerBody }>(
    "/messengers",
    { schema: { operationId: "messengers.create", summary: "Add a messenger", body: MessengerBody } },
    async (request, reply) => {
      const row = await db
        .insertInto("messengers")
        .values({ name: requiredText(request.body.name, "name"), phone: optionalText(request.body.phone) })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.code(201).send(messengerView(row));
    },
  );

  app.get("/messengers", { schema: { operationId: "messengers.list", summary: "List messengers" } }, async () => {
    const rows = await db.selectFrom("messengers").selectAll().where("simulated", "=", false).orderBy("id").execute();
    return rows.map(messengerView);
  });

  app.get<{ Params: { id: string } }>(
    "/messengers/:id",
    { schema: { operationId: "messengers.get", summary: "Show a messenger" } },
    async (request) => messengerView(await requireMessenger(db, pathId(request.params.id, "messenger"))),
  );

  app.patch<{ Params: { id: string }; Body: Partial<MessengerBody> }>(
    "/messengers/:id",
    {
      schema: {
        operationId: "messengers.update",
        summary: "Rename a messenger or change its phone",
        body: MessengerPatch,
      },
    },
    async (request) => {
      const id = pathId(request.params.id, "messenger");
      const current = await requireMessenger(db, id);
      const { name, phone } = request.body ?? {};
      if (name === undefined && phone === undefined) return messengerView(current);
      const row = await db
        .updateTable("messengers")
        .set({
          name: name === undefined ? undefined : requiredText(name, "name"),
          phone: phone === undefined ? undefined : optionalText(phone),
        })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return messengerView(row);
    },
  );
}
