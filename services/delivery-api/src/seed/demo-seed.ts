/**
 * The demo seed: two client accounts ("Demo Shop" in production, "Demo Shop Test" in the test
 * environment), each with a user and API token, package types, Paris zones, a default place and
 * a saved address; the demo fleet (demo-fleet.ts) and the demo staff, one per role
 * (demo-staff.ts). Idempotent: a second run with the same secret changes nothing and returns
 * the same ids and tokens.
 *
 * Tokens are stored hashed only, so a re-run cannot read them back: each demo token is derived
 * from the seed secret (HMAC-SHA256 of the user's e-mail), and is inserted only when its hash is
 * not stored yet. Same secret → same token; a new secret adds a new token and leaves older ones
 * as they are (revoke them through the operator API).
 */
import { createHmac } from "node:crypto";
import type { Kysely } from "kysely";
import { findAccountByUserEmail, insertAccount } from "../accounts/accounts.repository.ts";
import { findApiTokenByHash, insertUser } from "../accounts/users.repository.ts";
import { storeToken } from "../accounts/users.service.ts";
import { hashToken } from "../auth/client-auth.ts";
import type { DB, Db } from "../db/database.ts";
import { findPackageTypeByName, insertPackageType } from "../package-types/package-types.repository.ts";
import {
  findDefaultPlace,
  insertSavedAddress,
  listSavedAddresses,
  upsertDefaultPlace,
} from "../places/places.repository.ts";
import { insertMissingZones } from "../zones/zones.repository.ts";
import { DEMO_ACCOUNTS, type DemoAccountData } from "./demo-data.ts";
import { type DemoVehicle, seedDemoFleet } from "./demo-fleet.ts";
import { lockSeed } from "./demo-seed.repository.ts";
import { type DemoStaff, seedDemoStaff } from "./demo-staff.ts";

export interface DemoSeedOptions {
  /** Secret the demo tokens are derived from; keep it (var/demo-seed-secret) to keep the tokens. */
  secret: string;
}

/** One demo account as var/demo.json lists it. */
export interface DemoAccount {
  account_id: number;
  company_name: string;
  environment: "production" | "test";
  email: string;
  token: string;
  package_type_ids: number[];
  postal_codes: string[];
  saved_address_ids: number[];
}

export interface DemoSeed {
  accounts: DemoAccount[];
  vehicles: DemoVehicle[];
  staff: DemoStaff[];
}

/** Creates what is missing of the demo accounts and returns their credentials and ids. */
export async function seedDemo(db: Kysely<DB>, options: DemoSeedOptions): Promise<DemoSeed> {
  if (options.secret.length < 16) throw new Error("the demo seed secret must be at least 16 characters");
  return db.transaction().execute(async (trx) => {
    await lockSeed(trx);
    const accounts: DemoAccount[] = [];
    for (const data of DEMO_ACCOUNTS) accounts.push(await seedAccount(trx, data, options.secret));
    return { accounts, vehicles: await seedDemoFleet(trx), staff: await seedDemoStaff(trx) };
  });
}

/** The token of a demo user: 32 bytes of HMAC, base64url like every API token. */
function demoToken(secret: string, email: string): string {
  return createHmac("sha256", secret).update(`demo-token:${email.toLowerCase()}`).digest("base64url");
}

async function seedAccount(db: Db, data: DemoAccountData, secret: string): Promise<DemoAccount> {
  const { accountId, userId, environment, companyName } = await accountAndUser(db, data);

  const token = demoToken(secret, data.email);
  if (!(await findApiTokenByHash(db, userId, hashToken(token)))) await storeToken(db, userId, token);

  const packageTypeIds: number[] = [];
  for (const type of data.package_types) {
    const found = await findPackageTypeByName(db, accountId, type.name);
    packageTypeIds.push(found ? found.id : (await insertPackageType(db, { ...type, account_id: accountId })).id);
  }

  await insertMissingZones(db, accountId, data.zones);

  if (!(await findDefaultPlace(db, accountId))) await upsertDefaultPlace(db, accountId, data.default_place);

  const existing = await listSavedAddresses(db, accountId);
  const savedAddressIds: number[] = [];
  for (const address of data.saved_addresses) {
    const found = existing.find((row) => row.label === address.label);
    savedAddressIds.push(found ? found.id : (await insertSavedAddress(db, accountId, address)).id);
  }

  return {
    account_id: accountId,
    company_name: companyName,
    environment,
    email: data.email,
    token,
    package_type_ids: packageTypeIds,
    postal_codes: data.zones.map((zone) => zone.postal_code),
    saved_address_ids: savedAddressIds,
  };
}

/** The demo account is the one its user belongs to: e-mails are unique, company names are not. */
async function accountAndUser(db: Db, data: DemoAccountData) {
  const found = await findAccountByUserEmail(db, data.email);
  if (found) {
    return {
      accountId: found.id,
      userId: found.user_id,
      environment: found.environment,
      companyName: found.company_name,
    };
  }
  const account = await insertAccount(db, { company_name: data.company_name, environment: data.environment });
  const user = await insertUser(db, { account_id: account.id, email: data.email, name: data.user_name });
  return {
    accountId: account.id,
    userId: user.id,
    environment: account.environment,
    companyName: account.company_name,
  };
}
