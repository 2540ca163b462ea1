/**
 * The console's secrets at rest: random tokens (session cookies, one-time links, CSRF) stored
 * as their SHA-256, compared in constant time; the session's API token sealed with AES-256-GCM.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new random token: 32 bytes, base64url (43 characters). */
export const newToken = (): string => randomBytes(32).toString("base64url");

export const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

/** Whether two texts are equal, in a time that tells nothing of where they differ nor their length. */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

export interface Sealer {
  seal(text: string): Buffer;
  open(sealed: Buffer): string;
}

/** AES-256-GCM with a key derived from the configured secret: iv (12) + tag (16) + ciphertext. */
export function createSealer(secret: string): Sealer {
  const key = createHash("sha256").update(`console-seal:${secret}`).digest();
  return {
    seal(text) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString("utf8");
    },
  };
}
