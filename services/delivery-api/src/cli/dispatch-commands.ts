/** CLI commands of dispatch (messengers, vehicles, rounds, tasks, fleet, courier simulator). */
import type { CommandFlag, CommandSpec } from "./ops-commands.ts";

const id = (help: string): CommandFlag => ({ type: "integer", required: true, at: "path", help });
const round = id("round id");
const task = id("task id");

export const DISPATCH_COMMANDS: Record<string, CommandSpec> = {
  "messengers list": { summary: "list messengers", method: "GET", path: "/messengers", flags: {} },
  "messengers create": {
    summary: "add a messenger",
    method: "POST",
    path: "/messengers",
    flags: {
      name: { type: "string", required: true, help: "the messenger's name" },
      phone: { type: "string", nullable: true, help: "the messenger's phone" },
    },
  },
  "vehicles list": { summary: "list vehicles and their active round", method: "GET", path: "/vehicles", flags: {} },
  "vehicles create": {
    summary: "add a vehicle (its External ID is the geolocation interface's vehicle_id)",
    method: "POST",
    path: "/vehicles",
    flags: {
      "external-id": { type: "string", field: "external_id", required: true, help: "External ID" },
      provider: { type: "string", required: true, help: "tracker provider name" },
      label: { type: "string", nullable: true, help: "what the vehicle is called" },
      "provider-token": {
        type: "string",
        field: "provider_token",
        nullable: true,
        help: "token the provider must send (X-Provider-Token); stored as SHA-256",
      },
    },
  },
  "rounds list": {
    summary: "list rounds, newest first",
    method: "GET",
    path: "/rounds",
    flags: {
      status: { type: "string", values: ["planned", "active", "ended"], at: "query", help: "planned|active|ended" },
    },
  },
  "rounds get": { summary: "show a round and its tasks", method: "GET", path: "/rounds/{round}", flags: { round } },
  "rounds create": {
    summary: "plan a round for a messenger (and a vehicle)",
    method: "POST",
    path: "/rounds",
    flags: {
      messenger: { type: "integer", field: "messenger_id", required: true, help: "messenger id" },
      vehicle: { type: "integer", field: "vehicle_id", help: "vehicle id" },
    },
  },
  "rounds add-delivery": {
    summary: "assign a saved delivery to the round (it becomes scheduled)",
    method: "POST",
    path: "/rounds/{round}/deliveries",
    flags: { round, delivery: { type: "integer", field: "delivery_id", required: true, help: "delivery id" } },
  },
  "rounds start": { summary: "start a round", method: "POST", path: "/rounds/{round}/start", flags: { round } },
  "rounds end": { summary: "end a round", method: "POST", path: "/rounds/{round}/end", flags: { round } },
  "tasks start": {
    summary: "start a task (tracking SMS to the recipient)",
    method: "POST",
    path: "/tasks/{task}/start",
    flags: { task },
  },
  "tasks complete": {
    summary: "complete a task (pickup → picked_up, dropoff → delivered)",
    method: "POST",
    path: "/tasks/{task}/complete",
    flags: {
      task,
      "accepted-by": { type: "string", field: "accepted_by", help: "who accepted the goods" },
      notes: { type: "string", help: "the messenger's notes" },
    },
  },
  "tasks fail": {
    summary: "fail a task (the delivery becomes failed)",
    method: "POST",
    path: "/tasks/{task}/fail",
    flags: {
      task,
      reason: { type: "string", field: "failure_reason", required: true, help: "why it failed" },
      notes: { type: "string", help: "the messenger's notes" },
    },
  },
  "fleet rebuild": {
    summary: "rewrite the FLEET bucket from the database",
    method: "POST",
    path: "/fleet/rebuild",
    flags: {},
  },
  "simulator set": {
    summary: "switch the test-environment courier simulator of a test account",
    method: "PUT",
    path: "/accounts/{account}/courier_simulator",
    flags: {
      account: id("account id"),
      enabled: { type: "boolean", required: true, help: "true or false" },
      "step-ms": { type: "integer", field: "step_ms", help: "time between two steps (ms)" },
    },
  },
};
