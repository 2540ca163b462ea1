/**
 * The live map's drawing (MapLibre GL JS, the console's map chunk and map style, as on the
 * vehicle and delivery pages): every vehicle is a feature of one GeoJSON source, drawn by two
 * layers, so thousands moving every second cost one data update a second, not thousands of DOM
 * elements. Its state is its shape as well as its colour (a circle on time, a triangle
 * late, a hollow square without a position for 2 minutes). Clicking one opens its round. The
 * table under the map carries the same vehicles for the keyboard and screen readers.
 */
import { type GeoJSONSource, LngLatBounds, type Map as MapLibreMap } from "maplibre-gl";
import { useEffect, useRef } from "react";
import { useConsoleMap } from "../../pages/console-map.ts";
import { type LiveState, type LiveVehicle, STATE_ICONS } from "./live-fleet.ts";

/** Icon size in CSS pixels (drawn at twice that for sharp screens). */
const ICON = 16;

/** A flagged state's icon as pixels (a filled triangle, a hollow square): drawn here, so the offline style needs no sprite. */
function iconImage(shape: "triangle" | "square", colour: string): ImageData {
  const size = ICON * 2;
  const canvas = document.createElement("canvas");
  canvas.width = size;
  canvas.height = size;
  const g = canvas.getContext("2d") as CanvasRenderingContext2D;
  g.beginPath();
  if (shape === "triangle") {
    g.moveTo(size / 2, 3);
    g.lineTo(size - 3, size - 4);
    g.lineTo(3, size - 4);
    g.closePath();
    g.fillStyle = colour;
    g.fill();
    g.strokeStyle = "#fff";
    g.lineWidth = 4;
    g.stroke();
  } else {
    // Hollow: a thick outline on a white halo, readable on any background.
    g.rect(5, 5, size - 10, size - 10);
    g.strokeStyle = "#fff";
    g.lineWidth = 8;
    g.stroke();
    g.strokeStyle = colour;
    g.lineWidth = 4;
    g.stroke();
  }
  return g.getImageData(0, 0, size, size);
}

export default function LiveMapCanvas(props: {
  vehicles: LiveVehicle[];
  stateOf: (vehicle: LiveVehicle) => LiveState;
  onOpen: (roundId: number) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const framed = useRef(false);
  const onOpen = useRef(props.onOpen);
  onOpen.current = props.onOpen;
  const { map, loaded } = useConsoleMap(container, {
    // No fade-in of moved symbols: with thousands moving every second, a fade is a second of
    // repaints (measured: most of the page's frame time in software WebGL).
    fadeDuration: 0,
    onLoad: (created) => addVehicleLayers(created, onOpen),
    onRemove: () => {
      framed.current = false;
    },
  });

  const { vehicles, stateOf } = props;
  useEffect(() => {
    const current = map.current;
    if (!current || !loaded) return;
    const placed = vehicles.filter((v) => v.position !== null);
    (current.getSource("vehicles") as GeoJSONSource).setData({
      type: "FeatureCollection",
      features: placed.map((v) => {
        const position = v.position as NonNullable<LiveVehicle["position"]>;
        return {
          type: "Feature",
          id: v.id,
          properties: { icon: STATE_ICONS[stateOf(v)].image, round_id: v.roundId },
          geometry: { type: "Point", coordinates: [position.longitude, position.latitude] },
        };
      }),
    });
    // Framed once, on the fleet as first drawn: then vehicles move across a map that stays put.
    if (!framed.current && placed.length > 0) {
      const bounds = new LngLatBounds();
      for (const v of placed) bounds.extend([v.position?.longitude ?? 0, v.position?.latitude ?? 0]);
      current.fitBounds(bounds, { padding: 48, maxZoom: 15, duration: 0 });
      framed.current = true;
    }
  }, [map, vehicles, stateOf, loaded]);

  return (
    <div
      ref={container}
      className="map-canvas live-map-canvas"
      data-testid="live-map"
      data-loaded={loaded || undefined}
      data-drawn={loaded ? vehicles.filter((v) => v.position !== null).length : undefined}
    />
  );
}

/** The vehicles' source and its two layers; a click on a vehicle opens its round. */
function addVehicleLayers(created: MapLibreMap, onOpen: { current: (roundId: number) => void }) {
  for (const state of ["late", "no position for 2 min"] as const) {
    const icon = STATE_ICONS[state];
    created.addImage(icon.image, iconImage(icon.shape as "triangle" | "square", icon.colour), { pixelRatio: 2 });
  }
  created.addSource("vehicles", { type: "geojson", data: { type: "FeatureCollection", features: [] } });
  // On time, most of the fleet, as circles: the cheapest layer to draw. Late and no position
  // as shapes of their own (a symbol layer, which costs more per vehicle: the few).
  created.addLayer({
    id: "vehicles-on-time",
    type: "circle",
    source: "vehicles",
    filter: ["==", ["get", "icon"], STATE_ICONS["on time"].image],
    paint: {
      "circle-radius": ICON / 2 - 2,
      "circle-color": STATE_ICONS["on time"].colour,
      "circle-stroke-color": "#fff",
      "circle-stroke-width": 2,
    },
  });
  created.addLayer({
    id: "vehicles-flagged",
    type: "symbol",
    source: "vehicles",
    filter: ["!=", ["get", "icon"], STATE_ICONS["on time"].image],
    layout: {
      "icon-image": ["get", "icon"],
      // Every vehicle is drawn, however close: hiding one would hide a late one.
      "icon-allow-overlap": true,
      "icon-ignore-placement": true,
    },
  });
  for (const layer of ["vehicles-on-time", "vehicles-flagged"]) {
    created.on("click", layer, (event) => {
      const roundId = Number(event.features?.[0]?.properties?.round_id);
      if (Number.isInteger(roundId)) onOpen.current(roundId);
    });
    created.on("mouseenter", layer, () => {
      created.getCanvas().style.cursor = "pointer";
    });
    created.on("mouseleave", layer, () => {
      created.getCanvas().style.cursor = "";
    });
  }
}
