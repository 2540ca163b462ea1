/** A small operator-API caller for tests: `ops.post("/accounts", body)` with the bearer token. */
import type { InjectOptions } from "fastify";
import { OPS_TOKEN, type TestApi } from "./fixtures.ts";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export function opsClient(api: TestApi, token: string | null = OPS_TOKEN) {
  const call = async (method: Method, path: string, payload?: unknown) => {
    const options: InjectOptions = {
      method,
      url: `/ops/v1${path}`,
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    };
    if (payload !== undefined) options.payload = payload as InjectOptions["payload"];
    const response = await api.app.inject(options);
    const body = response.body === "" ? undefined : response.json();
    return { status: response.statusCode, body, headers: response.headers };
  };
  return {
    get: (path: string) => call("GET", path),
    post: (path: string, payload?: unknown) => call("POST", path, payload),
    put: (path: string, payload?: unknown) => call("PUT", path, payload),
    patch: (path: string, payload?: unknown) => call("PATCH", path, payload),
    delete: (path: string, payload?: unknown) => call("DELETE", path, payload),
  };
}
export type OpsClient = ReturnType<typeof opsClient>;

/** A timestamp in the API's output format. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
