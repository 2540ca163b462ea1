/** POST /external/vehicles/{vehicle_id}/geolocations: the spec's tracker interface (200, empty body). */
import { GeolocationInput } from "@dos/contracts";
import type { HttpApp } from "@dos/service-kit";
import { Type } from "@sinclair/typebox";
import type { LogLevel } from "fastify";
import type { GeolocationsService } from "./geolocations.service.ts";

const URL = "/external/vehicles/:vehicle_id/geolocations";
const Params = Type.Object({ vehicle_id: Type.String({ minLength: 1 }) });

const QUIETER_THAN_WARN = new Set<string>(["error", "fatal", "silent"]);

export function registerGeolocationRoutes(
  { app, hotRoute }: Pick<HttpApp, "app" | "hotRoute">,
  service: GeolocationsService,
  serviceLogLevel: string,
) {
  // Tens of thousands of trackers post every second or two: two info lines per request
  // would drown the logs and cost a core. Errors are still logged; counts are in /metrics.
  // A route's level replaces the service's: keep the service's when it is quieter still.
  const logLevel = QUIETER_THAN_WARN.has(serviceLogLevel) ? serviceLogLevel : "warn";
  app.post<{ Params: { vehicle_id: string }; Body: GeolocationInput }>(
    URL,
    { schema: { params: Params, body: GeolocationInput }, logLevel: logLevel as LogLevel },
    async (request, reply) => {
      await service.accept(request.params.vehicle_id, request.body, request.headers["x-provider-token"]);
      return reply.code(200).send();
    },
  );
  // The same route, for its plain requests, without Fastify's per-request machinery: at fleet
  // scale it cost more server CPU than storing the positions (docs/benchmarks/geo-ingest.md).
  hotRoute<GeolocationInput>({
    url: URL,
    body: GeolocationInput,
    logLevel,
    handle: (vehicleId, body, headers) => service.accept(vehicleId, body, headers["x-provider-token"]),
  });
}
