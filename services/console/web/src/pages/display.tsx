/** Shared display pieces: a secret shown once with its copy button, timestamps in UTC, amounts. */
import type { components } from "@dos/api-types/client-v2";
import { useState } from "react";

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
