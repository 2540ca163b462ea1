/**
 * Files that hold secrets (the operator token, the demo credentials, signing keys under var/):
 * readable by their owner only, 0600, also when the file existed before with a wider mode.
 * Plain Node only, so scripts/start.ts can import this source before anything is built.
 */
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fchmodSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

const OWNER_ONLY = 0o600;

/** Writes `text` to `file` with mode 0600; an existing file loses its wider mode before the new text lands. */
export function writeSecretFile(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, "w", OWNER_ONLY);
  try {
    // The mode given to open applies only to a file it creates (and the umask may narrow it).
    fchmodSync(fd, OWNER_ONLY);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** The secret kept in `file`, made of random bytes on first use; the file is 0600 afterwards either way. */
export function persistentSecret(file: string, bytes = 24): string {
  if (!existsSync(file)) {
    writeSecretFile(file, randomBytes(bytes).toString("base64url"));
  } else {
    const fd = openSync(file, "r");
    try {
      fchmodSync(fd, OWNER_ONLY);
    } finally {
      closeSync(fd);
    }
  }
  return readFileSync(file, "utf8").trim();
}
