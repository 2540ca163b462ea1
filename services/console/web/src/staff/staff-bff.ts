/**
 * The console's backend for the staff (/api/staff): the session, the two sign-in steps, the
 * invitation and the enrolment of a second factor. The WebAuthn options and answers cross as
 * @simplewebauthn's JSON shapes, typed by its browser package (types only here: its code is
 * loaded when a passkey is used, see passkey.ts).
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/browser";
import type { SystemView } from "../../../src/shared/page-shapes.ts";
import { call } from "../bff.ts";

export type StaffRole = "admin" | "dispatcher" | "read_only";

export interface StaffSessionState {
  signed_in: boolean;
  csrf_token: string;
  staff: { id: number; email: string; name: string; role: StaffRole } | null;
}

export type SecondFactor = "passkey" | "totp";

export interface PendingSignIn {
  factors: SecondFactor[];
  expires_at: string;
}

export const staffBff = {
  system: () => call<SystemView>("GET", "/staff/system"),
  invite: (email: string) => call<{ email: string; expires_at: string }>("POST", "/staff/invitations", { email }),
  session: () => call<StaffSessionState>("GET", "/staff/session"),
  signOut: () => call<void>("DELETE", "/staff/session"),
  sessionTokenIds: () => call<{ token_ids: number[] }>("GET", "/staff/session-tokens"),
  signIn: (email: string, password: string) => call<PendingSignIn>("POST", "/staff/sign-in", { email, password }),
  pendingSignIn: () => call<PendingSignIn>("GET", "/staff/sign-in"),
  passkeyRequestOptions: () => call<PublicKeyCredentialRequestOptionsJSON>("POST", "/staff/sign-in/passkey-options"),
  signInWithPasskey: (response: AuthenticationResponseJSON) =>
    call<StaffSessionState>("POST", "/staff/sign-in/passkey", { response }),
  signInWithCode: (code: string) => call<StaffSessionState>("POST", "/staff/sign-in/code", { code }),
  acceptInvitation: (token: string, password: string) =>
    call<{ email: string; expires_at: string }>("POST", "/staff/invitations/accept", { token, password }),
  enrolment: () => call<{ email: string; expires_at: string }>("GET", "/staff/enrolment"),
  offerTotp: () => call<{ secret: string; uri: string }>("POST", "/staff/enrolment/totp"),
  confirmTotp: (code: string) => call<StaffSessionState>("POST", "/staff/enrolment/totp/confirm", { code }),
  passkeyCreationOptions: () =>
    call<PublicKeyCredentialCreationOptionsJSON>("POST", "/staff/enrolment/passkey-options"),
  enrolPasskey: (name: string, response: RegistrationResponseJSON) =>
    call<StaffSessionState>("POST", "/staff/enrolment/passkey", { name, response }),
  /** Sends a shop's user the console's invitation link (administrators only, checked by the console with delivery-api). */
  inviteUser: (email: string) =>
    call<{ email: string; expires_at: string }>("POST", "/staff/user-invitations", { email }),
};

/** Who is signed in as staff: one cached query, which sign-in and sign-out refresh. */
export const staffSessionQuery = { queryKey: ["staff-session"], queryFn: staffBff.session };
