/**
 * Deliveries: the list (filtered by client_order_reference, status and days, by pages; the URL holds them), a delivery's page (tasks,
 * packages, price, tracking link, proof), and the form that creates one, whose refusals are shown
 * beside the field the API names. Everything goes through the client API as the signed-in
 * person (clientApi), so its rules and messages are the ones shown.
 */

import type { components } from "@dos/api-types/client-v2";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, notFound, useNavigate, useParams, useSearch } from "@tanstack/react-router";
import { type FormEvent, lazy, Suspense, useState } from "react";
import { clientApi } from "../client-api.ts";
import { DeliveryPriceView } from "./delivery-price.tsx";
import { CHANGING, DeliveryTimeline, REFRESH_MS, UNDER_WAY } from "./delivery-timeline.tsx";
import { type DeliveryStatus, euros, STATUS_LABELS, when } from "./display.tsx";
import { Errors, Field } from "./form-parts.tsx";

type Delivery = components["schemas"]["Delivery"];
type Task = components["schemas"]["Task"];

const PER_PAGE = 20;
/** MapLibre is heavy: its chunk is loaded by the delivery page only, outside the initial load's budget. */
const DeliveryMap = lazy(() => import("./delivery-map.tsx"));

/** The list's filters and page, as the URL holds them (`/deliveries?status=failed&created_from=…`). */
export interface ListSearch {
  client_order_reference?: string;
  status?: DeliveryStatus;
  created_from?: string;
  created_to?: string;
  slot_from?: string;
  slot_to?: string;
  page?: number;
}
const DAY_FILTERS = [
  ["created_from", "Created from"],
  ["created_to", "Created until"],
  ["slot_from", "Slot from"],
  ["slot_to", "Slot until"],
] as const;

/** Keeps what the URL holds that can be a filter; the API checks the values themselves (a 422 beside the field). */
export function listSearchOf(search: Record<string, unknown>): ListSearch {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value.slice(0, 255) : undefined);
  const status = text(search.status);
  const page = Number(search.page);
  const result: ListSearch = {};
  const reference = text(search.client_order_reference);
  if (reference) result.client_order_reference = reference;
  if (status && status in STATUS_LABELS) result.status = status as DeliveryStatus;
  for (const [name] of DAY_FILTERS) {
    const day = text(search[name]);
    if (day) result[name] = day;
  }
  if (Number.isInteger(page) && page > 1) result.page = page;
  return result;
}

export function DeliveriesPage() {
  const search = useSearch({ from: "/signed-in/deliveries" });
  const navigate = useNavigate({ from: "/deliveries" });
  const page = search.page ?? 1;
  const { page: _page, ...filters } = search;
  const list = useQuery({
    queryKey: ["deliveries", search],
    queryFn: async () => {
      const query = { ...filters, page, per_page: PER_PAGE };
      const { data, error, response } = await clientApi.GET("/api/v2/deliveries", { params: { query } });
      if (error) return { errors: error.errors, items: [], hasNext: false, total: 0 };
      const total = Number(response.headers.get("x-total-count") ?? data.length);
      return { errors: [], items: data, hasNext: /rel="next"/.test(response.headers.get("link") ?? ""), total };
    },
  });
  const errors = list.data?.errors ?? [];
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const entries = [...form.entries()].map(([name, value]) => [name, String(value).trim()]);
    navigate({ search: listSearchOf(Object.fromEntries(entries)) });
  };
  const filtered = Object.keys(filters).length > 0;
  return (
    <>
      <h1>Deliveries</h1>
      <p>
        <Link to="/deliveries/new" className="button">
          New delivery
        </Link>
      </p>
      <search>
        {/* Keyed by the URL's filters, so going back in history shows the filters of that page. */}
        <form className="filters" onSubmit={apply} key={JSON.stringify(filters)} aria-label="Filters">
          <Field
            label="Client order reference"
            name="client_order_reference"
            path="querystring.client_order_reference"
            errors={errors}
            defaultValue={filters.client_order_reference ?? ""}
          />
          <Field label="Status" name="status" path="querystring.status" errors={errors}>
            {(id, describedBy) => (
              <select id={id} name="status" defaultValue={filters.status ?? ""} aria-describedby={describedBy}>
                <option value="">Any status</option>
                {Object.entries(STATUS_LABELS).map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {DAY_FILTERS.map(([name, label]) => (
            <Field
              key={name}
              label={label}
              name={name}
              type="date"
              path={`querystring.${name}`}
              errors={errors}
              defaultValue={filters[name] ?? ""}
            />
          ))}
          <button type="submit">Search</button>
          {filtered && (
            <Link to="/deliveries" search={{}} className="button secondary">
              Clear filters
            </Link>
          )}
        </form>
      </search>
      <Errors
        errors={errors}
        claimed={[
          "querystring.client_order_reference",
          "querystring.status",
          ...DAY_FILTERS.map(([name]) => `querystring.${name}`),
        ]}
      />
      {list.error && <Errors errors={[list.error.message]} />}
      {list.data && errors.length === 0 && (
        <p role="status" data-testid="total">
          {list.data.total === 1 ? "1 delivery" : `${list.data.total} deliveries`}
          {filtered ? (list.data.total === 1 ? " matches these filters" : " match these filters") : ""}
        </p>
      )}
      <table>
        <caption className="visually-hidden">Deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Delivery</th>
            <th scope="col">Status</th>
            <th scope="col">Slot</th>
            <th scope="col">Price</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((delivery) => (
            <tr key={delivery.id}>
              <td>
                <Link to="/deliveries/$deliveryId" params={{ deliveryId: String(delivery.id) }}>
                  #{delivery.id}
                </Link>
              </td>
              <td>{STATUS_LABELS[delivery.status]}</td>
              <td>
                {when(delivery.slot_starting_at)} – {when(delivery.slot_ending_at)}
              </td>
              <td>{euros(delivery.price_cents)}</td>
              <td>{when(delivery.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav aria-label="Pages" className="pages">
        <button
          type="button"
          className="secondary"
          disabled={page === 1}
          onClick={() => navigate({ search: { ...filters, ...(page > 2 ? { page: page - 1 } : {}) } })}
        >
          Previous page
        </button>
        <span>Page {page}</span>
        <button
          type="button"
          className="secondary"
          disabled={!list.data?.hasNext}
          onClick={() => navigate({ search: { ...filters, page: page + 1 } })}
        >
          Next page
        </button>
      </nav>
    </>
  );
}

function TaskView({ label, task }: { label: string; task: Task | null }) {
  if (!task) return null;
  const { place } = task;
  return (
    <section aria-label={label} className="task">
      <h2>{label}</h2>
      <dl className="facts">
        <dt>Recipient</dt>
        <dd>{place.recipient_name}</dd>
        <dt>Address</dt>
        <dd>
          {place.address}, {place.postal_code} {place.city}
        </dd>
        <dt>Slot</dt>
        <dd>
          {when(task.slot_starting_at)} – {when(task.slot_ending_at)}
        </dd>
        <dt>ETA</dt>
        <dd>{when(task.eta)}</dd>
        <dt>Completed</dt>
        <dd>{when(task.completed_at)}</dd>
        {task.failure_reason && (
          <>
            <dt>Failure reason</dt>
            <dd>{task.failure_reason}</dd>
          </>
        )}
        {task.completion_text && (
          <>
            <dt>Notes</dt>
            <dd>{task.completion_text}</dd>
          </>
        )}
        {task.completion_signature && (
          <>
            <dt>Signed by</dt>
            <dd>
              <a href={task.completion_signature.url}>{task.completion_signature.accepted_by}</a>
            </dd>
          </>
        )}
        {task.completion_pictures.length > 0 && (
          <>
            <dt>Pictures</dt>
            <dd>
              {task.completion_pictures.map((url, i) => (
                <a key={url} href={url}>
                  Picture {i + 1}{" "}
                </a>
              ))}
            </dd>
          </>
        )}
        {task.tracking_url && (
          <>
            <dt>Tracking</dt>
            <dd>
              <a href={task.tracking_url}>Tracking page</a>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}

/** Keys for items that have no id: their content, and how many identical ones came before. */
function withKeys<T>(items: T[]): Array<{ key: string; item: T }> {
  const seen = new Map<string, number>();
  return items.map((item) => {
    const content = JSON.stringify(item);
    const count = seen.get(content) ?? 0;
    seen.set(content, count + 1);
    return { key: `${content}#${count}`, item };
  });
}

export function DeliveryPage() {
  const { deliveryId } = useParams({ from: "/signed-in/deliveries/$deliveryId" });
  const delivery = useQuery({
    queryKey: ["delivery", deliveryId],
    // Until the delivery has ended its status, ETAs and proof change without the page doing anything.
    refetchInterval: (query) => (query.state.data && CHANGING.has(query.state.data.status) ? REFRESH_MS : false),
    queryFn: async (): Promise<Delivery | null> => {
      if (!/^\d{1,15}$/.test(deliveryId)) return null;
      const { data, response } = await clientApi.GET("/api/v2/deliveries/{delivery_id}", {
        params: { path: { delivery_id: Number(deliveryId) } },
      });
      if (response.status === 404) return null;
      if (!data) throw new Error(`the API answered ${response.status}`);
      return data;
    },
  });
  if (delivery.data === null) throw notFound();
  const d = delivery.data;
  if (!d) return <p>Loading…</p>;
  return (
    <>
      <h1>Delivery #{d.id}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid="status">{d.status}</dd>
        <dt>Reference</dt>
        <dd>{d.client_order_reference ?? "—"}</dd>
        <dt>Direction</dt>
        <dd>{d.direction}</dd>
        <dt>Created</dt>
        <dd>{when(d.created_at)}</dd>
      </dl>
      {(d.status === "saved" || d.status === "scheduled") && (
        <>
          <EditDelivery delivery={d} />
          <CancelDelivery id={d.id} />
        </>
      )}
      {d.status === "failed" && d.redelivery_id === null && <AskRedelivery delivery={d} />}
      {d.redelivery_id !== null && (
        <p>
          Redelivered as{" "}
          <Link to="/deliveries/$deliveryId" params={{ deliveryId: String(d.redelivery_id) }}>
            delivery #{d.redelivery_id}
          </Link>
          .
        </p>
      )}
      <Suspense fallback={<p>Loading the map…</p>}>
        <DeliveryMap
          deliveryId={d.id}
          status={d.status}
          underWay={UNDER_WAY.has(d.status)}
          refreshMs={CHANGING.has(d.status) ? REFRESH_MS : false}
        />
      </Suspense>
      <DeliveryPriceView deliveryId={d.id} />
      <DeliveryTimeline delivery={d} />
      <TaskView label="Pickup" task={d.pickup} />
      <TaskView label="Dropoff" task={d.dropoff} />
      <section aria-labelledby="packages">
        <h2 id="packages">Packages</h2>
        <ul>
          {withKeys(d.packages).map(({ key, item: p }) => (
            <li key={key}>
              {p.amount} × {p.name} ({p.weight_kg} kg, {p.volume_dm3} dm³)
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

/** A datetime-local value for an ISO timestamp, in the browser's zone. */
const localValue = (timestamp: string) => {
  const date = new Date(timestamp);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** Changes the reference, comments or dropoff slot; the API's refusals beside their fields. */
function EditDelivery({ delivery }: { delivery: Delivery }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [errors, setErrors] = useState<string[]>([]);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    setErrors([]);
    const { error } = await clientApi.PATCH("/api/v2/deliveries/{delivery_id}", {
      params: { path: { delivery_id: delivery.id } },
      body: {
        client_order_reference: text("reference") || null,
        comments: text("comments") || null,
        ...(delivery.dropoff
          ? { dropoff: { slot_starting_at: timestamp(text("start")), slot_ending_at: timestamp(text("end")) } }
          : {}),
      },
    });
    if (error) return setErrors(error.errors);
    setOpen(false);
    await queryClient.invalidateQueries({ queryKey: ["delivery", String(delivery.id)] });
  };
  if (!open) {
    return (
      <div className="actions">
        <button type="button" className="secondary" onClick={() => setOpen(true)}>
          Change the delivery
        </button>
      </div>
    );
  }
  const claimed = ["client_order_reference", "comments", "dropoff.slot_starting_at", "dropoff.slot_ending_at"];
  return (
    <form onSubmit={submit} noValidate className="delivery-form" aria-label="Change the delivery">
      <Field
        label="Client order reference"
        name="reference"
        path="client_order_reference"
        errors={errors}
        defaultValue={delivery.client_order_reference ?? ""}
      />
      <Field label="Comments" name="comments" path="comments" errors={errors} defaultValue={delivery.comments ?? ""} />
      {delivery.dropoff && (
        <>
          <Field
            label="Dropoff from"
            name="start"
            type="datetime-local"
            path="dropoff.slot_starting_at"
            errors={errors}
            defaultValue={localValue(delivery.dropoff.slot_starting_at)}
          />
          <Field
            label="Dropoff to"
            name="end"
            type="datetime-local"
            path="dropoff.slot_ending_at"
            errors={errors}
            defaultValue={localValue(delivery.dropoff.slot_ending_at)}
          />
        </>
      )}
      <Errors errors={errors} claimed={claimed} />
      <div className="actions">
        <button type="submit">Save the changes</button>
        <button type="button" className="secondary" onClick={() => setOpen(false)}>
          Leave unchanged
        </button>
      </div>
    </form>
  );
}

/** A new delivery made from a failed one, on a new dropoff slot; its refusals beside the fields. */
function AskRedelivery({ delivery }: { delivery: Delivery }) {
  const navigate = useNavigate();
  const [errors, setErrors] = useState<string[]>([]);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "");
    setErrors([]);
    const { data: created, error } = await clientApi.POST("/api/v2/deliveries/{delivery_id}/redelivery", {
      params: { path: { delivery_id: delivery.id } },
      body: { dropoff: { slot_starting_at: timestamp(text("start")), slot_ending_at: timestamp(text("end")) } },
    });
    if (error) return setErrors(error.errors);
    if (created) await navigate({ to: "/deliveries/$deliveryId", params: { deliveryId: String(created.id) } });
  };
  const claimed = ["dropoff.slot_starting_at", "dropoff.slot_ending_at"];
  return (
    <form onSubmit={submit} noValidate className="delivery-form" aria-label="Ask a redelivery">
      <h2>Ask a redelivery</h2>
      <Field label="New slot from" name="start" type="datetime-local" path={claimed[0]} errors={errors} />
      <Field label="New slot to" name="end" type="datetime-local" path={claimed[1]} errors={errors} />
      <Errors errors={errors} claimed={claimed} />
      <button type="submit">Ask the redelivery</button>
    </form>
  );
}

/** Cancels the delivery after a second, confirming click; the API's refusal is shown as it is. */
function CancelDelivery({ id }: { id: number }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const cancel = useMutation({
    mutationFn: async () => {
      const { error } = await clientApi.PATCH("/api/v2/deliveries/{delivery_id}/cancel", {
        params: { path: { delivery_id: id } },
      });
      if (error) throw new Error(error.errors.join("; "));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["delivery", String(id)] }),
  });
  return (
    <div className="actions">
      {confirming ? (
        <>
          <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
            Confirm: cancel delivery #{id}
          </button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </>
      ) : (
        <button type="button" className="secondary" onClick={() => setConfirming(true)}>
          Cancel the delivery
        </button>
      )}
      {cancel.error && <Errors errors={[cancel.error.message]} />}
    </div>
  );
}

/** The fields of the create form, by the API's field paths. */
const PLACE = "dropoff.place";
const FIELDS = {
  reference: "client_order_reference",
  recipient: `${PLACE}.recipient_name`,
  phone: `${PLACE}.recipient_phone`,
  email: `${PLACE}.recipient_email`,
  address: `${PLACE}.address`,
  postalCode: `${PLACE}.postal_code`,
  city: `${PLACE}.city`,
  start: "dropoff.slot_starting_at",
  end: "dropoff.slot_ending_at",
  packageType: "packages[0].package_type_id",
  amount: "packages[0].amount",
} as const;

/** A datetime-local value (the browser's local time) as an ISO 8601 timestamp with its offset. */
const timestamp = (local: string) => (local ? new Date(local).toISOString() : "");

export function NewDeliveryPage() {
  const navigate = useNavigate();
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const packageTypes = useQuery({
    queryKey: ["package_types"],
    queryFn: async () => (await clientApi.GET("/api/v2/package_types")).data ?? [],
  });
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    const optional = (name: string) => text(name) || null;
    setBusy(true);
    setErrors([]);
    try {
      const { data, error } = await clientApi.POST("/api/v2/deliveries", {
        body: {
          client_order_reference: optional("reference"),
          dropoff: {
            slot_starting_at: timestamp(text("start")),
            slot_ending_at: timestamp(text("end")),
            place: {
              recipient_name: text("recipient"),
              recipient_phone: optional("phone"),
              recipient_email: optional("email"),
              address: text("address"),
              postal_code: text("postalCode"),
              city: text("city"),
            },
          },
          packages: [{ package_type_id: Number(text("packageType")), amount: Number(text("amount")) }],
        },
      });
      if (error) setErrors(error.errors);
      else if (data) await navigate({ to: "/deliveries/$deliveryId", params: { deliveryId: String(data.id) } });
    } catch {
      setErrors(["the console cannot be reached, try again"]);
    } finally {
      setBusy(false);
    }
  };
  const field = (name: keyof typeof FIELDS, label: string, type = "text") => (
    <Field label={label} name={name} path={FIELDS[name]} errors={errors} type={type} />
  );
  return (
    <>
      <h1>New delivery</h1>
      <form onSubmit={submit} noValidate className="delivery-form">
        {field("reference", "Client order reference")}
        <fieldset>
          <legend>Recipient</legend>
          {field("recipient", "Name")}
          {field("phone", "Phone", "tel")}
          {field("email", "E-mail", "email")}
          {field("address", "Address")}
          {field("postalCode", "Postal code")}
          {field("city", "City")}
        </fieldset>
        <fieldset>
          <legend>Delivery slot</legend>
          {field("start", "From", "datetime-local")}
          {field("end", "To", "datetime-local")}
        </fieldset>
        <fieldset>
          <legend>Package</legend>
          <Field label="Package type" name="packageType" path={FIELDS.packageType} errors={errors}>
            {(id, describedBy) => (
              <select id={id} name="packageType" aria-describedby={describedBy}>
                {packageTypes.data?.map((type) => (
                  <option key={type.id} value={type.id}>
                    {type.type} ({type.weight} kg)
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Amount" name="amount" path={FIELDS.amount} errors={errors} type="number" defaultValue="1" />
        </fieldset>
        <Errors errors={errors} claimed={Object.values(FIELDS)} />
        <button type="submit" disabled={busy}>
          Create the delivery
        </button>
      </form>
    </>
  );
}
