/**
 * What V8's JSON parser is given is bounded before it runs. Its time grows with what it builds:
 * faster than linearly with nesting (10,000 levels in 20 KB took 120 ms), and most per byte for
 * objects (one object of 20,000 fields, 200 KB, took 11 ms; an array of 32,000 small objects,
 * 256 KB, 11 ms; an array of 131,000 numbers, 3 ms), while no body of any service goes deeper
 * than a few levels, has an object of more than a few dozen fields or an array of more entries
 * than its route's maxItems. So the raw bytes are read, before they are decoded, up to the first bound
 * it goes beyond, and such a body is refused with the field it names. The bounds are far above
 * any contract: assertBoundedSchema refuses a route whose schema would exceed them. Entries of
 * every kind count, numbers too: a 256 KiB array of numbers cost 2.3 ms of walking and 2 ms of
 * parsing before its maxItems refused it, and now costs a walk of its first 10,000 entries.
 */

/** Deepest nesting of objects and arrays a body may have; the deepest contract body has 4. */
const MAX_JSON_DEPTH = 32;
/** Most fields of one object; the widest contract object has about 20. */
export const MAX_JSON_FIELDS = 256;
/** Most entries of one array; the longest contract array (zones per request) has 5,000. */
export const MAX_JSON_ENTRIES = 10_000;

interface Frame {
  isObject: boolean;
  /** Commas seen: the index of the current entry, or the fields so far less one. */
  commas: number;
  /** The current field's name (objects only), as its bytes' bounds. */
  keyStart: number;
  keyEnd: number;
  expectingKey: boolean;
}

/**
 * The first bound the JSON text goes beyond, as a message naming the field (`packages`,
 * `zones[3].postal_codes`), or null. Brackets, commas and colons inside strings do not count; the
 * text need not be valid JSON (the parser says so afterwards). It is read as bytes, before it is
 * decoded: a body refused here never becomes a string (a 256 KiB one would be allocated in the
 * old generation), and UTF-8 keeps every byte of a multi-byte character above 0x7f, so none is
 * taken for a bracket, comma or quote.
 */
export function jsonShapeProblem(body: Buffer): string | null {
  if (clearlyWithinBounds(body)) return null;
  const frames: Frame[] = [];
  let inString = false;
  let stringStart = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as number;
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character, a quote included
      else if (c === 0x22) {
        inString = false;
        const top = frames.at(-1);
        if (top?.expectingKey) {
          top.keyStart = stringStart;
          top.keyEnd = i;
          top.expectingKey = false;
        }
      }
      continue;
    }
    if (c === 0x22) {
      inString = true;
      stringStart = i + 1;
    } else if (c === 0x2c) {
      const top = frames.at(-1);
      if (!top) continue;
      top.commas++;
      if (top.isObject) {
        top.expectingKey = true;
        if (top.commas >= MAX_JSON_FIELDS)
          return `${label(frames, body)} must not have more than ${MAX_JSON_FIELDS} fields`;
      } else if (top.commas >= MAX_JSON_ENTRIES) {
        return `${label(frames, body)} must have at most ${MAX_JSON_ENTRIES} entries`;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (frames.length >= MAX_JSON_DEPTH) return `body must not nest more than ${MAX_JSON_DEPTH} levels deep`;
      const isObject = c === 0x7b;
      frames.push({ isObject, commas: 0, keyStart: 0, keyEnd: 0, expectingKey: isObject });
    } else if (c === 0x7d || c === 0x5d) frames.pop();
  }
  return null;
}

/**
 * Whether the text is too small to go beyond any bound, found with a few native searches rather
 * than the walk below (most bodies are a few hundred bytes): fewer characters than an object may
 * have fields (each needs a comma), and fewer brackets than the depth bound (going deeper, or
 * beyond the entries bound, takes more brackets still). Brackets inside strings count too, so it
 * may send a text to the walk needlessly, never the reverse.
 */
function clearlyWithinBounds(body: Buffer): boolean {
  if (body.length > MAX_JSON_FIELDS) return false;
  let brackets = 0;
  for (const open of [0x7b, 0x5b]) {
    for (let at = body.indexOf(open); at >= 0; at = body.indexOf(open, at + 1)) {
      if (++brackets >= MAX_JSON_DEPTH) return false;
    }
  }
  return true;
}

/** Where the innermost open container is, in the spec's field-label style. */
function label(frames: Frame[], body: Buffer): string {
  let path = "";
  for (let depth = 0; depth < frames.length - 1; depth++) {
    const frame = frames[depth] as Frame;
    if (!frame.isObject) path += `[${frame.commas}]`;
    else {
      const key = body.toString("utf8", frame.keyStart, frame.keyEnd);
      path += path ? `.${key}` : key;
    }
  }
  return path || "body";
}
