/**
 * The operator's side of deliveries (/ops/v1): dispatch moves a delivery through its states.
 * The spec leaves this to "the operator's web interface"; it is also how a delivery becomes
 * failed, the state a redelivery starts from.
 */
import { Delivery, DeliveryStatus, ErrorBody, LIMITS } from "@dos/contracts";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { DeliveryIdParams, deliveryIdOf } from "./delivery-id.ts";
import type { createDeliveryStatusService, StatusChange } from "./delivery-status.service.ts";

export interface DeliveriesOpsRoutesOptions {
  statuses: ReturnType<typeof createDeliveryStatusService>;
}

export async function deliveriesOpsRoutes(app: FastifyInstance, options: DeliveriesOpsRoutesOptions) {
  app.patch(
    "/deliveries/:delivery_id/status",
    {
      attachValidation: true,
      schema: {
        operationId: "deliveries.set-status",
        summary: "Move a delivery to a status (failed needs a failure reason)",
        params: DeliveryIdParams,
        body: Type.Object(
          {
            status: DeliveryStatus,
            failure_reason: Type.Optional(Type.Union([Type.String({ maxLength: LIMITS.shortText }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 200: Delivery, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => {
      const id = deliveryIdOf(request);
      return options.statuses.changeStatus(id, request.body as StatusChange);
    },
  );
}
