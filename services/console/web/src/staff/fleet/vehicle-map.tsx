/**
 * A vehicle's recent positions on a map (MapLibre GL JS, the console's map chunk, shared with the
 * delivery page and loaded by these pages only): the track its tracker sent, newest first from
 * geo-ingest through `GET /ops/v1/vehicles/{id}/positions`, drawn as a line with the newest
 * position marked, in the style the console is configured with (its own offline style unless a
 * provider is set). The same positions are listed under the map for those who do not see it.
 */
import { useQuery } from "@tanstack/react-query";
import { type GeoJSONSource, LngLatBounds, Marker } from "maplibre-gl";
import { useEffect, useRef } from "react";
import { useConsoleMap } from "../../pages/console-map.ts";
import { when } from "../../pages/display.tsx";
import { Errors } from "../../pages/form-parts.tsx";
import { answerOf, opsApi } from "../ops-api.ts";

/** How many recent positions the page asks for (the API gives at most 1,000). */
const RECENT = 200;
/** How many of them are also written out under the map. */
const LISTED = 10;

export default function VehicleMap(props: { vehicleId: number; refreshMs: number }) {
  const container = useRef<HTMLDivElement>(null);
  const newest = useRef<Marker | null>(null);
  const framed = useRef(false);
  const { map, loaded } = useConsoleMap(container, {
    onLoad: (created) => {
      created.addSource("track", { type: "geojson", data: { type: "FeatureCollection", features: [] } });
      created.addLayer({
        id: "track",
        type: "line",
        source: "track",
        paint: { "line-color": "#1d4ed8", "line-width": 3 },
      });
    },
    onRemove: () => {
      newest.current = null;
      framed.current = false;
    },
  });
  const track = useQuery({
    queryKey: ["staff", "fleet", "vehicles", String(props.vehicleId), "positions"],
    refetchInterval: props.refreshMs,
    queryFn: () =>
      answerOf(
        opsApi.GET("/ops/v1/vehicles/{id}/positions", {
          params: { path: { id: String(props.vehicleId) }, query: { limit: RECENT } },
        }),
      ),
  });

  const positions = track.data?.positions;
  useEffect(() => {
    const current = map.current;
    if (!current || !loaded || !positions) return;
    const line = positions.map((p) => [p.longitude, p.latitude]);
    (current.getSource("track") as GeoJSONSource).setData({
      type: "Feature",
      properties: {},
      geometry: { type: "LineString", coordinates: line },
    });
    const latest = positions[0];
    if (!latest) return;
    if (!newest.current) {
      const element = document.createElement("div");
      element.className = "map-marker courier";
      element.setAttribute("role", "img");
      element.setAttribute("aria-label", "Latest position");
      newest.current = new Marker({ element }).setLngLat([latest.longitude, latest.latitude]).addTo(current);
    }
    newest.current.setLngLat([latest.longitude, latest.latitude]);
    // Framed once, on the track as first drawn: later positions then move across a map that stays put.
    if (!framed.current) {
      const bounds = new LngLatBounds();
      for (const p of positions) bounds.extend([p.longitude, p.latitude]);
      current.fitBounds(bounds, { padding: 48, maxZoom: 15, duration: 0 });
      framed.current = true;
    }
  }, [map, positions, loaded]);

  return (
    <section aria-labelledby="track-heading" className="map">
      <h2 id="track-heading">Recent positions</h2>
      <div ref={container} className="map-canvas" data-testid="vehicle-map" data-loaded={loaded || undefined} />
      {track.error && <Errors errors={[track.error.message]} />}
      {positions?.length === 0 && <p>No position from its tracker in the time geo-ingest keeps them.</p>}
      {positions && positions.length > 0 && (
        <table data-testid="recent-positions">
          <caption>
            {positions.length === 1
              ? "The one position on the map"
              : `The latest ${Math.min(LISTED, positions.length)} of the ${positions.length} positions on the map`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Recorded</th>
              <th scope="col">Position</th>
              <th scope="col">Round</th>
            </tr>
          </thead>
          <tbody>
            {positions.slice(0, LISTED).map((p) => (
              <tr key={p.recorded_at}>
                <td>{when(p.recorded_at)}</td>
                <td>
                  {p.latitude.toFixed(5)}, {p.longitude.toFixed(5)}
                </td>
                <td>#{p.round_id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
