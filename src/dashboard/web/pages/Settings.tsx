// Settings: business name, settlement wallets per mode, payment window, the team (TeamSettings.tsx),
// one's password, two-factor sign-in (QR code, recovery codes), the way to the security history (owners
// and admins) and "sign out everywhere". Changing a wallet, inviting a user and turning two-factor on or
// off ask the password (and code) in the confirmation that names what changes. The merchant's settings
// are shown to every role but only owners and admins may change them (.docs/dashboard.md "Roles").
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql, type ResultOf } from "../graphql.js";
import { Link } from "../router.js";
import { may, type Session } from "../session.js";
import { Confirm, ConfirmStep, CopyButton, ErrorNote, formValues, Outcome, reauthentication, RoleNote, Section, Time } from "../ui.js";
import { BusinessDetails } from "./BusinessDetails.js";
import { EmailSettings } from "./EmailSettings.js";
import { TeamSettings } from "./TeamSettings.js";

const SettingsQuery = graphql(`
  query Settings {
    viewer {
      user {
        id
        email
        totpEnabled
        recoveryCodesRemaining
      }
      merchant {
        id
        name
        feeBps
        testWallet
        liveWallet
        paymentWindowMinutes
        underpaymentToleranceBps
      }
    }
  }
`);
const UpdateSettings = graphql(`
  mutation UpdateSettings($input: MerchantSettingsInput!) {
    updateMerchantSettings(input: $input) {
      id
      name
      testWallet
      liveWallet
      paymentWindowMinutes
      underpaymentToleranceBps
    }
  }
`);
const StartTotp = graphql(`
  mutation StartTotp($password: String) {
    startTotpEnrollment(password: $password) {
      secret
      uri
      qrSvg
    }
  }
`);
const ConfirmTotp = graphql(`
  mutation ConfirmTotp($code: String!) {
    confirmTotp(code: $code) {
      codes
      user {
        id
        totpEnabled
      }
    }
  }
`);
const DisableTotp = graphql(`
  mutation DisableTotp($password: String, $code: String) {
    disableTotp(password: $password, code: $code) {
      id
      totpEnabled
    }
  }
`);
const RegenerateRecoveryCodes = graphql(`
  mutation RegenerateRecoveryCodes($password: String, $totpCode: String) {
    regenerateRecoveryCodes(password: $password, totpCode: $totpCode) {
      codes
    }
  }
`);
const ChangePassword = graphql(`
  mutation ChangePassword($currentPassword: String!, $newPassword: String!, $totpCode: String) {
    changePassword(currentPassword: $currentPassword, newPassword: $newPassword, totpCode: $totpCode)
  }
`);
const SignOutEverywhere = graphql(`
  mutation SignOutEverywhere {
    signOutEverywhere
  }
`);

type SettingsData = ResultOf<typeof SettingsQuery>;

export function Settings({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const [{ data, error }, refetch] = useQuery({ query: SettingsQuery });
  const reload = () => refetch({ requestPolicy: "network-only" });
  const [, signOutEverywhere] = useMutation(SignOutEverywhere);
  if (!data) return <ErrorNote error={error} />;
  const { merchant, user } = data.viewer;
  return (
    <>
      <h1>Settings</h1>
      {!may(session, "settings") && <RoleNote role={session.user.role} cannot="change the business, its settlement wallets or its emails" />}
      {/* Shown to every role; a disabled fieldset (no group of its own to assistive technology) keeps a role without the right from changing them. */}
      <fieldset class="bare" role="none" disabled={!may(session, "settings")}>
        <BusinessSettings merchant={merchant} totp={user.totpEnabled} />
        <BusinessDetails />
        <EmailSettings />
      </fieldset>
      <TeamSettings session={session} totp={user.totpEnabled} />
      <PasswordChange totp={user.totpEnabled} />
      <TwoFactor user={user} reload={reload} />
      {may(session, "security") && (
        <Section title="Security history">
          <p class="muted">Who signed in from where, and who changed API keys, wallets, the team or webhook endpoints, over the last year.</p>
          <Link href="/settings/security">View the security history</Link>
        </Section>
      )}
      <Section title="Sessions">
        <p class="muted">Signed in as {session.user.email}.</p>
        <Confirm
          label="Sign out everywhere"
          question="Sign out everywhere? Every session of yours ends, this one included: each device must sign in again."
          confirm="Yes, sign out everywhere"
          onConfirm={() => void signOutEverywhere({}).then(onSignedOut)}
        />
      </Section>
    </>
  );
}

/** The business' name, settlement wallets (a change asks first, with the password), payment window and tolerance. */
function BusinessSettings({ merchant, totp }: { merchant: SettingsData["viewer"]["merchant"]; totp: boolean }) {
  const [settings, save] = useMutation(UpdateSettings);
  const [walletChanged, setWalletChanged] = useState(false);
  /** Settings whose new wallet waits for the confirmation (with the password). */
  const [walletChange, setWalletChange] = useState<SettingsInput | null>(null);
  const saveSettings = async (input: SettingsInput, given: Record<string, string> = {}) => {
    const result = await save({ input: { ...input, ...reauthentication(given) } });
    setWalletChanged(!result.error && (input.testWallet !== merchant.testWallet || input.liveWallet !== merchant.liveWallet));
  };
  return (
    <Section title="Business">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          const wallet = (value: string | undefined) => (value?.trim() ? value.trim() : null);
          const input = {
            name: v.name ?? "",
            testWallet: wallet(v.testWallet),
            liveWallet: wallet(v.liveWallet),
            paymentWindowMinutes: Number(v.paymentWindowMinutes),
            underpaymentToleranceBps: Number(v.underpaymentToleranceBps),
          };
          // A new wallet redirects the money: it is confirmed, with the password, before it is sent.
          if (walletQuestion(input, merchant)) setWalletChange(input);
          else await saveSettings(input);
        }}
      >
        {/* Default values: the form keeps what was typed while a confirmation re-renders the page. */}
        <label>
          Business name
          <input name="name" defaultValue={merchant.name} required />
        </label>
        <label>
          Test settlement wallet
          <input name="testWallet" defaultValue={merchant.testWallet ?? ""} placeholder="0x…" spellcheck={false} />
        </label>
        <label>
          Live settlement wallet
          <input name="liveWallet" defaultValue={merchant.liveWallet ?? ""} placeholder="0x…" spellcheck={false} />
        </label>
        <label>
          Payment window (minutes a buyer has once a chain is picked)
          <input name="paymentWindowMinutes" type="number" min={5} max={1440} defaultValue={String(merchant.paymentWindowMinutes)} required />
        </label>
        <label>
          Underpayment tolerance (basis points, 0–1000: 100 = 1%; applies to new charges)
          <input name="underpaymentToleranceBps" type="number" min={0} max={1000} defaultValue={String(merchant.underpaymentToleranceBps)} required />
        </label>
        <p class="muted small">Protocol fee: {merchant.feeBps / 100}% (set by the operator).</p>
        <Outcome
          result={settings}
          saved={`Saved.${walletChanged ? " New charges pay out to the new wallet; open charges keep the wallet they were created with." : ""}`}
        />
        {walletChange ? (
          <ConfirmStep
            question={walletQuestion(walletChange, merchant)!}
            confirm="Yes, change it"
            reauthenticate={{ totp }}
            onCancel={() => setWalletChange(null)}
            onConfirm={(v) => {
              setWalletChange(null);
              void saveSettings(walletChange, v);
            }}
          />
        ) : (
          <button type="submit" disabled={settings.fetching}>
            Save
          </button>
        )}
      </form>
    </Section>
  );
}

/** Changing one's password: the current one (and code), the new one twice; the user's other sessions end. */
function PasswordChange({ totp }: { totp: boolean }) {
  const [changed, changePassword] = useMutation(ChangePassword);
  const [mismatch, setMismatch] = useState<Error | null>(null);
  return (
    <Section title="Password">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const v = formValues(form);
          setMismatch(v.newPassword === v.repeat ? null : new Error("The new password and its repetition differ: type the same password twice."));
          if (v.newPassword !== v.repeat) return;
          const result = await changePassword({
            currentPassword: v.currentPassword ?? "",
            newPassword: v.newPassword ?? "",
            ...(v.totpCode && { totpCode: v.totpCode }),
          });
          if (!result.error) form.reset();
        }}
      >
        <label>
          Current password
          <input name="currentPassword" type="password" autoComplete="current-password" required />
        </label>
        {totp && (
          <label>
            Two-factor code (or a recovery code)
            <input name="totpCode" autoComplete="one-time-code" spellcheck={false} required />
          </label>
        )}
        <label>
          New password (10 characters or more)
          <input name="newPassword" type="password" autoComplete="new-password" minLength={10} required />
        </label>
        <label>
          New password again
          <input name="repeat" type="password" autoComplete="new-password" minLength={10} required />
        </label>
        <Outcome
          result={changed}
          error={mismatch}
          saved={`Password changed. ${changed.data?.changePassword ? `Your ${changed.data.changePassword} other session(s) were signed out.` : "You had no other session."}`}
        />
        <button type="submit" disabled={changed.fetching}>
          Change password
        </button>
      </form>
    </Section>
  );
}

/** Two-factor sign-in: set it up (password, QR code, then a code), turn it off, new recovery codes (each with the password). */
function TwoFactor({ user, reload }: { user: SettingsData["viewer"]["user"]; reload: () => void }) {
  const [enrollment, startTotp] = useMutation(StartTotp);
  const [confirmed, confirmTotp] = useMutation(ConfirmTotp);
  const [disabled, disableTotp] = useMutation(DisableTotp);
  const [regenerated, regenerateCodes] = useMutation(RegenerateRecoveryCodes);
  /** Recovery codes just made, shown until the page is left. */
  const [codes, setCodes] = useState<readonly string[] | null>(null);
  return (
    <Section title="Two-factor sign-in">
      {codes && <RecoveryCodeList codes={codes} />}
      {user.totpEnabled ? (
        <>
          <p>
            On for {user.email}. {user.recoveryCodesRemaining} of 10 recovery codes left.
          </p>
          <p class="actions">
            <Confirm
              label="Turn off"
              question={`Turn off two-factor sign-in for ${user.email}? Signing in will need only the password.`}
              confirm="Yes, turn it off"
              reauthenticate={{ totp: true }}
              onConfirm={async (v) => {
                const { password, totpCode } = reauthentication(v);
                const result = await disableTotp({ password, code: totpCode });
                if (!result.error) {
                  setCodes(null);
                  reload();
                }
              }}
            />{" "}
            <Confirm
              plain
              label="New recovery codes"
              question="Replace your recovery codes with ten new ones? The old ones stop working."
              confirm="Yes, replace them"
              reauthenticate={{ totp: true }}
              onConfirm={async (v) => {
                const result = await regenerateCodes(reauthentication(v));
                if (result.data) {
                  setCodes(result.data.regenerateRecoveryCodes.codes);
                  reload();
                }
              }}
            />
          </p>
          <ErrorNote error={disabled.error ?? regenerated.error} />
        </>
      ) : enrollment.data ? (
        <form
          class="inline"
          onSubmit={async (e) => {
            e.preventDefault();
            const result = await confirmTotp({ code: formValues(e.currentTarget).code ?? "" });
            if (result.data) {
              setCodes(result.data.confirmTotp.codes);
              reload();
            }
          }}
        >
          <img
            class="qr"
            src={`data:image/svg+xml,${encodeURIComponent(enrollment.data.startTotpEnrollment.qrSvg)}`}
            width={192}
            height={192}
            alt="QR code for your authenticator app: scan it to add this account"
          />
          <p>
            Scan the QR code with your authenticator app, or add this key to it: <code data-totp-secret>{enrollment.data.startTotpEnrollment.secret}</code> (or
            open <a href={enrollment.data.startTotpEnrollment.uri}>this otpauth link</a>). Then enter its code.
          </p>
          <label>
            Code
            <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required />
          </label>
          <button type="submit">Turn on</button>
          <ErrorNote error={confirmed.error} />
        </form>
      ) : (
        <>
          <Confirm
            plain
            label="Set up two-factor sign-in"
            question="Set up two-factor sign-in? Signing in will need a code from an authenticator app too."
            confirm="Continue"
            reauthenticate={{ totp: false }}
            onConfirm={(v) => void startTotp(reauthentication(v))}
          />
          <ErrorNote error={enrollment.error} />
        </>
      )}
    </Section>
  );
}

type SettingsInput = { name: string; testWallet: string | null; liveWallet: string | null; paymentWindowMinutes: number; underpaymentToleranceBps: number };

/** The confirmation a change of settlement wallet asks, naming the new address; null when no wallet changes. */
function walletQuestion(input: SettingsInput, current: { testWallet: string | null; liveWallet: string | null }): string | null {
  const changes = (["test", "live"] as const)
    .filter((mode) => input[`${mode}Wallet`] !== current[`${mode}Wallet`])
    .map((mode) => `the ${mode} settlement wallet to ${input[`${mode}Wallet`] ?? "none"}`);
  if (changes.length === 0) return null;
  return `Change ${changes.join(" and ")}? New charges pay out there; open charges keep the wallet they were created with.`;
}

/** Recovery codes just made: shown this once. */
function RecoveryCodeList({ codes }: { codes: readonly string[] }) {
  return (
    <div class="secret">
      <p role="status">
        <strong>Recovery codes</strong> (shown once: keep them somewhere safe). Each one signs you in once in place of a code from your app.
      </p>
      <ul class="recovery-codes" data-recovery-codes data-copy-source>
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <CopyButton value={codes.join("\n")} label="Copy the codes" />
    </div>
  );
}
