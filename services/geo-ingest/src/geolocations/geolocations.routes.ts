/** POST /external/vehicles/{vehicle_id}/geolocations: the spec's tracker interface (200, empty body). */
import { GeolocationInput } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { GeolocationsService } from "./geolocations.service.ts";

const Params = Type.Object({ vehicle_id: Type.String({ minLength: 1 }) });

export function registerGeolocationRoutes(app: FastifyInstance, service: GeolocationsService) {
  app.post<{ Params: { vehicle_id: string }; Body: GeolocationInput }>(
    "/external/vehicles/:vehicle_id/geolocations",
    {
      schema: { params: Params, body: GeolocationInput },
      // Tens of thousands of trackers post every second or two: two info lines per request
      // would drown the logs and cost a core. Errors are still logged; counts are in /metrics.
      logLevel: "warn",
    },
    async (request, reply) => {
      await service.accept(request.params.vehicle_id, request.body, request.headers["x-provider-token"]);
      return reply.code(200).send();
    },
  );
}
