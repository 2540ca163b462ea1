/** Delivery events as delivery-api publishes them: valid DeliveryEvent envelopes with a full v2 Delivery. */
import { randomUUID } from "node:crypto";
import { type Delivery, type DeliveryEvent, type DeliveryEventType, formatTimestamp } from "@dos/contracts";

export function makeDelivery(id: number, status: Delivery["status"] = "saved"): Delivery {
  const place = {
    recipient_name: "Ada Lovelace",
    recipient_phone: "+33 6 12 34 56 78",
    recipient_email: null,
    company_name: null,
    address: "12 Rue de la Paix",
    postal_code: "75002",
    city: "Paris",
    address_instructions: "Code 1234",
  };
  return {
    id,
    created_at: "2026-11-21T09:00:00.000+00:00",
    status,
    comments: null,
    client_order_reference: `order-${id}`,
    price_cents: 1290,
    direction: "outbound",
    bring_back_containers: false,
    original_delivery_id: null,
    redelivery_id: null,
    pickup: null,
    dropoff: {
      slot_starting_at: "2026-11-22T09:00:00.000+00:00",
      slot_ending_at: "2026-11-22T11:00:00.000+00:00",
      place,
      tracking_url: null,
      eta: null,
      completed_at: null,
      failure_reason: null,
      notes: null,
      completion_signature: null,
      completion_pictures: [],
      completion_text: null,
    },
    packages: [
      {
        package_type_id: null,
        type: "custom",
        name: "Box",
        amount: 1,
        volume_dm3: 10,
        weight_kg: 2,
        fragility: null,
        temperature: null,
        client_reference: null,
      },
    ],
    reversed_packages: [],
  };
}

export function makeEvent(options: {
  accountId: number;
  deliveryId: number;
  sequence: number;
  type?: DeliveryEventType;
  status?: Delivery["status"];
}): DeliveryEvent {
  return {
    id: randomUUID(),
    type: options.type ?? (options.sequence === 1 ? "delivery.created" : "delivery.updated"),
    occurred_at: formatTimestamp(new Date()),
    account_id: options.accountId,
    delivery_id: options.deliveryId,
    sequence: options.sequence,
    payload: { delivery: makeDelivery(options.deliveryId, options.status) },
  };
}
