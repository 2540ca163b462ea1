/**
 * Sign-in, invitation (set a first password) and password reset pages. The one-time links carry
 * their token in the URL's fragment, which no server ever receives; the page reads it.
 */
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { ApiError, bff, type SessionState } from "../bff.ts";
import { Errors, Field } from "./form-parts.tsx";

const tokenFromFragment = () => new URLSearchParams(window.location.hash.slice(1)).get("token") ?? "";

/** A form that sends its fields, shows the errors of a refusal, and signs in with the answer. */
function useSubmit(send: (form: FormData) => Promise<SessionState | string>) {
  const [errors, setErrors] = useState<string[]>([]);
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setErrors([]);
    try {
      const answer = await send(new FormData(event.currentTarget));
      if (typeof answer === "string") setNotice(answer);
      else {
        queryClient.setQueryData(["session"], answer);
        await navigate({ to: "/" });
      }
    } catch (error) {
      setErrors(error instanceof ApiError ? error.errors : ["the console cannot be reached, try again"]);
    } finally {
      setBusy(false);
    }
  };
  return { errors, notice, busy, onSubmit };
}

const text = (form: FormData, name: string) => String(form.get(name) ?? "");

export function SignInPage() {
  const { errors, busy, onSubmit } = useSubmit((form) => bff.signIn(text(form, "email"), text(form, "password")));
  return (
    <section className="narrow">
      <h1>Sign in</h1>
      <form onSubmit={onSubmit} noValidate>
        <Field label="E-mail" type="email" name="email" autoComplete="username" required />
        <Field label="Password" type="password" name="password" autoComplete="current-password" required />
        <Errors errors={errors} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p>
        <Link to="/password-reset">Forgot your password?</Link>
      </p>
    </section>
  );
}

function NewPasswordForm(props: {
  title: string;
  intro: string;
  send: (token: string, password: string) => Promise<SessionState>;
}) {
  const { errors, busy, onSubmit } = useSubmit(async (form) => {
    if (text(form, "password") !== text(form, "confirmation")) {
      throw new ApiError(422, ["the two passwords differ"]);
    }
    return props.send(tokenFromFragment(), text(form, "password"));
  });
  return (
    <section className="narrow">
      <h1>{props.title}</h1>
      <p>{props.intro}</p>
      <form onSubmit={onSubmit} noValidate>
        <Field
          label="New password (12 characters or more)"
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={12}
        />
        <Field
          label="New password again"
          type="password"
          name="confirmation"
          autoComplete="new-password"
          minLength={12}
        />
        <Errors errors={errors} />
        <button type="submit" disabled={busy}>
          Set password and sign in
        </button>
      </form>
    </section>
  );
}

export function InvitationPage() {
  return (
    <NewPasswordForm title="Welcome" intro="Choose the password you will sign in with." send={bff.acceptInvitation} />
  );
}

export function ResetCompletePage() {
  return (
    <NewPasswordForm
      title="New password"
      intro="Choose a new password; every other session of yours is signed out."
      send={bff.completeReset}
    />
  );
}

export function ResetRequestPage() {
  const { errors, notice, busy, onSubmit } = useSubmit(
    async (form) => (await bff.requestReset(text(form, "email"))).sent,
  );
  return (
    <section className="narrow">
      <h1>Reset your password</h1>
      <form onSubmit={onSubmit} noValidate>
        <Field label="E-mail" type="email" name="email" autoComplete="username" required />
        <Errors errors={errors} />
        {notice && <p role="status">{notice}</p>}
        <button type="submit" disabled={busy}>
          Send a reset link
        </button>
      </form>
      <p>
        <Link to="/sign-in">Back to sign-in</Link>
      </p>
    </section>
  );
}
