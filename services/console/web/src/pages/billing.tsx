/**
 * Billing: the month's statement of the account (delivered and failed deliveries billed at their
 * price, cancelled ones listed and billed nothing, a test account never billed), each delivery
 * with its tariff breakdown, the totals, and the same as CSV.
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { bff } from "../bff.ts";
import { euros, when } from "./display.tsx";
import { Errors, Field } from "./form-parts.tsx";

const thisMonth = () => new Date().toISOString().slice(0, 7);

export function BillingPage() {
  const [month, setMonth] = useState(thisMonth());
  const statement = useQuery({ queryKey: ["statement", month], queryFn: () => bff.statement(month) });
  const s = statement.data;
  return (
    <>
      <h1>Billing</h1>
      <search>
        <form
          className="filters"
          onSubmit={(event) => {
            event.preventDefault();
            const chosen = String(new FormData(event.currentTarget).get("month") ?? "");
            if (chosen) setMonth(chosen);
          }}
        >
          <Field label="Month" name="month" type="month" defaultValue={month} />
          <button type="submit">Show the statement</button>
        </form>
      </search>
      {statement.error && <Errors errors={[statement.error.message]} />}
      {s && (
        <>
          {!s.billed && <p role="note">A test account is never billed: every amount below is €0.00.</p>}
          <dl className="facts" aria-label="Totals">
            <dt>Deliveries</dt>
            <dd>
              {s.totals.deliveries} ({s.totals.delivered} delivered, {s.totals.failed} failed, {s.totals.cancelled}{" "}
              cancelled)
            </dd>
            <dt>Billed</dt>
            <dd data-testid="billed-total">{euros(s.totals.billed_cents)}</dd>
          </dl>
          <p>
            <a href={`/api/statement.csv?month=${s.month}`} download>
              Download the statement of {s.month} (CSV)
            </a>
          </p>
          {s.truncated && <p>The list shows the first 5,000 deliveries; the totals and the CSV cover the month.</p>}
          <table>
            <caption>Statement of {s.month}</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Service day</th>
                <th scope="col">Status</th>
                <th scope="col">Price</th>
                <th scope="col">Breakdown</th>
                <th scope="col">Billed</th>
              </tr>
            </thead>
            <tbody>
              {s.deliveries.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Link to="/deliveries/$deliveryId" params={{ deliveryId: String(d.id) }}>
                      #{d.id}
                    </Link>{" "}
                    {d.client_order_reference ?? ""}
                  </td>
                  <td>{when(d.service_day)}</td>
                  <td>{d.status}</td>
                  <td>{euros(d.price_cents)}</td>
                  <td>{d.price_lines.map((line) => `${line.label} ${euros(line.amount_cents)}`).join(", ")}</td>
                  <td>{euros(d.billed_cents)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {s.deliveries.length === 0 && <p>No delivery ended in {s.month}.</p>}
        </>
      )}
    </>
  );
}
