/**
 * Tools of the hostile-input suite: raw HTTP requests (any bytes, any content type, repeated
 * headers) and raw socket requests (header bytes no client library would send), the check every
 * answer must pass, and a fingerprint of the database to prove refused requests wrote nothing.
 */
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import pg from "pg";

export interface RawRequest {
  base: string;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

export interface RawAnswer {
  status: number;
  contentType: string;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

export function send(request: RawRequest): Promise<RawAnswer> {
  const url = new URL(request.base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        agent,
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${request.method} ${request.path}: no answer in 15 s`)));
    req.on("error", (error: Error & { code?: string }) => {
      // A server may answer a too large body early and close while it is still being written:
      // the answer is then read off a plain socket, which ignores the failed write.
      if (error.code === "EPIPE" || error.code === "ECONNRESET") resolve(sendOverSocket(request));
      else reject(error);
    });
    req.end(request.body);
  });
}

function sendOverSocket(request: RawRequest): Promise<RawAnswer> {
  const lines = [`${request.method} ${request.path} HTTP/1.1`, "Host: x", "Connection: close"];
  for (const [name, value] of Object.entries(request.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
  }
  if (request.body) lines.push(`Content-Length: ${request.body.length}`);
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  return sendRawHead(request.base, request.body ? Buffer.concat([head, request.body]) : head);
}

/** Writes the request head byte for byte (CRLF in values, NUL, huge lines) and reads the answer. */
export function sendRawHead(base: string, head: Buffer): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error("no answer in 15 s")));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A server may answer and reset the connection at once: the answer read so far counts.
    socket.on("error", (error) => chunks.length === 0 && reject(error));
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [headPart = "", ...rest] = text.split("\r\n\r\n");
      const status = Number(headPart.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0);
      const contentType = headPart.match(/\r\ncontent-type: ([^\r]*)/i)?.[1] ?? "";
      resolve({ status, contentType, body: rest.join("\r\n\r\n") });
    });
    socket.write(head);
    // The answer ends the exchange: ask the server to close after it.
    setTimeout(() => socket.end(), 200);
  });
}

/** No 5xx; every error `{"errors": ["...", ...]}`, except the HTML 404 of a page. */
export function assertWellAnswered(label: string, answer: RawAnswer, options: { page?: boolean } = {}): void {
  const context = `${label} → ${answer.status} ${answer.contentType} ${answer.body.slice(0, 300)}`;
  assert.ok(answer.status >= 200 && answer.status < 500, context);
  if (answer.status < 400) return;
  if (options.page && answer.contentType.startsWith("text/html")) return;
  assert.match(answer.contentType, /^application\/json/, context);
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    assert.fail(`not JSON: ${context}`);
  }
  const errors = (body as { errors?: unknown }).errors;
  assert.ok(Array.isArray(errors) && errors.length > 0, context);
  for (const error of errors) assert.ok(typeof error === "string" && error.length > 0, context);
}

const COUNTED = [
  "delivery.accounts",
  "delivery.users",
  "delivery.api_tokens",
  "delivery.places",
  "delivery.package_types",
  "delivery.delivery_zones",
  "delivery.deliveries",
  "delivery.tasks",
  "delivery.delivery_packages",
  "delivery.outbox",
  "delivery.idempotency_keys",
  "delivery.messengers",
  "delivery.vehicles",
  "delivery.rounds",
  "delivery.round_tasks",
  "delivery.task_media",
  "delivery.sms_messages",
  "webhooks.endpoints",
  "webhooks.events",
  "webhooks.messages",
  "geo.vehicle_positions",
  "pricing.tariffs",
];
/** Tables whose content (not only their size) must not change. */
const HASHED = ["delivery.deliveries", "delivery.tasks", "delivery.accounts", "webhooks.endpoints"];

/** Row counts of the main tables of every service, and a hash of the rows a refused update could touch. */
export async function fingerprint(databaseUrl: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result: Record<string, string> = {};
    for (const table of COUNTED) {
      result[table] = String((await client.query(`select count(*) as n from ${table}`)).rows[0]?.n);
    }
    for (const table of HASHED) {
      const row = await client.query(
        `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${table} t`,
      );
      result[`${table} (rows)`] = String(row.rows[0]?.h);
    }
    return result;
  } finally {
    await client.end();
  }
}
