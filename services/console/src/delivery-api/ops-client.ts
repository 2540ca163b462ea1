/**
 * The calls the console makes to delivery-api's operator API (/ops/v1): finding a user by
 * e-mail, reading the account, minting and revoking the API token a session calls the client
 * API with. Always for one account, the session's or the invited user's: nothing here lists or
 * touches another. For the staff: finding a staff person by e-mail, reading one, minting and
 * revoking a staff session's token, and asking who a staff token is (with that token). Paths, parameters and answers are typed by the client generated from the
 * operator API's OpenAPI document (@dos/api-types/ops-v1); the places and the statement, whose
 * answers the document does not declare yet, have the few fields read here declared below.
 */
import type { components, paths } from "@dos/api-types/ops-v1";
import { HttpError, unavailable } from "@dos/service-kit";
import createClient from "openapi-fetch";

type Schemas = components["schemas"];
export type OpsUser = Schemas["User"];
export type OpsAccount = Schemas["Account"];
export type OpsToken = Schemas["ApiToken"];
export type MintedToken = Schemas["ApiTokenCreated"];
export type OpsZone = Schemas["Zone"];

/** A place as the operator API shows it (default place, saved addresses); shown, not interpreted. */
export type OpsPlace = Record<string, string | number | null> & { id: number; address: string };

export interface StatementLine {
  id: number;
  client_order_reference: string | null;
  status: "delivered" | "failed" | "cancelled";
  service_day: string;
  price_cents: number | null;
  billed_cents: number;
  tariff_id: number | null;
  price_lines: Array<{ code: string; label: string; amount_cents: number }>;
}

export interface Statement {
  month: string;
  environment: "production" | "test";
  billed: boolean;
  truncated: boolean;
  deliveries: StatementLine[];
  totals: { deliveries: number; delivered: number; failed: number; cancelled: number; billed_cents: number };
}

export type OpsStaff = Schemas["Staff"];
/** Who a token is, as `GET /ops/v1/staff/me` answers. */
export type StaffActor = Schemas["OpsActor"];
export type MintedStaffToken = Schemas["StaffTokenCreated"];
/** A page of the live map's snapshot, as `GET /ops/v1/fleet/live` answers. */
export type LiveFleetPage = Schemas["LiveFleet"];

export interface OpsClient {
  findUserByEmail(email: string): Promise<OpsUser | undefined>;
  getAccount(accountId: number): Promise<OpsAccount>;
  /** The account's default place; null when it has none. */
  getDefaultPlace(accountId: number): Promise<OpsPlace | null>;
  listAddresses(accountId: number): Promise<OpsPlace[]>;
  listZones(accountId: number): Promise<OpsZone[]>;
  listTokens(accountId: number, userId: number): Promise<OpsToken[]>;
  getStatement(accountId: number, month: string): Promise<Statement>;
  createToken(accountId: number, userId: number): Promise<MintedToken>;
  /** Revokes a token; one already revoked or gone counts as done. */
  revokeToken(accountId: number, userId: number, tokenId: number): Promise<void>;
  findStaffByEmail(email: string): Promise<OpsStaff | undefined>;
  getStaff(staffId: number): Promise<OpsStaff>;
  /** A staff token for a console session, expiring when the session does at the latest. */
  createStaffToken(staffId: number, label: string, expiresAt: Date): Promise<MintedStaffToken>;
  /** Revokes a staff token; one already revoked or gone counts as done. */
  revokeStaffToken(staffId: number, tokenId: number): Promise<void>;
  /** Who this staff token is; undefined when delivery-api refuses it (revoked, expired, person disabled). */
  staffMe(staffToken: string): Promise<StaffActor | undefined>;
  /** A page of the live map's snapshot, read with this staff token; undefined when delivery-api refuses it. */
  fleetLive(staffToken: string, after: number, limit: number): Promise<LiveFleetPage | undefined>;
}

export function createOpsClient(options: { baseUrl: string; token: string; timeoutMs: number }): OpsClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.token}`, accept: "application/json" },
    redirect: "error",
  });

  /** One call: its status and body; a dependency failure (no answer, 5xx, 401) is the console's 503. */
  const call = async <T>(
    send: (signal: AbortSignal) => Promise<{ response: Response; data?: unknown; error?: unknown }>,
  ) => {
    let answer: Awaited<ReturnType<typeof send>>;
    try {
      answer = await send(AbortSignal.timeout(options.timeoutMs));
    } catch {
      throw unavailable("delivery-api is not answering, retry later");
    }
    const { status } = answer.response;
    // A 401 here is the console's misconfiguration (CONSOLE_OPS_TOKEN), never the user's doing.
    if (status >= 500 || status === 401) throw unavailable("delivery-api is not answering, retry later");
    return { status, body: (answer.data ?? answer.error) as T };
  };
  const expect = <T>(answer: { status: number; body: T }, ok: number, what: string): T => {
    if (answer.status === ok) return answer.body;
    if (answer.status === 404) throw new HttpError(404, `${what} not found`);
    throw unavailable(`delivery-api refused the console's request for ${what} (${answer.status})`);
  };
  const account = (accountId: number) => ({ accountId: String(accountId) });
  const user = (accountId: number, userId: number) => ({ ...account(accountId), userId: String(userId) });

  return {
    async findUserByEmail(email) {
      const answer = await call<OpsUser[]>((signal) =>
        client.GET("/ops/v1/users", { params: { query: { email } }, signal }),
      );
      if (answer.status === 422) return undefined;
      return expect(answer, 200, "user")[0];
    },
    async getAccount(accountId) {
      const answer = await call<OpsAccount>((signal) =>
        client.GET("/ops/v1/accounts/{accountId}", { params: { path: account(accountId) }, signal }),
      );
      return expect(answer, 200, "account");
    },
    async getDefaultPlace(accountId) {
      const answer = await call<OpsPlace>((signal) =>
        client.GET("/ops/v1/accounts/{accountId}/default_place", { params: { path: account(accountId) }, signal }),
      );
      return answer.status === 404 ? null : expect(answer, 200, "account");
    },
    async listAddresses(accountId) {
      const answer = await call<OpsPlace[]>((signal) =>
        client.GET("/ops/v1/accounts/{accountId}/addresses", { params: { path: account(accountId) }, signal }),
      );
      return expect(answer, 200, "account");
    },
    async listZones(accountId) {
      const answer = await call<OpsZone[]>((signal) =>
        client.GET("/ops/v1/accounts/{accountId}/zones", { params: { path: account(accountId) }, signal }),
      );
      return expect(answer, 200, "account");
    },
    async listTokens(accountId, userId) {
      const answer = await call<OpsToken[]>((signal) =>
        client.GET("/ops/v1/accounts/{accountId}/users/{userId}/tokens", {
          params: { path: user(accountId, userId) },
          signal,
        }),
      );
      return expect(answer, 200, "user");
    },
    async getStatement(accountId, month) {
      const answer = await call<Statement>((signal) =>
        client.GET("/ops/v1/accounts/{accountId}/statement", {
          params: { path: account(accountId), query: { month } },
          signal,
        }),
      );
      return expect(answer, 200, "account");
    },
    async createToken(accountId, userId) {
      const answer = await call<MintedToken>((signal) =>
        client.POST("/ops/v1/accounts/{accountId}/users/{userId}/tokens", {
          params: { path: user(accountId, userId) },
          signal,
        }),
      );
      return expect(answer, 201, "user");
    },
    async revokeToken(accountId, userId, tokenId) {
      const answer = await call((signal) =>
        client.DELETE("/ops/v1/accounts/{accountId}/users/{userId}/tokens/{tokenId}", {
          params: { path: { ...user(accountId, userId), tokenId: String(tokenId) } },
          signal,
        }),
      );
      if (answer.status !== 200 && answer.status !== 404) expect(answer, 200, "token");
    },
    async findStaffByEmail(email) {
      const answer = await call<{ staff: OpsStaff[] }>((signal) =>
        client.GET("/ops/v1/staff", { params: { query: { email, page: 1, per_page: 1 } }, signal }),
      );
      if (answer.status === 422) return undefined;
      return expect(answer, 200, "staff").staff[0];
    },
    async getStaff(staffId) {
      const answer = await call<OpsStaff>((signal) =>
        client.GET("/ops/v1/staff/{id}", { params: { path: { id: String(staffId) } }, signal }),
      );
      return expect(answer, 200, "staff member");
    },
    async createStaffToken(staffId, label, expiresAt) {
      const answer = await call<MintedStaffToken>((signal) =>
        client.POST("/ops/v1/staff/{id}/tokens", {
          params: { path: { id: String(staffId) } },
          body: { label, expires_at: expiresAt.toISOString() },
          signal,
        }),
      );
      return expect(answer, 201, "staff member");
    },
    async revokeStaffToken(staffId, tokenId) {
      const answer = await call((signal) =>
        client.DELETE("/ops/v1/staff/{id}/tokens/{tokenId}", {
          params: { path: { id: String(staffId), tokenId: String(tokenId) } },
          signal,
        }),
      );
      if (answer.status !== 204 && answer.status !== 404) expect(answer, 204, "staff token");
    },
    async staffMe(staffToken) {
      let answer: { response: Response; data?: StaffActor };
      try {
        answer = await client.GET("/ops/v1/staff/me", {
          // The person's own token, not the console's.
          headers: { authorization: `Bearer ${staffToken}` },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch {
        throw unavailable("delivery-api is not answering, retry later");
      }
      // Here a 401 is the person's: their token was revoked or expired, or they were disabled.
      if (answer.response.status === 401) return undefined;
      if (answer.response.status !== 200 || !answer.data) {
        throw unavailable("delivery-api is not answering, retry later");
      }
      return answer.data;
    },
    async fleetLive(staffToken, after, limit) {
      let answer: { response: Response; data?: LiveFleetPage };
      try {
        answer = await client.GET("/ops/v1/fleet/live", {
          params: { query: { after, limit } },
          // The person's own token: delivery-api's roles decide what they see.
          headers: { authorization: `Bearer ${staffToken}` },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch {
        throw unavailable("delivery-api is not answering, retry later");
      }
      if (answer.response.status === 401) return undefined;
      if (answer.response.status === 403) throw new HttpError(403, "the live map is not for this role");
      if (answer.response.status !== 200 || !answer.data) {
        throw unavailable("delivery-api is not answering, retry later");
      }
      return answer.data;
    },
  };
}
