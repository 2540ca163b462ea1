/**
 * The spec's rule on `address`: street number and street name only; anything else belongs in
 * `address_instructions`. The check is a heuristic tuned to refuse what integrators typically
 * append (floor, apartment, building, access code, postal code, a second line) while accepting
 * real street names, including French ones that carry a date ("Rue du 8 Mai 1945") or a road
 * number ("Route Nationale 7").
 */

// A leading street number: 10, 10bis, 10 bis, 10-12, 10/12, 221B, optionally followed by a comma.
const LEADING_NUMBER = /^\d{1,5}[a-z]?(\s*[-/]\s*\d{1,5}[a-z]?)?(\s*(bis|ter|quater|quinquies))?\b\s*,?\s*/iu;

const MONTHS =
  "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre";
// Dates in street names: "du 8 Mai 1945", "du 11 Novembre", "du 4 Septembre", "1er Mai".
const DATE_IN_NAME = new RegExp(`\\b\\d{1,2}(er)?\\s+(${MONTHS})(\\s+\\d{4})?\\b`, "giu");
// Road numbers: RN 7, RD 907, Route Nationale 7, Route Départementale 12.
const ROAD_NUMBER = /\b(rn|rd|route\s+nationale|route\s+d[ée]partementale)\s*\d{1,4}\b/giu;

// Words that name something other than the street (whole words, accents optional).
const EXTRA_WORDS = [
  "apt",
  "appt",
  "app",
  "apartment",
  "appartement",
  "flat",
  "floor",
  "[ée]tage",
  "code",
  "digicode",
  "interphone",
  "intercom",
  "b[âa]t",
  "b[âa]timent",
  "building",
  "bldg",
  "suite",
  "unit",
  "escalier",
  "esc",
  "staircase",
  "rdc",
  "rez-de-chauss[ée]e",
  "porte\\s+\\d+",
  "door",
  "bo[îi]te",
  "cedex",
  "bp",
];
const EXTRA_WORD = new RegExp(`(^|[^\\p{L}])(${EXTRA_WORDS.join("|")})(?=$|[^\\p{L}])`, "iu");
// Ordinal floors: 3e, 3ème, 2nd, 1st, 4th.
const ORDINAL = /\b\d+\s*(e|eme|ème|er|ere|ère|st|nd|rd|th)\b/iu;

/** True when the address holds more than a street number and a street name. */
export function addressHasExtras(address: string): boolean {
  if (/[\r\n\t]/.test(address)) return true;
  if (/[#;|]/.test(address)) return true;
  const street = address.trim().replace(LEADING_NUMBER, "");
  if (street.includes(",")) return true;
  if (EXTRA_WORD.test(street)) return true;
  const withoutNamedNumbers = street.replace(DATE_IN_NAME, " ").replace(ROAD_NUMBER, " ");
  if (ORDINAL.test(withoutNamedNumbers)) return true;
  // Any other digit after the street number is a postal code, a floor, a door or a code.
  return /\d/.test(withoutNamedNumbers);
}
