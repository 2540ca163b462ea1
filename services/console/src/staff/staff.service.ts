/**
 * How the operator's staff prove who they are. delivery-api owns the people (e-mail, name,
 * role, disabled); the console keeps their password, authenticator secret and passkeys.
 *
 * - An invitation (one-time link) lets the person set a password, which opens an enrolment (a
 *   challenge bound to that browser, 30 minutes) in which they enrol a passkey or an
 *   authenticator app; only then can a session start. Accepting an invitation starts the
 *   credentials afresh: the old factors are forgotten and the person's sessions end (a lost
 *   phone is replaced that way). A password alone never opens an enrolment.
 * - Sign-in is two steps: the password, which opens a sign-in challenge (a cookie, 5 minutes,
 *   a few tries), then a passkey assertion or a 6-digit code within that challenge. Both steps
 *   are throttled per e-mail and per address like the shop's sign-in, and wrong second factors
 *   per person per hour; an authenticator code is accepted once.
 */
import { HttpError, notFound, unauthorized, unprocessable } from "@dos/service-kit";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { Config } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { OpsClient } from "../delivery-api/ops-client.ts";
import type { Mailer } from "../mail/mailer.ts";
import { hashPassword, passwordProblems, verifyPassword } from "../people/passwords.ts";
import { countRecentFailures, recordFailures } from "../people/people.repository.ts";
import { newToken, type Sealer, sha256 } from "../secrets.ts";
import type { Passkeys } from "./passkeys.ts";
import {
  claimTotpStep,
  clearSecondFactors,
  consumeChallenge,
  consumeStaffInvitation,
  countChallengeFailure,
  countPasskeys,
  deleteChallenge,
  deleteChallengesOf,
  findChallenge,
  findStaffCredentials,
  findStaffCredentialsByEmail,
  insertChallenge,
  insertPasskey,
  insertStaffInvitation,
  invitedEmail,
  listPasskeys,
  recordPasskeyUse,
  retireStaffInvitations,
  setChallengeState,
  setStaffPassword,
  setTotpSecret,
  upsertStaffCredentials,
} from "./staff.repository.ts";
import type { ChallengePurpose } from "./staff.table.ts";
import { newTotpSecret, totpStep, totpUri } from "./totp.ts";

export interface StaffCredentialsDeps {
  db: Db;
  ops: OpsClient;
  mailer: Mailer;
  config: Config;
  sealer: Sealer;
  passkeys: Passkeys;
}

/** How long the second step may follow the password. */
const SIGN_IN_CHALLENGE_MINUTES = 5;
/** How long enrolling a second factor may follow the password set through the invitation. */
const ENROLMENT_MINUTES = 30;
/** Wrong second factors within one sign-in challenge; then the password is asked again. */
const CHALLENGE_FAILURES = 3;
const HOUR_SECONDS = 3600;

export type SecondFactor = "passkey" | "totp";

/** A challenge that was opened: its cookie value (returned once, stored hashed) and expiry. */
export interface OpenedChallenge {
  cookie: string;
  expiresAt: Date;
}

const SIGN_IN_GONE = "the sign-in has expired or was not started: enter your e-mail and password again";
const ENROLMENT_GONE = "the enrolment has expired or was not started: ask an administrator for a new invitation";
const WRONG_PASSWORD = "e-mail or password is wrong";

export function createStaffCredentials(deps: StaffCredentialsDeps) {
  const { db, ops, mailer, config, sealer, passkeys } = deps;
  const window = config.CONSOLE_SIGN_IN_WINDOW_SECONDS;
  const tooMany = (retryAfter: number) =>
    new HttpError(429, "too many failed sign-ins, try again later", { "retry-after": String(retryAfter) });

  const keysOf = (email: string, address: string) => [`staff:${email.toLowerCase()}`, `address:${address}`];
  const factorKey = (staffId: number) => `staff-factor:${staffId}`;

  /** Refuses (429) once the e-mail or the address had its failures within the window, before any work. */
  async function refuseWhenThrottled(email: string, address: string) {
    const [byEmail, byAddress] = await Promise.all(
      keysOf(email, address).map((key) => countRecentFailures(db, key, window)),
    );
    if ((byEmail ?? 0) >= config.CONSOLE_SIGN_IN_FAILURES_PER_EMAIL) throw tooMany(window);
    if ((byAddress ?? 0) >= config.CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS) throw tooMany(window);
  }

  async function openChallenge(staffId: number, purpose: ChallengePurpose, minutes: number): Promise<OpenedChallenge> {
    await deleteChallengesOf(db, staffId, purpose);
    const cookie = newToken();
    const expiresAt = new Date(Date.now() + minutes * 60_000);
    await insertChallenge(db, { token_sha256: sha256(cookie), staff_id: staffId, purpose, expires_at: expiresAt });
    return { cookie, expiresAt };
  }

  async function challengeOf(cookie: string | undefined, purpose: ChallengePurpose) {
    const challenge = cookie && cookie.length <= 100 ? await findChallenge(db, sha256(cookie), purpose) : undefined;
    if (!challenge) throw unauthorized(purpose === "sign_in" ? SIGN_IN_GONE : ENROLMENT_GONE);
    return challenge;
  }

  /** The second factors the person has enrolled. */
  async function factorsOf(staffId: number): Promise<SecondFactor[]> {
    const credentials = await findStaffCredentials(db, staffId);
    const factors: SecondFactor[] = [];
    if ((await countPasskeys(db, staffId)) > 0) factors.push("passkey");
    if (credentials?.totp_secret_sealed) factors.push("totp");
    return factors;
  }

  /** A second step of a sign-in: throttled before any work, like the first. */
  async function signInChallenge(cookie: string | undefined, address: string) {
    const challenge = await challengeOf(cookie, "sign_in");
    await refuseWhenThrottled(challenge.email, address);
    if (
      (await countRecentFailures(db, factorKey(challenge.staff_id), HOUR_SECONDS)) >=
      config.CONSOLE_STAFF_FACTOR_FAILURES_PER_HOUR
    ) {
      throw tooMany(HOUR_SECONDS);
    }
    return challenge;
  }

  /** Counts a wrong second factor everywhere it is counted, ends the challenge after a few, and refuses. */
  async function secondFactorFailed(
    challenge: { id: number; staff_id: number; email: string },
    address: string,
    message: string,
  ): Promise<never> {
    await recordFailures(db, [...keysOf(challenge.email, address), factorKey(challenge.staff_id)]);
    if ((await countChallengeFailure(db, challenge.id)) >= CHALLENGE_FAILURES) {
      await deleteChallenge(db, challenge.id);
      throw unauthorized(`${message}; ${SIGN_IN_GONE}`);
    }
    throw unauthorized(message);
  }

  /** Uses the challenge up; a second request completing the same challenge finds it gone. */
  async function complete(challenge: { id: number; staff_id: number }, purpose: ChallengePurpose) {
    if (!(await consumeChallenge(db, challenge.id))) {
      throw unauthorized(purpose === "sign_in" ? SIGN_IN_GONE : ENROLMENT_GONE);
    }
    return challenge.staff_id;
  }

  /** The person as delivery-api knows them now; a disabled person gets no further. */
  async function activeStaff(staffId: number) {
    const staff = await ops.getStaff(staffId).catch((error: unknown) => {
      if (error instanceof HttpError && error.statusCode === 404) throw unauthorized(WRONG_PASSWORD);
      throw error;
    });
    if (staff.disabled) throw new HttpError(403, "this staff account is disabled");
    return staff;
  }

  return {
    /** The operator invites a staff person of delivery-api by e-mail; a new invitation retires the older. */
    async invite(email: string) {
      const staff = await ops.findStaffByEmail(email);
      if (!staff) throw notFound(`staff member with e-mail ${email}`);
      if (staff.disabled) throw new HttpError(409, `staff member ${staff.email} is disabled`);
      await upsertStaffCredentials(db, { staff_id: staff.id, email: staff.email });
      await retireStaffInvitations(db, staff.id);
      const token = newToken();
      const ttl = config.CONSOLE_INVITATION_TTL_MINUTES;
      const invitation = await insertStaffInvitation(db, {
        staff_id: staff.id,
        token_sha256: sha256(token),
        expires_at: new Date(Date.now() + ttl * 60_000),
      });
      // In the fragment: no server receives it, so the token is in no access log.
      const url = `${config.CONSOLE_PUBLIC_URL}/staff/invitation#token=${token}`;
      const hours = Math.round((ttl / 60) * 10) / 10;
      await mailer.send({
        to: staff.email,
        subject: "Your delivery console staff invitation",
        text: `You are invited to the delivery console as a member of the operator's staff. Set your password here (valid ${hours} h, once), then enrol a passkey or an authenticator app:\n\n${url}\n`,
      });
      return { email: staff.email, expires_at: invitation.expires_at.toISOString() };
    },

    /**
     * Uses the invitation: sets the password, forgets the old second factors, and opens the
     * enrolment of a new one. The password is judged before the link is used, so a refused
     * password leaves the link usable.
     */
    async acceptInvitation(token: string, password: string) {
      const gone = new HttpError(410, "invitation link has expired or was already used");
      if (token.length > 100) throw gone;
      const hash = sha256(token);
      const pending = await invitedEmail(db, hash);
      if (pending) {
        const problems = passwordProblems(password, pending.email);
        if (problems.length > 0) throw unprocessable(problems);
      }
      const used = await consumeStaffInvitation(db, hash);
      if (!used) throw gone;
      await setStaffPassword(db, used.staff_id, await hashPassword(password));
      await clearSecondFactors(db, used.staff_id);
      const opened = await openChallenge(used.staff_id, "enrol", ENROLMENT_MINUTES);
      return { ...opened, staffId: used.staff_id, email: pending?.email ?? "" };
    },

    /** The enrolment under way in this browser: whose, until when. */
    async enrolment(cookie: string | undefined) {
      const challenge = await challengeOf(cookie, "enrol");
      return { email: challenge.email, expires_at: challenge.expires_at.toISOString() };
    },

    /** A new authenticator secret, shown to the person, kept sealed until a code proves it was saved. */
    async offerTotp(cookie: string | undefined) {
      const challenge = await challengeOf(cookie, "enrol");
      const secret = newTotpSecret();
      await setChallengeState(db, challenge.id, { pending_totp_sealed: sealer.seal(secret) });
      return { secret, uri: totpUri(secret, challenge.email) };
    },

    /** Enrols the offered secret once a code of it is right; the staff id, to sign in. */
    async confirmTotp(cookie: string | undefined, code: string) {
      const challenge = await challengeOf(cookie, "enrol");
      if (!challenge.pending_totp_sealed) throw unprocessable(["ask for an authenticator secret first"]);
      const secret = sealer.open(challenge.pending_totp_sealed);
      const step = totpStep(secret, code);
      if (step === undefined) {
        throw unprocessable([
          "code is not the one the authenticator shows now: check the secret was entered exactly and the device's clock",
        ]);
      }
      const staffId = await complete(challenge, "enrol");
      // The code just used counts as used: it cannot sign in within its window.
      await setTotpSecret(db, staffId, sealer.seal(secret), step);
      return staffId;
    },

    /** The options navigator.credentials.create takes to make a passkey for the person. */
    async passkeyCreationOptions(cookie: string | undefined) {
      const challenge = await challengeOf(cookie, "enrol");
      const staff = await activeStaff(challenge.staff_id);
      const options = await passkeys.registrationOptions(
        { staffId: staff.id, email: staff.email, name: staff.name },
        await listPasskeys(db, staff.id),
      );
      await setChallengeState(db, challenge.id, { webauthn_challenge: options.challenge });
      return options;
    },

    /** Enrols the passkey the browser made; the staff id, to sign in. */
    async registerPasskey(cookie: string | undefined, name: string, response: RegistrationResponseJSON) {
      const challenge = await challengeOf(cookie, "enrol");
      if (!challenge.webauthn_challenge) throw unprocessable(["ask for the passkey options first"]);
      const passkey = await passkeys.verifyRegistration(response, challenge.webauthn_challenge);
      if (!passkey) throw unprocessable(["the passkey could not be verified: try again"]);
      const staffId = await complete(challenge, "enrol");
      await insertPasskey(db, { ...passkey, staff_id: staffId, name });
      return staffId;
    },

    /**
     * The first step: the password. Refused at once, before any hashing, once the e-mail or the
     * address had its failures within the window. Right: a sign-in challenge for the second step.
     */
    async checkPassword(email: string, password: string, address: string) {
      await refuseWhenThrottled(email, address);
      const credentials = await findStaffCredentialsByEmail(db, email);
      const right = await verifyPassword(credentials?.password_hash ?? null, password);
      if (!credentials || !right) {
        await recordFailures(db, keysOf(email, address));
        throw unauthorized(WRONG_PASSWORD);
      }
      await activeStaff(credentials.staff_id);
      const factors = await factorsOf(credentials.staff_id);
      if (factors.length === 0) {
        throw new HttpError(403, "no second factor is enrolled: ask an administrator for a new invitation");
      }
      return { ...(await openChallenge(credentials.staff_id, "sign_in", SIGN_IN_CHALLENGE_MINUTES)), factors };
    },

    /** The sign-in under way in this browser: the factors it may be completed with. */
    async pendingSignIn(cookie: string | undefined) {
      const challenge = await challengeOf(cookie, "sign_in");
      return { factors: await factorsOf(challenge.staff_id), expires_at: challenge.expires_at.toISOString() };
    },

    /** The options navigator.credentials.get takes to sign in with one of the person's passkeys. */
    async passkeyRequestOptions(cookie: string | undefined) {
      const challenge = await challengeOf(cookie, "sign_in");
      const mine = await listPasskeys(db, challenge.staff_id);
      if (mine.length === 0) throw unprocessable(["no passkey is enrolled: use the authenticator code"]);
      const options = await passkeys.authenticationOptions(mine);
      await setChallengeState(db, challenge.id, { webauthn_challenge: options.challenge });
      return options;
    },

    /** The second step with an authenticator code; the staff id when it is right and unused. */
    async signInWithCode(cookie: string | undefined, code: string, address: string) {
      const challenge = await signInChallenge(cookie, address);
      const credentials = await findStaffCredentials(db, challenge.staff_id);
      const secret = credentials?.totp_secret_sealed ? sealer.open(credentials.totp_secret_sealed) : undefined;
      const step = secret ? totpStep(secret, code) : undefined;
      // A used code is refused like a wrong one: whoever saw it typed cannot sign in with it.
      if (step === undefined || !(await claimTotpStep(db, challenge.staff_id, step))) {
        return secondFactorFailed(challenge, address, "the code is wrong or was already used");
      }
      return complete(challenge, "sign_in");
    },

    /** The second step with a passkey; the staff id when the assertion is one of the person's. */
    async signInWithPasskey(cookie: string | undefined, response: AuthenticationResponseJSON, address: string) {
      const challenge = await signInChallenge(cookie, address);
      const expected = challenge.webauthn_challenge;
      const passkey = (await listPasskeys(db, challenge.staff_id)).find((p) => p.credential_id === response.id);
      const counter =
        expected && passkey ? await passkeys.verifyAuthentication(response, expected, passkey) : undefined;
      if (!passkey || counter === undefined) {
        return secondFactorFailed(challenge, address, "the passkey was not accepted");
      }
      const staffId = await complete(challenge, "sign_in");
      await recordPasskeyUse(db, passkey.id, counter);
      return staffId;
    },
  };
}

export type StaffCredentials = ReturnType<typeof createStaffCredentials>;
