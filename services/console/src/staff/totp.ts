/**
 * Authenticator codes (TOTP, RFC 6238) with `otpauth`: SHA-1, 6 digits, 30-second steps, which
 * every authenticator app reads from an otpauth:// URI. A code is accepted one step either side
 * of now (a phone's clock drifts, a person types slowly); the step it matched is returned so
 * that the caller accepts each step once (no replay within the window).
 */
import { Secret, TOTP } from "otpauth";

const ISSUER = "Delivery console";
const DIGITS = 6;
const PERIOD_SECONDS = 30;
/** Steps accepted either side of the current one. */
const WINDOW = 1;

const totpOf = (secretBase32: string, label = "") =>
  new TOTP({
    issuer: ISSUER,
    label,
    secret: Secret.fromBase32(secretBase32),
    algorithm: "SHA1",
    digits: DIGITS,
    period: PERIOD_SECONDS,
  });

/** A new secret: 20 random bytes (RFC 4226's recommended length), base32 as apps take it. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

/** A secret of 20 bytes given as hex (the demo's, derived from its seed secret), in base32. */
export const totpSecretFromHex = (hex: string): string => Secret.fromHex(hex).base32;

/** The otpauth:// URI an authenticator app enrols from (typed, pasted, or as a QR code). */
export const totpUri = (secretBase32: string, email: string): string => totpOf(secretBase32, email).toString();

/** The time step this code was made for, when it is right (within the window); otherwise undefined. */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const totp = totpOf(secretBase32);
  const delta = totp.validate({ token: code, timestamp: now, window: WINDOW });
  return delta === null ? undefined : totp.counter({ timestamp: now }) + delta;
}
