/**
 * The console's tests run the whole system as processes (scripts/system.ts, as `npm start`
 * does), on a fresh database and a locked-down NATS server of their own (e2e/src/system.ts): the
 * console calls delivery-api for real. The e-mails go through the log adapter; the tests read
 * their links from the console's log file.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { waitFor } from "@dos/service-kit/testing";
import { bootSystemUnderTest, OPS_TOKEN, type SystemUnderTest } from "../../../e2e/src/system.ts";

export interface ConsoleBed {
  system: SystemUnderTest;
  /** The console (pages and BFF) for HTTP clients. */
  url: string;
  /** The console as its e-mailed links name it (CONSOLE_PUBLIC_URL, localhost): for the browser. */
  pageUrl: string;
  /** The console's internal listener (operator routes). */
  internalUrl: string;
  ops<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  invite(email: string): Promise<{ status: number; body: unknown }>;
  /** Invites a staff person of delivery-api to the console (the console's internal listener). */
  inviteStaff(email: string): Promise<{ status: number; body: unknown }>;
  /** A new staff person in delivery-api (created by the automation token), not invited yet. */
  newStaff(role: "admin" | "dispatcher" | "read_only"): Promise<{ id: number; email: string; name: string }>;
  /** The link of the last e-mail sent to this address. */
  lastLinkTo(email: string): Promise<string>;
  /** An account with one user; its e-mail is returned. */
  newAccountUser(environment?: "production" | "test"): Promise<{ accountId: number; userId: number; email: string }>;
  close(): Promise<void>;
}

let counter = 0;
/** E-mails already read per address: the next read waits for a newer one. */
const mailsSeen = new Map<string, number>();

export async function startConsoleBed(env: Record<string, string> = {}): Promise<ConsoleBed> {
  const logDir = mkdtempSync(path.join(tmpdir(), "console-test-"));
  // At warn: the log adapter's e-mails are written at that level, and the tests read them.
  const system = await bootSystemUnderTest({ LOG_LEVEL: "warn", ...env }, { logDir });
  const consoleService = system.services.find((s) => s.spec.name === "console");
  if (!consoleService?.internalUrl) throw new Error("the system has no console");
  const json = async <T>(url: string, method: string, token: string, body?: unknown) => {
    const response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const bed: ConsoleBed = {
    system,
    url: consoleService.url,
    pageUrl: consoleService.url.replace("127.0.0.1", "localhost"),
    internalUrl: consoleService.internalUrl,
    ops: (method, p, body) => json(`${system.opsUrl}/ops/v1${p}`, method, OPS_TOKEN, body),
    invite: (email) => json(`${consoleService.internalUrl}/ops/console/v1/invitations`, "POST", OPS_TOKEN, { email }),
    inviteStaff: (email) =>
      json(`${consoleService.internalUrl}/ops/console/v1/staff/invitations`, "POST", OPS_TOKEN, { email }),
    async newStaff(role) {
      counter += 1;
      const name = `Staff ${counter} (${role})`;
      const created = await bed.ops<{ id: number; email: string }>("POST", "/staff", {
        email: `staff${counter}-${Date.now()}@operator.example`,
        name,
        role,
      });
      if (created.status !== 201)
        throw new Error(`staff not created: ${created.status} ${JSON.stringify(created.body)}`);
      return { id: created.body.id, email: created.body.email, name };
    },
    async lastLinkTo(email) {
      // The log reaches its file through a pipe: the line may land a moment after the answer.
      const links = () =>
        readFileSync(path.join(logDir, "console.log"), "utf8")
          .split("\n")
          .filter((line) => line.includes('"mail"'))
          .map((line) => JSON.parse(line) as { mail: { to: string; text: string } })
          .filter((line) => line.mail.to.toLowerCase() === email.toLowerCase())
          .map((line) => /https?:\/\/\S+/.exec(line.mail.text)?.[0] ?? "");
      const before = mailsSeen.get(email) ?? 0;
      const found = await waitFor(async () => {
        const all = links();
        return all.length > before ? all : undefined;
      }, 5000);
      mailsSeen.set(email, found.length);
      return found.at(-1) as string;
    },
    async newAccountUser(environment = "production") {
      counter += 1;
      const account = await bed.ops<{ id: number }>("POST", "/accounts", {
        company_name: `Fleurs ${counter}`,
        environment,
      });
      const email = `person${counter}-${account.body.id}@shop.example`;
      const user = await bed.ops<{ id: number }>("POST", `/accounts/${account.body.id}/users`, { email });
      return { accountId: account.body.id, userId: user.body.id, email };
    },
    close: () => system.teardown(),
  };
  return bed;
}
