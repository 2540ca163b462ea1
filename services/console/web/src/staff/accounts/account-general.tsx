/**
 * An account's general page: what it is (name, environment, settings), its client API rate limit
 * (the service's default, or its own), and its users, whom an administrator invites: the user is
 * created in delivery-api, then sent the console's invitation link. Everyone reads; only an
 * administrator sees the forms.
 */
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { numberOf, textOf, useChange } from "../change.ts";
import { answerOf, type BodyOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { staffBff } from "../staff-bff.ts";
import { type Account, AccountFrame, accountKey, rateLimitText } from "./account-frame.tsx";

type UpdateBody = BodyOf<"/ops/v1/accounts/{accountId}", "patch">;

function useUpdate(accountId: string) {
  return useChange(
    (body: UpdateBody) =>
      answerOf(opsApi.PATCH("/ops/v1/accounts/{accountId}", { params: { path: { accountId } }, body })),
    { invalidate: [accountKey(accountId), ["staff", "accounts"]] },
  );
}

export function AccountGeneralPage() {
  return (
    <AccountFrame title="General">
      {(account) => (
        <>
          <AccountFacts account={account} />
          <Settings account={account} />
          <RateLimit account={account} />
          <Users accountId={String(account.id)} />
        </>
      )}
    </AccountFrame>
  );
}

const yesNo = (value: boolean) => (value ? "yes" : "no");

function AccountFacts({ account }: { account: Account }) {
  const { settings } = account;
  return (
    <dl className="facts" data-testid="account-facts">
      <dt>Company</dt>
      <dd>{account.company_name}</dd>
      <dt>Environment</dt>
      <dd>{account.environment}</dd>
      <dt>Created</dt>
      <dd>{when(account.created_at)}</dd>
      <dt>API rate limit</dt>
      <dd data-testid="rate-limit">{rateLimitText(account)}</dd>
      <dt>Brings back containers</dt>
      <dd>{yesNo(settings.bring_back_containers)}</dd>
      <dt>Default-place task</dt>
      <dd>
        {settings.default_task_duration_minutes} min, ending {settings.default_task_gap_minutes} min before the other
        task
      </dd>
      <dt>Recipient phone</dt>
      <dd>{settings.recipient_phone_optional ? "optional" : "required"}</dd>
      <dt>Phone region</dt>
      <dd>{settings.phone_default_region}</dd>
    </dl>
  );
}

function Settings({ account }: { account: Account }) {
  const mayChange = useMayChange("accounts");
  const update = useUpdate(String(account.id));
  const [saved, setSaved] = useState(false);
  if (!mayChange) return null;
  const { settings } = account;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setSaved(false);
    update.mutate(
      {
        company_name: textOf(form, "company_name"),
        settings: {
          bring_back_containers: form.get("bring_back_containers") === "on",
          recipient_phone_optional: form.get("recipient_phone_optional") === "on",
          default_task_gap_minutes: numberOf(form, "default_task_gap_minutes"),
          default_task_duration_minutes: numberOf(form, "default_task_duration_minutes"),
          phone_default_region: textOf(form, "phone_default_region"),
        },
      },
      { onSuccess: () => setSaved(true) },
    );
  };
  const paths = [
    "company_name",
    "settings.default_task_gap_minutes",
    "settings.default_task_duration_minutes",
    "settings.phone_default_region",
  ];
  return (
    <section aria-labelledby="settings-heading">
      <h3 id="settings-heading">Name and settings</h3>
      <form onSubmit={onSubmit} noValidate className="delivery-form" aria-label="Name and settings">
        <Field
          label="Company name"
          name="company_name"
          path="company_name"
          errors={update.errors}
          defaultValue={account.company_name}
        />
        <Field
          label="Default-place task length (minutes)"
          name="default_task_duration_minutes"
          type="number"
          path="settings.default_task_duration_minutes"
          errors={update.errors}
          defaultValue={String(settings.default_task_duration_minutes)}
        />
        <Field
          label="Gap between the default-place task and the other (minutes)"
          name="default_task_gap_minutes"
          type="number"
          path="settings.default_task_gap_minutes"
          errors={update.errors}
          defaultValue={String(settings.default_task_gap_minutes)}
        />
        <Field
          label="Region of phone numbers written without + (e.g. FR)"
          name="phone_default_region"
          path="settings.phone_default_region"
          errors={update.errors}
          defaultValue={settings.phone_default_region}
        />
        <p>
          <label>
            <input type="checkbox" name="bring_back_containers" defaultChecked={settings.bring_back_containers} /> Bring
            back containers unless a delivery says otherwise
          </label>
        </p>
        <p>
          <label>
            <input type="checkbox" name="recipient_phone_optional" defaultChecked={settings.recipient_phone_optional} />{" "}
            Recipient phone optional (a case agreed with the operator)
          </label>
        </p>
        <button type="submit" disabled={update.isPending}>
          Save name and settings
        </button>
        {saved && <p role="status">Saved.</p>}
      </form>
      <Errors errors={update.errors} claimed={paths} />
    </section>
  );
}

function RateLimit({ account }: { account: Account }) {
  const mayChange = useMayChange("accounts");
  const update = useUpdate(String(account.id));
  if (!mayChange) return null;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    update.mutate({
      rate_limit: { quota: numberOf(form, "quota"), window_seconds: numberOf(form, "window_seconds") } as {
        quota: number;
        window_seconds: number;
      },
    });
  };
  return (
    <section aria-labelledby="rate-limit-heading">
      <h3 id="rate-limit-heading">API rate limit</h3>
      <p>
        The client API lets this account send {rateLimitText(account)}. A limit of its own is a quota of requests per
        window, refilled evenly over the window; back to the default, the service's applies again.
      </p>
      <form
        onSubmit={onSubmit}
        noValidate
        className="filters"
        aria-label="API rate limit"
        key={JSON.stringify(account.rate_limit)}
      >
        <Field
          label="Requests"
          name="quota"
          type="number"
          path="rate_limit.quota"
          errors={update.errors}
          defaultValue={account.rate_limit ? String(account.rate_limit.quota) : ""}
        />
        <Field
          label="Per window of (seconds)"
          name="window_seconds"
          type="number"
          path="rate_limit.window_seconds"
          errors={update.errors}
          defaultValue={account.rate_limit ? String(account.rate_limit.window_seconds) : ""}
        />
        <button type="submit" disabled={update.isPending}>
          Set the account's limit
        </button>
        {account.rate_limit && (
          <button
            type="button"
            className="secondary"
            disabled={update.isPending}
            onClick={() => update.mutate({ rate_limit: null })}
          >
            Back to the default
          </button>
        )}
      </form>
      <Errors errors={update.errors} claimed={["rate_limit.quota", "rate_limit.window_seconds"]} />
    </section>
  );
}

function Users({ accountId }: { accountId: string }) {
  const mayChange = useMayChange("accounts");
  const [sent, setSent] = useState<string | null>(null);
  const usersKey = [...accountKey(accountId), "users"];
  const users = useQuery({
    queryKey: usersKey,
    queryFn: () => answerOf(opsApi.GET("/ops/v1/accounts/{accountId}/users", { params: { path: { accountId } } })),
  });
  const invitation = (email: string, expiresAt: string) =>
    `Invitation sent to ${email}: its link works once, until ${when(expiresAt)}.`;
  const invite = useChange(
    async (body: { email?: string; name?: string }) => {
      const user = await answerOf(
        opsApi.POST("/ops/v1/accounts/{accountId}/users", {
          params: { path: { accountId } },
          body: body as { email: string },
        }),
      );
      return staffBff.inviteUser(user.email);
    },
    { invalidate: [usersKey], onSuccess: (done) => setSent(invitation(done.email, done.expires_at)) },
  );
  const resend = useChange((email: string) => staffBff.inviteUser(email), {
    onSuccess: (done) => setSent(invitation(done.email, done.expires_at)),
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    setSent(null);
    invite.mutate({ email: textOf(form, "email"), name: textOf(form, "name") }, { onSuccess: () => element.reset() });
  };
  return (
    <section aria-labelledby="users-heading">
      <h3 id="users-heading">Users</h3>
      <p>The shop's people: each signs in to the shop's console with their e-mail, and has their own API tokens.</p>
      {sent && <p role="status">{sent}</p>}
      {users.error && <Errors errors={[users.error.message]} />}
      {users.isPending && <p>Loading the users…</p>}
      {users.data?.length === 0 && <p>No user yet.</p>}
      {users.data && users.data.length > 0 && (
        <table>
          <caption className="visually-hidden">Users of the account</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              {mayChange && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody>
            {users.data.map((user) => (
              <tr key={user.id}>
                <td>{user.email}</td>
                <td>{user.name ?? "—"}</td>
                <td>{when(user.created_at)}</td>
                {mayChange && (
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      disabled={resend.isPending}
                      aria-label={`Send a new invitation to ${user.email}`}
                      onClick={() => {
                        setSent(null);
                        resend.mutate(user.email);
                      }}
                    >
                      Send a new invitation
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Errors errors={resend.errors} />
      {mayChange && (
        <>
          <form onSubmit={onSubmit} noValidate className="filters" aria-label="Invite a user">
            <Field label="E-mail" name="email" type="email" path="email" errors={invite.errors} />
            <Field label="Name (optional)" name="name" path="name" errors={invite.errors} />
            <button type="submit" disabled={invite.isPending}>
              Invite the user
            </button>
          </form>
          <Errors errors={invite.errors} claimed={["email", "name"]} />
        </>
      )}
    </section>
  );
}
