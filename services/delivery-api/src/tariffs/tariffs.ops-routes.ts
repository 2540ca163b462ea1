/**
 * Operator API for tariffs (mounted under /ops/v1, where the bearer guard already ran). The
 * pricing service owns tariffs; these routes forward over the bus and answer in the error
 * shape: pricing's refusals keep their status (422, 404, 409), and pricing not answering, or
 * answering something off-contract, is a 503 with Retry-After. The preview of a draft tariff
 * stores nothing and needs no tariff of pricing's: it is priced here, with the pricing rules
 * pricing itself quotes with (libs/contracts), so it answers what a quote would.
 */
import {
  compileValidator,
  natsNames,
  previewPrice,
  type Tariff,
  TariffInput,
  type TariffListReply,
  TariffListReply as TariffListReplySchema,
  TariffPreview,
  TariffPreviewInput,
  Tariff as TariffSchema,
  tariffRuleProblems,
} from "@dos/contracts";
import { HttpError, notFound, unprocessable } from "@dos/service-kit";
import type { NatsConnection } from "@nats-io/nats-core";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { pathId } from "../http/request-input.ts";
import { pricingUnavailable, requestPricing } from "../pricing/pricing.client.ts";

export interface TariffsOpsOptions {
  nc: NatsConnection;
  namespace: string;
  /** How long pricing has to answer; 5 s when not given. */
  timeoutMs?: number;
  /** When given, an unknown account answers 404 instead of reaching pricing (which knows no accounts). */
  accountExists?: (accountId: number) => Promise<boolean>;
}

interface AccountParams {
  accountId: string;
}

const validateTariff = compileValidator<Tariff>(TariffSchema);
const validateList = compileValidator<TariffListReply>(TariffListReplySchema);
/** Refusals pricing may answer that are the operator's to fix; anything else is pricing's fault. */
const FORWARDED_CODES = new Set([404, 409, 422]);

export async function tariffsOpsRoutes(app: FastifyInstance, options: TariffsOpsOptions) {
  const names = natsNames(options.namespace);
  const timeoutMs = options.timeoutMs ?? 5000;

  const accountId = async (params: AccountParams) => {
    const id = pathId(params.accountId, "account");
    if (options.accountExists && !(await options.accountExists(id))) throw notFound(`account ${id}`);
    return id;
  };

  async function ask<T>(
    request: FastifyRequest,
    subject: string,
    body: unknown,
    validate: ReturnType<typeof compileValidator<T>>,
  ) {
    const bus = { nc: options.nc, timeoutMs, logger: request.log };
    const answer = await requestPricing(bus, subject, body);
    if (!answer.ok) {
      // 400 means our own forwarded body broke the contract: that is ours to fix, not the operator's.
      if (FORWARDED_CODES.has(answer.code)) throw new HttpError(answer.code, answer.messages);
      throw pricingUnavailable(bus.logger, subject, "error reply", { code: answer.code, errors: answer.messages });
    }
    const checked = validate(answer.body);
    if (!checked.ok) {
      throw pricingUnavailable(bus.logger, subject, "reply breaks the contract", {
        errors: checked.errors.map((e) => `${e.instancePath} ${e.message}`),
      });
    }
    return checked.value;
  }

  app.get<{ Params: AccountParams }>(
    "/accounts/:accountId/tariffs",
    {
      schema: {
        operationId: "tariffs.list",
        response: { 200: Type.Array(TariffSchema) },
        summary: "List the account's tariff versions (pricing service)",
      },
    },
    async (request) => {
      const account_id = await accountId(request.params);
      const reply = await ask(request, names.subjects.pricingTariffsList, { account_id }, validateList);
      return reply.tariffs;
    },
  );

  app.post<{ Params: AccountParams; Body: TariffInput }>(
    "/accounts/:accountId/tariffs",
    {
      schema: {
        operationId: "tariffs.create",
        response: { 201: TariffSchema },
        summary: "Store a new tariff version (see the pricing README)",
        body: TariffInput,
      },
    },
    async (request, reply) => {
      const account_id = await accountId(request.params);
      const tariff = await ask(
        request,
        names.subjects.pricingTariffsCreate,
        { ...request.body, account_id },
        validateTariff,
      );
      return reply.code(201).send(tariff);
    },
  );

  app.post<{ Params: AccountParams; Body: TariffPreviewInput }>(
    "/accounts/:accountId/tariffs/preview",
    {
      // It changes nothing: no more an audited change than a GET is.
      config: { audited: false },
      schema: {
        operationId: "tariffs.preview",
        response: { 200: TariffPreview },
        summary: "Price a sample delivery under a draft tariff, before storing it (nothing is stored)",
        description:
          "The body is the tariff as `POST .../tariffs` takes it, plus `sample`: a delivery described by its " +
          "direction, packages, slot length and lead time. The answer is its price and itemised lines under the " +
          "draft, as if in force (`effective_from` is not used). A draft pricing would refuse is a 422 with " +
          "pricing's own messages.",
        body: TariffPreviewInput,
      },
    },
    async (request) => {
      await accountId(request.params);
      const { sample, ...tariff } = request.body;
      const problems = tariffRuleProblems(tariff);
      if (problems.length > 0) throw unprocessable(problems);
      return previewPrice(tariff, sample);
    },
  );
}
