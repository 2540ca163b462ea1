/** Text rules of the model, shared by features: what counts as blank. */
import { unprocessable } from "@dos/service-kit";

/** Trims a required text; whitespace only is as blank as the empty string. */
export function requiredText(value: string, label: string): string {
  const text = value.trim();
  if (text === "") throw unprocessable(`${label} must not be blank`);
  return text;
}

/** Trims an optional text; blank or null becomes null. */
export function optionalText(value: string | null | undefined): string | null {
  const text = value?.trim();
  return text ? text : null;
}
