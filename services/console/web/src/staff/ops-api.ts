/**
 * The operator API (/ops/v1) as the signed-in staff person, through the console, with a client
 * generated from its OpenAPI document (@dos/api-types/ops-v1): no request or response type is
 * written here by hand. delivery-api applies the person's role and records their changes in the
 * audit log. Changes carry the CSRF token like every other change.
 */
import type { paths } from "@dos/api-types/ops-v1";
import createClient from "openapi-fetch";
import { ApiError, csrfHeader } from "../bff.ts";

export const opsApi = createClient<paths>({ baseUrl: "", credentials: "same-origin" });

opsApi.use({
  onRequest({ request }) {
    if (request.method !== "GET") {
      for (const [name, value] of Object.entries(csrfHeader())) request.headers.set(name, value);
    }
    return request;
  },
});

/** The messages of an answer in the error shape (`{"errors": [...]}`), or one saying what went wrong. */
export function errorsOf(error: unknown, status: number): string[] {
  const errors = (error as { errors?: unknown } | undefined)?.errors;
  return Array.isArray(errors) ? errors.map(String) : [`the operator API answered ${status}`];
}

/**
 * What a call answered: its body when it succeeded, else an ApiError holding the status and the
 * API's own messages (a 403 names the role that may not, a 422 the fields), for the page to show.
 */
export async function answerOf<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, errorsOf(error, response.status));
  return data as T;
}

/** A page of a list of the operator API: its items, and whether its Link header names a next page. */
export async function pageAnswerOf<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ items: T; hasNext: boolean }> {
  const items = await answerOf(call);
  const { response } = await call;
  return { items, hasNext: /rel="next"/.test(response.headers.get("link") ?? "") };
}

/** The JSON body an operation of the operator API takes, from its generated types. */
export type BodyOf<P extends keyof paths, M extends "post" | "put" | "patch" | "delete"> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;
