/**
 * The staff's sign-in, in two steps: the e-mail and password (/staff/sign-in), then a passkey or
 * an authenticator code (/staff/sign-in/verify). The second step is bound to the first by a
 * challenge the backend keeps (a cookie, minutes long), so a reload of the second page keeps it.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { ApiError } from "../bff.ts";
import { Errors, Field } from "../pages/form-parts.tsx";
import { passkeyProblem, passkeysSupported, signWithPasskey } from "./passkey.ts";
import { type StaffSessionState, staffBff } from "./staff-bff.ts";

const text = (form: FormData, name: string) => String(form.get(name) ?? "");
const messagesOf = (error: unknown) =>
  error instanceof ApiError ? error.errors : ["the console cannot be reached, try again"];

/** Puts the new staff session in the cache and opens the staff's home page. */
export function useStaffSignedIn() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return async (answer: StaffSessionState) => {
    queryClient.setQueryData(["staff-session"], answer);
    // The shop's session, if this browser had one, ended with this sign-in.
    await queryClient.invalidateQueries({ queryKey: ["session"] });
    await navigate({ to: "/staff" });
  };
}

export function StaffSignInPage() {
  const navigate = useNavigate();
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setErrors([]);
    try {
      await staffBff.signIn(text(form, "email"), text(form, "password"));
      await navigate({ to: "/staff/sign-in/verify" });
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="narrow">
      <h1>Staff sign-in</h1>
      <p>For the operator's staff. Step 1 of 2: your e-mail and password.</p>
      <form onSubmit={onSubmit} noValidate>
        <Field label="E-mail" type="email" name="email" autoComplete="username" required />
        <Field label="Password" type="password" name="password" autoComplete="current-password" required />
        <Errors errors={errors} />
        <button type="submit" disabled={busy}>
          Continue
        </button>
      </form>
    </section>
  );
}

export function StaffSecondFactorPage() {
  const pending = useQuery({ queryKey: ["staff-sign-in"], queryFn: staffBff.pendingSignIn, staleTime: 0 });
  const signedIn = useStaffSignedIn();
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  const attempt = async (step: () => Promise<StaffSessionState>) => {
    setBusy(true);
    setErrors([]);
    try {
      await signedIn(await step());
    } catch (error) {
      setErrors(error instanceof ApiError || !(error instanceof Error) ? messagesOf(error) : [passkeyProblem(error)]);
      // A challenge used up by too many wrong answers: the page says so and offers the first step.
      await pending.refetch();
    } finally {
      setBusy(false);
    }
  };
  const withCode = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = text(new FormData(event.currentTarget), "code").replace(/\s/g, "");
    void attempt(() => staffBff.signInWithCode(code));
  };
  const withPasskey = () =>
    attempt(async () => staffBff.signInWithPasskey(await signWithPasskey(await staffBff.passkeyRequestOptions())));

  if (pending.isPending) return null;
  if (pending.isError) {
    return (
      <section className="narrow">
        <h1>Staff sign-in</h1>
        <Errors errors={errors.length > 0 ? errors : messagesOf(pending.error)} />
        <p>
          <Link to="/staff/sign-in">Start again with your e-mail and password</Link>
        </p>
      </section>
    );
  }
  const factors = pending.data.factors;
  return (
    <section className="narrow">
      <h1>Staff sign-in</h1>
      <p>Step 2 of 2: prove it is you with your second factor.</p>
      {factors.includes("passkey") && (
        <div className="factor">
          <h2>Passkey</h2>
          {passkeysSupported() ? (
            <button type="button" onClick={withPasskey} disabled={busy}>
              Use my passkey
            </button>
          ) : (
            <p>This browser cannot use passkeys.</p>
          )}
        </div>
      )}
      {factors.includes("totp") && (
        <form className="factor" onSubmit={withCode} noValidate aria-labelledby="code-heading">
          <h2 id="code-heading">Authenticator code</h2>
          <Field
            label="6-digit code from your authenticator app"
            name="code"
            autoComplete="one-time-code"
            inputMode="numeric"
            maxLength={6}
            required
          />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      )}
      <Errors errors={errors} />
      <p>
        <Link to="/staff/sign-in">Start again</Link>
      </p>
    </section>
  );
}
