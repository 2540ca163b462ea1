/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10): `RateLimit-Policy`
 * states the quota (`q` requests per `w` seconds) and `RateLimit` the live state (`r`
 * remaining, `t` seconds until the quota is whole again), each as a Structured Fields list
 * item named by the policy. A refusal is a 429 with `Retry-After` in whole seconds.
 */
import { HttpError } from "@dos/service-kit";
import type { FastifyReply } from "fastify";
import type { Decision, RatePolicy } from "./gcra.ts";

/** Policy names, as they appear in the headers. */
export const POLICY_NAMES = {
  account: "account",
  failuresPerAddress: "failed-auth-address",
  failuresPerEmail: "failed-auth-email",
} as const;

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000 - 1e-9));

/** Sets both RateLimit fields on an answer. */
export function setRateLimitHeaders(reply: FastifyReply, name: string, policy: RatePolicy, decision: Decision) {
  reply.header("ratelimit-policy", `"${name}";q=${policy.quota};w=${policy.windowSeconds}`);
  reply.header("ratelimit", `"${name}";r=${decision.remaining};t=${seconds(decision.resetMs)}`);
}

/** The 429 of a refused request, in the error shape. */
export function tooManyRequests(message: string, decision: Decision) {
  const wait = Math.max(1, seconds(decision.retryAfterMs));
  return new HttpError(429, `${message}; retry after ${wait} s`, { "retry-after": String(wait) });
}
