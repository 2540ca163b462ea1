/**
 * The operator CLI's commands: each maps flags to one request of the operator API (/ops/v1).
 * Path flags fill `{name}` placeholders, query flags go to the query string, the others become
 * body fields (dotted names nest: `settings.bring_back_containers`).
 */
import { FRAGILITIES, TEMPERATURES } from "@dos/contracts";
import { type FlagSpec, type ParsedArgs, UsageError } from "./cli-args.ts";
import { DISPATCH_COMMANDS } from "./dispatch-commands.ts";
import { jsonBody, jsonBodyFlags, rateLimitBody, zonesFromPositionals } from "./ops-bodies.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface CommandFlag extends FlagSpec {
  /** Where the value goes: a path placeholder, a query parameter, or a body field (the default). */
  at?: "path" | "query";
  /** The query parameter or body field; the flag name when not given. */
  field?: string;
}

export interface CommandSpec {
  summary: string;
  method: Method;
  path: string;
  flags: Record<string, CommandFlag>;
  /** Help text of the positional arguments; a command without it refuses them. */
  positionals?: string;
  /** Builds the body itself (from positionals or a file) instead of from body flags. */
  body?: (args: ParsedArgs) => unknown;
}

const id = (help: string): CommandFlag => ({ type: "integer", required: true, at: "path", help });
const account = id("account id");
const webhook: CommandFlag = { type: "string", required: true, at: "path", help: "webhook id (a UUID)" };
const text = (field: string, help: string, required = false): CommandFlag => ({
  type: "string",
  field,
  help,
  required,
  nullable: !required,
});

const settingsFlags: Record<string, CommandFlag> = {
  "bring-back-containers": { type: "boolean", field: "settings.bring_back_containers", help: "default of deliveries" },
  "task-gap-minutes": {
    type: "integer",
    field: "settings.default_task_gap_minutes",
    help: "gap between the client's task and the default-place task",
  },
  "task-duration-minutes": {
    type: "integer",
    field: "settings.default_task_duration_minutes",
    help: "length of the default-place task slot",
  },
  "phone-optional": { type: "boolean", field: "settings.recipient_phone_optional", help: "agreed: no recipient phone" },
  "phone-region": {
    type: "string",
    field: "settings.phone_default_region",
    help: "region of national numbers, e.g. FR",
  },
};

const placeFlags = (required: boolean): Record<string, CommandFlag> => ({
  "recipient-name": text("recipient_name", "recipient's name", required),
  address: text("address", "street number and street name only", required),
  "postal-code": text("postal_code", "postal code", required),
  city: text("city", "city", required),
  phone: text("recipient_phone", "recipient's phone, international format"),
  email: text("recipient_email", "recipient's e-mail"),
  company: text("company_name", "company name"),
  instructions: text("address_instructions", "access code, floor, apartment..."),
  label: text("label", "what this place is called"),
  latitude: { type: "number", nullable: true, help: "latitude of the place" },
  longitude: { type: "number", nullable: true, help: "longitude of the place" },
});

const packageTypeFlags = (required: boolean): Record<string, CommandFlag> => ({
  name: text("name", "exact type name clients see", required),
  volume: { type: "number", field: "volume_dm3", required, help: "volume in dm3" },
  weight: { type: "number", field: "weight_kg", required, help: "weight in kg" },
  fragility: { type: "string", values: FRAGILITIES, nullable: true, help: FRAGILITIES.join("|") },
  temperature: { type: "string", values: TEMPERATURES, nullable: true, help: TEMPERATURES.join("|") },
  "size-category": { type: "boolean", field: "is_size_category", help: "a size category, given alone with amount 1" },
});

const ZONE_ARGS = "POSTAL_CODE:LATITUDE:LONGITUDE ... (e.g. 75001:48.8626:2.3363)";

export const COMMANDS: Record<string, CommandSpec> = {
  "accounts list": {
    summary: "list client accounts, oldest first",
    method: "GET",
    path: "/accounts",
    flags: {
      environment: { type: "string", values: ["production", "test"], at: "query", help: "production|test" },
      page: { type: "integer", at: "query", help: "page number, from 1" },
      "per-page": { type: "integer", at: "query", field: "per_page", help: "accounts per page (at most 500)" },
    },
  },
  "accounts get": { summary: "show an account", method: "GET", path: "/accounts/{account}", flags: { account } },
  "accounts create": {
    summary: "create a client account",
    method: "POST",
    path: "/accounts",
    flags: {
      company: text("company_name", "company name", true),
      environment: { type: "string", values: ["production", "test"], help: "production (default) or test" },
      ...settingsFlags,
    },
  },
  "accounts update": {
    summary: "rename an account or change its settings",
    method: "PATCH",
    path: "/accounts/{account}",
    flags: { account, company: { type: "string", field: "company_name", help: "company name" }, ...settingsFlags },
  },
  "accounts rate-limit": {
    summary: "set the account's client API limit (quota requests per window), or --default to restore the default",
    method: "PATCH",
    path: "/accounts/{account}",
    flags: {
      account,
      quota: { type: "integer", help: "requests per window (the RateLimit-Policy q), 1 to 1000000" },
      window: { type: "integer", help: "window in seconds (the RateLimit-Policy w), 1 to 3600" },
      default: { type: "boolean", help: "drop the override: the service default applies again" },
    },
    body: rateLimitBody,
  },
  "users list": {
    summary: "list an account's users",
    method: "GET",
    path: "/accounts/{account}/users",
    flags: { account },
  },
  "users get": {
    summary: "show a user",
    method: "GET",
    path: "/accounts/{account}/users/{user}",
    flags: { account, user: id("user id") },
  },
  "users create": {
    summary: "create a user (e-mails are unique across accounts)",
    method: "POST",
    path: "/accounts/{account}/users",
    flags: {
      account,
      email: text("email", "the user's e-mail (X-User-Email)", true),
      name: text("name", "the user's name"),
    },
  },
  "tokens list": {
    summary: "list a user's API tokens (hints only)",
    method: "GET",
    path: "/accounts/{account}/users/{user}/tokens",
    flags: { account, user: id("user id") },
  },
  "tokens create": {
    summary: "create an API token; it is shown once, in this output",
    method: "POST",
    path: "/accounts/{account}/users/{user}/tokens",
    flags: { account, user: id("user id") },
  },
  "tokens revoke": {
    summary: "revoke an API token",
    method: "DELETE",
    path: "/accounts/{account}/users/{user}/tokens/{token}",
    flags: { account, user: id("user id"), token: id("token id") },
  },
  "places get-default": {
    summary: "show the account's default place",
    method: "GET",
    path: "/accounts/{account}/default_place",
    flags: { account },
  },
  "places set-default": {
    summary: "set (or replace) the account's default place",
    method: "PUT",
    path: "/accounts/{account}/default_place",
    flags: { account, ...placeFlags(true) },
  },
  "addresses list": {
    summary: "list saved addresses",
    method: "GET",
    path: "/accounts/{account}/addresses",
    flags: { account },
  },
  "addresses get": {
    summary: "show a saved address",
    method: "GET",
    path: "/accounts/{account}/addresses/{id}",
    flags: { account, id: id("saved address id") },
  },
  "addresses create": {
    summary: "save an address (its id is what a task may be given as)",
    method: "POST",
    path: "/accounts/{account}/addresses",
    flags: { account, ...placeFlags(true) },
  },
  "addresses update": {
    summary: "change fields of a saved address ('' clears an optional one)",
    method: "PATCH",
    path: "/accounts/{account}/addresses/{id}",
    flags: { account, id: id("saved address id"), ...placeFlags(false) },
  },
  "addresses delete": {
    summary: "delete a saved address",
    method: "DELETE",
    path: "/accounts/{account}/addresses/{id}",
    flags: { account, id: id("saved address id") },
  },
  "package-types list": {
    summary: "list the account's package types",
    method: "GET",
    path: "/accounts/{account}/package_types",
    flags: {
      account,
      "include-archived": { type: "boolean", at: "query", field: "include_archived", help: "also archived types" },
    },
  },
  "package-types get": {
    summary: "show a package type",
    method: "GET",
    path: "/accounts/{account}/package_types/{type}",
    flags: { account, type: id("package type id") },
  },
  "package-types create": {
    summary: "add a package type to the account's catalogue",
    method: "POST",
    path: "/accounts/{account}/package_types",
    flags: { account, ...packageTypeFlags(true) },
  },
  "package-types update": {
    summary: "change a package type",
    method: "PATCH",
    path: "/accounts/{account}/package_types/{type}",
    flags: { account, type: id("package type id"), ...packageTypeFlags(false) },
  },
  "package-types archive": {
    summary: "archive a package type (clients no longer see or use it)",
    method: "DELETE",
    path: "/accounts/{account}/package_types/{type}",
    flags: { account, type: id("package type id") },
  },
  "package-types restore": {
    summary: "restore an archived package type",
    method: "PATCH",
    path: "/accounts/{account}/package_types/{type}",
    flags: { account, type: id("package type id") },
    body: () => ({ archived: false }),
  },
  "zones list": {
    summary: "list delivery zones",
    method: "GET",
    path: "/accounts/{account}/zones",
    flags: { account },
  },
  "zones add": {
    summary: "add zones, or move the centroid of existing ones",
    method: "POST",
    path: "/accounts/{account}/zones",
    flags: { account },
    positionals: ZONE_ARGS,
    body: zonesFromPositionals,
  },
  "zones set": {
    summary: "replace all the account's zones with these",
    method: "PUT",
    path: "/accounts/{account}/zones",
    flags: { account },
    positionals: ZONE_ARGS,
    body: zonesFromPositionals,
  },
  "zones remove": {
    summary: "remove zones (all or none)",
    method: "DELETE",
    path: "/accounts/{account}/zones",
    flags: { account },
    positionals: "POSTAL_CODE ...",
    body: (args) => {
      if (args.positionals.length === 0) throw new UsageError("give at least one postal code to remove");
      return { postal_codes: args.positionals };
    },
  },
  "zones clear": {
    summary: "remove every zone of the account",
    method: "PUT",
    path: "/accounts/{account}/zones",
    flags: { account },
    body: () => ({ zones: [] }),
  },
  "tariffs list": {
    summary: "list the account's tariff versions (pricing service)",
    method: "GET",
    path: "/accounts/{account}/tariffs",
    flags: { account },
  },
  "tariffs create": {
    summary: "store a new tariff version, from --json or --file (see the pricing README)",
    method: "POST",
    path: "/accounts/{account}/tariffs",
    flags: { account, ...jsonBodyFlags },
    body: (args) => jsonBody(args, true),
  },
  "webhooks list": {
    summary: "list the account's webhook endpoints (webhook-dispatcher)",
    method: "GET",
    path: "/accounts/{account}/webhooks",
    flags: { account },
  },
  "webhooks create": {
    summary: "register a webhook endpoint; its signing secret is shown once, in this output",
    method: "POST",
    path: "/accounts/{account}/webhooks",
    flags: {
      account,
      url: text("url", "http(s) URL the events are POSTed to", true),
      events: {
        type: "list",
        nullable: true,
        help: "kinds sent, e.g. delivery.created,delivery.cancelled; all when absent",
      },
    },
  },
  "webhooks delete": {
    summary: "delete a webhook endpoint (its pending events are dropped)",
    method: "DELETE",
    path: "/accounts/{account}/webhooks/{webhook}",
    flags: { account, webhook },
  },
  "webhooks rotate": {
    summary: "new signing secret, shown once; the previous one signs too for a while",
    method: "POST",
    path: "/accounts/{account}/webhooks/{webhook}/rotate",
    flags: { account, webhook },
  },
  "webhooks attempts": {
    summary: "a webhook's recent delivery attempts, newest first",
    method: "GET",
    path: "/accounts/{account}/webhooks/{webhook}/attempts",
    flags: { account, webhook, limit: { type: "integer", at: "query", help: "how many (1-200, default 50)" } },
  },
  "webhooks replay": {
    summary: "send every event since a time again",
    method: "POST",
    path: "/accounts/{account}/webhooks/{webhook}/replay",
    flags: { account, webhook, since: text("since", "ISO 8601 timestamp, e.g. 2026-11-21T08:00:00Z", true) },
  },
  "webhooks enable": {
    summary: "enable a disabled webhook endpoint again (replay sends what it missed)",
    method: "POST",
    path: "/accounts/{account}/webhooks/{webhook}/enable",
    flags: { account, webhook },
  },
  ...DISPATCH_COMMANDS,
};
