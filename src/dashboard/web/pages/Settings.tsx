// Settings: business name, settlement wallets per mode, payment window, users, two-factor sign-in
// and "sign out everywhere".
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql } from "../graphql.js";
import type { Session } from "../session.js";
import { ErrorNote, formValues, Section, Time } from "../ui.js";

const SettingsQuery = graphql(`
  query Settings {
    viewer {
      user {
        id
        email
        totpEnabled
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
    users {
      id
      email
      totpEnabled
      createdAt
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
const CreateUser = graphql(`
  mutation CreateUser($email: String!, $password: String!) {
    createUser(email: $email, password: $password) {
      id
      email
    }
  }
`);
const DeleteUser = graphql(`
  mutation DeleteUser($id: ID!) {
    deleteUser(id: $id)
  }
`);
const StartTotp = graphql(`
  mutation StartTotp {
    startTotpEnrollment {
      secret
      uri
    }
  }
`);
const ConfirmTotp = graphql(`
  mutation ConfirmTotp($code: String!) {
    confirmTotp(code: $code) {
      id
      totpEnabled
    }
  }
`);
const DisableTotp = graphql(`
  mutation DisableTotp($code: String!) {
    disableTotp(code: $code) {
      id
      totpEnabled
    }
  }
`);
const SignOutEverywhere = graphql(`
  mutation SignOutEverywhere {
    signOutEverywhere
  }
`);

export function Settings({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const [{ data, error }, refetch] = useQuery({ query: SettingsQuery });
  const reload = () => refetch({ requestPolicy: "network-only" });
  const [settings, save] = useMutation(UpdateSettings);
  const [userResult, createUser] = useMutation(CreateUser);
  const [deleted, deleteUser] = useMutation(DeleteUser);
  const [enrollment, startTotp] = useMutation(StartTotp);
  const [confirmed, confirmTotp] = useMutation(ConfirmTotp);
  const [disabled, disableTotp] = useMutation(DisableTotp);
  const [, signOutEverywhere] = useMutation(SignOutEverywhere);
  const [walletChanged, setWalletChanged] = useState(false);
  if (!data) return <ErrorNote error={error} />;
  const { merchant, user } = data.viewer;
  return (
    <>
      <h1>Settings</h1>
      <Section title="Business">
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const v = formValues(e.currentTarget);
            const wallet = (value: string | undefined) => (value?.trim() ? value.trim() : null);
            const input = {
              name: v.name,
              testWallet: wallet(v.testWallet),
              liveWallet: wallet(v.liveWallet),
              paymentWindowMinutes: Number(v.paymentWindowMinutes),
              underpaymentToleranceBps: Number(v.underpaymentToleranceBps),
            };
            const result = await save({ input });
            setWalletChanged(!result.error && (input.testWallet !== merchant.testWallet || input.liveWallet !== merchant.liveWallet));
          }}
        >
          <label>
            Business name
            <input name="name" value={merchant.name} required />
          </label>
          <label>
            Test settlement wallet
            <input name="testWallet" value={merchant.testWallet ?? ""} placeholder="0x…" spellcheck={false} />
          </label>
          <label>
            Live settlement wallet
            <input name="liveWallet" value={merchant.liveWallet ?? ""} placeholder="0x…" spellcheck={false} />
          </label>
          <label>
            Payment window (minutes a buyer has once a chain is picked)
            <input name="paymentWindowMinutes" type="number" min={5} max={1440} value={merchant.paymentWindowMinutes} required />
          </label>
          <label>
            Underpayment tolerance (basis points, 0–1000: 100 = 1%; applies to new charges)
            <input name="underpaymentToleranceBps" type="number" min={0} max={1000} value={merchant.underpaymentToleranceBps} required />
          </label>
          <p class="muted small">Protocol fee: {merchant.feeBps / 100}% (set by the operator).</p>
          <ErrorNote error={settings.error} />
          {settings.data && !settings.error && (
            <p role="status">Saved.{walletChanged && " New charges pay out to the new wallet; open charges keep the wallet they were created with."}</p>
          )}
          <button type="submit" disabled={settings.fetching}>
            Save
          </button>
        </form>
      </Section>

      <Section title="Users">
        <ul class="rows">
          {data.users.map((u) => (
            <li key={u.id}>
              {u.email} {u.totpEnabled && <span class="muted">(two-factor)</span>} <span class="muted small">since</span> <Time iso={u.createdAt} />{" "}
              {u.id !== user.id && (
                <button type="button" class="link danger" onClick={() => deleteUser({ id: u.id }).then(reload)}>
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
        <ErrorNote error={deleted.error ?? userResult.error} />
        <form
          class="inline"
          onSubmit={async (e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const v = formValues(form);
            const result = await createUser({ email: v.email ?? "", password: v.password ?? "" });
            if (!result.error) {
              form.reset();
              reload();
            }
          }}
        >
          <label class="grow">
            Email
            <input name="email" type="email" required />
          </label>
          <label class="grow">
            Password (10+ characters)
            <input name="password" type="password" minLength={10} autoComplete="new-password" required />
          </label>
          <button type="submit">Add user</button>
        </form>
      </Section>

      <Section title="Two-factor sign-in">
        {user.totpEnabled || confirmed.data?.confirmTotp.totpEnabled ? (
          <form
            class="inline"
            onSubmit={async (e) => {
              e.preventDefault();
              const result = await disableTotp({ code: formValues(e.currentTarget).code ?? "" });
              if (!result.error) reload();
            }}
          >
            <p>On for {user.email}.</p>
            <label>
              Current code
              <input name="code" inputMode="numeric" pattern="[0-9]{6}" required />
            </label>
            <button type="submit">Turn off</button>
            <ErrorNote error={disabled.error} />
          </form>
        ) : enrollment.data ? (
          <form
            class="inline"
            onSubmit={async (e) => {
              e.preventDefault();
              const result = await confirmTotp({ code: formValues(e.currentTarget).code ?? "" });
              if (!result.error) reload();
            }}
          >
            <p>
              Add this key to your authenticator app: <code data-totp-secret>{enrollment.data.startTotpEnrollment.secret}</code> (or open{" "}
              <a href={enrollment.data.startTotpEnrollment.uri}>this otpauth link</a>), then enter its code.
            </p>
            <label>
              Code
              <input name="code" inputMode="numeric" pattern="[0-9]{6}" required />
            </label>
            <button type="submit">Turn on</button>
            <ErrorNote error={confirmed.error} />
          </form>
        ) : (
          <button type="button" onClick={() => startTotp({})}>
            Set up two-factor sign-in
          </button>
        )}
      </Section>

      <Section title="Sessions">
        <p class="muted">Signed in as {session.user.email}.</p>
        <button type="button" class="danger" onClick={() => signOutEverywhere({}).then(onSignedOut)}>
          Sign out everywhere
        </button>
      </Section>
    </>
  );
}
