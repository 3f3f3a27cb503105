// Settings → Team: the merchant's users (remove one), pending invitations (revoke one), and inviting
// someone by email (asks first, with your password). The invitee chooses their own password from the
// emailed link (pages/Invitation.tsx): nobody here types another person's password.
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql } from "../graphql.js";
import { Confirm, ConfirmStep, ErrorNote, formValues, reauthentication, Section, Time } from "../ui.js";

const TeamQuery = graphql(`
  query Team {
    users {
      id
      email
      totpEnabled
      createdAt
    }
    invitations {
      id
      email
      role
      expiresAt
    }
  }
`);
const DeleteUser = graphql(`
  mutation DeleteUser($id: ID!) {
    deleteUser(id: $id)
  }
`);
const InviteUser = graphql(`
  mutation InviteUser($email: String!, $role: String, $password: String, $totpCode: String) {
    inviteUser(email: $email, role: $role, password: $password, totpCode: $totpCode) {
      id
      email
    }
  }
`);
const RevokeInvitation = graphql(`
  mutation RevokeInvitation($id: ID!) {
    revokeInvitation(id: $id) {
      id
    }
  }
`);

const ROLES = ["admin", "owner", "developer", "support", "viewer"] as const;

/** The team: users, pending invitations and the invite form. */
export function TeamSettings({ user }: { user: { id: string; totpEnabled: boolean } }) {
  const [{ data, error }, refetch] = useQuery({ query: TeamQuery });
  const reload = () => refetch({ requestPolicy: "network-only" });
  const [deleted, deleteUser] = useMutation(DeleteUser);
  const [revoked, revokeInvitation] = useMutation(RevokeInvitation);
  if (!data) return <ErrorNote error={error} />;
  return (
    <Section title="Users">
      <ul class="rows">
        {data.users.map((u) => (
          <li key={u.id}>
            {u.email} {u.totpEnabled && <span class="muted">(two-factor)</span>} <span class="muted small">since</span> <Time iso={u.createdAt} />{" "}
            {u.id !== user.id && (
              <Confirm
                label="Remove"
                question={`Remove ${u.email}? They are signed out at once and can no longer sign in.`}
                confirm="Yes, remove them"
                onConfirm={() => void deleteUser({ id: u.id }).then(reload)}
              />
            )}
          </li>
        ))}
        {data.invitations.map((i) => (
          <li key={i.id} data-invitation={i.email}>
            {i.email} <span class="muted">(invited as {i.role}, link valid until</span> <Time iso={i.expiresAt} />
            <span class="muted">)</span>{" "}
            <Confirm
              plain
              label="Revoke"
              question={`Revoke the invitation of ${i.email}? Its link stops working.`}
              confirm="Yes, revoke it"
              onConfirm={() => void revokeInvitation({ id: i.id }).then(reload)}
            />
          </li>
        ))}
      </ul>
      <ErrorNote error={deleted.error ?? revoked.error} />
      <InviteForm totp={user.totpEnabled} onInvited={reload} />
    </Section>
  );
}

/** Invite by email: the confirmation asks your password (and code); the invitee gets the link by email. */
function InviteForm({ totp, onInvited }: { totp: boolean; onInvited: () => void }) {
  const [invited, inviteUser] = useMutation(InviteUser);
  /** The invitation to send once the confirmation is answered. */
  const [pending, setPending] = useState<{ email: string; role: string; form: HTMLFormElement } | null>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const v = formValues(form);
        setSentTo(null);
        setPending({ email: v.email ?? "", role: v.role ?? "admin", form });
      }}
    >
      <label class="grow">
        Email
        <input name="email" type="email" required />
      </label>
      <label>
        Role
        <select name="role">
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {pending ? (
        <ConfirmStep
          plain
          question={`Invite ${pending.email} as ${pending.role}? They get an email with a link, valid 7 days, to choose their password.`}
          confirm="Yes, invite them"
          reauthenticate={{ totp }}
          onCancel={() => setPending(null)}
          onConfirm={async (v) => {
            setPending(null);
            const result = await inviteUser({ email: pending.email, role: pending.role, ...reauthentication(v) });
            if (!result.error) {
              pending.form.reset();
              setSentTo(pending.email);
              onInvited();
            }
          }}
        />
      ) : (
        <button type="submit">Invite</button>
      )}
      <ErrorNote error={invited.error} />
      {sentTo && <p role="status">Invitation sent to {sentTo}.</p>}
    </form>
  );
}
