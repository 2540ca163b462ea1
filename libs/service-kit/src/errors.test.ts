import assert from "node:assert/strict";
import { test } from "node:test";
import { compileValidator, DeliveryCreateInput, WebhookCreateInput } from "@dos/contracts";
import { fieldLabel, validationMessages } from "./errors.ts";

const validateCreate = compileValidator(DeliveryCreateInput);
const messagesFor = (body: unknown) => {
  const result = validateCreate(body);
  assert.equal(result.ok, false, "the body was accepted");
  return result.ok ? [] : validationMessages(result.errors);
};
const slot = { slot_starting_at: "2030-01-01T10:00:00.000+01:00", slot_ending_at: "2030-01-01T12:00:00.000+01:00" };
const place = {
  recipient_name: "Ann",
  recipient_phone: "+33612345678",
  address: "1 Rue A",
  postal_code: "75001",
  city: "Paris",
};

test("field labels are dotted paths with array indexes", () => {
  assert.equal(fieldLabel("/dropoff/place/postal_code"), "dropoff.place.postal_code");
  assert.equal(fieldLabel("/packages/0/amount"), "packages[0].amount");
  assert.equal(fieldLabel(""), "body");
  assert.equal(fieldLabel("/dropoff", "place"), "dropoff.place");
});

test("a missing field and a wrong type are named precisely", () => {
  assert.deepEqual(
    messagesFor({
      dropoff: { ...slot, place: { ...place, city: undefined } },
      packages: [{ package_type_id: 1, amount: "2" }],
    }),
    ["dropoff.place.city is required", "packages[0].amount must be an integer"],
  );
});

test("a task that is neither an integer nor a task object says what it must be", () => {
  assert.deepEqual(messagesFor({ dropoff: "home", packages: [{ package_type_id: 1, amount: 1 }] }), [
    "dropoff must be an integer or TaskObjectInput",
  ]);
});

test("an inline package is judged as an inline package, not as a catalogue reference", () => {
  assert.deepEqual(
    messagesFor({ dropoff: { ...slot, place }, packages: [{ name: "Box", amount: 1, volume_dm3: 2 }] }),
    ["packages[0].weight_kg is required"],
  );
});

test("unknown fields, enum values and bad timestamps are named", () => {
  const messages = messagesFor({
    dropoff: { ...slot, slot_ending_at: "tomorrow", place },
    packages: [{ name: "Box", amount: 1, volume_dm3: 2, weight_kg: 1, fragility: "glass" }],
    colour: "red",
  });
  assert.deepEqual(messages.sort(), [
    "colour is not a known field",
    "dropoff.slot_ending_at must be an ISO 8601 timestamp with UTC offset (YYYY-MM-DDThh:mm:ss.sss+hh:mm)",
    "packages[0].fragility must be one of not_fragile, fragile, very_fragile, null",
  ]);
});

test("an empty package list asks for at least one entry", () => {
  assert.deepEqual(messagesFor({ dropoff: { ...slot, place }, packages: [] }), ["packages must have at least 1 entry"]);
});

test("a repeated entry names both entries, in words an integrator reads", () => {
  const result = compileValidator(WebhookCreateInput)({
    url: "https://example.com/hooks",
    events: ["delivery.created", "delivery.updated", "delivery.created"],
  });
  assert.equal(result.ok, false, "the body was accepted");
  assert.deepEqual(result.ok ? [] : validationMessages(result.errors), [
    "events must not repeat an entry (events[0] and events[2] are the same)",
  ]);
});
