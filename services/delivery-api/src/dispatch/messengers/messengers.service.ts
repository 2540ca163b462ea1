/** Messengers (the operator's couriers): create, list, show, rename. */
import { formatTimestamp, Timestamp } from "@dos/contracts";
import { notFound } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { Selectable } from "kysely";
import type { Db } from "../../db/database.ts";
import { type PageRequest, pageOf, pageWindow } from "../../lib/paging.ts";
import { optionalText, requiredText } from "../../lib/text.ts";
import { findMessenger, insertMessenger, listMessengers, updateMessenger } from "./messengers.repository.ts";
import type { MessengersTable } from "./messengers.table.ts";

export interface MessengerChange {
  name?: string;
  phone?: string | null;
}

/** A messenger as the operator API shows it. */
export const Messenger = Type.Object(
  { id: Type.Integer(), name: Type.String(), phone: Type.Union([Type.String(), Type.Null()]), created_at: Timestamp },
  { title: "Messenger" },
);

function messengerView(row: Selectable<MessengersTable>): Static<typeof Messenger> {
  return { id: row.id, name: row.name, phone: row.phone, created_at: formatTimestamp(row.created_at) };
}

export async function requireMessenger(db: Db, id: number) {
  const row = await findMessenger(db, id);
  if (!row) throw notFound(`messenger ${id}`);
  return row;
}

export function createMessengersService(db: Db) {
  return {
    async create(body: { name: string; phone?: string | null }) {
      const row = await insertMessenger(db, { name: requiredText(body.name, "name"), phone: optionalText(body.phone) });
      return messengerView(row);
    },
    async list(page: PageRequest) {
      const { items, hasMore } = pageOf(await listMessengers(db, pageWindow(page)), page);
      return { messengers: items.map(messengerView), hasMore };
    },
    get: async (id: number) => messengerView(await requireMessenger(db, id)),
    async update(id: number, { name, phone }: MessengerChange) {
      const current = await requireMessenger(db, id);
      if (name === undefined && phone === undefined) return messengerView(current);
      const row = await updateMessenger(db, id, {
        name: name === undefined ? undefined : requiredText(name, "name"),
        phone: phone === undefined ? undefined : optionalText(phone),
      });
      return messengerView(row);
    },
  };
}
