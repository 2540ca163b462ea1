/** POST /external/vehicles/{vehicle_id}/geolocations: the spec's tracker interface (200, empty body). */
import { GeolocationInput } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, LogLevel } from "fastify";
import type { GeolocationsService } from "./geolocations.service.ts";

const Params = Type.Object({ vehicle_id: Type.String({ minLength: 1 }) });

const QUIETER_THAN_WARN = new Set<string>(["error", "fatal", "silent"]);

export function registerGeolocationRoutes(app: FastifyInstance, service: GeolocationsService, logLevel: string) {
  app.post<{ Params: { vehicle_id: string }; Body: GeolocationInput }>(
    "/external/vehicles/:vehicle_id/geolocations",
    {
      schema: { params: Params, body: GeolocationInput },
      // Tens of thousands of trackers post every second or two: two info lines per request
      // would drown the logs and cost a core. Errors are still logged; counts are in /metrics.
      // A route's level replaces the service's: keep the service's when it is quieter still.
      logLevel: (QUIETER_THAN_WARN.has(logLevel) ? logLevel : "warn") as LogLevel,
    },
    async (request, reply) => {
      await service.accept(request.params.vehicle_id, request.body, request.headers["x-provider-token"]);
      return reply.code(200).send();
    },
  );
}
