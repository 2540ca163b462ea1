/**
 * Passkeys (WebAuthn) with @simplewebauthn/server: the options a browser's
 * navigator.credentials.create/get takes, and the verification of what it answers, for the
 * relying party of the configuration (CONSOLE_WEBAUTHN_RP_ID, CONSOLE_WEBAUTHN_ORIGIN).
 *
 * A passkey is the second factor after a password, so user verification (a PIN, a fingerprint)
 * is preferred but not required: possession of the authenticator is the factor. No attestation
 * is asked: the console trusts any authenticator the person chooses.
 */
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";

const RP_NAME = "Delivery console";
/** How long the browser waits for the person to use their authenticator. */
const TIMEOUT_MS = 120_000;

export interface RelyingParty {
  rpId: string;
  origin: string;
}

export interface StoredPasskey {
  credential_id: string;
  public_key: Buffer;
  sign_count: number;
  transports: string[];
}

const descriptor = (passkey: StoredPasskey) => ({ id: passkey.credential_id, transports: passkey.transports });

export function createPasskeys(rp: RelyingParty) {
  return {
    /** Options to create a passkey for this person, none of their existing ones again. */
    registrationOptions(person: { staffId: number; email: string; name: string }, existing: StoredPasskey[]) {
      return generateRegistrationOptions({
        rpName: RP_NAME,
        rpID: rp.rpId,
        userName: person.email,
        userDisplayName: person.name,
        // The user handle: the staff id's digits, no personal data (the spec says opaque bytes).
        userID: new TextEncoder().encode(`staff-${person.staffId}`),
        timeout: TIMEOUT_MS,
        attestationType: "none",
        excludeCredentials: existing.map(descriptor),
        authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
      });
    },

    /** The new passkey, when the browser's answer proves it was made for this challenge and origin. */
    async verifyRegistration(response: RegistrationResponseJSON, expectedChallenge: string) {
      const verified = await verifyRegistrationResponse({
        response,
        expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        requireUserVerification: false,
      }).catch(() => undefined);
      if (!verified?.verified) return undefined;
      const { credential } = verified.registrationInfo;
      return {
        credential_id: credential.id,
        public_key: Buffer.from(credential.publicKey),
        sign_count: credential.counter,
        transports: credential.transports ?? [],
      };
    },

    /** Options to sign in with one of these passkeys. */
    authenticationOptions(passkeys: StoredPasskey[]) {
      return generateAuthenticationOptions({
        rpID: rp.rpId,
        allowCredentials: passkeys.map(descriptor),
        timeout: TIMEOUT_MS,
        userVerification: "preferred",
      });
    },

    /**
     * The new signature counter when the assertion is this passkey's, for this challenge and
     * origin, and its counter went up (a counter that did not is a cloned authenticator's).
     */
    async verifyAuthentication(
      response: AuthenticationResponseJSON,
      expectedChallenge: string,
      passkey: StoredPasskey,
    ) {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(passkey.public_key),
          counter: passkey.sign_count,
          transports: passkey.transports,
        },
        requireUserVerification: false,
      }).catch(() => undefined);
      return verified?.verified ? verified.authenticationInfo.newCounter : undefined;
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
