/** Phone numbers as places store them: validated, in the international spaced form (+33 1 23 45 67 89). */
import { unprocessable } from "@dos/service-kit";
import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";

/**
 * Parsing and formatting cost 50–100 µs a number, the largest piece of a create's own work, and
 * integrators send the same numbers again and again (their shop's, their regular customers'):
 * outcomes are remembered by region and text. The result depends on nothing else, so an entry
 * never goes stale; the oldest entries go first once the map is full.
 */
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, string | null>();

function normalized(value: string, defaultRegion: string): string | null {
  const key = `${defaultRegion} ${value}`;
  const known = remembered.get(key);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(value, defaultRegion as CountryCode);
  const outcome = parsed?.isValid() ? parsed.formatInternational() : null;
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
  remembered.set(key, outcome);
  return outcome;
}

/** The normalised number, or a 422 naming the field; a number without "+" is read in the account's region. */
export function normalizePhone(value: string, defaultRegion: string, label = "recipient_phone"): string {
  const outcome = normalized(value, defaultRegion);
  if (outcome === null) {
    throw unprocessable(`${label} is not a valid phone number (international format such as +33 1 23 45 67 89)`);
  }
  return outcome;
}
