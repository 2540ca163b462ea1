/** pricing's configuration, validated at boot (see the README's configuration table). */
import { commonConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only pricing reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "PRICING_";

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({ default: 3002, minimum: 0, maximum: 65535, description: "HTTP port (health, metrics)." }),
});
export type Config = Static<typeof configSchema>;
