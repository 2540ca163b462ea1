/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`,
 * keyed with the bytes the `whsec_` secret encodes. During a rotation overlap the message is
 * signed with both secrets, space-separated, so a receiver holding either one verifies it.
 */
import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;

/** A new signing secret, `whsec_` followed by 32 random bytes in base64. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a signing secret starts with whsec_");
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

/** The headers of one attempt; the timestamp (Unix seconds) is the time of sending. */
export function signedHeaders(
  secrets: string[],
  webhookId: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const content = `${webhookId}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (secret) => `v1,${createHmac("sha256", secretKey(secret)).update(content).digest("base64")}`,
  );
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": timestamp,
    "webhook-signature": signatures.join(" "),
  };
}
