/** Phone numbers as places store them: validated, in the international spaced form (+33 1 23 45 67 89). */
import { unprocessable } from "@dos/service-kit";
import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";

/** The normalised number, or a 422 naming the field; a number without "+" is read in the account's region. */
export function normalizePhone(value: string, defaultRegion: string, label = "recipient_phone"): string {
  const parsed = parsePhoneNumberFromString(value, defaultRegion as CountryCode);
  if (!parsed?.isValid()) {
    throw unprocessable(`${label} is not a valid phone number (international format such as +33 1 23 45 67 89)`);
  }
  return parsed.formatInternational();
}
