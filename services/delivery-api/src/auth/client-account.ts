import type { RatePolicy } from "../rate-limits/gcra.ts";

/** The caller's account, as every /api/v2 handler sees it. */
export interface ClientAccount {
  id: number;
  userId: number;
  companyName: string;
  environment: "production" | "test";
  bringBackContainers: boolean;
  defaultTaskGapMinutes: number;
  defaultTaskDurationMinutes: number;
  recipientPhoneOptional: boolean;
  phoneDefaultRegion: string;
  /** The operator's override of the client API limit; null: the default. */
  rateLimit: RatePolicy | null;
}
