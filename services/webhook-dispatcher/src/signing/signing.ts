/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`,
 * keyed with the bytes the `whsec_` secret encodes. During a rotation overlap the message is
 * signed with both secrets, space-separated, so a receiver holding either one verifies it.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes } from "node:crypto";
import type { SecretBox } from "./secret-box.ts";

const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
/** Sealed secrets whose keys are kept; more (a huge fleet of endpoints) starts the cache afresh. */
const MAX_CACHED_KEYS = 10_000;

/** A new signing secret, `whsec_` followed by 32 random bytes in base64. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

/** The HMAC key a secret encodes. */
export function signingKey(secret: string): KeyObject {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a signing secret starts with whsec_");
  return createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), "base64"));
}

/** The headers of one attempt; the timestamp (Unix seconds) is the time of sending. */
export function signedHeaders(
  keys: KeyObject[],
  webhookId: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const content = `${webhookId}.${timestamp}.${body}`;
  const signatures = keys.map((key) => `v1,${createHmac("sha256", key).update(content).digest("base64")}`);
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": timestamp,
    "webhook-signature": signatures.join(" "),
  };
}

/**
 * The signing key of a sealed secret, opened once: opening one (AES-GCM) and preparing its HMAC
 * key cost more than the POST itself. A rotation seals a new secret, so a new entry.
 */
export function createKeyRing(box: SecretBox): (sealed: string) => KeyObject {
  const keys = new Map<string, KeyObject>();
  return (sealed) => {
    let key = keys.get(sealed);
    if (!key) {
      if (keys.size >= MAX_CACHED_KEYS) keys.clear();
      key = signingKey(box.open(sealed));
      keys.set(sealed, key);
    }
    return key;
  };
}
