/**
 * The staff (administrators): the operator's people with their role and state, a new person
 * invited (created in delivery-api, `POST /ops/v1/staff`, then sent the console's invitation
 * link through the BFF, which checks the role with delivery-api itself), a role changed, a person
 * disabled (every token revoked at once) or enabled again, an invitation sent again (a lost phone
 * is replaced that way). delivery-api refuses all of it to anyone but an administrator; this page
 * only spares the others a form they cannot use.
 */
import type { components } from "@dos/api-types/ops-v1";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ApiError } from "../bff.ts";
import { when } from "../pages/display.tsx";
import { Errors, Field } from "../pages/form-parts.tsx";
import { errorsOf, opsApi } from "./ops-api.ts";
import { type StaffRole, staffBff, staffSessionQuery } from "./staff-bff.ts";
import "./staff-admin.css";

type Staff = components["schemas"]["Staff"];

const ROLE_LABELS: Record<StaffRole, string> = {
  admin: "Administrator",
  dispatcher: "Dispatcher",
  read_only: "Read-only",
};

const PEOPLE = ["staff", "people"];
/** The operator API's largest page: the operator's staff fits in one or a few. */
const PER_PAGE = 500;

async function listPeople(): Promise<Staff[]> {
  const people: Staff[] = [];
  // At most a few pages: past 10 (5,000 people) the list stops, which no operator's staff reaches.
  for (let page = 1; page <= 10; page++) {
    const answer = await opsApi.GET("/ops/v1/staff", { params: { query: { page, per_page: PER_PAGE } } });
    if (!answer.data) throw new Error(errorsOf(answer.error, answer.response.status).join("; "));
    people.push(...answer.data.staff);
    if (!answer.response.headers.get("link")) break;
  }
  return people;
}

const messagesOf = (error: unknown) =>
  Array.isArray(error)
    ? (error as string[])
    : error instanceof ApiError
      ? error.errors
      : ["the console cannot be reached, try again"];

function RoleChange({ person, onDone }: { person: Staff; onDone: (message: string) => void }) {
  const queryClient = useQueryClient();
  const [role, setRole] = useState<StaffRole>(person.role);
  const change = useMutation({
    mutationFn: async (body: { role?: StaffRole; disabled?: boolean }) => {
      const answer = await opsApi.PATCH("/ops/v1/staff/{id}", { params: { path: { id: String(person.id) } }, body });
      if (!answer.data) throw errorsOf(answer.error, answer.response.status);
      return answer.data;
    },
    onSuccess: async (changed) => {
      onDone(
        changed.disabled
          ? `${changed.name} is disabled: their tokens are revoked and their sessions end at their next request.`
          : `${changed.name} is now ${ROLE_LABELS[changed.role]}${person.disabled ? ", enabled again" : ""}.`,
      );
      await queryClient.invalidateQueries({ queryKey: PEOPLE });
    },
    onError: (error) => onDone(messagesOf(error).join("; ")),
  });
  return (
    <div className="row-actions">
      <label className="visually-hidden" htmlFor={`role-${person.id}`}>
        Role of {person.name}
      </label>
      <select id={`role-${person.id}`} value={role} onChange={(e) => setRole(e.target.value as StaffRole)}>
        {Object.entries(ROLE_LABELS).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="secondary"
        disabled={change.isPending || role === person.role}
        onClick={() => change.mutate({ role })}
        aria-label={`Save role of ${person.name}`}
      >
        Save role
      </button>
      <button
        type="button"
        className="secondary"
        disabled={change.isPending}
        onClick={() => change.mutate({ disabled: !person.disabled })}
        aria-label={`${person.disabled ? "Enable" : "Disable"} ${person.name}`}
      >
        {person.disabled ? "Enable" : "Disable"}
      </button>
    </div>
  );
}

export function StaffPeoplePage() {
  const session = useQuery(staffSessionQuery);
  const me = session.data?.staff;
  const queryClient = useQueryClient();
  const admin = me?.role === "admin";
  const people = useQuery({ queryKey: PEOPLE, queryFn: listPeople, enabled: admin });
  const [errors, setErrors] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | null>(null);

  const invite = useMutation({
    mutationFn: async (body: { email: string; name: string; role: StaffRole }) => {
      const created = await opsApi.POST("/ops/v1/staff", { body });
      if (!created.data) throw errorsOf(created.error, created.response.status);
      await queryClient.invalidateQueries({ queryKey: PEOPLE });
      return staffBff.invite(created.data.email);
    },
    onMutate: () => {
      setErrors([]);
      setNotice(null);
    },
    onSuccess: (sent, _body, _context) => {
      setNotice(`Invitation sent to ${sent.email}, valid until ${when(sent.expires_at)}.`);
    },
    onError: (error) => setErrors(messagesOf(error)),
  });
  const resend = useMutation({
    mutationFn: (email: string) => staffBff.invite(email),
    onMutate: () => setNotice(null),
    onSuccess: (sent) =>
      setNotice(
        `A new invitation was sent to ${sent.email}, valid until ${when(sent.expires_at)}; the older link no longer works.`,
      ),
    onError: (error) => setNotice(messagesOf(error).join("; ")),
  });

  if (!me) return null;
  if (!admin) {
    return (
      <>
        <h1>Staff</h1>
        <p>Only an administrator manages the staff.</p>
      </>
    );
  }

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    invite.mutate({ email: text("email"), name: text("name"), role: text("role") as StaffRole });
  };

  return (
    <>
      <h1>Staff</h1>
      <p>
        The operator's people and what their role lets them do. A new person gets an e-mail with a link to set their
        password and enrol a passkey or an authenticator app; sending a new invitation is also how a person replaces a
        lost phone or security key.
      </p>
      <h2>Invite a person</h2>
      <form className="filters staff-form" onSubmit={onSubmit} noValidate aria-label="Invite a person">
        <Field label="Name" name="name" path="name" errors={errors} autoComplete="off" required />
        <Field label="E-mail" name="email" type="email" path="email" errors={errors} required />
        <Field label="Role" name="role" path="role" errors={errors}>
          {(id, describedBy) => (
            <select id={id} name="role" defaultValue="dispatcher" aria-describedby={describedBy}>
              {Object.entries(ROLE_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" disabled={invite.isPending}>
          Invite
        </button>
      </form>
      <Errors errors={errors} claimed={["name", "email", "role"]} />
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <h2>People</h2>
      {people.isPending && <p role="status">Loading the staff…</p>}
      {people.isError && <Errors errors={[people.error.message]} />}
      {people.data && (
        <table className="people">
          <caption className="visually-hidden">The operator's staff</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Since</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {people.data.map((person) => (
              <tr key={person.id} className={person.disabled ? "disabled" : undefined}>
                <td>{person.name}</td>
                <td>{person.email}</td>
                <td>{ROLE_LABELS[person.role]}</td>
                <td>{person.disabled ? "Disabled" : "Active"}</td>
                <td>{new Date(person.created_at).toLocaleDateString("en-GB", { timeZone: "UTC" })}</td>
                <td>
                  {person.id === me.id ? (
                    <span>You</span>
                  ) : (
                    <>
                      <RoleChange key={`${person.role}-${person.disabled}`} person={person} onDone={setNotice} />
                      {!person.disabled && (
                        <button
                          type="button"
                          className="secondary"
                          disabled={resend.isPending}
                          onClick={() => resend.mutate(person.email)}
                          aria-label={`Send a new invitation to ${person.name}`}
                        >
                          Send a new invitation
                        </button>
                      )}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
