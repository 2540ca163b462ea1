/**
 * Operator API for client accounts, their users and API tokens (mounted under /ops/v1, where
 * the bearer guard already ran). Nested resources of another account answer 404.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { LinkHeader, nextPageLink } from "../http/paging.ts";
import { pathId } from "../http/request-input.ts";
import {
  Account,
  ApiToken,
  ApiTokenCreated,
  CreateAccountBody,
  CreateUserBody,
  FindUsersQuery,
  ListAccountsQuery,
  UpdateAccountBody,
  User,
} from "./accounts.schemas.ts";
import { createAccount, getAccount, listAccountPage, updateAccount } from "./accounts.service.ts";
import {
  createToken,
  createUser,
  findUsersByEmail,
  getUser,
  listTokens,
  listUsers,
  revokeToken,
} from "./users.service.ts";

interface AccountParams {
  accountId: string;
}
interface UserParams extends AccountParams {
  userId: string;
}
interface TokenParams extends UserParams {
  tokenId: string;
}

const ids = (params: AccountParams & Partial<TokenParams>) => ({
  accountId: pathId(params.accountId, "account"),
  userId: params.userId === undefined ? 0 : pathId(params.userId, "user"),
  tokenId: params.tokenId === undefined ? 0 : pathId(params.tokenId, "token"),
});

export async function accountsOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB>; onAccessChange: () => void }) {
  const { db, onAccessChange } = options;

  app.post<{ Body: CreateAccountBody }>(
    "/accounts",
    {
      schema: {
        operationId: "accounts.create",
        response: { 201: Account },
        summary: "Create a client account",
        body: CreateAccountBody,
      },
    },
    async (request, reply) => reply.code(201).send(await createAccount(db, request.body)),
  );

  app.get<{ Querystring: ListAccountsQuery }>(
    "/accounts",
    {
      schema: {
        operationId: "accounts.list",
        response: {
          200: { ...Type.Array(Account), headers: LinkHeader },
        },
        summary: "List client accounts, oldest first",
        querystring: ListAccountsQuery,
      },
    },
    async (request, reply) => {
      const page = await listAccountPage(db, request.query);
      nextPageLink(request, reply, request.query, page.hasMore);
      return page.accounts;
    },
  );

  app.get<{ Params: AccountParams }>(
    "/accounts/:accountId",
    { schema: { operationId: "accounts.get", response: { 200: Account }, summary: "Show an account" } },
    async (request) => getAccount(db, ids(request.params).accountId),
  );

  app.patch<{ Params: AccountParams; Body: UpdateAccountBody }>(
    "/accounts/:accountId",
    {
      schema: {
        operationId: "accounts.update",
        response: { 200: Account },
        summary: "Rename an account, change its settings or its rate limit",
        body: UpdateAccountBody,
      },
    },
    async (request) => {
      const updated = await updateAccount(db, ids(request.params).accountId, request.body ?? {});
      onAccessChange();
      return updated;
    },
  );

  app.post<{ Params: AccountParams; Body: CreateUserBody }>(
    "/accounts/:accountId/users",
    {
      schema: {
        operationId: "users.create",
        response: { 201: User },
        summary: "Create a user (e-mails are unique across accounts)",
        body: CreateUserBody,
      },
    },
    async (request, reply) => reply.code(201).send(await createUser(db, ids(request.params).accountId, request.body)),
  );

  // Users are found by e-mail across accounts: the console signs its people in by e-mail alone.
  app.get<{ Querystring: FindUsersQuery }>(
    "/users",
    {
      schema: {
        querystring: FindUsersQuery,
        operationId: "users.findByEmail",
        response: { 200: Type.Array(User) },
        summary: "Find a user by e-mail",
      },
    },
    async (request) => findUsersByEmail(db, request.query.email),
  );

  app.get<{ Params: AccountParams }>(
    "/accounts/:accountId/users",
    { schema: { operationId: "users.list", response: { 200: Type.Array(User) }, summary: "List an account's users" } },
    async (request) => listUsers(db, ids(request.params).accountId),
  );

  app.get<{ Params: UserParams }>(
    "/accounts/:accountId/users/:userId",
    { schema: { operationId: "users.get", response: { 200: User }, summary: "Show a user" } },
    async (request) => {
      const { accountId, userId } = ids(request.params);
      return getUser(db, accountId, userId);
    },
  );

  app.post<{ Params: UserParams }>(
    "/accounts/:accountId/users/:userId/tokens",

    {
      schema: {
        operationId: "tokens.create",
        response: { 201: ApiTokenCreated },
        summary: "Create an API token; it is shown once, in this answer",
      },
    },
    async (request, reply) => {
      const { accountId, userId } = ids(request.params);
      const created = await createToken(db, accountId, userId);
      // The token appears in this response only: no cache may keep a copy.
      return reply.code(201).header("cache-control", "no-store").send(created);
    },
  );

  app.get<{ Params: UserParams }>(
    "/accounts/:accountId/users/:userId/tokens",
    {
      schema: {
        operationId: "tokens.list",
        response: { 200: Type.Array(ApiToken) },
        summary: "List a user's API tokens (hints only)",
      },
    },
    async (request) => {
      const { accountId, userId } = ids(request.params);
      return listTokens(db, accountId, userId);
    },
  );

  app.delete<{ Params: TokenParams }>(
    "/accounts/:accountId/users/:userId/tokens/:tokenId",

    { schema: { operationId: "tokens.revoke", response: { 200: ApiToken }, summary: "Revoke an API token" } },
    async (request) => {
      const { accountId, userId, tokenId } = ids(request.params);
      const revoked = await revokeToken(db, accountId, userId, tokenId);
      onAccessChange();
      return revoked;
    },
  );
}
