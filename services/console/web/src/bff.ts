/**
 * Calls to the console's own backend (/api): the session, sign-in and password routes. Every
 * change carries the CSRF token the backend handed out with the session (X-CSRF-Token).
 */

export interface SignedInUser {
  email: string;
  account: { id: number; company_name: string; environment: "production" | "test" };
}

export interface SessionState {
  signed_in: boolean;
  csrf_token: string;
  user: SignedInUser | null;
}

/** An answer in the error shape, with the status it came with. */
export class ApiError extends Error {
  readonly status: number;
  readonly errors: string[];
  constructor(status: number, errors: string[]) {
    super(errors.join("; "));
    this.status = status;
    this.errors = errors;
  }
}

let csrf = "";

export const csrfHeader = (): Record<string, string> => ({ "x-csrf-token": csrf });

/** One call of the console's backend (/api + path): the answer's JSON, or an ApiError with its messages. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET") Object.assign(headers, csrfHeader());
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`/api${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, data?.errors ?? [`the console answered ${response.status}`]);
  if (data && typeof data === "object" && "csrf_token" in data) csrf = (data as SessionState).csrf_token;
  return data as T;
}

export interface AccountView {
  company_name: string;
  environment: "production" | "test";
  default_place: Record<string, string | number | null> | null;
  saved_addresses: Array<Record<string, string | number | null>>;
  zones: string[];
}

export interface TokenView {
  id: number;
  hint: string;
  created_at: string;
  last_used_at: string | null;
}

export interface StatementView {
  month: string;
  environment: "production" | "test";
  billed: boolean;
  truncated: boolean;
  deliveries: Array<{
    id: number;
    client_order_reference: string | null;
    status: string;
    service_day: string;
    price_cents: number | null;
    billed_cents: number;
    price_lines: Array<{ code: string; label: string; amount_cents: number }>;
  }>;
  totals: { deliveries: number; delivered: number; failed: number; cancelled: number; billed_cents: number };
}

/** What the delivery page's map shows (`/api/deliveries/:id/live`): the tracking page's data, for the session's account. */
export interface LiveView {
  status: string;
  courier: { latitude: number; longitude: number; recorded_at: string } | null;
  points: Array<{ task: "pickup" | "dropoff"; latitude: number; longitude: number }>;
}

export const bff = {
  mapStyle: () => call<{ style_url: string }>("GET", "/map"),
  live: (deliveryId: number) => call<LiveView>("GET", `/deliveries/${deliveryId}/live`),
  statement: (month: string) => call<StatementView>("GET", `/statement?month=${encodeURIComponent(month)}`),
  account: () => call<AccountView>("GET", "/account"),
  tokens: () => call<TokenView[]>("GET", "/tokens"),
  createToken: () => call<TokenView & { token: string }>("POST", "/tokens"),
  revokeToken: (id: number) => call<void>("DELETE", `/tokens/${id}`),
  session: () => call<SessionState>("GET", "/session"),
  signIn: (email: string, password: string) => call<SessionState>("POST", "/session", { email, password }),
  signOut: () => call<void>("DELETE", "/session"),
  signOutEverywhere: () => call<void>("DELETE", "/sessions"),
  acceptInvitation: (token: string, password: string) =>
    call<SessionState>("POST", "/invitations/accept", { token, password }),
  requestReset: (email: string) => call<{ sent: string }>("POST", "/password-resets", { email }),
  completeReset: (token: string, password: string) =>
    call<SessionState>("POST", "/password-resets/complete", { token, password }),
};
