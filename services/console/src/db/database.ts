/** The `console` schema as Kysely sees it, assembled from each feature's table file. */
import type { Kysely } from "kysely";
import type { OneTimeLinksTable, SignInFailuresTable, UsersTable } from "../people/people.table.ts";
import type { SessionsTable } from "../sessions/sessions.table.ts";
import type {
  StaffChallengesTable,
  StaffCredentialsTable,
  StaffInvitationsTable,
  StaffPasskeysTable,
} from "../staff/staff.table.ts";

export interface DB {
  users: UsersTable;
  one_time_links: OneTimeLinksTable;
  sessions: SessionsTable;
  sign_in_failures: SignInFailuresTable;
  staff_credentials: StaffCredentialsTable;
  staff_passkeys: StaffPasskeysTable;
  staff_invitations: StaffInvitationsTable;
  staff_challenges: StaffChallengesTable;
}

export type Db = Kysely<DB>;
