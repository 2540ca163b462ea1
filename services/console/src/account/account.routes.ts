/**
 * The account page's data, under /api, for the signed-in person's own account only (the ids
 * come from the session, never from the request): the account, its default place, zones and
 * saved addresses; and the person's API tokens (list with hint and dates, create shown once,
 * revoke). The tokens the console's own sessions call with are not the person's: not listed,
 * not revocable here.
 */
import { formatTimestamp } from "@dos/contracts";
import { notFound } from "@dos/service-kit";
import type { FastifyInstance } from "fastify";
import type { Db } from "../db/database.ts";
import type { OpsClient, OpsToken } from "../delivery-api/ops-client.ts";
import type { CookieNames } from "../sessions/cookies.ts";
import { sessionTokenIds } from "../sessions/sessions.repository.ts";
import { requireSession } from "../sessions/sessions.routes.ts";
import type { Sessions } from "../sessions/sessions.service.ts";

export interface AccountRoutesOptions {
  db: Db;
  ops: OpsClient;
  sessions: Sessions;
  cookies: CookieNames;
}

const tokenView = (token: OpsToken) => ({
  id: token.id,
  hint: token.hint,
  created_at: token.created_at,
  last_used_at: token.last_used_at,
});

export async function accountRoutes(app: FastifyInstance, options: AccountRoutesOptions) {
  const { db, ops, sessions, cookies } = options;
  const session = (request: Parameters<typeof requireSession>[0]) => requireSession(request, sessions, cookies);

  app.get("/account", async (request) => {
    const { accountId } = await session(request);
    const [account, defaultPlace, addresses, zones] = await Promise.all([
      ops.getAccount(accountId),
      ops.getDefaultPlace(accountId),
      ops.listAddresses(accountId),
      ops.listZones(accountId),
    ]);
    return {
      company_name: account.company_name,
      environment: account.environment,
      default_place: defaultPlace,
      saved_addresses: addresses,
      zones: zones.map((zone) => zone.postal_code),
    };
  });

  /** The person's own tokens that are still valid, the console's session tokens aside. */
  async function ownTokens(accountId: number, apiUserId: number, userId: number) {
    const [tokens, consoles] = await Promise.all([ops.listTokens(accountId, apiUserId), sessionTokenIds(db, userId)]);
    return tokens.filter((token) => token.revoked_at === null && !consoles.includes(token.id));
  }

  app.get("/tokens", async (request, reply) => {
    const user = await session(request);
    reply.header("cache-control", "no-store");
    return (await ownTokens(user.accountId, user.apiUserId, user.userId)).map(tokenView);
  });

  app.post("/tokens", async (request, reply) => {
    const user = await session(request);
    const created = await ops.createToken(user.accountId, user.apiUserId);
    // The token is in this answer only: no cache may keep it.
    return reply
      .code(201)
      .header("cache-control", "no-store")
      .send({ ...tokenView(created), token: created.token, shown_at: formatTimestamp(new Date()) });
  });

  app.delete<{ Params: { tokenId: string } }>("/tokens/:tokenId", async (request, reply) => {
    const user = await session(request);
    const tokenId = /^\d{1,15}$/.test(request.params.tokenId) ? Number(request.params.tokenId) : 0;
    const mine = await ownTokens(user.accountId, user.apiUserId, user.userId);
    if (!mine.some((token) => token.id === tokenId)) throw notFound(`token ${request.params.tokenId.slice(0, 20)}`);
    await ops.revokeToken(user.accountId, user.apiUserId, tokenId);
    return reply.code(204).send();
  });
}
