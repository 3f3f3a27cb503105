// `stablegate users create|list|set-role|reset-password|delete`: the dashboard's users and their roles.
// The operator may do anything but leave a merchant's users without an owner (domain/team.ts).
import { OPERATOR } from "../../domain/confirmation.js";
import { describeMerchant } from "../../domain/merchants.js";
import { parseRole, ROLES } from "../../domain/permissions.js";
import { OPERATOR_ACTOR } from "../../domain/security-events.js";
import { removeUser, setUserRole } from "../../domain/team.js";
import { createUser, findUser, listUsers, resetPassword, type UserView } from "../../domain/users.js";
import { type Command, required, UsageError } from "../command.js";

export const userCommands: Command[] = [
  {
    names: ["users create"],
    usage: `  users create MERCHANT_ID --email EMAIL [--role ROLE] [--json]
                                                         A dashboard user; the password (10+ characters)
                                                         is read from standard input. ROLE: ${ROLES.join(", ")}
                                                         (default owner).`,
    async run({ flags, open, print, need }) {
      const { prisma } = await open();
      const merchantId = (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id;
      const email = required(flags.email, "--email");
      const input = { email, password: await readPassword(), ...(flags.role !== undefined && { role: flags.role }) };
      const user = await createUser(prisma, merchantId, input, OPERATOR);
      print(`User ${user.id} <${user.email}> (${user.role}) can sign in at the dashboard.`, user);
    },
  },
  {
    names: ["users list"],
    usage: "  users list MERCHANT_ID [--json]",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const users = await listUsers(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id);
      const line = (u: UserView) => `    ${u.id}  ${u.role.padEnd(9)}  ${u.email}${u.totpEnabled ? "  (two-factor)" : ""}`;
      print(users.length ? users.map(line).join("\n") : "No users.", users);
    },
  },
  {
    names: ["users set-role"],
    usage: `  users set-role USER ROLE                               USER: usr_… or email. Refused when it would leave
                                                         the merchant without an owner.`,
    async run({ args, open, print, need }) {
      const role = parseRole(args[1]);
      if (!role) throw new UsageError(`ROLE must be one of ${ROLES.join(", ")}.`);
      const { prisma } = await open();
      const user = await setUserRole(prisma, "operator", await findUser(prisma, need("USER")), role, OPERATOR, OPERATOR_ACTOR);
      print(`${user.email} (${user.id}) is now ${user.role}.`, user);
    },
  },
  {
    names: ["users reset-password"],
    usage: `  users reset-password USER                              USER: usr_… or email. New password from standard
                                                         input; its sessions end.`,
    async run({ open, print, need }) {
      const { prisma } = await open();
      const user = await findUser(prisma, need("USER"));
      await resetPassword(prisma, user.id, await readPassword());
      print(`New password set for ${user.email}; its sessions have ended.`, { id: user.id, passwordReset: true });
    },
  },
  {
    names: ["users delete"],
    usage: `  users delete USER                                      Deletes a user and ends its sessions; not the
                                                         merchant's last owner while others remain.`,
    async run({ open, print, need }) {
      const { prisma } = await open();
      const user = await findUser(prisma, need("USER"));
      await removeUser(prisma, "operator", user, OPERATOR, OPERATOR_ACTOR);
      print(`Deleted ${user.email} (${user.id}).`, { id: user.id, deleted: true });
    },
  },
];

/** A password from standard input: its first line (typed, or piped as in `echo … | stablegate users create`). */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Password (10+ characters): ");
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes("\n")) break;
  }
  process.stdin.pause();
  return text.split(/\r?\n/)[0] ?? "";
}
