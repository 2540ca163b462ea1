/**
 * The operator API (/ops/v1) as the signed-in staff person, through the console, with a client
 * generated from its OpenAPI document (@dos/api-types/ops-v1): no request or response type is
 * written here by hand. delivery-api applies the person's role and records their changes in the
 * audit log. Changes carry the CSRF token like every other change.
 */
import type { paths } from "@dos/api-types/ops-v1";
import createClient from "openapi-fetch";
import { csrfHeader } from "../bff.ts";

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
