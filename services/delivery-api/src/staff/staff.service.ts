/**
 * The operator's staff (people with a role) and their tokens for the operator API. People are
 * disabled, never deleted; disabling one revokes every token they hold. A token is shown once,
 * in its creation's answer, and stored as its SHA-256 only.
 */
import { formatTimestamp, parseTimestamp } from "@dos/contracts";
import { conflict, isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import type { Kysely, Selectable } from "kysely";
import type { DB } from "../db/database.ts";
import { type PageRequest, pageOf, pageWindow } from "../lib/paging.ts";
import { requiredText } from "../lib/text.ts";
import {
  countLiveStaffTokens,
  findLiveStaffToken,
  findStaffByEmail,
  findStaffById,
  insertStaff,
  insertStaffToken,
  listLiveStaffTokens,
  listStaff,
  lockStaffById,
  revokeAllStaffTokens,
  revokeStaffToken,
  updateStaff as updateStaffRow,
} from "./staff.repository.ts";
import type {
  CreateStaffBody,
  CreateStaffTokenBody,
  Staff,
  StaffToken,
  StaffTokenCreated,
  UpdateStaffBody,
} from "./staff.schemas.ts";
import type { StaffTable, StaffTokensTable } from "./staff.table.ts";
import { hashStaffToken, newStaffToken } from "./staff-token.ts";

function staffView(row: Selectable<StaffTable>): Staff {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    disabled: row.disabled,
    created_at: formatTimestamp(row.created_at),
  };
}

function tokenView(row: Selectable<StaffTokensTable>): StaffToken {
  return {
    id: row.id,
    label: row.label,
    created_at: formatTimestamp(row.created_at),
    last_used_at: row.last_used_at ? formatTimestamp(row.last_used_at) : null,
    expires_at: row.expires_at ? formatTimestamp(row.expires_at) : null,
  };
}

/**
 * Live tokens a person may hold at once: personal tokens and one per console session. Each is
 * a credential to guard and a row every sign-in's lookup may meet; a hundred is far more than a
 * person uses, and a leaked automation token or a script minting in a loop stops here.
 */
const MAX_LIVE_TOKENS = 100;

const emailTaken = (email: string) => conflict(`email ${email} is already used by another staff member`);

export function createStaffService(db: Kysely<DB>) {
  const requireStaff = async (id: number) => {
    const row = await findStaffById(db, id);
    if (!row) throw notFound(`staff ${id}`);
    return row;
  };

  return {
    async create(body: CreateStaffBody): Promise<Staff> {
      const email = body.email.trim().toLowerCase();
      if (await findStaffByEmail(db, email)) throw emailTaken(email);
      try {
        return staffView(await insertStaff(db, { email, name: requiredText(body.name, "name"), role: body.role }));
      } catch (error) {
        // Two admins creating the same person at once: the unique index decides, with the same answer.
        if (isUniqueViolation(error, "staff_email_key")) throw emailTaken(email);
        throw error;
      }
    },

    async list(query: PageRequest & { email?: string | undefined }) {
      const { offset, limit } = pageWindow(query);
      const emailLower = query.email?.trim().toLowerCase();
      const rows = await listStaff(db, { emailLower, offset, limit });
      const { items, hasMore } = pageOf(rows, query);
      return { staff: items.map(staffView), hasMore };
    },

    async get(id: number): Promise<Staff> {
      return staffView(await requireStaff(id));
    },

    /** Renames, changes the role, disables (revoking every token) or enables again. */
    async update(id: number, body: UpdateStaffBody): Promise<Staff> {
      return db.transaction().execute(async (trx) => {
        const row = await lockStaffById(trx, id);
        if (!row) throw notFound(`staff ${id}`);
        const changes = {
          ...(body.name !== undefined ? { name: requiredText(body.name, "name") } : {}),
          ...(body.role !== undefined ? { role: body.role } : {}),
          ...(body.disabled !== undefined ? { disabled: body.disabled } : {}),
        };
        const updated = Object.keys(changes).length > 0 ? await updateStaffRow(trx, id, changes) : row;
        if (body.disabled === true) await revokeAllStaffTokens(trx, id);
        return staffView(updated);
      });
    },

    /** A new token for the person; the answer is the only place the token appears. */
    async createToken(staffId: number, body: CreateStaffTokenBody): Promise<StaffTokenCreated & { sha256: Buffer }> {
      const label = requiredText(body.label, "label");
      const expiresAt = expiryOf(body.expires_at);
      return db.transaction().execute(async (trx) => {
        // Locked: a token cannot be minted for a person being disabled at the same moment.
        const person = await lockStaffById(trx, staffId);
        if (!person) throw notFound(`staff ${staffId}`);
        if (person.disabled) throw unprocessable(`staff ${staffId} is disabled; enable the person first`);
        if ((await countLiveStaffTokens(trx, staffId, MAX_LIVE_TOKENS)) >= MAX_LIVE_TOKENS) {
          throw conflict(
            `staff ${staffId} holds ${MAX_LIVE_TOKENS} live tokens, the most a person may; revoke one first`,
          );
        }
        const token = newStaffToken();
        const sha256 = hashStaffToken(token);
        const row = await insertStaffToken(trx, {
          staff_id: staffId,
          label,
          token_sha256: sha256,
          expires_at: expiresAt,
        });
        const { last_used_at: _never, ...view } = tokenView(row);
        return { ...view, token, sha256 };
      });
    },

    async listTokens(staffId: number, page: PageRequest) {
      await requireStaff(staffId);
      const { offset, limit } = pageWindow(page);
      const { items, hasMore } = pageOf(await listLiveStaffTokens(db, staffId, offset, limit), page);
      return { tokens: items.map(tokenView), hasMore };
    },

    /** Revokes one of the person's live tokens; another person's (or a revoked) token is a 404. */
    async revokeToken(staffId: number, tokenId: number): Promise<void> {
      await requireStaff(staffId);
      if (!(await findLiveStaffToken(db, staffId, tokenId))) throw notFound(`token ${tokenId}`);
      await revokeStaffToken(db, tokenId);
    },
  };
}
export type StaffService = ReturnType<typeof createStaffService>;

function expiryOf(text: string | null | undefined): Date | null {
  if (text === undefined || text === null) return null;
  const at = parseTimestamp(text);
  if (!at) throw unprocessable("expires_at is not a valid date and time");
  if (at.getTime() <= Date.now()) throw unprocessable("expires_at must be in the future");
  return at;
}
