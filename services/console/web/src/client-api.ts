/**
 * The client API (/api/v2) as the signed-in person, through the console, with a client
 * generated from its OpenAPI document (@dos/api-types): no request or response type is written
 * here by hand. Changes carry the CSRF token like every other change.
 */
import type { paths } from "@dos/api-types/client-v2";
import createClient from "openapi-fetch";
import { csrfHeader } from "./bff.ts";

export const clientApi = createClient<paths>({ baseUrl: "", credentials: "same-origin" });

clientApi.use({
  onRequest({ request }) {
    if (request.method !== "GET") {
      for (const [name, value] of Object.entries(csrfHeader())) request.headers.set(name, value);
    }
    return request;
  },
});
