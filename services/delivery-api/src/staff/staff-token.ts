/**
 * Staff tokens: `dos_staff_` then 32 random bytes in base64url (43 characters). The prefix tells
 * the operator API's guard a person's token from the automation token without a lookup, and lets
 * secret scanners recognise one; only its SHA-256 is stored.
 */
import { hash, randomBytes } from "node:crypto";

const STAFF_TOKEN_PREFIX = "dos_staff_";
const TOKEN_BYTES = 32;
/** The prefix and 43 base64url characters: anything else is not a staff token. */
const STAFF_TOKEN = /^dos_staff_[A-Za-z0-9_-]{43}$/;

export function newStaffToken(): string {
  return `${STAFF_TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString("base64url")}`;
}

export function isStaffTokenShaped(token: string): boolean {
  return STAFF_TOKEN.test(token);
}

export function hashStaffToken(token: string): Buffer {
  return hash("sha256", token, "buffer");
}
