/**
 * How a text message leaves: an interface with two adapters. `http` POSTs JSON to the
 * provider's URL (`{"to", "from", "text"}`, bearer token when configured) within a timeout;
 * `log` only writes the message to the log (local runs, demos).
 */
import type { Logger } from "pino";
import type { Config } from "../../config.ts";

export interface SmsMessage {
  to: string;
  /** The sender name shown to the recipient. */
  from: string;
  text: string;
}

export interface SmsSender {
  readonly name: string;
  /** Resolves once the provider accepted the message; throws otherwise. */
  send(message: SmsMessage): Promise<void>;
}

function logSmsSender(logger: Logger): SmsSender {
  return {
    name: "log",
    async send(message) {
      logger.info({ sms: message }, "SMS (log adapter: not sent)");
    },
  };
}

function httpSmsSender(options: { url: string; token?: string; timeoutMs: number }): SmsSender {
  return {
    name: "http",
    async send(message) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const response = await fetch(options.url, {
        method: "POST",
        headers,
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: "error",
      });
      // The body is not needed; reading it frees the connection.
      await response.arrayBuffer().catch(() => undefined);
      if (!response.ok) throw new Error(`SMS provider answered ${response.status}`);
    },
  };
}

export function smsSenderFromConfig(config: Config, logger: Logger): SmsSender {
  if (config.API_SMS_PROVIDER === "http") {
    if (!config.API_SMS_URL) throw new Error("API_SMS_URL is required when API_SMS_PROVIDER is http");
    return httpSmsSender({
      url: config.API_SMS_URL,
      token: config.API_SMS_TOKEN,
      timeoutMs: config.API_SMS_TIMEOUT_MS,
    });
  }
  return logSmsSender(logger);
}
