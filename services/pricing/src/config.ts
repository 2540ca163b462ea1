/** pricing's configuration, validated at boot (see the README's configuration table). */
import { commonConfig } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";

/** Prefix of the variables only pricing reads; an unknown one stops the boot. */
export const CONFIG_PREFIX = "PRICING_";

export const configSchema = Type.Object({
  ...commonConfig,
  PORT: Type.Integer({ default: 3002, minimum: 0, maximum: 65535, description: "HTTP port (health, metrics)." }),
  PRICING_TARIFF_CACHE_TTL_MS: Type.Integer({
    default: 60_000,
    minimum: 0,
    maximum: 86_400_000,
    description:
      "Longest time an account's cached tariffs are used before being read again; changes are applied at once through a broadcast, this only bounds a missed one. 0 disables the cache.",
  }),
  PRICING_TARIFF_CACHE_MAX_ACCOUNTS: Type.Integer({
    default: 100_000,
    minimum: 1,
    description: "Accounts whose tariffs are kept in memory; beyond it the cache starts over.",
  }),
});
export type Config = Static<typeof configSchema>;
