// A new customer, from the customers list: the form opens on demand and, once the customer is made,
// its page opens.
import { useMutation } from "@urql/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { AddressFields, addressInput, addressParam } from "../address.js";
import { graphql } from "../graphql.js";
import { navigate } from "../router.js";
import { ErrorNote, formValues, Section } from "../ui.js";

const CreateCustomer = graphql(`
  mutation CreateCustomer($input: CreateCustomerInput!) {
    createCustomer(input: $input) {
      id
    }
  }
`);

export function NewCustomer() {
  const [open, setOpen] = useState(false);
  const [created, create] = useMutation(CreateCustomer);
  const first = useRef<HTMLInputElement>(null);
  // The button that opened the form is gone: its first field takes the focus.
  useEffect(() => void (open && first.current?.focus()), [open]);
  if (!open) {
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          New customer
        </button>
      </p>
    );
  }
  return (
    <Section title="New customer">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          // Blank optional fields are left out (undefined is not sent).
          const optional = (value: string | undefined) => value?.trim() || undefined;
          const result = await create({
            input: {
              name: v.name ?? "",
              email: v.email?.trim() ?? "",
              companyName: optional(v.companyName),
              phone: optional(v.phone),
              taxId: optional(v.taxId),
              address: addressInput(v) ?? undefined,
            },
          });
          const id = result.data?.createCustomer.id;
          if (id) navigate(`/customers/${id}`);
        }}
      >
        <div class="grid">
          <label>
            Name
            <input ref={first} name="name" required maxLength={200} />
          </label>
          <label>
            Email
            <input name="email" type="email" required maxLength={254} />
          </label>
          <label>
            Company
            <input name="companyName" maxLength={200} />
          </label>
          <label>
            Phone
            <input name="phone" type="tel" maxLength={50} />
          </label>
          <label>
            Tax id
            <input name="taxId" maxLength={100} />
          </label>
        </div>
        <AddressFields error={created.error} idPrefix="new-customer-address" />
        <ErrorNote error={created.error} skip={addressParam} labels={{ companyName: "Company", taxId: "Tax id" }} />
        <div class="actions">
          <button type="submit" disabled={created.fetching}>
            Create customer
          </button>
          <button type="button" class="link" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </form>
    </Section>
  );
}
