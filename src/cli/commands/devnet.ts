// `stablegate devnet pay|subscribe|refund|setup`: they talk to the running devnet, never to the database
// (which the service may hold).
import { payFromDevnet } from "../devnet-pay.js";
import { payRefundFromDevnet } from "../devnet-refund.js";
import { subscribeFromDevnet } from "../devnet-subscribe.js";
import { setUpDevnetAt } from "../devnet-setup.js";
import { type Command, CommandError, UsageError } from "../command.js";

/** Prints what `step` did; its failure is the command's, its message shown as is. */
async function report(step: Promise<string>): Promise<void> {
  const done = await step.catch((e: Error) => {
    throw new CommandError(e.message);
  });
  console.log(done);
}

export const devnetCommands: Command[] = [
  {
    names: ["devnet pay"],
    usage: `  devnet pay CHARGE_ID [AMOUNT] [--key sk_test_… [--late]]
                                                         Pays a test charge from the devnet's test wallet
                                                         (default: the amount still due; needs npm start).
                                                         With the key, through the test helper: an expired
                                                         charge is paid late; --late expires it first.`,
    async run({ config, flags, args: [chargeId, amount] }) {
      if (!chargeId) throw new UsageError("Usage: stablegate devnet pay CHARGE_ID [AMOUNT] [--key sk_test_… [--late]]");
      await report(payFromDevnet(config, chargeId, { amount, apiKey: flags.key ?? config.apiKey, late: flags.late }));
    },
  },
  {
    names: ["devnet subscribe"],
    usage: `  devnet subscribe SUBSCRIPTION_ID [--key sk_test_…]     Authorizes a test subscription from the devnet's test
                                                         wallet (signs the permit and the permission; needs
                                                         npm start); with the key, prints the manage link.`,
    async run({ config, flags, args: [subscriptionId] }) {
      if (!subscriptionId) throw new UsageError("Usage: stablegate devnet subscribe SUBSCRIPTION_ID [--key sk_test_…]");
      await report(subscribeFromDevnet(config, subscriptionId, flags.key ?? config.apiKey));
    },
  },
  {
    names: ["devnet refund"],
    usage: `  devnet refund REFUND_ID --key sk_test_…                Pays a test refund from the merchant's settlement
                                                         wallet on the devnet (needs npm start).`,
    async run({ config, flags, args: [refundId] }) {
      const key = flags.key ?? config.apiKey;
      if (!refundId || !key) throw new UsageError("Usage: stablegate devnet refund REFUND_ID --key sk_test_… (or STABLEGATE_API_KEY)");
      await report(payRefundFromDevnet(config, refundId, key));
    },
  },
  {
    names: ["devnet setup"],
    usage: `  devnet setup --rpc URL --out FILE [--wait S] [--if-present]
      Deploys USDC and the factory on the anvil at URL (once) and writes the chain settings API and
      worker processes load (SETTINGS_FILE); --if-present: an unknown host is no error (docker-compose.yml).`,
    async run({ config, flags }) {
      if (!flags.rpc || !flags.out) throw new UsageError("Usage: stablegate devnet setup --rpc URL --out FILE [--wait SECONDS] [--if-present]");
      const waitSeconds = Number(flags.wait ?? 60);
      if (!Number.isInteger(waitSeconds) || waitSeconds < 0) throw new UsageError("--wait must be a whole number of seconds.");
      await report(setUpDevnetAt(config, flags.rpc, flags.out, { waitSeconds, ifPresent: flags["if-present"] }));
    },
  },
];
