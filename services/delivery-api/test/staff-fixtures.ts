/** People of the operator's staff for tests, created through the operator API as an operator would. */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { TestApi } from "./fixtures.ts";
import { type OpsClient, opsClient } from "./ops-client.ts";

export type Role = "admin" | "dispatcher" | "read_only";

export interface TestStaff {
  id: number;
  email: string;
  name: string;
  role: Role;
  token: string;
  /** An operator API client calling as this person. */
  ops: OpsClient;
}

/** A person with `role` and one token, made with the automation token. */
export async function createTestStaff(api: TestApi, role: Role, name?: string): Promise<TestStaff> {
  const automation = opsClient(api);
  const suffix = randomBytes(4).toString("hex");
  const person = await automation.post("/staff", {
    email: `${role}-${suffix}@operator.example`,
    name: name ?? `${role} ${suffix}`,
    role,
  });
  assert.equal(person.status, 201, JSON.stringify(person.body));
  const minted = await automation.post(`/staff/${person.body.id}/tokens`, { label: "test" });
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  return { ...person.body, token: minted.body.token, ops: opsClient(api, minted.body.token) };
}
