/** The Content-Security-Policy of the console's pages. */
import { PAGE_CSP } from "@dos/service-kit";

/**
 * The kit's page policy, with the map style's provider (when the style is not the console's own)
 * allowed to answer the map's requests: its style, tiles, sprites and glyphs.
 */
export function pagesCsp(mapStyleUrl: string | undefined): string {
  if (!mapStyleUrl?.startsWith("https://")) return PAGE_CSP;
  const origin = new URL(mapStyleUrl).origin;
  return PAGE_CSP.replace("img-src 'self' data:", `img-src 'self' data: ${origin}`).replace(
    "connect-src 'self'",
    `connect-src 'self' ${origin}`,
  );
}
