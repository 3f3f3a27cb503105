// Settings → Team: the merchant's users with their roles (change one, remove one), pending invitations
// (revoke one), and inviting someone by email with a role (asks first, with your password), next to
// what each role may do. The invitee chooses their own password from the emailed link
// (pages/PasswordReset.tsx): nobody here types another person's password. What the signed-in role
// cannot do is not offered (the server refuses it anyway, .docs/dashboard.md "Roles"): nobody changes
// their own role, and only owners make, change or remove owners.
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql } from "../graphql.js";
import { may, type Role, type Session } from "../session.js";
import { Confirm, ConfirmStep, CopyButton, ErrorNote, formValues, reauthentication, RoleNote, Section, Time } from "../ui.js";

const TeamQuery = graphql(`
  query Team {
    users {
      id
      email
      role
      totpEnabled
      createdAt
    }
    invitations {
      id
      email
      role
      expiresAt
    }
    roles {
      role
      description
    }
  }
`);
const DeleteUser = graphql(`
  mutation DeleteUser($id: ID!, $password: String, $totpCode: String) {
    deleteUser(id: $id, password: $password, totpCode: $totpCode)
  }
`);
const SetUserRole = graphql(`
  mutation SetUserRole($id: ID!, $role: UserRole!, $password: String, $totpCode: String) {
    setUserRole(id: $id, role: $role, password: $password, totpCode: $totpCode) {
      id
      role
    }
  }
`);
const InviteUser = graphql(`
  mutation InviteUser($email: String!, $role: UserRole, $password: String, $totpCode: String) {
    inviteUser(email: $email, role: $role, password: $password, totpCode: $totpCode) {
      id
      email
      link
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

type UserRole = "OWNER" | "ADMIN" | "DEVELOPER" | "SUPPORT" | "VIEWER";

/** A role as a person reads it. */
function roleName(role: UserRole): string {
  return role.toLowerCase();
}

/** The roles the signed-in role may give: an owner any, an admin any but owner. */
function givable(mine: Role, all: readonly UserRole[]): UserRole[] {
  return mine === "owner" ? [...all] : all.filter((r) => r !== "OWNER");
}

/** The team: users with their roles, pending invitations, the invite form and what each role may do. */
export function TeamSettings({ session, totp }: { session: Session; totp: boolean }) {
  const [{ data, error }, refetch] = useQuery({ query: TeamQuery });
  const reload = () => refetch({ requestPolicy: "network-only" });
  const [deleted, deleteUser] = useMutation(DeleteUser);
  const [changed, setUserRole] = useMutation(SetUserRole);
  const [revoked, revokeInvitation] = useMutation(RevokeInvitation);
  /** A role change picked in a select, until its confirmation (with the password) is answered. */
  const [pendingRole, setPendingRole] = useState<{ id: string; email: string; role: UserRole } | null>(null);
  if (!data) return <ErrorNote error={error} />;
  const me = session.user;
  const team = may(session, "team");
  const roles = data.roles.map((r) => r.role);
  /** Whether the signed-in user may change or remove `u` (the server checks the same). */
  const manages = (u: { id: string; role: UserRole }) => team && u.id !== me.id && (u.role !== "OWNER" || me.role === "owner");
  return (
    <Section title="Team">
      {!team && <RoleNote role={me.role} cannot="invite, remove or change the roles of teammates" />}
      {team && me.role !== "owner" && <p class="muted small">Only owners make, change or remove owners.</p>}
      <ul class="rows">
        {data.users.map((u) => (
          <li key={u.id} data-user={u.email}>
            {u.email} {u.totpEnabled && <span class="muted">(two-factor)</span>} <span class="muted small">since</span> <Time iso={u.createdAt} />{" "}
            {manages(u) ? (
              <select
                aria-label={`Role of ${u.email}`}
                value={pendingRole?.id === u.id ? pendingRole.role : u.role}
                onChange={(e) => setPendingRole({ id: u.id, email: u.email, role: e.currentTarget.value as UserRole })}
              >
                {givable(me.role, roles).map((r) => (
                  <option key={r} value={r}>
                    {roleName(r)}
                  </option>
                ))}
              </select>
            ) : (
              <span class="muted" data-role={roleName(u.role)}>
                {roleName(u.role)}
                {u.id === me.id && " (you)"}
              </span>
            )}{" "}
            {pendingRole?.id === u.id && (
              <ConfirmStep
                plain
                question={`Make ${u.email} ${roleName(pendingRole.role)}? They are signed out and sign in again under the new role.`}
                confirm={`Yes, make them ${roleName(pendingRole.role)}`}
                reauthenticate={{ totp }}
                onCancel={() => setPendingRole(null)}
                onConfirm={(v) => {
                  setPendingRole(null);
                  void setUserRole({ id: u.id, role: pendingRole.role, ...reauthentication(v) }).then(reload);
                }}
              />
            )}
            {manages(u) && (
              <Confirm
                label="Remove"
                question={`Remove ${u.email} (${roleName(u.role)}) from the team? They are signed out at once and can no longer sign in.`}
                confirm={`Yes, remove ${u.email}`}
                reauthenticate={{ totp }}
                onConfirm={(v) => void deleteUser({ id: u.id, ...reauthentication(v) }).then(reload)}
              />
            )}
          </li>
        ))}
        {data.invitations.map((i) => (
          <li key={i.id} data-invitation={i.email}>
            {i.email} <span class="muted">(invited as {roleName(i.role)}, link valid until</span> <Time iso={i.expiresAt} />
            <span class="muted">)</span>{" "}
            {team && (
              <Confirm
                plain
                label="Revoke"
                question={`Revoke the invitation of ${i.email}? Its link stops working.`}
                confirm="Yes, revoke it"
                onConfirm={() => void revokeInvitation({ id: i.id }).then(reload)}
              />
            )}
          </li>
        ))}
      </ul>
      <ErrorNote error={deleted.error ?? changed.error ?? revoked.error} />
      {team && <InviteForm totp={totp} roles={givable(me.role, roles)} onInvited={reload} />}
      <details class="roles">
        <summary>What each role may do</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">May</th>
            </tr>
          </thead>
          <tbody>
            {data.roles.map((r) => (
              <tr key={r.role}>
                <th scope="row">{roleName(r.role)}</th>
                <td>{r.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </Section>
  );
}

/** Invite by email with a role: the confirmation asks your password (and code); the invitee gets the link by email. */
function InviteForm({ totp, roles, onInvited }: { totp: boolean; roles: UserRole[]; onInvited: () => void }) {
  const [invited, inviteUser] = useMutation(InviteUser);
  /** The invitation to send once the confirmation is answered. */
  const [pending, setPending] = useState<{ email: string; role: UserRole; form: HTMLFormElement } | null>(null);
  const [sent, setSent] = useState<{ email: string; link: string | null } | null>(null);
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const v = formValues(form);
        setSent(null);
        setPending({ email: v.email ?? "", role: (v.role ?? "ADMIN") as UserRole, form });
      }}
    >
      <label class="grow">
        Email
        <input name="email" type="email" required />
      </label>
      <label>
        Role
        {/* Named by itself: the label around it would add the chosen option to its name. */}
        <select name="role" aria-label="Role">
          {/* Admin first chosen: set on the option, as the select's own default comes before its options. */}
          {roles.map((r) => (
            <option key={r} value={r} selected={r === "ADMIN"}>
              {roleName(r)}
            </option>
          ))}
        </select>
      </label>
      {pending ? (
        <ConfirmStep
          plain
          question={`Invite ${pending.email} as ${roleName(pending.role)}? They get an email with a link, valid 7 days, to choose their password.`}
          confirm="Yes, invite them"
          reauthenticate={{ totp }}
          onCancel={() => setPending(null)}
          onConfirm={async (v) => {
            setPending(null);
            const result = await inviteUser({ email: pending.email, role: pending.role, ...reauthentication(v) });
            if (!result.error) {
              pending.form.reset();
              setSent({ email: pending.email, link: result.data?.inviteUser.link ?? null });
              onInvited();
            }
          }}
        />
      ) : (
        <button type="submit">Invite</button>
      )}
      <ErrorNote error={invited.error} />
      {sent && !sent.link && <p role="status">Invitation sent to {sent.email}.</p>}
      {sent?.link && (
        <p role="status">
          This service sends no email: give {sent.email} this link yourself (valid 7 days, once): <code data-invitation-link>{sent.link}</code>{" "}
          <CopyButton value={sent.link} />
        </p>
      )}
    </form>
  );
}
