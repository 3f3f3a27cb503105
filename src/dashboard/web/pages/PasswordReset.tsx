// "Forgot password?" (on the sign-in page: ask for a link by email) and the page that link opens
// (/dashboard/reset-password?token=…: choose a new password, then sign in with it), and the
// invitation page (/dashboard/invitation?token=…: choose a password and be signed in), all without a session.
import { useState } from "preact/hooks";
import { navigate } from "../router.js";
import { acceptInvitation, forgotPassword, resetPassword, type Session } from "../session.js";
import { ErrorNote, formValues } from "../ui.js";

/** The link's token, from the page's query. */
function linkToken(): string {
  return new URLSearchParams(location.search).get("token") ?? "";
}

/** Asks for a reset link; says the same whatever the email. */
export function ForgotPassword({ onBack }: { onBack: () => void }) {
  const [error, setError] = useState<Error | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in">
      <h1>Forgot your password?</h1>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            setSent((await forgotPassword(formValues(e.currentTarget).email ?? "")).message);
          } catch (err) {
            setError(err as Error);
          } finally {
            setBusy(false);
          }
        }}
      >
        <p class="muted">Give your account's email: we send it a link to choose a new password.</p>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <ErrorNote error={error} />
        {sent && <p role="status">{sent}</p>}
        <button type="submit" disabled={busy}>
          Send the link
        </button>
        <button type="button" class="link" onClick={onBack}>
          Back to sign-in
        </button>
      </form>
    </main>
  );
}

/** A form that chooses a password with the link's token; `act` does the rest. */
function ChoosePassword(props: { title: string; intro: string; submit: string; act: (token: string, password: string) => Promise<void> }) {
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in">
      <h1>{props.title}</h1>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          setError(null);
          if (v.password !== v.repeat) return setError(new Error("The two passwords differ: type the same one twice."));
          setBusy(true);
          try {
            await props.act(linkToken(), v.password ?? "");
          } catch (err) {
            setError(err as Error);
          } finally {
            setBusy(false);
          }
        }}
      >
        <p class="muted">{props.intro}</p>
        <label>
          New password (10+ characters)
          <input name="password" type="password" minLength={10} autoComplete="new-password" required />
        </label>
        <label>
          The same password again
          <input name="repeat" type="password" minLength={10} autoComplete="new-password" required />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {props.submit}
        </button>
      </form>
    </main>
  );
}

/** /dashboard/reset-password: a new password, then back to sign-in. */
export function ResetPasswordPage() {
  const [done, setDone] = useState<string | null>(null);
  if (done)
    return (
      <main class="sign-in">
        <h1>Password changed</h1>
        <p role="status">{done}</p>
        <button type="button" onClick={() => navigate("/")}>
          Sign in
        </button>
      </main>
    );
  return (
    <ChoosePassword
      title="Choose a new password"
      intro="Every session of your account is signed out once the password changes."
      submit="Change password"
      act={async (token, password) => setDone((await resetPassword(token, password)).message)}
    />
  );
}

/** /dashboard/invitation: the invitee's password, then signed in. */
export function InvitationPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  return (
    <ChoosePassword
      title="Join the team"
      intro="You were invited to this dashboard. Choose your password to create your account."
      submit="Create my account"
      act={async (token, password) => {
        const session = await acceptInvitation(token, password);
        navigate("/");
        onSignedIn(session);
      }}
    />
  );
}
