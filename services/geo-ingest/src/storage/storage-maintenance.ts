/**
 * Keeps storage within its retention while the service runs. Native mode: creates tomorrow's
 * partitions and drops expired ones, at boot and then periodically (every replica may run it:
 * the SQL function takes an advisory lock). TimescaleDB mode: its own job scheduler applies
 * the policies; at boot we only bring the retention policy in line with GEO_RETENTION_DAYS.
 */
import { type Kysely, sql } from "kysely";
import type { Logger } from "pino";
import { type StorageMode, storageModeOf } from "./storage-mode.ts";

export interface MaintenanceOptions {
  retentionDays: number;
  aheadDays: number;
  intervalMs: number;
}

export interface StorageMaintenance {
  mode: StorageMode;
  /** Runs once now; a failure is logged and retried at the next interval. */
  runOnce(): Promise<void>;
  start(): void;
  stop(): void;
}

export async function createStorageMaintenance(
  db: Kysely<unknown>,
  logger: Logger,
  options: MaintenanceOptions,
): Promise<StorageMaintenance> {
  const mode = await storageModeOf(db);
  logger.info({ storage_mode: mode }, `vehicle_positions storage: ${mode}`);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const maintainNative = async () => {
    const { rows } = await sql<{ changes: string[] }>`
      select maintain_vehicle_position_partitions(${options.retentionDays}::int, ${options.aheadDays}::int) as changes
    `.execute(db);
    const changes = rows[0]?.changes ?? [];
    if (changes.length > 0) logger.info({ changes }, "vehicle_positions partitions maintained");
  };

  const reconcileTimescaleRetention = async () => {
    const wanted = `${options.retentionDays} days`;
    const { rows } = await sql<{ drop_after: string | null }>`
      select config ->> 'drop_after' as drop_after from timescaledb_information.jobs
      where proc_name = 'policy_retention' and hypertable_schema = current_schema()
        and hypertable_name = 'vehicle_positions'
    `.execute(db);
    if (rows[0]?.drop_after === wanted) return;
    await sql`select public.remove_retention_policy('vehicle_positions', if_exists => true)`.execute(db);
    // Replicas boot together: whichever adds second finds the policy there and leaves it.
    await sql`select public.add_retention_policy('vehicle_positions', drop_after => ${wanted}::interval, if_not_exists => true)`.execute(
      db,
    );
    logger.info({ drop_after: wanted }, "vehicle_positions retention policy updated");
  };

  const runOnce = () => {
    running ??= (mode === "native" ? maintainNative() : reconcileTimescaleRetention())
      .catch((error: unknown) => logger.error({ err: error }, "storage maintenance failed; retrying later"))
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  return {
    mode,
    runOnce,
    start() {
      if (mode !== "native" || timer) return;
      timer = setInterval(() => void runOnce(), options.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
