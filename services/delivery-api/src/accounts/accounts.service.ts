/** Client accounts as operators create and configure them. */
import { formatTimestamp } from "@dos/contracts";
import { notFound, unprocessable } from "@dos/service-kit";
import type { Kysely, Selectable, Updateable } from "kysely";
import { isSupportedCountry } from "libphonenumber-js";
import type { DB } from "../db/database.ts";
import { pageOf, pageWindow } from "../lib/paging.ts";
import { requiredText } from "../lib/text.ts";
import {
  findAccountById,
  insertAccount,
  listAccounts,
  lockAccountById,
  updateAccount as updateAccountRow,
} from "./accounts.repository.ts";
import type {
  Account,
  AccountSettingsInput,
  CreateAccountBody,
  ListAccountsQuery,
  RateLimitInput,
  UpdateAccountBody,
} from "./accounts.schemas.ts";
import type { AccountsTable } from "./accounts.table.ts";

export type AccountRow = Selectable<AccountsTable>;

/** An account as the operator API shows it. */
function accountView(row: AccountRow): Account {
  return {
    id: row.id,
    company_name: row.company_name,
    environment: row.environment,
    settings: {
      bring_back_containers: row.bring_back_containers,
      default_task_gap_minutes: row.default_task_gap_minutes,
      default_task_duration_minutes: row.default_task_duration_minutes,
      recipient_phone_optional: row.recipient_phone_optional,
      phone_default_region: row.phone_default_region,
    },
    // null: the service default applies (the client API's RateLimit-Policy header shows it).
    rate_limit:
      row.rate_limit_quota === null || row.rate_limit_window_seconds === null
        ? null
        : { quota: row.rate_limit_quota, window_seconds: row.rate_limit_window_seconds },
    created_at: formatTimestamp(row.created_at),
  };
}

export async function createAccount(db: Kysely<DB>, body: CreateAccountBody) {
  const row = await insertAccount(db, {
    company_name: requiredText(body.company_name, "company_name"),
    environment: body.environment,
    ...settingsColumns(body.settings),
    ...rateLimitColumns(body.rate_limit),
  });
  return accountView(row);
}

/** The account, or 404: every nested operator route starts here. */
/** Whether the account exists (for the routes that forward to services knowing no accounts). */
export async function accountExists(db: Kysely<DB>, accountId: number): Promise<boolean> {
  return (await findAccountById(db, accountId)) !== undefined;
}

export async function requireAccount(db: Kysely<DB>, accountId: number): Promise<AccountRow> {
  const row = await findAccountById(db, accountId);
  if (!row) throw notFound(`account ${accountId}`);
  return row;
}

export async function getAccount(db: Kysely<DB>, accountId: number) {
  return accountView(await requireAccount(db, accountId));
}

export async function listAccountPage(db: Kysely<DB>, query: ListAccountsQuery) {
  const rows = await listAccounts(db, { environment: query.environment, ...pageWindow(query) });
  const { items, hasMore } = pageOf(rows, query);
  return { accounts: items.map(accountView), hasMore };
}

/**
 * Changes the company name and settings. The environment is chosen once: moving an account
 * between test and production would turn fake deliveries into billed ones (or the reverse).
 */
export async function updateAccount(db: Kysely<DB>, accountId: number, body: UpdateAccountBody) {
  return db.transaction().execute(async (trx) => {
    const current = await lockAccountById(trx, accountId);
    if (!current) throw notFound(`account ${accountId}`);
    if (body.environment !== undefined && body.environment !== current.environment) {
      throw unprocessable(
        `environment cannot be changed from ${current.environment} to ${body.environment}; create another account`,
      );
    }
    const values: Updateable<AccountsTable> = {
      ...settingsColumns(body.settings),
      ...rateLimitColumns(body.rate_limit),
    };
    if (body.company_name !== undefined) values.company_name = requiredText(body.company_name, "company_name");
    if (Object.values(values).every((value) => value === undefined)) return accountView(current);
    return accountView(await updateAccountRow(trx, accountId, values));
  });
}

/** The rate-limit columns: both set, both null (the default), or both left as they are. */
function rateLimitColumns(rateLimit: RateLimitInput | undefined) {
  if (rateLimit === undefined) return {};
  return {
    rate_limit_quota: rateLimit?.quota ?? null,
    rate_limit_window_seconds: rateLimit?.window_seconds ?? null,
  };
}

/** The settings columns given; Kysely leaves undefined values out of inserts and updates. */
function settingsColumns(settings: AccountSettingsInput = {}) {
  const region = settings.phone_default_region?.toUpperCase();
  if (region !== undefined && !isSupportedCountry(region)) {
    throw unprocessable("settings.phone_default_region must be an ISO 3166-1 alpha-2 region code, such as FR");
  }
  return {
    bring_back_containers: settings.bring_back_containers,
    default_task_gap_minutes: settings.default_task_gap_minutes,
    default_task_duration_minutes: settings.default_task_duration_minutes,
    recipient_phone_optional: settings.recipient_phone_optional,
    phone_default_region: region,
  };
}
