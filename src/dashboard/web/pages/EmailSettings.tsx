// Settings → Emails to buyers: which emails the service writes to your buyers and customers in your name
// (the invoice at finalization, the receipt when a charge completes, the refund claim link when a refund
// waits for an address), and the support address their replies go to (Reply-To).
import { useMutation, useQuery } from "@urql/preact";
import { graphql } from "../graphql.js";
import { ErrorNote, formValues, Outcome, Section } from "../ui.js";

const EmailSettingsQuery = graphql(`
  query EmailSettings {
    viewer {
      merchant {
        id
        emailInvoices
        emailReceipts
        emailRefunds
        supportEmail
      }
    }
  }
`);

const UpdateEmailSettings = graphql(`
  mutation UpdateEmailSettings($input: MerchantSettingsInput!) {
    updateMerchantSettings(input: $input) {
      id
      emailInvoices
      emailReceipts
      emailRefunds
      supportEmail
    }
  }
`);

const SWITCHES = [
  ["emailInvoices", "Email an invoice to its customer when you finalize it (with its PDF)"],
  ["emailReceipts", "Email a receipt to the buyer when a charge completes"],
  ["emailRefunds", "Email the claim link to the buyer when a refund waits for their address"],
] as const;

export function EmailSettings() {
  const [{ data, error }] = useQuery({ query: EmailSettingsQuery });
  const [saved, save] = useMutation(UpdateEmailSettings);
  if (!data) return <ErrorNote error={error} />;
  const merchant = saved.data?.updateMerchantSettings ?? data.viewer.merchant;
  return (
    <Section title="Emails to buyers">
      <p class="muted small">
        Sent in your business's name, with your logo. Receipts carry an unsubscribe link; invoices and refund links can also be sent one by one from their pages
        or the API.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const checked = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).checked;
          const supportEmail = (formValues(form).supportEmail ?? "").trim();
          void save({
            input: {
              emailInvoices: checked("emailInvoices"),
              emailReceipts: checked("emailReceipts"),
              emailRefunds: checked("emailRefunds"),
              supportEmail: supportEmail === "" ? null : supportEmail,
            },
          });
        }}
      >
        {SWITCHES.map(([name, label]) => (
          <label key={name}>
            <input type="checkbox" name={name} defaultChecked={merchant[name]} /> {label}
          </label>
        ))}
        <label>
          Support email (buyers' replies go there; empty: none)
          <input name="supportEmail" type="email" defaultValue={merchant.supportEmail ?? ""} maxLength={254} autoComplete="email" />
        </label>
        <Outcome result={saved} saved="Email settings saved." />
        <button type="submit" disabled={saved.fetching}>
          Save email settings
        </button>
      </form>
    </Section>
  );
}
