/** Shared display pieces: a secret shown once with its copy button, timestamps in UTC, ages, amounts. */
import type { components } from "@dos/api-types/client-v2";
import { useEffect, useState } from "react";

export type DeliveryStatus = components["schemas"]["Delivery"]["status"];
/** Every status the API knows, with its label: a status the API adds fails the typecheck until it is named here. */
export const STATUS_LABELS: Record<DeliveryStatus, string> = {
  saved: "Saved",
  scheduled: "Scheduled",
  picked_up: "Picked up",
  delivered: "Delivered",
  cancelled: "Cancelled",
  failed: "Failed",
};

/** A timestamp as people read it, in UTC (the API's zone); a dash for none. */
export const when = (timestamp: string | null) =>
  timestamp ? `${new Date(timestamp).toLocaleString("en-GB", { timeZone: "UTC" })} UTC` : "—";

/** How long ago, in the largest unit that fits: "42 s ago", "3 min ago", "2 h ago", "5 days ago". */
export function age(timestamp: string | number, now: number): string {
  const at = typeof timestamp === "number" ? timestamp : Date.parse(timestamp);
  const seconds = Math.max(0, Math.floor((now - at) / 1000));
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} days ago`;
}

/** The time now, once a second: an age on the page keeps counting between two reads. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** An amount in cents, in euros; "not priced" for none. */
export const euros = (cents: number | null) => (cents === null ? "not priced" : `€${(cents / 100).toFixed(2)}`);

/** A secret the API shows in one answer only (a token, a signing secret), with a copy button. */
export function ShownOnce(props: { label: string; secret: string; what: string; testId: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="created-token" role="status">
      <p>{props.label}, shown this once: copy it now.</p>
      <code data-testid={props.testId}>{props.secret}</code>{" "}
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard.writeText(props.secret);
          setCopied(true);
        }}
      >
        {copied ? "Copied" : `Copy ${props.what}`}
      </button>
    </div>
  );
}
