/** Every error webhook-dispatcher answers a management request with, declared once. */
import { notFound, unprocessable } from "@dos/service-kit";

export const webhookNotFound = () => notFound("webhook");
export const invalidUrl = (problem: string) => unprocessable(`url ${problem}`);
export const refusedUrl = (refusal: string) =>
  unprocessable(`url is refused: ${refusal}, which webhooks may not reach`);
export const tooManyWebhooks = (max: number) =>
  unprocessable(`url cannot be added: an account has at most ${max} webhooks`);
export const webhookDisabled = (reason: string | null) =>
  unprocessable(`webhook is disabled${reason ? ` (${reason})` : ""}; delete it and create a new one`);
export const sinceOutOfRange = (days: number) => unprocessable(`since must be within the last ${days} days`);
export const sinceInFuture = () => unprocessable("since must not be in the future");
