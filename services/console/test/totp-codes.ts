/** Authenticator codes as an app computes them (otpauth, the RFC's defaults), for the staff tests. */
import { Secret, TOTP } from "otpauth";

/** The code an authenticator app shows for this secret, `steps` periods of 30 s from now. */
export const codeOf = (secret: string, steps = 0) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + steps * 30_000 });

/** The code at a given moment. */
export const codeAt = (secret: string, timestamp: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp });

/** A code that is none of the secret's codes near now (the accepted window and the next step). */
export function wrongCode(secret: string): string {
  const near = new Set([-1, 0, 1, 2].map((steps) => codeOf(secret, steps)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, "0");
    if (!near.has(code)) return code;
  }
}
