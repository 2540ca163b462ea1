/**
 * The delivery page's map (MapLibre GL JS), in a chunk of its own loaded only by that page: the
 * style the console is configured with (its own offline style unless a provider is set), the
 * tasks' points and, while the delivery is under way, the courier's live position, asked of the
 * BFF every few seconds (`/api/deliveries/:id/live`, the tracking page's data for the session's
 * own account). The same facts are written under the map for those who do not see it.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { LngLatBounds, Marker } from "maplibre-gl";
import { useEffect, useRef } from "react";
import { bff } from "../bff.ts";
import { useConsoleMap } from "./console-map.ts";
import { when } from "./display.tsx";

function markerElement(className: string, label: string): HTMLElement {
  const element = document.createElement("div");
  element.className = `map-marker ${className}`;
  element.setAttribute("role", "img");
  element.setAttribute("aria-label", label);
  return element;
}

export default function DeliveryMap(props: {
  deliveryId: number;
  status: string;
  underWay: boolean;
  refreshMs: number | false;
}) {
  const container = useRef<HTMLDivElement>(null);
  const courier = useRef<Marker | null>(null);
  const points = useRef<Marker[]>([]);
  const framed = useRef(0);
  const { map, loaded } = useConsoleMap(container, {
    onRemove: () => {
      courier.current = null;
      points.current = [];
      framed.current = 0;
    },
  });
  const live = useQuery({
    // With the status: the courier leaves the map when the delivery ends, though nothing is asked again after.
    queryKey: ["delivery", String(props.deliveryId), "live", props.status],
    placeholderData: keepPreviousData,
    refetchInterval: props.refreshMs,
    queryFn: () => bff.live(props.deliveryId),
  });

  const data = live.data;
  useEffect(() => {
    const current = map.current;
    // After the map's load, so that a delivery answered before the map was made is drawn too.
    if (!current || !data || !loaded) return;
    for (const marker of points.current) marker.remove();
    points.current = data.points.map((point) =>
      new Marker({ element: markerElement(`point ${point.task}`, `${point.task} point`) })
        .setLngLat([point.longitude, point.latitude])
        .addTo(current),
    );
    if (data.courier) {
      const at: [number, number] = [data.courier.longitude, data.courier.latitude];
      courier.current ??= new Marker({ element: markerElement("courier", "Courier") }).setLngLat(at).addTo(current);
      courier.current.setLngLat(at);
    } else {
      courier.current?.remove();
      courier.current = null;
    }
    // Framed on the tasks' points (again only when a point is added): the courier then moves across
    // the map, which stays put.
    if (data.points.length > framed.current) {
      const all = [...data.points, ...(data.courier ? [data.courier] : [])];
      const bounds = new LngLatBounds();
      for (const p of all) bounds.extend([p.longitude, p.latitude]);
      current.fitBounds(bounds, { padding: 48, maxZoom: 15, duration: 0 });
      framed.current = data.points.length;
    }
  }, [map, data, loaded]);

  return (
    <section aria-labelledby="map-heading" className="map">
      <h2 id="map-heading">Map</h2>
      <div ref={container} className="map-canvas" data-testid="map" data-loaded={loaded || undefined} />
      {data?.courier ? (
        <p data-testid="courier-position">
          Courier at {data.courier.latitude.toFixed(5)}, {data.courier.longitude.toFixed(5)} (
          {when(data.courier.recorded_at)})
        </p>
      ) : (
        <p data-testid="courier-position">
          {props.underWay ? "No position of the courier yet." : "No courier on the way."}
        </p>
      )}
      {data && data.points.length > 0 && (
        <ul aria-label="Points">
          {data.points.map((point) => (
            <li key={point.task}>
              {point.task === "pickup" ? "Pickup" : "Dropoff"} at {point.latitude.toFixed(5)},{" "}
              {point.longitude.toFixed(5)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
