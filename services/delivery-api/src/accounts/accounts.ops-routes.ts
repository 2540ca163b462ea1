/**
 * Operator API for client accounts, their users and API tokens (mounted under /ops/v1, where
 * the bearer guard already ran). Nested resources of another account answer 404.
 */
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../db/database.ts";
import { pathId } from "../ops/ops-input.ts";
import { CreateAccountBody, CreateUserBody, ListAccountsQuery, UpdateAccountBody } from "./accounts.schemas.ts";
import { createAccount, getAccount, listAccountPage, updateAccount } from "./accounts.service.ts";
import { createToken, createUser, getUser, listTokens, listUsers, revokeToken } from "./users.service.ts";

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

  app.post<{ Body: CreateAccountBody }>("/accounts", { schema: { body: CreateAccountBody } }, async (request, reply) =>
    reply.code(201).send(await createAccount(db, request.body)),
  );

  app.get<{ Querystring: ListAccountsQuery }>(
    "/accounts",
    { schema: { querystring: ListAccountsQuery } },
    async (request, reply) => {
      const { query } = request;
      const page = await listAccountPage(db, query);
      if (page.hasMore) {
        const next = new URLSearchParams({ page: String(query.page + 1), per_page: String(query.per_page) });
        if (query.environment) next.set("environment", query.environment);
        reply.header("link", `<${request.url.split("?")[0]}?${next}>; rel="next"`);
      }
      return page.accounts;
    },
  );

  app.get<{ Params: AccountParams }>("/accounts/:accountId", async (request) =>
    getAccount(db, ids(request.params).accountId),
  );

  app.patch<{ Params: AccountParams; Body: UpdateAccountBody }>(
    "/accounts/:accountId",
    { schema: { body: UpdateAccountBody } },
    async (request) => {
      const updated = await updateAccount(db, ids(request.params).accountId, request.body ?? {});
      onAccessChange();
      return updated;
    },
  );

  app.post<{ Params: AccountParams; Body: CreateUserBody }>(
    "/accounts/:accountId/users",
    { schema: { body: CreateUserBody } },
    async (request, reply) => reply.code(201).send(await createUser(db, ids(request.params).accountId, request.body)),
  );

  app.get<{ Params: AccountParams }>("/accounts/:accountId/users", async (request) =>
    listUsers(db, ids(request.params).accountId),
  );

  app.get<{ Params: UserParams }>("/accounts/:accountId/users/:userId", async (request) => {
    const { accountId, userId } = ids(request.params);
    return getUser(db, accountId, userId);
  });

  app.post<{ Params: UserParams }>(
    "/accounts/:accountId/users/:userId/tokens",

    async (request, reply) => {
      const { accountId, userId } = ids(request.params);
      const created = await createToken(db, accountId, userId);
      // The token appears in this response only: no cache may keep a copy.
      return reply.code(201).header("cache-control", "no-store").send(created);
    },
  );

  app.get<{ Params: UserParams }>("/accounts/:accountId/users/:userId/tokens", async (request) => {
    const { accountId, userId } = ids(request.params);
    return listTokens(db, accountId, userId);
  });

  app.delete<{ Params: TokenParams }>(
    "/accounts/:accountId/users/:userId/tokens/:tokenId",

    async (request) => {
      const { accountId, userId, tokenId } = ids(request.params);
      const revoked = await revokeToken(db, accountId, userId, tokenId);
      onAccessChange();
      return revoked;
    },
  );
}
