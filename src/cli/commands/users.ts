// `stablegate users create|list|reset-password|delete`: the dashboard's users.
import { OPERATOR } from "../../domain/confirmation.js";
import { describeMerchant } from "../../domain/merchants.js";
import { createUser, deleteUser, findUser, listUsers, resetPassword, type UserView } from "../../domain/users.js";
import { type Command, required } from "../command.js";

export const userCommands: Command[] = [
  {
    names: ["users create"],
    usage: `  users create MERCHANT_ID --email EMAIL [--json]       A dashboard user; the password (10+ characters)
                                                         is read from standard input.`,
    async run({ flags, open, print, need }) {
      const { prisma } = await open();
      const merchantId = (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id;
      const email = required(flags.email, "--email");
      const user = await createUser(prisma, merchantId, { email, password: await readPassword() }, OPERATOR);
      print(`User ${user.id} <${user.email}> can sign in at the dashboard.`, user);
    },
  },
  {
    names: ["users list"],
    usage: "  users list MERCHANT_ID [--json]",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const users = await listUsers(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id);
      const line = (u: UserView) => `    ${u.id}  ${u.email}${u.totpEnabled ? "  (two-factor)" : ""}`;
      print(users.length ? users.map(line).join("\n") : "No users.", users);
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
    usage: "  users delete USER                                      Deletes a user and ends its sessions.",
    async run({ open, print, need }) {
      const { prisma } = await open();
      const user = await findUser(prisma, need("USER"));
      await deleteUser(prisma, user, { keepOne: false });
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
