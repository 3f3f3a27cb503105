// Sign-in: email and password, then a TOTP code (or a one-time recovery code) when the account has
// two-factor sign-in; "Forgot password?" asks for a reset link by email.
import { useState } from "preact/hooks";
import { ApiError, type Session, signIn } from "../session.js";
import { ErrorNote, formValues } from "../ui.js";
import { ForgotPassword } from "./PasswordReset.js";

export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [forgot, setForgot] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [needsCode, setNeedsCode] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const v = formValues(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      onSignedIn(
        await signIn({ email: v.email!, password: v.password!, ...(v.totpCode && { totpCode: v.totpCode }), mode: v.mode === "live" ? "live" : "test" }),
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === "totp_required") setNeedsCode(true);
      else setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  if (forgot) return <ForgotPassword onBack={() => setForgot(false)} />;
  return (
    <main class="sign-in">
      <h1>Sign in to Stablegate</h1>
      <form onSubmit={submit} class="card">
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {needsCode && (
          <>
            <label>
              Two-factor code
              <input name="totpCode" autoComplete="one-time-code" spellcheck={false} aria-describedby="totp-hint" required autoFocus />
            </label>
            <p id="totp-hint" class="muted small">
              The six digits from your authenticator app, or one of your recovery codes (xxxxx-xxxxx) if you lost the app.
            </p>
          </>
        )}
        <label>
          Mode
          <select name="mode">
            <option value="test">Test</option>
            <option value="live">Live</option>
          </select>
        </label>
        <ErrorNote error={error} />
        {needsCode && !error && <p role="status">Enter the code from your authenticator app, or a recovery code.</p>}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <button type="button" class="link" onClick={() => setForgot(true)}>
          Forgot password?
        </button>
      </form>
    </main>
  );
}
