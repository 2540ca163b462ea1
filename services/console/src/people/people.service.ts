/**
 * The people who sign in: invited by e-mail (one-time link, hashed at rest, expiring), who set
 * their password through it, sign in with it (throttled per e-mail and per address), and reset
 * it by e-mail. The users themselves are delivery-api's: the console keeps their credentials.
 */
import { HttpError, notFound, unprocessable } from "@dos/service-kit";
import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import type { Mailer } from "../mail/mailer.ts";
import { newToken, sha256 } from "../secrets.ts";
import { hashPassword, passwordProblems, verifyPassword } from "./passwords.ts";
import {
  consumeLink,
  countRecentFailures,
  findUser,
  findUserByEmail,
  insertLink,
  recordFailures,
  retireLinks,
  setPassword,
  upsertUser,
} from "./people.repository.ts";
import type { LinkPurpose } from "./people.table.ts";

export interface PeopleDeps {
  db: Db;
  ops: OpsClient;
  mailer: Mailer;
  config: Config;
}

type User = NonNullable<Awaited<ReturnType<typeof findUser>>>;

const linkGone = (what: string) => new HttpError(410, `${what} link has expired or was already used`);

export function createPeople(deps: PeopleDeps) {
  const { db, ops, mailer, config } = deps;

  async function sendLink(user: User, purpose: LinkPurpose, ttlMinutes: number) {
    await retireLinks(db, user.id, purpose);
    const token = newToken();
    const link = await insertLink(db, {
      user_id: user.id,
      purpose,
      token_sha256: sha256(token),
      expires_at: new Date(Date.now() + ttlMinutes * 60_000),
    });
    // In the fragment: browsers send no fragment to any server, so the token is in no access log.
    const page = purpose === "invitation" ? "invitation" : "password-reset/new";
    const url = `${config.CONSOLE_PUBLIC_URL}/${page}#token=${token}`;
    const hours = Math.round((ttlMinutes / 60) * 10) / 10;
    await mailer.send(
      purpose === "invitation"
        ? {
            to: user.email,
            subject: "Your delivery console invitation",
            text: `You are invited to your shop's delivery console. Set your password here (valid ${hours} h, once):\n\n${url}\n`,
          }
        : {
            to: user.email,
            subject: "Reset your delivery console password",
            text: `Someone asked to reset the password of this e-mail address. If it was you, choose a new one here (valid ${hours} h, once):\n\n${url}\n\nOtherwise, ignore this e-mail.`,
          },
    );
    return link;
  }

  /** Uses a one-time link and sets the password it was sent for; the user, or a 410. */
  async function setPasswordThrough(purpose: LinkPurpose, token: string, password: string): Promise<User> {
    const what = purpose === "invitation" ? "invitation" : "password reset";
    if (token.length > 100) throw linkGone(what);
    // Checked before the link is used, so that a rejected password leaves the link usable; the
    // e-mail is needed for the check, hence this read first.
    const hash = sha256(token);
    const pending = await db
      .selectFrom("one_time_links")
      .innerJoin("users", "users.id", "one_time_links.user_id")
      .select(["users.email"])
      .where("token_sha256", "=", hash)
      .executeTakeFirst();
    if (pending) {
      const problems = passwordProblems(password, pending.email);
      if (problems.length > 0) throw unprocessable(problems);
    }
    const used = await consumeLink(db, purpose, hash);
    if (!used) throw linkGone(what);
    await setPassword(db, used.user_id, await hashPassword(password));
    return (await findUser(db, used.user_id)) as User;
  }

  return {
    /** The operator invites a user of delivery-api by e-mail; a new invitation retires the older. */
    async invite(email: string) {
      const apiUser = await ops.findUserByEmail(email);
      if (!apiUser) throw notFound(`user with e-mail ${email}`);
      const user = await upsertUser(db, {
        api_user_id: apiUser.id,
        account_id: apiUser.account_id,
        email: apiUser.email,
      });
      const link = await sendLink(user, "invitation", config.CONSOLE_INVITATION_TTL_MINUTES);
      return { email: user.email, expires_at: link.expires_at.toISOString() };
    },

    acceptInvitation: (token: string, password: string) => setPasswordThrough("invitation", token, password),

    /** Always the same answer, whether the e-mail is known or not: it tells nobody who has an account. */
    async requestReset(email: string) {
      const user = await findUserByEmail(db, email);
      if (!user?.password_hash) return;
      // A reset costs an e-mail: at most as many per window as wrong passwords are allowed.
      const key = `reset:${email.toLowerCase()}`;
      if ((await countRecentFailures(db, key, 3600)) >= config.CONSOLE_SIGN_IN_FAILURES_PER_EMAIL) return;
      await recordFailures(db, [key]);
      await sendLink(user, "password_reset", config.CONSOLE_RESET_TTL_MINUTES);
    },

    completeReset: (token: string, password: string) => setPasswordThrough("password_reset", token, password),

    /**
     * Checks an e-mail and password. Refused at once, before any hashing, once the e-mail or the
     * address has had its quota of failures within the window; each failure counts for both.
     */
    async checkPassword(email: string, password: string, address: string): Promise<User> {
      const keys = [`email:${email.toLowerCase()}`, `address:${address}`];
      const window = config.CONSOLE_SIGN_IN_WINDOW_SECONDS;
      const [byEmail, byAddress] = await Promise.all(keys.map((key) => countRecentFailures(db, key, window)));
      if (
        (byEmail ?? 0) >= config.CONSOLE_SIGN_IN_FAILURES_PER_EMAIL ||
        (byAddress ?? 0) >= config.CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS
      ) {
        throw new HttpError(429, "too many failed sign-ins, try again later", { "retry-after": String(window) });
      }
      const user = await findUserByEmail(db, email);
      if (user && (await verifyPassword(user.password_hash, password))) return user;
      if (!user) await verifyPassword(null, password);
      await recordFailures(db, keys);
      throw new HttpError(401, "e-mail or password is wrong");
    },
  };
}

export type People = ReturnType<typeof createPeople>;
