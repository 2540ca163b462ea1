/** The `delivery` schema as Kysely sees it, assembled from each feature's table file. */
import type { Kysely, Transaction } from "kysely";
import type { AccountsTable, ApiTokensTable, UsersTable } from "../accounts/accounts.table.ts";
import type { AuditLogTable } from "../audit/audit.table.ts";
import type { DeliveriesTable, DeliveryPackagesTable, TasksTable } from "../deliveries/deliveries.table.ts";
import type { FleetOutboxTable } from "../dispatch/fleet/fleet.table.ts";
import type { MessengersTable } from "../dispatch/messengers/messengers.table.ts";
import type { RoundPositionsTable } from "../dispatch/positions/positions.table.ts";
import type { RoundsTable, RoundTasksTable, TaskMediaTable } from "../dispatch/rounds/rounds.table.ts";
import type { CourierSimulatorsTable, SimulatedDeliveriesTable } from "../dispatch/simulator/simulator.table.ts";
import type { SmsMessagesTable } from "../dispatch/sms/sms.table.ts";
import type { VehiclesTable } from "../dispatch/vehicles/vehicles.table.ts";
import type { IdempotencyKeysTable } from "../idempotency/idempotency.table.ts";
import type { OutboxTable } from "../outbox/outbox.table.ts";
import type { PackageTypesTable } from "../package-types/package-types.table.ts";
import type { PlacesTable } from "../places/places.table.ts";
import type { StaffTable, StaffTokensTable } from "../staff/staff.table.ts";
import type { DeliveryZonesTable } from "../zones/zones.table.ts";

export interface DB {
  accounts: AccountsTable;
  users: UsersTable;
  api_tokens: ApiTokensTable;
  places: PlacesTable;
  package_types: PackageTypesTable;
  delivery_zones: DeliveryZonesTable;
  deliveries: DeliveriesTable;
  tasks: TasksTable;
  delivery_packages: DeliveryPackagesTable;
  outbox: OutboxTable;
  idempotency_keys: IdempotencyKeysTable;
  messengers: MessengersTable;
  vehicles: VehiclesTable;
  rounds: RoundsTable;
  round_tasks: RoundTasksTable;
  round_positions: RoundPositionsTable;
  task_media: TaskMediaTable;
  sms_messages: SmsMessagesTable;
  fleet_outbox: FleetOutboxTable;
  courier_simulators: CourierSimulatorsTable;
  simulated_deliveries: SimulatedDeliveriesTable;
  staff: StaffTable;
  staff_tokens: StaffTokensTable;
  audit_log: AuditLogTable;
}

/** A database handle or an open transaction: repositories accept either. */
export type Db = Kysely<DB> | Transaction<DB>;
