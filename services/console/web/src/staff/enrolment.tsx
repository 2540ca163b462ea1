/**
 * A staff person's first day: the invitation link (/staff/invitation#token=…) sets a password,
 * then the enrolment (/staff/enrolment) of a second factor, a passkey or an authenticator app,
 * without which no staff session starts. The authenticator's secret is shown as text and as an
 * otpauth:// URI (no QR image: apps take the secret typed or pasted).
 */
import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { ApiError } from "../bff.ts";
import { Errors, Field } from "../pages/form-parts.tsx";
import { createPasskey, passkeyProblem, passkeysSupported } from "./passkey.ts";
import { useStaffSignedIn } from "./sign-in.tsx";
import { staffBff } from "./staff-bff.ts";

const text = (form: FormData, name: string) => String(form.get(name) ?? "");
const messagesOf = (error: unknown) =>
  error instanceof ApiError ? error.errors : ["the console cannot be reached, try again"];
const tokenFromFragment = () => new URLSearchParams(window.location.hash.slice(1)).get("token") ?? "";

export function StaffInvitationPage() {
  const navigate = useNavigate();
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setErrors([]);
    if (text(form, "password") !== text(form, "confirmation")) {
      setErrors(["the two passwords differ"]);
      return;
    }
    setBusy(true);
    try {
      await staffBff.acceptInvitation(tokenFromFragment(), text(form, "password"));
      await navigate({ to: "/staff/enrolment" });
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="narrow">
      <h1>Welcome to the staff console</h1>
      <p>Step 1 of 2: choose the password you will sign in with. Then you enrol a second factor.</p>
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
          Set password and continue
        </button>
      </form>
    </section>
  );
}

export function StaffEnrolmentPage() {
  const enrolment = useQuery({ queryKey: ["staff-enrolment"], queryFn: staffBff.enrolment, staleTime: 0 });
  if (enrolment.isPending) return null;
  if (enrolment.isError) {
    return (
      <section className="narrow">
        <h1>Second factor</h1>
        <Errors errors={messagesOf(enrolment.error)} />
      </section>
    );
  }
  return (
    <section className="narrow wide">
      <h1>Second factor</h1>
      <p>
        Step 2 of 2 for {enrolment.data.email}: every staff sign-in asks for your password and then a passkey or a code
        from an authenticator app. Enrol one of them.
      </p>
      <PasskeyEnrolment />
      <AuthenticatorEnrolment />
    </section>
  );
}

function PasskeyEnrolment() {
  const signedIn = useStaffSignedIn();
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = text(new FormData(event.currentTarget), "name").trim();
    setBusy(true);
    setErrors([]);
    try {
      const options = await staffBff.passkeyCreationOptions();
      const response = await createPasskey(options).catch((error: unknown) => {
        throw new ApiError(0, [passkeyProblem(error)]);
      });
      await signedIn(await staffBff.enrolPasskey(name, response));
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(false);
    }
  };
  if (!passkeysSupported()) return null;
  return (
    <form className="factor" onSubmit={onSubmit} noValidate aria-labelledby="passkey-heading">
      <h2 id="passkey-heading">A passkey</h2>
      <p>Your device's screen lock, a security key or a password manager signs for you.</p>
      <Field label="Name of this passkey" name="name" defaultValue="My passkey" required />
      <Errors errors={errors} />
      <button type="submit" disabled={busy}>
        Create a passkey
      </button>
    </form>
  );
}

function AuthenticatorEnrolment() {
  const signedIn = useStaffSignedIn();
  const [offer, setOffer] = useState<{ secret: string; uri: string } | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const run = async (step: () => Promise<void>) => {
    setBusy(true);
    setErrors([]);
    try {
      await step();
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(false);
    }
  };
  const confirm = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = text(new FormData(event.currentTarget), "code").replace(/\s/g, "");
    void run(async () => signedIn(await staffBff.confirmTotp(code)));
  };
  return (
    <div className="factor">
      <h2>An authenticator app</h2>
      {!offer ? (
        <>
          <p>An app on your phone (any TOTP app) shows a new 6-digit code every 30 seconds.</p>
          <Errors errors={errors} />
          <button type="button" disabled={busy} onClick={() => run(async () => setOffer(await staffBff.offerTotp()))}>
            Set up an authenticator app
          </button>
        </>
      ) : (
        <form onSubmit={confirm} noValidate aria-label="Confirm the authenticator app">
          <p>Add an account to your app with this secret (type it, or paste the link), then type the code it shows.</p>
          <dl className="facts">
            <dt>Secret</dt>
            <dd>
              <code data-testid="totp-secret">{offer.secret}</code>
            </dd>
            <dt>Link</dt>
            <dd>
              <code className="wrap" data-testid="totp-uri">
                {offer.uri}
              </code>
            </dd>
          </dl>
          <Field
            label="6-digit code from your authenticator app"
            name="code"
            autoComplete="one-time-code"
            inputMode="numeric"
            maxLength={6}
            required
          />
          <Errors errors={errors} />
          <button type="submit" disabled={busy}>
            Confirm and sign in
          </button>
        </form>
      )}
    </div>
  );
}
