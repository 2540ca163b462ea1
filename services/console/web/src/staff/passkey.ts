/**
 * The browser's side of passkeys, @simplewebauthn/browser, loaded only when a person creates or
 * uses one: the pages every shop user loads do not carry it (README, Budget).
 */
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/browser";

const library = () => import("@simplewebauthn/browser");

/** Asks the browser (and the person's authenticator) for a new passkey with these options. */
export async function createPasskey(optionsJSON: PublicKeyCredentialCreationOptionsJSON) {
  return (await library()).startRegistration({ optionsJSON });
}

/** Asks the browser (and the person's authenticator) to sign this challenge with a passkey. */
export async function signWithPasskey(optionsJSON: PublicKeyCredentialRequestOptionsJSON) {
  return (await library()).startAuthentication({ optionsJSON });
}

/** Whether this browser can make and use passkeys at all. */
export const passkeysSupported = () => typeof window !== "undefined" && "PublicKeyCredential" in window;

/** What a refusal or cancellation of the browser's passkey prompt means to the person. */
export function passkeyProblem(error: unknown): string {
  const name = error instanceof Error ? error.name : "";
  if (name === "NotAllowedError" || name === "AbortError") {
    return "the passkey prompt was closed or timed out: try again";
  }
  if (name === "InvalidStateError") return "this authenticator already holds a passkey for you";
  return `the browser could not use a passkey${error instanceof Error && error.message ? `: ${error.message}` : ""}`;
}
