/**
 * Users of a client account and their API tokens. A token is random (32 bytes, base64url), shown
 * once in the creation response and stored only as its SHA-256 with a four-character hint.
 */
import { randomBytes } from "node:crypto";
import { formatTimestamp } from "@dos/contracts";
import { isUniqueViolation, notFound, unprocessable } from "@dos/service-kit";
import type { Kysely, Selectable } from "kysely";
import { hashToken } from "../auth/client-auth.ts";
import type { DB, Db } from "../db/database.ts";
import { optionalText } from "../lib/text.ts";
import type { ApiToken, CreateUserBody, User } from "./accounts.schemas.ts";
import { requireAccount } from "./accounts.service.ts";
import type { ApiTokensTable, UsersTable } from "./accounts.table.ts";
import {
  findApiTokenOfUser,
  findUserByEmail,
  findUserInAccount,
  insertApiToken,
  insertUser,
  listApiTokensOfUser,
  listUsersOfAccount,
  revokeApiToken,
} from "./users.repository.ts";

const TOKEN_BYTES = 32;
const HINT_LENGTH = 4;

function userView(row: Selectable<UsersTable>): User {
  return {
    id: row.id,
    account_id: row.account_id,
    email: row.email,
    name: row.name,
    created_at: formatTimestamp(row.created_at),
  };
}

/** A token as listed: the hint only, never the token or its hash. */
function tokenView(row: Selectable<ApiTokensTable>): ApiToken {
  return {
    id: row.id,
    user_id: row.user_id,
    hint: row.token_hint,
    created_at: formatTimestamp(row.created_at),
    revoked_at: row.revoked_at ? formatTimestamp(row.revoked_at) : null,
    last_used_at: row.last_used_at ? formatTimestamp(row.last_used_at) : null,
  };
}

export async function createUser(db: Kysely<DB>, accountId: number, body: CreateUserBody) {
  await requireAccount(db, accountId);
  const email = body.email.trim();
  if (await findUserByEmail(db, email)) throw emailTaken();
  try {
    return userView(await insertUser(db, { account_id: accountId, email, name: optionalText(body.name) }));
  } catch (error) {
    // Two operators creating the same e-mail at once: the unique index decides, with the same answer.
    if (isUniqueViolation(error, "users_email_key")) throw emailTaken();
    throw error;
  }
}

const emailTaken = () => unprocessable("email is already used by another user");

/** The user with this e-mail (case aside) in any account: none or one, as a list. */
export async function findUsersByEmail(db: Kysely<DB>, email: string) {
  const user = await findUserByEmail(db, email.trim());
  return user ? [userView(user)] : [];
}

export async function listUsers(db: Kysely<DB>, accountId: number) {
  await requireAccount(db, accountId);
  return (await listUsersOfAccount(db, accountId)).map(userView);
}

/** The user of this account, or 404 (another account's user is as unknown as a missing one). */
async function requireUser(db: Db, accountId: number, userId: number) {
  const user = await findUserInAccount(db, accountId, userId);
  if (!user) throw notFound(`user ${userId}`);
  return user;
}

export async function getUser(db: Kysely<DB>, accountId: number, userId: number) {
  await requireAccount(db, accountId);
  return userView(await requireUser(db, accountId, userId));
}

/** Creates a token; the response is the only place the token itself ever appears. */
export async function createToken(db: Kysely<DB>, accountId: number, userId: number) {
  await requireAccount(db, accountId);
  await requireUser(db, accountId, userId);
  const token = randomBytes(TOKEN_BYTES).toString("base64url");
  const row = await storeToken(db, userId, token);
  return { ...tokenView(row), token };
}

/** Stores the hash and hint of a token the caller generated (the demo seed derives its own). */
export function storeToken(db: Db, userId: number, token: string) {
  return insertApiToken(db, {
    user_id: userId,
    token_sha256: hashToken(token),
    token_hint: token.slice(0, HINT_LENGTH),
  });
}

export async function listTokens(db: Kysely<DB>, accountId: number, userId: number) {
  await requireAccount(db, accountId);
  await requireUser(db, accountId, userId);
  return (await listApiTokensOfUser(db, userId)).map(tokenView);
}

export async function revokeToken(db: Kysely<DB>, accountId: number, userId: number, tokenId: number) {
  await requireAccount(db, accountId);
  await requireUser(db, accountId, userId);
  if (!(await findApiTokenOfUser(db, userId, tokenId))) throw notFound(`token ${tokenId}`);
  return tokenView(await revokeApiToken(db, tokenId));
}
