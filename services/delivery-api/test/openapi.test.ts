/**
 * The OpenAPI 3.1 document and the docs page: public, generated from the contracts schemas,
 * covering every client operation and nothing of the operator API; the page serves its own
 * assets (no CDN).
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { launchChromium } from "@dos/service-kit/testing-browser";
import { startTestApi, type TestApi } from "./fixtures.ts";

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(async () => api.close());

test("/api/v2/openapi.json: public OpenAPI 3.1 with every client operation", async () => {
  const response = await api.app.inject({ method: "GET", url: "/api/v2/openapi.json" });
  assert.equal(response.statusCode, 200);
  const doc = response.json();
  assert.equal(doc.openapi, "3.1.0");
  const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  for (const operation of [
    "GET /api/v2/package_types",
    "GET /api/v2/deliveries",
    "POST /api/v2/deliveries",
    "POST /api/v2/deliveries/quote",
    "GET /api/v2/deliveries/latest",
    "GET /api/v2/deliveries/{delivery_id}",
    "PATCH /api/v2/deliveries/{delivery_id}",
    "PUT /api/v2/deliveries/{delivery_id}",
    "PATCH /api/v2/deliveries/{delivery_id}/cancel",
    "POST /api/v2/deliveries/{delivery_id}/redelivery",
  ]) {
    assert.ok(operations.includes(operation), `${operation} missing from ${operations.join(", ")}`);
  }
  assert.ok(
    !operations.some((o) => o.includes("/ops/") || o.includes("/livez") || o.includes("/docs")),
    operations.join(", "),
  );
  assert.deepEqual(doc.security, [{ userEmail: [], userToken: [] }]);
  assert.equal(doc.components.securitySchemes.userToken.name, "X-User-Token");

  const create = doc.paths["/api/v2/deliveries"].post;
  assert.equal(create.requestBody.content["application/json"].schema.$ref, "#/components/schemas/DeliveryCreateInput");
  assert.equal(create.responses["201"].content["application/json"].schema.$ref, "#/components/schemas/Delivery");
  assert.ok(create.responses["422"], "the error answers are documented");
  assert.ok(
    create.parameters.some((p: { in: string; name: string }) => p.in === "header" && p.name === "idempotency-key"),
  );
  const get = doc.paths["/api/v2/deliveries/{delivery_id}"].get;
  assert.deepEqual(
    get.parameters.map((p: { in: string; name: string; schema: { type: string } }) => [p.in, p.name, p.schema.type]),
    [["path", "delivery_id", "integer"]],
  );
});

test("the outgoing webhooks are documented in the same document: their body and signature headers", async () => {
  const doc = (await api.app.inject({ method: "GET", url: "/api/v2/openapi.json" })).json();
  const webhook = doc.webhooks?.deliveryEvent?.post;
  assert.ok(webhook, `webhooks: ${JSON.stringify(Object.keys(doc.webhooks ?? {}))}`);
  assert.equal(webhook.requestBody.content["application/json"].schema.$ref, "#/components/schemas/DeliveryEvent");
  const body = doc.components.schemas.DeliveryEvent;
  assert.equal(body.title, "DeliveryEvent");
  assert.deepEqual(body.properties.type.enum ?? body.properties.type.anyOf.map((t: { const: string }) => t.const), [
    "delivery.created",
    "delivery.updated",
    "delivery.cancelled",
    "delivery.status_changed",
    "delivery.redelivery_created",
  ]);
  assert.equal(body.properties.payload.properties.delivery.$ref, "#/components/schemas/Delivery");
  assert.deepEqual(
    webhook.parameters.map((p: { in: string; name: string; required: boolean }) => [p.in, p.name, p.required]),
    [
      ["header", "webhook-id", true],
      ["header", "webhook-timestamp", true],
      ["header", "webhook-signature", true],
    ],
  );
  assert.ok(webhook.responses["2XX"], "any 2xx acknowledges");
  assert.match(webhook.description, /docs\/webhooks\.md/);
});

test("/api/v2/docs: a self-contained page, no credentials needed", async () => {
  const page = await api.app.inject({ method: "GET", url: "/api/v2/docs/" });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers["content-type"] as string, /text\/html/);
  const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
  assert.ok(sources.length > 0);
  for (const source of sources) assert.ok(!/^(https?:)?\/\//.test(source), `external asset ${source}`);
  const bundle = await api.app.inject({ method: "GET", url: "/api/v2/docs/static/swagger-ui-bundle.js" });
  assert.equal(bundle.statusCode, 200);
  assert.ok(bundle.body.length > 100_000);
  const spec = await api.app.inject({ method: "GET", url: "/api/v2/docs/json" });
  assert.equal(spec.json().openapi, "3.1.0");
});

test("/api/v2/docs: a strict Content-Security-Policy, and the page still shows every operation in Chromium", async () => {
  const page = await api.app.inject({ method: "GET", url: "/api/v2/docs/" });
  const csp = String(page.headers["content-security-policy"]);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(page.headers["x-content-type-options"], "nosniff");
  assert.equal(page.headers["referrer-policy"], "no-referrer");

  await api.app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    const refused: string[] = [];
    tab.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) refused.push(message.text());
    });
    await tab.goto(`${base}/api/v2/docs/`);
    await tab.getByText("POST", { exact: true }).first().waitFor({ timeout: 20_000 });
    assert.ok((await tab.locator(".opblock").count()) >= 10, "the operations are listed");
    assert.deepEqual(refused, []);
  } finally {
    await browser.close();
  }
});
