/**
 * An account's tariffs (the pricing service's versions, each in force from its start until the
 * next one's) and a new version: the form starts from the latest, and before it is saved its
 * price explanation is previewed for a sample delivery (`POST .../tariffs/preview`: the lines a
 * quote would give under the draft). Amounts are typed in euros and sent in cents.
 */
import type { paths } from "@dos/api-types/ops-v1";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useRef, useState } from "react";
import { euros, when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { numberOf, textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { AccountFrame, accountKey } from "./account-frame.tsx";
import { rowPaths, TariffLists, type TariffRows, tariffRowsOf } from "./tariff-lists.tsx";

type Tariff =
  paths["/ops/v1/accounts/{accountId}/tariffs"]["get"]["responses"][200]["content"]["application/json"][number];
type TariffBody = BodyOf<"/ops/v1/accounts/{accountId}/tariffs", "post">;
type PreviewBody = BodyOf<"/ops/v1/accounts/{accountId}/tariffs/preview", "post">;

const DIRECTIONS = { outbound: "Outbound", inbound: "Inbound", other: "Pickup and dropoff" } as const;

/** Euros typed (12.5) as the cents the API takes (1250); blank stays blank. */
function centsOf(form: FormData, name: string): number | undefined {
  const value = numberOf(form, name);
  return value === undefined ? undefined : Math.round(value * 100);
}
/** Cents as euros for a field's starting value (1250 → "12.50"). */
const eurosField = (cents: number | undefined) => (cents === undefined ? "" : (cents / 100).toFixed(2));

/** The version in force now: the latest start at or before now (the same reading as pricing's). */
function inForce(tariffs: Tariff[]): number | null {
  const now = Date.now();
  let found: Tariff | null = null;
  for (const tariff of tariffs) {
    const from = Date.parse(tariff.effective_from);
    if (from <= now && (!found || from > Date.parse(found.effective_from))) found = tariff;
  }
  return found?.id ?? null;
}

export function AccountTariffsPage() {
  return <AccountFrame title="Tariffs">{(account) => <Tariffs accountId={String(account.id)} />}</AccountFrame>;
}

function Tariffs({ accountId }: { accountId: string }) {
  const mayChange = useMayChange("accounts");
  const key = [...accountKey(accountId), "tariffs"];
  const tariffs = useQuery({
    queryKey: key,
    queryFn: () => answerOf(opsApi.GET("/ops/v1/accounts/{accountId}/tariffs", { params: { path: { accountId } } })),
  });
  const current = tariffs.data ? inForce(tariffs.data) : null;
  return (
    <>
      <p>
        A version is never changed: a new one takes over from its start, so every price already quoted stays
        explainable. Without a version in force the account's deliveries are not priced.
      </p>
      {tariffs.error && <Errors errors={[tariffs.error.message]} />}
      {tariffs.isPending && <p>Loading the tariffs…</p>}
      {tariffs.data?.length === 0 && <p>No tariff yet: the account's deliveries are not priced.</p>}
      {tariffs.data && tariffs.data.length > 0 && (
        <table data-testid="tariffs">
          <caption className="visually-hidden">Tariff versions, latest start first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">From</th>
              <th scope="col">Base (out, in, both)</th>
              <th scope="col">Per package</th>
              <th scope="col">Bands and surcharges</th>
              <th scope="col">Minimum</th>
              <th scope="col">Note</th>
            </tr>
          </thead>
          <tbody>
            {tariffs.data.map((tariff) => (
              <tr key={tariff.id}>
                <td>
                  #{tariff.id}
                  {tariff.id === current ? " (in force)" : ""}
                </td>
                <td>{when(tariff.effective_from)}</td>
                <td>
                  {euros(tariff.base_cents.outbound)}, {euros(tariff.base_cents.inbound)},{" "}
                  {euros(tariff.base_cents.other)}
                </td>
                <td>{euros(tariff.per_package_cents)}</td>
                <td>{rulesSummary(tariff)}</td>
                <td>{euros(tariff.minimum_cents)}</td>
                <td>{tariff.note ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {mayChange && tariffs.data && (
        <NewTariff accountId={accountId} latest={tariffs.data[0] ?? null} invalidate={key} />
      )}
    </>
  );
}

function rulesSummary(tariff: Tariff): string {
  const parts = [
    ...tariff.weight_bands.map((b) => `from ${b.from_kg} kg: ${euros(b.cents)}`),
    ...tariff.volume_bands.map((b) => `from ${b.from_dm3} dm³: ${euros(b.cents)}`),
    ...tariff.slot_surcharges.map((s) => `slot under ${s.shorter_than_minutes} min: ${euros(s.cents)}`),
    ...tariff.lead_time_surcharges.map((s) => `lead time under ${s.shorter_than_minutes} min: ${euros(s.cents)}`),
  ];
  return parts.length === 0 ? "none" : parts.join("; ");
}

/** A `datetime-local` value, read as UTC like every time the console shows; blank: now. */
function effectiveFromOf(form: FormData): string | undefined {
  const value = textOf(form, "effective_from");
  if (!value) return undefined;
  return `${value.length === 16 ? `${value}:00` : value}.000+00:00`;
}

function tariffBodyOf(form: FormData, rows: TariffRows): TariffBody {
  const list = (list: keyof TariffRows, from: string) =>
    rows[list].map((row) => ({
      [from]: numberOf(form, `${list}.${row.key}.${from}`),
      cents: centsOf(form, `${list}.${row.key}.cents`),
    }));
  return {
    effective_from: effectiveFromOf(form),
    base_cents: {
      outbound: centsOf(form, "base_cents.outbound"),
      inbound: centsOf(form, "base_cents.inbound"),
      other: centsOf(form, "base_cents.other"),
    },
    per_package_cents: centsOf(form, "per_package_cents"),
    minimum_cents: centsOf(form, "minimum_cents"),
    weight_bands: list("weight_bands", "from_kg"),
    volume_bands: list("volume_bands", "from_dm3"),
    slot_surcharges: list("slot_surcharges", "shorter_than_minutes"),
    lead_time_surcharges: list("lead_time_surcharges", "shorter_than_minutes"),
    note: textOf(form, "note"),
  } as TariffBody;
}

function sampleOf(form: FormData): PreviewBody["sample"] {
  return {
    direction: String(form.get("sample.direction")),
    packages: [
      {
        amount: numberOf(form, "sample.amount"),
        weight_kg: numberOf(form, "sample.weight_kg"),
        volume_dm3: numberOf(form, "sample.volume_dm3"),
      },
    ],
    slot_minutes: numberOf(form, "sample.slot_minutes"),
    lead_time_minutes: numberOf(form, "sample.lead_time_minutes"),
  } as PreviewBody["sample"];
}

const TARIFF_PATHS = [
  "effective_from",
  "base_cents.outbound",
  "base_cents.inbound",
  "base_cents.other",
  "per_package_cents",
  "minimum_cents",
  "note",
];
const SAMPLE_PATHS = [
  "sample.direction",
  "sample.packages[0].amount",
  "sample.packages[0].weight_kg",
  "sample.packages[0].volume_dm3",
  "sample.slot_minutes",
  "sample.lead_time_minutes",
];

function NewTariff(props: { accountId: string; latest: Tariff | null; invalidate: unknown[] }) {
  const { accountId, latest } = props;
  const form = useRef<HTMLFormElement>(null);
  const [rows, setRows] = useState<TariffRows>(() => tariffRowsOf(latest));
  const [saved, setSaved] = useState<string | null>(null);
  const types = useQuery({
    queryKey: [...accountKey(accountId), "package-types", false],
    queryFn: () =>
      answerOf(
        opsApi.GET("/ops/v1/accounts/{accountId}/package_types", {
          params: { path: { accountId }, query: { include_archived: false } },
        }),
      ),
  });
  const [size, setSize] = useState({ weight_kg: "2", volume_dm3: "10" });
  const preview = useChange((body: PreviewBody) =>
    answerOf(opsApi.POST("/ops/v1/accounts/{accountId}/tariffs/preview", { params: { path: { accountId } }, body })),
  );
  const save = useChange(
    (body: TariffBody) =>
      answerOf(opsApi.POST("/ops/v1/accounts/{accountId}/tariffs", { params: { path: { accountId } }, body })),
    {
      invalidate: [props.invalidate],
      onSuccess: (tariff) => setSaved(`Version #${tariff.id} saved: in force from ${when(tariff.effective_from)}.`),
    },
  );
  const errors = [...save.errors, ...preview.errors];
  const askPreview = () => {
    if (!form.current) return;
    const data = new FormData(form.current);
    save.clearErrors();
    preview.mutate({ ...tariffBodyOf(data, rows), sample: sampleOf(data) });
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    preview.clearErrors();
    setSaved(null);
    save.mutate(tariffBodyOf(new FormData(event.currentTarget), rows));
  };
  const euroField = (name: string, label: string, cents: number | undefined) => (
    <Field
      label={label}
      name={name}
      type="number"
      step="0.01"
      path={name}
      errors={errors}
      defaultValue={eurosField(cents)}
    />
  );
  return (
    <section aria-labelledby="new-tariff-heading">
      <h3 id="new-tariff-heading">New version</h3>
      <p>{latest ? `Starts from version #${latest.id}: change what differs.` : "The account's first tariff."}</p>
      {saved && <p role="status">{saved}</p>}
      <form
        ref={form}
        onSubmit={onSubmit}
        onChange={() => preview.reset()}
        noValidate
        className="tariff-form"
        aria-label="New tariff version"
      >
        <div>
          <Field
            label="In force from (UTC; blank: at once)"
            name="effective_from"
            type="datetime-local"
            path="effective_from"
            errors={errors}
          />
          <fieldset>
            <legend>Base price per direction (€)</legend>
            {euroField("base_cents.outbound", "Outbound", latest?.base_cents.outbound)}
            {euroField("base_cents.inbound", "Inbound", latest?.base_cents.inbound)}
            {euroField("base_cents.other", "Pickup and dropoff", latest?.base_cents.other)}
          </fieldset>
          {euroField("per_package_cents", "Per package (€)", latest?.per_package_cents)}
          {euroField("minimum_cents", "Minimum price (€)", latest?.minimum_cents)}
          <TariffLists rows={rows} setRows={setRows} errors={errors} />
          <Field label="Note (optional)" name="note" path="note" errors={errors} defaultValue={latest?.note ?? ""} />
          <button type="submit" disabled={save.isPending}>
            Save the new version
          </button>
        </div>
        <div className="tariff-sample">
          {/* Enter in a field of the sample previews its price: it must not save the tariff. */}
          <fieldset
            onKeyDown={(event) => {
              if (event.key === "Enter" && event.target instanceof HTMLInputElement) {
                event.preventDefault();
                askPreview();
              }
            }}
          >
            <legend>Sample delivery for the preview</legend>
            <Field label="Direction" name="sample.direction" path="sample.direction" errors={errors}>
              {(id, describedBy) => (
                <select id={id} name="sample.direction" aria-describedby={describedBy} defaultValue="outbound">
                  {Object.entries(DIRECTIONS).map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {types.data && types.data.length > 0 && (
              <Field label="Package of the size of" name="sample.type">
                {(id) => (
                  <select
                    id={id}
                    defaultValue=""
                    onChange={(event) => {
                      const type = types.data.find((t) => String(t.id) === event.target.value);
                      if (type) setSize({ weight_kg: String(type.weight_kg), volume_dm3: String(type.volume_dm3) });
                    }}
                  >
                    <option value="">Typed below</option>
                    {types.data.map((type) => (
                      <option key={type.id} value={type.id}>
                        {type.name}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            )}
            <Field
              label="Packages"
              name="sample.amount"
              type="number"
              path="sample.packages[0].amount"
              errors={errors}
              defaultValue="1"
            />
            <Field
              label="Weight of each (kg)"
              name="sample.weight_kg"
              path="sample.packages[0].weight_kg"
              errors={errors}
            >
              {(id, describedBy) => (
                <input
                  id={id}
                  name="sample.weight_kg"
                  type="number"
                  step="any"
                  value={size.weight_kg}
                  onChange={(event) => setSize({ ...size, weight_kg: event.target.value })}
                  aria-describedby={describedBy}
                />
              )}
            </Field>
            <Field
              label="Volume of each (dm³)"
              name="sample.volume_dm3"
              path="sample.packages[0].volume_dm3"
              errors={errors}
            >
              {(id, describedBy) => (
                <input
                  id={id}
                  name="sample.volume_dm3"
                  type="number"
                  step="any"
                  value={size.volume_dm3}
                  onChange={(event) => setSize({ ...size, volume_dm3: event.target.value })}
                  aria-describedby={describedBy}
                />
              )}
            </Field>
            <Field
              label="Slot length (minutes)"
              name="sample.slot_minutes"
              type="number"
              path="sample.slot_minutes"
              errors={errors}
              defaultValue="120"
            />
            <Field
              label="Ordered this long before the slot (minutes)"
              name="sample.lead_time_minutes"
              type="number"
              path="sample.lead_time_minutes"
              errors={errors}
              defaultValue="1440"
            />
            <button type="button" className="secondary" onClick={askPreview} disabled={preview.isPending}>
              Preview the price
            </button>
          </fieldset>
          {preview.data && <PreviewView preview={preview.data} />}
        </div>
      </form>
      <Errors errors={errors} claimed={[...TARIFF_PATHS, ...SAMPLE_PATHS, ...rowPaths(rows)]} />
    </section>
  );
}

function PreviewView({
  preview,
}: {
  preview: { price_cents: number; lines: Array<{ code: string; label: string; amount_cents: number }> };
}) {
  return (
    <section aria-labelledby="preview-heading" className="price">
      <h4 id="preview-heading">The sample's price under this draft</h4>
      <table data-testid="tariff-preview">
        <caption className="visually-hidden">Price explanation of the sample delivery</caption>
        <tbody>
          {preview.lines.map((line) => (
            <tr key={line.code}>
              <th scope="row">{line.label}</th>
              <td>{euros(line.amount_cents)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td data-testid="preview-total">{euros(preview.price_cents)}</td>
          </tr>
        </tfoot>
      </table>
    </section>
  );
}
