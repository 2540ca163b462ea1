/**
 * What V8's JSON parser is given is bounded before it runs. Its time grows with what it builds:
 * faster than linearly with nesting (10,000 levels in 20 KB took 120 ms), and most per byte for
 * objects (one object of 20,000 fields, 200 KB, took 11 ms; an array of 32,000 small objects,
 * 256 KB, 11 ms; an array of 131,000 numbers, 3 ms), while no body of any service goes deeper
 * than a few levels, has an object of more than a few dozen fields or an array of more objects
 * than its route's maxItems. So the raw text is read once, before it is parsed, and a body beyond
 * these bounds is refused with the field it names. The bounds are far above any contract:
 * assertBoundedSchema refuses a route whose schema would exceed them. Arrays of numbers or
 * strings are left to the route's validator (maxItems), which judges them as cheaply.
 */

/** Deepest nesting of objects and arrays a body may have; the deepest contract body has 4. */
const MAX_JSON_DEPTH = 32;
/** Most fields of one object; the widest contract object has about 20. */
export const MAX_JSON_FIELDS = 256;
/** Most objects or arrays in one array; the longest contract array (zones per request) has 5,000. */
export const MAX_JSON_ENTRIES = 10_000;

interface Frame {
  isObject: boolean;
  /** Commas seen: the index of the current entry, or the fields so far less one. */
  commas: number;
  /** Containers opened directly inside (arrays only). */
  containers: number;
  /** The current field's name (objects only), as its text's bounds. */
  keyStart: number;
  keyEnd: number;
  expectingKey: boolean;
}

/**
 * The first bound the JSON text goes beyond, as a message naming the field (`packages`,
 * `zones[3].postal_codes`), or null. Brackets, commas and colons inside strings do not count; the
 * text need not be valid JSON (the parser says so afterwards).
 */
export function jsonShapeProblem(text: string): string | null {
  if (clearlyWithinBounds(text)) return null;
  const frames: Frame[] = [];
  let inString = false;
  let stringStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
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
          return `${label(frames, text)} must not have more than ${MAX_JSON_FIELDS} fields`;
      }
    } else if (c === 0x7b || c === 0x5b) {
      const parent = frames.at(-1);
      if (parent && !parent.isObject && ++parent.containers > MAX_JSON_ENTRIES) {
        return `${label(frames, text)} must have at most ${MAX_JSON_ENTRIES} entries`;
      }
      if (frames.length >= MAX_JSON_DEPTH) return `body must not nest more than ${MAX_JSON_DEPTH} levels deep`;
      const isObject = c === 0x7b;
      frames.push({ isObject, commas: 0, containers: 0, keyStart: 0, keyEnd: 0, expectingKey: isObject });
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
function clearlyWithinBounds(text: string): boolean {
  if (text.length > MAX_JSON_FIELDS) return false;
  let brackets = 0;
  for (const open of ["{", "["]) {
    for (let at = text.indexOf(open); at >= 0; at = text.indexOf(open, at + 1)) {
      if (++brackets >= MAX_JSON_DEPTH) return false;
    }
  }
  return true;
}

/** Where the innermost open container is, in the spec's field-label style. */
function label(frames: Frame[], text: string): string {
  let path = "";
  for (let depth = 0; depth < frames.length - 1; depth++) {
    const frame = frames[depth] as Frame;
    if (!frame.isObject) path += `[${frame.commas}]`;
    else {
      const key = text.slice(frame.keyStart, frame.keyEnd);
      path += path ? `.${key}` : key;
    }
  }
  return path || "body";
}
