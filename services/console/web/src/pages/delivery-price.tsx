/**
 * A delivery's price with its tariff breakdown (the lines the monthly statement shows), from the
 * client API's `GET /api/v2/deliveries/{id}/price`.
 */
import { useQuery } from "@tanstack/react-query";
import { clientApi } from "../client-api.ts";
import { euros } from "./display.tsx";

export function DeliveryPriceView({ deliveryId }: { deliveryId: number }) {
  const price = useQuery({
    // Under the delivery's key, so that a change made on the page (a new price) refreshes it too.
    queryKey: ["delivery", String(deliveryId), "price"],
    queryFn: async () => {
      const { data, error } = await clientApi.GET("/api/v2/deliveries/{delivery_id}/price", {
        params: { path: { delivery_id: deliveryId } },
      });
      if (error) throw new Error(error.errors.join("; "));
      return data;
    },
  });
  return (
    <section aria-labelledby="price-heading" className="price">
      <h2 id="price-heading">Price</h2>
      {price.error && <p role="alert">The price could not be loaded: {price.error.message}</p>}
      {price.data && (
        <table data-testid="price-breakdown">
          <caption className="visually-hidden">Price breakdown</caption>
          <tbody>
            {price.data.lines.map((line) => (
              <tr key={line.code}>
                <th scope="row">{line.label}</th>
                <td>{euros(line.amount_cents)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total{price.data.tariff_id === null ? "" : ` (tariff ${price.data.tariff_id})`}</th>
              <td data-testid="price-total">{euros(price.data.price_cents)}</td>
            </tr>
          </tfoot>
        </table>
      )}
    </section>
  );
}
