/** delivery-api's configuration, validated at boot (see the README's configuration table). */
import { commonConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only delivery-api reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "API_";

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({
    default: 3000,
    minimum: 0,
    maximum: 65535,
    description: "HTTP port (health, metrics, client API).",
  }),
});
export type Config = Static<typeof configSchema>;
