/**
 * The console's map, as every map page makes it (the delivery page, the staff's vehicle page and
 * live map): MapLibre GL JS in the map chunk, loaded only by those pages, its worker one of the
 * console's own files (the pages' CSP allows no blob: worker), in the style the console is
 * configured with (its own offline style unless a provider is set), centred on Paris until the
 * page frames what it draws.
 */
import { useQuery } from "@tanstack/react-query";
import { Map as MapLibreMap, setWorkerUrl } from "maplibre-gl";
import "maplibre-gl/dist/maplibre-gl.css";
import workerUrl from "maplibre-gl/dist/maplibre-gl-worker.mjs?url";
import { type RefObject, useEffect, useRef, useState } from "react";
import { bff } from "../bff.ts";

setWorkerUrl(workerUrl);

const PARIS: [number, number] = [2.3522, 48.8566];

interface ConsoleMapOptions {
  /** Adds the page's sources and layers; `loaded` turns true after it. */
  onLoad?: (map: MapLibreMap) => void;
  /** Forgets what the page drew on a map that is gone (its markers, whether it was framed). */
  onRemove?: () => void;
  /** MapLibre's fade of moved symbols (300 ms by default). */
  fadeDuration?: number;
}

/**
 * A map in `container` once the style is known, removed with the page (or a new style): `map`
 * holds it, `loaded` says its style and the page's layers are in place, so drawing can start.
 */
export function useConsoleMap(container: RefObject<HTMLDivElement | null>, options: ConsoleMapOptions = {}) {
  const map = useRef<MapLibreMap | null>(null);
  const [loaded, setLoaded] = useState(false);
  // The latest callbacks, without making a new map when the page renders again.
  const latest = useRef(options);
  latest.current = options;
  const style = useQuery({ queryKey: ["map-style"], queryFn: bff.mapStyle });
  const styleUrl = style.data?.style_url;
  const { fadeDuration } = options;
  useEffect(() => {
    if (!container.current || !styleUrl) return;
    const created = new MapLibreMap({
      container: container.current,
      style: new URL(styleUrl, window.location.href).href,
      center: PARIS,
      zoom: 11,
      ...(fadeDuration === undefined ? {} : { fadeDuration }),
    });
    created.on("load", () => {
      latest.current.onLoad?.(created);
      setLoaded(true);
    });
    map.current = created;
    return () => {
      created.remove();
      map.current = null;
      setLoaded(false);
      latest.current.onRemove?.();
    };
  }, [container, styleUrl, fadeDuration]);
  return { map, loaded };
}
