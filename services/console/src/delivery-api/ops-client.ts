/**
 * The calls the console makes to delivery-api's operator API (/ops/v1): finding a user by
 * e-mail, reading the account, minting and revoking the API token a session calls the client
 * API with. Always for one account, the session's or the invited user's: nothing here lists or
 * touches another. The operator API has no OpenAPI document yet (it is being added on another
 * branch); until it lands, the few answer fields used here are declared below, and only those.
 */
import { HttpError, unavailable } from "@dos/service-kit";

export interface OpsUser {
  id: number;
  account_id: number;
  email: string;
  name: string | null;
}

export interface OpsAccount {
  id: number;
  company_name: string;
  environment: "production" | "test";
}

export interface MintedToken {
  id: number;
  token: string;
}

export interface OpsClient {
  findUserByEmail(email: string): Promise<OpsUser | undefined>;
  getAccount(accountId: number): Promise<OpsAccount>;
  createToken(accountId: number, userId: number): Promise<MintedToken>;
  /** Revokes a token; one already revoked or gone counts as done. */
  revokeToken(accountId: number, userId: number, tokenId: number): Promise<void>;
}

export function createOpsClient(options: { baseUrl: string; token: string; timeoutMs: number }): OpsClient {
  const call = async <T>(method: string, path: string): Promise<{ status: number; body: T }> => {
    let response: Response;
    try {
      response = await fetch(`${options.baseUrl}/ops/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${options.token}`, accept: "application/json" },
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: "error",
      });
    } catch {
      throw unavailable("delivery-api is not answering, retry later");
    }
    const body = (await response.json().catch(() => null)) as T;
    if (response.status >= 500 || response.status === 401) {
      // A 401 here is the console's misconfiguration (CONSOLE_OPS_TOKEN), never the user's doing.
      throw unavailable("delivery-api is not answering, retry later");
    }
    return { status: response.status, body };
  };
  const expect = <T>(answer: { status: number; body: T }, ok: number, what: string): T => {
    if (answer.status === ok) return answer.body;
    if (answer.status === 404) throw new HttpError(404, `${what} not found`);
    throw unavailable(`delivery-api refused the console's request for ${what} (${answer.status})`);
  };
  return {
    async findUserByEmail(email) {
      const answer = await call<OpsUser[]>("GET", `/users?email=${encodeURIComponent(email)}`);
      if (answer.status === 422) return undefined;
      return expect(answer, 200, "user")[0];
    },
    async getAccount(accountId) {
      return expect(await call<OpsAccount>("GET", `/accounts/${accountId}`), 200, "account");
    },
    async createToken(accountId, userId) {
      return expect(await call<MintedToken>("POST", `/accounts/${accountId}/users/${userId}/tokens`), 201, "user");
    },
    async revokeToken(accountId, userId, tokenId) {
      const answer = await call("DELETE", `/accounts/${accountId}/users/${userId}/tokens/${tokenId}`);
      if (answer.status !== 200 && answer.status !== 404) expect(answer, 200, "token");
    },
  };
}
