/** Tables of the staff's credentials: password, authenticator secret, passkeys, invitations, challenges. */
import type { ColumnType, Generated } from "kysely";

export interface StaffCredentialsTable {
  /** delivery-api's staff id. */
  staff_id: number;
  email: string;
  password_hash: string | null;
  password_changed_at: Date | null;
  totp_secret_sealed: Buffer | null;
  totp_last_step: number | null;
  created_at: ColumnType<Date, never, never>;
}

export interface StaffPasskeysTable {
  id: Generated<number>;
  staff_id: number;
  credential_id: string;
  public_key: Buffer;
  sign_count: number;
  transports: string[];
  name: string;
  created_at: ColumnType<Date, never, never>;
  last_used_at: Date | null;
}

export interface StaffInvitationsTable {
  id: Generated<number>;
  staff_id: number;
  token_sha256: Buffer;
  expires_at: Date;
  used_at: Date | null;
  created_at: ColumnType<Date, never, never>;
}

/** sign_in: the password was right and a second factor is due; enrol: one is to be enrolled. */
export type ChallengePurpose = "sign_in" | "enrol";

export interface StaffChallengesTable {
  id: Generated<number>;
  token_sha256: Buffer;
  staff_id: number;
  purpose: ChallengePurpose;
  webauthn_challenge: string | null;
  pending_totp_sealed: Buffer | null;
  failures: ColumnType<number, never, number>;
  expires_at: Date;
  created_at: ColumnType<Date, never, never>;
}
