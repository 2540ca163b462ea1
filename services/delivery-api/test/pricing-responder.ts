/**
 * A test double of the pricing service on the real bus: it answers quote requests on the
 * namespace's quote subject with a deterministic price (or a null price, or silence), and
 * records what it was asked. delivery-api's own pricing client talks to it over NATS.
 */
import { natsNames, type QuoteReply, type QuoteRequest } from "@dos/contracts";
import { connectNats, createLogger, type NatsHandle } from "@dos/service-kit";
import { testInfra } from "@dos/service-kit/testing";

export type PricingMode = "price" | "null" | "silent";

export interface PricingResponder {
  /** What it answers from now on: a price, a null price (no tariff), or nothing (a timeout). */
  mode: PricingMode;
  /** Every request it received, in order. */
  readonly requests: QuoteRequest[];
  stop(): Promise<void>;
}

const TEST_TARIFF_ID = 7;

/**
 * The double's price: 500 base, 100 per package unit, 300 more when a client slot is shorter
 * than an hour. Lines add up to the price, as the contract requires.
 */
function testPrice(request: QuoteRequest): QuoteReply {
  const units = request.packages.reduce((sum, p) => sum + p.amount, 0);
  const short = request.tasks.some((t) => Date.parse(t.slot_ending_at) - Date.parse(t.slot_starting_at) < 60 * 60_000);
  const lines = [
    { code: "base", label: "Base price", amount_cents: 500 },
    { code: "packages", label: `${units} package units`, amount_cents: 100 * units },
    ...(short ? [{ code: "short_slot", label: "Slot shorter than an hour", amount_cents: 300 }] : []),
  ];
  return {
    price_cents: lines.reduce((sum, l) => sum + l.amount_cents, 0),
    tariff_id: TEST_TARIFF_ID,
    lines,
  };
}

export async function startPricingResponder(namespace: string, mode: PricingMode = "price"): Promise<PricingResponder> {
  const nats: NatsHandle = await connectNats(
    testInfra().natsUrl,
    "pricing-double",
    createLogger("pricing-double", "silent"),
  );
  const requests: QuoteRequest[] = [];
  const responder: PricingResponder = {
    mode,
    requests,
    stop: () => nats.drain(),
  };
  nats.nc.subscribe(natsNames(namespace).services.pricing.quoteSubject, {
    callback: (_error, msg) => {
      const request = msg.json<QuoteRequest>();
      requests.push(request);
      if (responder.mode === "silent") return;
      const reply: QuoteReply =
        responder.mode === "null" ? { price_cents: null, tariff_id: null, lines: [] } : testPrice(request);
      msg.respond(JSON.stringify(reply));
    },
  });
  await nats.nc.flush();
  return responder;
}
