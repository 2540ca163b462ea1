/** Queries of the staff's credentials, passkeys, invitations and sign-in challenges. */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { ChallengePurpose } from "./staff.table.ts";

export function findStaffCredentials(db: Db, staffId: number) {
  return db.selectFrom("staff_credentials").selectAll().where("staff_id", "=", staffId).executeTakeFirst();
}

export function findStaffCredentialsByEmail(db: Db, email: string) {
  return db
    .selectFrom("staff_credentials")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
    .executeTakeFirst();
}

/** The console's row of a delivery-api staff person, created at the first invitation. */
export function upsertStaffCredentials(db: Db, staff: { staff_id: number; email: string }) {
  return db
    .insertInto("staff_credentials")
    .values(staff)
    .onConflict((oc) => oc.column("staff_id").doUpdateSet({ email: staff.email }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function setStaffPassword(db: Db, staffId: number, passwordHash: string) {
  return db
    .updateTable("staff_credentials")
    .set({ password_hash: passwordHash, password_changed_at: new Date() })
    .where("staff_id", "=", staffId)
    .execute();
}

/** Forgets the person's second factors: an accepted invitation starts their credentials afresh. */
export async function clearSecondFactors(db: Db, staffId: number) {
  await db
    .updateTable("staff_credentials")
    .set({ totp_secret_sealed: null, totp_last_step: null })
    .where("staff_id", "=", staffId)
    .execute();
  await db.deleteFrom("staff_passkeys").where("staff_id", "=", staffId).execute();
}

export function setTotpSecret(db: Db, staffId: number, sealed: Buffer, step: number) {
  return db
    .updateTable("staff_credentials")
    .set({ totp_secret_sealed: sealed, totp_last_step: step })
    .where("staff_id", "=", staffId)
    .execute();
}

/**
 * Takes a code's time step as used, once: of two sign-ins with the same code (or with an older
 * one of the same window), one gets the row and the other nothing.
 */
export async function claimTotpStep(db: Db, staffId: number, step: number): Promise<boolean> {
  const row = await db
    .updateTable("staff_credentials")
    .set({ totp_last_step: step })
    .where("staff_id", "=", staffId)
    .where((eb) => eb.or([eb("totp_last_step", "is", null), eb("totp_last_step", "<", step)]))
    .returning("staff_id")
    .executeTakeFirst();
  return row !== undefined;
}

export function listPasskeys(db: Db, staffId: number) {
  return db.selectFrom("staff_passkeys").selectAll().where("staff_id", "=", staffId).orderBy("id").execute();
}

export function countPasskeys(db: Db, staffId: number) {
  return db
    .selectFrom("staff_passkeys")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("staff_id", "=", staffId)
    .executeTakeFirstOrThrow()
    .then((row) => Number(row.n));
}

export function insertPasskey(
  db: Db,
  passkey: {
    staff_id: number;
    credential_id: string;
    public_key: Buffer;
    sign_count: number;
    transports: string[];
    name: string;
  },
) {
  return db.insertInto("staff_passkeys").values(passkey).returning(["id"]).executeTakeFirstOrThrow();
}

/** The counter an assertion reported, once verified: a later assertion must report more. */
export function recordPasskeyUse(db: Db, passkeyId: number, signCount: number) {
  return db
    .updateTable("staff_passkeys")
    .set({ sign_count: signCount, last_used_at: sql<Date>`now()` })
    .where("id", "=", passkeyId)
    .execute();
}

export function insertStaffInvitation(
  db: Db,
  invitation: { staff_id: number; token_sha256: Buffer; expires_at: Date },
) {
  return db.insertInto("staff_invitations").values(invitation).returning(["expires_at"]).executeTakeFirstOrThrow();
}

/** Older invitations stop working when a new one is sent. */
export function retireStaffInvitations(db: Db, staffId: number) {
  return db
    .updateTable("staff_invitations")
    .set({ used_at: sql<Date>`now()` })
    .where("staff_id", "=", staffId)
    .where("used_at", "is", null)
    .execute();
}

/** The e-mail of the person an invitation token names, used or not (to judge the new password first). */
export function invitedEmail(db: Db, tokenSha256: Buffer) {
  return db
    .selectFrom("staff_invitations")
    .innerJoin("staff_credentials", "staff_credentials.staff_id", "staff_invitations.staff_id")
    .select("staff_credentials.email")
    .where("staff_invitations.token_sha256", "=", tokenSha256)
    .executeTakeFirst();
}

/** Marks the invitation used, once (see consumeLink); an expired or used one is nothing. */
export function consumeStaffInvitation(db: Db, tokenSha256: Buffer) {
  return db
    .updateTable("staff_invitations")
    .set({ used_at: sql<Date>`now()` })
    .where("token_sha256", "=", tokenSha256)
    .where("used_at", "is", null)
    .where("expires_at", ">", sql<Date>`now()`)
    .returning(["staff_id"])
    .executeTakeFirst();
}

export function insertChallenge(
  db: Db,
  challenge: { token_sha256: Buffer; staff_id: number; purpose: ChallengePurpose; expires_at: Date },
) {
  return db.insertInto("staff_challenges").values(challenge).returning(["id"]).executeTakeFirstOrThrow();
}

/** A challenge still open (not expired) for this purpose, with its person's e-mail. */
export function findChallenge(db: Db, tokenSha256: Buffer, purpose: ChallengePurpose) {
  return db
    .selectFrom("staff_challenges")
    .innerJoin("staff_credentials", "staff_credentials.staff_id", "staff_challenges.staff_id")
    .select([
      "staff_challenges.id",
      "staff_challenges.staff_id",
      "staff_challenges.webauthn_challenge",
      "staff_challenges.pending_totp_sealed",
      "staff_challenges.failures",
      "staff_challenges.expires_at",
      "staff_credentials.email",
    ])
    .where("staff_challenges.token_sha256", "=", tokenSha256)
    .where("staff_challenges.purpose", "=", purpose)
    .where("staff_challenges.expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
}

export function setChallengeState(
  db: Db,
  challengeId: number,
  state: { webauthn_challenge?: string; pending_totp_sealed?: Buffer },
) {
  return db.updateTable("staff_challenges").set(state).where("id", "=", challengeId).execute();
}

/** Counts a wrong second factor given within the challenge; the count after it. */
export async function countChallengeFailure(db: Db, challengeId: number): Promise<number> {
  const row = await db
    .updateTable("staff_challenges")
    .set((eb) => ({ failures: eb("failures", "+", 1) }))
    .where("id", "=", challengeId)
    .returning("failures")
    .executeTakeFirst();
  return row?.failures ?? Number.POSITIVE_INFINITY;
}

/** Uses the challenge up, once: of two requests completing it at the same time, one gets it. */
export async function consumeChallenge(db: Db, challengeId: number): Promise<boolean> {
  const row = await db
    .deleteFrom("staff_challenges")
    .where("id", "=", challengeId)
    .where("expires_at", ">", sql<Date>`now()`)
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

export function deleteChallenge(db: Db, challengeId: number) {
  return db.deleteFrom("staff_challenges").where("id", "=", challengeId).execute();
}

/** A new challenge replaces the person's older ones of the same purpose. */
export function deleteChallengesOf(db: Db, staffId: number, purpose: ChallengePurpose) {
  return db.deleteFrom("staff_challenges").where("staff_id", "=", staffId).where("purpose", "=", purpose).execute();
}

/** Expired challenges, and invitations expired or used a day ago, are of no use to anyone. */
export async function deleteOldStaffRows(db: Db) {
  await db.deleteFrom("staff_challenges").where("expires_at", "<=", sql<Date>`now()`).execute();
  await db
    .deleteFrom("staff_invitations")
    .where((eb) =>
      eb.or([
        eb("expires_at", "<", sql<Date>`now() - interval '1 day'`),
        eb("used_at", "<", sql<Date>`now() - interval '1 day'`),
      ]),
    )
    .execute();
}
