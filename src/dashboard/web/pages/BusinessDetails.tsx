// Settings → Business details: the legal name, address, tax id and logo that the hosted invoice page
// and the invoice PDF print about the seller. The logo is uploaded (read here as a data: URL), never
// linked: the server draws PDFs and fetches nothing to do it.
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { AddressFields, addressInput, addressParam } from "../address.js";
import { graphql } from "../graphql.js";
import { Confirm, ErrorNote, formValues, Outcome, Section } from "../ui.js";

/** What the server takes; checked there too, this only spares an upload that would be refused. */
const LOGO_MAX_BYTES = 64 * 1024;

const BusinessDetailsQuery = graphql(`
  query BusinessDetails {
    viewer {
      merchant {
        id
        name
        businessDetails {
          legalName
          taxId
          logo
          address {
            line1
            line2
            city
            state
            postalCode
            country
          }
        }
      }
    }
  }
`);

const UpdateBusinessDetails = graphql(`
  mutation UpdateBusinessDetails($input: BusinessDetailsInput!) {
    updateBusinessDetails(input: $input) {
      id
      name
      businessDetails {
        legalName
        taxId
        logo
        address {
          line1
          line2
          city
          state
          postalCode
          country
        }
      }
    }
  }
`);

/** The file as a data: URL, or why it cannot be one. */
function readLogo(file: File): Promise<string> {
  if (file.type !== "image/png" && file.type !== "image/jpeg") return Promise.reject(new Error("The logo must be a PNG or JPEG image."));
  if (file.size > LOGO_MAX_BYTES)
    return Promise.reject(new Error(`The logo must be at most ${LOGO_MAX_BYTES / 1024} KB; this one is ${Math.ceil(file.size / 1024)} KB.`));
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(new Error("The logo could not be read."));
    reader.readAsDataURL(file);
  });
}

export function BusinessDetails() {
  const [{ data, error }] = useQuery({ query: BusinessDetailsQuery });
  const [saved, save] = useMutation(UpdateBusinessDetails);
  const [fileError, setFileError] = useState<Error | null>(null);
  if (!data) return <ErrorNote error={error} />;
  const merchant = saved.data?.updateBusinessDetails ?? data.viewer.merchant;
  const details = merchant.businessDetails;
  return (
    <Section title="Business details">
      <p class="muted small">Printed on your invoices (the hosted page and the PDF) in both modes. An invoice keeps the details it was issued with.</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const v = formValues(form);
          const file = (form.elements.namedItem("logo") as HTMLInputElement).files?.[0];
          setFileError(null);
          let logo: string | undefined;
          try {
            logo = file ? await readLogo(file) : undefined;
          } catch (problem) {
            return setFileError(problem as Error);
          }
          // Blank fields clear; the logo stays unless a new file is chosen.
          const result = await save({ input: { legalName: v.legalName ?? "", taxId: v.taxId ?? "", address: addressInput(v), ...(logo && { logo }) } });
          if (!result.error) (form.elements.namedItem("logo") as HTMLInputElement).value = "";
        }}
      >
        <label>
          Legal name (when it differs from “{merchant.name}”)
          <input name="legalName" defaultValue={details.legalName ?? ""} maxLength={200} autoComplete="organization" />
        </label>
        <label>
          Tax id (VAT number or similar)
          <input name="taxId" defaultValue={details.taxId ?? ""} maxLength={100} />
        </label>
        <AddressFields value={details.address} legend="Business address" error={saved.error} idPrefix="business-address" />
        <label>
          Logo (PNG or JPEG, at most 64 KB)
          <input name="logo" type="file" accept="image/png,image/jpeg" />
        </label>
        {details.logo && (
          <p class="actions">
            <img class="logo-preview" src={details.logo} alt="Current logo" />
            <Confirm
              label="Remove logo"
              question="Remove your logo? Your invoices' pages and PDFs show none from now on, issued ones included; it is not kept (upload the file again to bring it back)."
              confirm="Yes, remove it"
              disabled={saved.fetching}
              onConfirm={() => void save({ input: { logo: null } })}
            />
          </p>
        )}
        <Outcome result={saved} error={fileError} saved="Business details saved." skip={addressParam} labels={{ legalName: "Legal name", taxId: "Tax id" }} />
        <button type="submit" disabled={saved.fetching}>
          Save business details
        </button>
      </form>
    </Section>
  );
}
