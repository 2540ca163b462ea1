/**
 * Passwords: argon2id (@node-rs/argon2) with OWASP's first recommended parameters (19 MiB, two
 * passes, one lane), and the rules a new password must meet.
 */
import { type Algorithm, hash, verify } from "@node-rs/argon2";

/** Argon2id: the enum is declared `const` in the package's types, which erasable TypeScript cannot read. */
const ARGON2ID = 2 as Algorithm;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

const PASSWORD_MIN = 12;
/** Bounds the work of one hash: a megabyte password would still hash, slowly, for nothing. */
export const PASSWORD_MAX = 128;

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

/** A hash of nothing anyone knows: an unknown e-mail is verified against it, so it takes as long. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

/** What is wrong with a new password, in the error shape's words; none: it is acceptable. */
export function passwordProblems(password: string, email: string): string[] {
  if ([...password].length < PASSWORD_MIN) return [`password must be at least ${PASSWORD_MIN} characters`];
  if (password.toLowerCase().includes(email.toLowerCase().split("@")[0] ?? email)) {
    return ["password must not contain the e-mail address's name"];
  }
  return [];
}
