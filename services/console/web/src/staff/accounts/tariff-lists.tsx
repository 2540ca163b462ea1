/**
 * The four lists of a tariff (weight and volume bands, slot and lead-time surcharges) in the new
 * version's form: rows added and removed in the page, their values read from the form when it is
 * sent. Row i is sent as the list's entry i, so the API's `weight_bands[1].from_kg …` lands
 * beside the row's own field.
 */
import type { Dispatch, SetStateAction } from "react";
import { Field } from "../../pages/form-parts.tsx";

interface Row {
  /** Stable across removals, so React keeps each row's typed values. */
  key: number;
  from?: number;
  cents?: number;
}
export type TariffRows = Record<(typeof LISTS)[number]["list"], Row[]>;

const LISTS = [
  {
    list: "weight_bands",
    from: "from_kg",
    title: "Weight bands (on the total weight)",
    name: "Weight band",
    unit: "from (kg)",
  },
  {
    list: "volume_bands",
    from: "from_dm3",
    title: "Volume bands (on the total volume)",
    name: "Volume band",
    unit: "from (dm³)",
  },
  {
    list: "slot_surcharges",
    from: "shorter_than_minutes",
    title: "Short slot surcharges (on the shortest slot, shorter than)",
    name: "Slot surcharge",
    unit: "under (minutes)",
  },
  {
    list: "lead_time_surcharges",
    from: "shorter_than_minutes",
    title: "Short notice surcharges (on the time before the earliest slot, shorter than)",
    name: "Lead-time surcharge",
    unit: "under (minutes)",
  },
] as const;

let nextKey = 1;

interface SourceTariff {
  weight_bands: Array<{ from_kg: number; cents: number }>;
  volume_bands: Array<{ from_dm3: number; cents: number }>;
  slot_surcharges: Array<{ shorter_than_minutes: number; cents: number }>;
  lead_time_surcharges: Array<{ shorter_than_minutes: number; cents: number }>;
}

/** The rows of a version the form starts from (none for a first tariff). */
export function tariffRowsOf(tariff: SourceTariff | null): TariffRows {
  const rows = <T extends { cents: number }>(items: T[] | undefined, from: (item: T) => number) =>
    (items ?? []).map((item) => ({ key: nextKey++, from: from(item), cents: item.cents }));
  return {
    weight_bands: rows(tariff?.weight_bands, (b) => b.from_kg),
    volume_bands: rows(tariff?.volume_bands, (b) => b.from_dm3),
    slot_surcharges: rows(tariff?.slot_surcharges, (s) => s.shorter_than_minutes),
    lead_time_surcharges: rows(tariff?.lead_time_surcharges, (s) => s.shorter_than_minutes),
  };
}

/** The paths the API may name in the rows as they are now (beside their fields). */
export function rowPaths(rows: TariffRows): string[] {
  return LISTS.flatMap(({ list, from }) =>
    rows[list].flatMap((_row, i) => [`${list}[${i}].${from}`, `${list}[${i}].cents`]),
  );
}

export function TariffLists(props: {
  rows: TariffRows;
  setRows: Dispatch<SetStateAction<TariffRows>>;
  errors: string[];
}) {
  const { rows, setRows, errors } = props;
  return (
    <>
      {LISTS.map(({ list, from, title, name, unit }) => (
        <fieldset key={list}>
          <legend>{title}</legend>
          {rows[list].length === 0 && <p>None.</p>}
          {rows[list].map((row, i) => (
            <div className="filters band" key={row.key}>
              <Field
                label={`${name} ${i + 1} ${unit}`}
                name={`${list}.${row.key}.${from}`}
                type="number"
                step="any"
                path={`${list}[${i}].${from}`}
                errors={errors}
                defaultValue={row.from === undefined ? "" : String(row.from)}
              />
              <Field
                label={`${name} ${i + 1} price (€)`}
                name={`${list}.${row.key}.cents`}
                type="number"
                step="0.01"
                path={`${list}[${i}].cents`}
                errors={errors}
                defaultValue={row.cents === undefined ? "" : (row.cents / 100).toFixed(2)}
              />
              <button
                type="button"
                className="secondary"
                aria-label={`Remove ${name.toLowerCase()} ${i + 1}`}
                onClick={() => setRows((all) => ({ ...all, [list]: all[list].filter((r) => r.key !== row.key) }))}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            className="secondary"
            onClick={() => setRows((all) => ({ ...all, [list]: [...all[list], { key: nextKey++ }] }))}
          >
            Add a {name.toLowerCase()}
          </button>
        </fieldset>
      ))}
    </>
  );
}
