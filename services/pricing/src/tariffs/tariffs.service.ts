/**
 * Tariff management: append a version, list an account's versions, read one. After a version
 * is committed, this replica forgets the account at once and every replica is told over
 * `pricingTariffsChanged`, so the next quote anywhere uses it; the account's versions are then
 * written to the TARIFFS bucket for delivery-api (tariffs.bucket.ts).
 */
import {
  compileValidator,
  formatTimestamp,
  type NatsNames,
  parseTimestamp,
  type Tariff,
  TariffCreateRequest,
  TariffGetRequest,
  type TariffListReply,
  TariffListRequest,
  type TariffsChanged,
  tariffRuleProblems,
} from "@dos/contracts";
import { validationMessages } from "@dos/service-kit";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Db } from "../db/database.ts";
import { invalidTariff, malformedRequest, tariffNotFound, tariffVersionExists } from "../errors.ts";
import type { TariffCache } from "./tariff-cache.ts";
import { effectiveFromProblem } from "./tariff-checks.ts";
import type { TariffsBucketWriter } from "./tariffs.bucket.ts";
import { findTariff, insertTariff, listTariffsByAccount, toTariff } from "./tariffs.repository.ts";

/** How far in the past an effective_from may be (clock skew, transit); it is then taken as now. */
const PAST_TOLERANCE_MS = 60_000;

const validateCreate = compileValidator<TariffCreateRequest>(TariffCreateRequest);
const validateList = compileValidator<TariffListRequest>(TariffListRequest);
const validateGet = compileValidator<TariffGetRequest>(TariffGetRequest);

export interface TariffsServiceDeps {
  db: Db;
  nc: NatsConnection;
  names: NatsNames;
  cache: TariffCache;
  bucket: TariffsBucketWriter;
  now?: () => Date;
}

export function createTariffsService(deps: TariffsServiceDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    async create(message: unknown): Promise<Tariff> {
      const request = checked(validateCreate, message);
      const clock = now();
      const given = request.effective_from === undefined ? clock : parseTimestamp(request.effective_from);
      const problems = tariffRuleProblems(request);
      if (!given) problems.unshift("effective_from is not a real date and time");
      const pastProblem = given && effectiveFromProblem(given, clock, PAST_TOLERANCE_MS);
      if (pastProblem) problems.unshift(pastProblem);
      if (problems.length > 0 || !given) throw invalidTariff(problems);
      const effectiveFrom = new Date(Math.max(given.getTime(), clock.getTime()));

      const row = await insertTariff(deps.db, {
        accountId: request.account_id,
        effectiveFrom,
        base_cents: request.base_cents,
        per_package_cents: request.per_package_cents,
        weight_bands: request.weight_bands,
        volume_bands: request.volume_bands,
        slot_surcharges: request.slot_surcharges,
        lead_time_surcharges: request.lead_time_surcharges,
        minimum_cents: request.minimum_cents,
        note: request.note ?? null,
      }).catch((error: { code?: string }) => {
        if (error.code === "23505") throw tariffVersionExists(formatTimestamp(effectiveFrom));
        throw error;
      });
      deps.cache.invalidate(request.account_id);
      const changed: TariffsChanged = { account_id: row.account_id, tariff_id: row.id };
      // Published before the reply on this same connection: NATS keeps one publisher's order,
      // so a replica sees the change before any request the caller sends after the reply.
      deps.nc.publish(deps.names.subjects.pricingTariffsChanged, JSON.stringify(changed));
      deps.bucket.write(row.account_id);
      return toTariff(row);
    },

    async list(message: unknown): Promise<TariffListReply> {
      const request = checked(validateList, message);
      const rows = await listTariffsByAccount(deps.db, request.account_id);
      return { tariffs: rows.map(toTariff) };
    },

    async get(message: unknown): Promise<Tariff> {
      const request = checked(validateGet, message);
      const row = await findTariff(deps.db, request.account_id, request.tariff_id);
      if (!row) throw tariffNotFound(request.tariff_id);
      return toTariff(row);
    },
  };
}
export type TariffsService = ReturnType<typeof createTariffsService>;

function checked<T>(validate: ReturnType<typeof compileValidator<T>>, message: unknown): T {
  const result = validate(message);
  if (!result.ok) throw malformedRequest(validationMessages(result.errors));
  return result.value;
}
