/**
 * One attempt: the webhook signed at send time (Standard Webhooks; during a rotation overlap
 * with both secrets), POSTed, and what follows decided by the retry policy. Used alike by the
 * stream path (first attempts) and the queue's retries. It never throws: whatever goes wrong is
 * a failed attempt.
 */
import type { PostResult, WebhookClient } from "../delivery-http/webhook-client.ts";
import type { SecretBox } from "../signing/secret-box.ts";
import { createKeyRing, signedHeaders } from "../signing/signing.ts";
import { type AttemptDecision, decideAfterAttempt, type RetryPolicy } from "./retry-policy.ts";
import { type OutgoingWebhook, tracedPost } from "./traced-post.ts";

export interface SentAttempt {
  attemptedAt: Date;
  result: PostResult;
  decision: AttemptDecision;
}

export type Send = (webhook: OutgoingWebhook) => Promise<SentAttempt>;

export function createSender(options: { client: WebhookClient; box: SecretBox; retry: RetryPolicy }): Send {
  const keyOf = createKeyRing(options.box);
  return async (webhook) => {
    const attemptedAt = new Date();
    let result: PostResult;
    try {
      const keys = [keyOf(webhook.secretCiphertext)];
      if (
        webhook.previousSecretCiphertext &&
        webhook.previousSecretExpiresAt &&
        webhook.previousSecretExpiresAt > attemptedAt
      ) {
        keys.push(keyOf(webhook.previousSecretCiphertext));
      }
      const headers = signedHeaders(keys, webhook.eventId, webhook.body, attemptedAt);
      result = await tracedPost(options.client, webhook, headers);
    } catch (error) {
      // A secret that cannot be opened (WEBHOOKS_SECRET_KEY changed): a failed attempt like any other.
      result = { statusCode: null, durationMs: 0, error: `not sent: ${(error as Error).message}`, retryAfterMs: null };
    }
    return { attemptedAt, result, decision: decideAfterAttempt(options.retry, webhook.attempt, result) };
  };
}
