/**
 * How the console's e-mails (invitations, password resets) leave: an interface with two
 * adapters, like delivery-api's SMS. `smtp` sends through nodemailer; `log` only writes the
 * message, its link included, to the log: local runs and tests, which read the link from there.
 */
import nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { Config } from "../config.ts";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  readonly name: string;
  /** Resolves once the server accepted the message; throws otherwise. */
  send(message: MailMessage): Promise<void>;
}

function logMailer(logger: Logger): Mailer {
  return {
    name: "log",
    async send(message) {
      // At warn: an e-mail that was not sent is worth seeing at any level the log is kept at.
      logger.warn({ mail: message }, "e-mail (log adapter: not sent)");
    },
  };
}

function smtpMailer(options: { url: string; from: string; timeoutMs: number }): Mailer {
  const url = new URL(options.url);
  const secure = url.protocol === "smtps:";
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    // Plain smtp:// must still upgrade to TLS: credentials never cross in clear.
    requireTLS: !secure,
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  return {
    name: "smtp",
    async send(message) {
      await transport.sendMail({ from: options.from, ...message });
    },
  };
}

export function mailerFromConfig(config: Config, logger: Logger): Mailer {
  if (config.CONSOLE_MAIL_ADAPTER === "smtp") {
    if (!config.CONSOLE_SMTP_URL) throw new Error("CONSOLE_SMTP_URL is required when CONSOLE_MAIL_ADAPTER is smtp");
    return smtpMailer({
      url: config.CONSOLE_SMTP_URL,
      from: config.CONSOLE_MAIL_FROM,
      timeoutMs: config.CONSOLE_API_TIMEOUT_MS,
    });
  }
  return logMailer(logger);
}
