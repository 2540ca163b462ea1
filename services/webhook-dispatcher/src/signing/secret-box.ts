/**
 * Signing secrets at rest: AES-256-GCM under a key derived from WEBHOOKS_SECRET_KEY, so a copy
 * of the database alone does not let anyone forge webhooks. Stored as `v1.<iv>.<tag>.<data>`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

export function createSecretBox(passphrase: string): SecretBox {
  const key = createHash("sha256").update(`webhooks-secret-box:${passphrase}`).digest();
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v1", iv, cipher.getAuthTag(), data]
        .map((part) => (typeof part === "string" ? part : part.toString("base64")))
        .join(".");
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split(".");
      if (version !== "v1" || !iv || !tag || data === undefined) throw new Error("sealed secret has an unknown format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
      decipher.setAuthTag(Buffer.from(tag, "base64"));
      return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8");
    },
  };
}
