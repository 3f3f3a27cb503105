// The postal address fields of the customer forms and of the seller's business details, and the API
// input they make.

/** An address as the API shows it; every part may be null. */
export interface AddressValue {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
}

const PARTS = [
  ["line1", "Street and number"],
  ["line2", "Apartment, suite, building"],
  ["postalCode", "Postal code"],
  ["city", "City"],
  ["state", "State or region"],
  ["country", "Country (two-letter code, e.g. DE)"],
] as const;

/** The six parts of an address, named `address.line1` … for `addressInput`. */
export function AddressFields({ value, legend = "Address" }: { value?: AddressValue | null; legend?: string }) {
  return (
    <fieldset class="line">
      <legend>{legend}</legend>
      {PARTS.map(([key, label]) => (
        <label key={key} class="grow">
          {label}
          {key === "country" ? (
            <input
              name={`address.${key}`}
              defaultValue={value?.[key] ?? ""}
              maxLength={2}
              pattern="[A-Za-z]{2}"
              title="Two letters: an ISO 3166-1 country code"
            />
          ) : (
            <input name={`address.${key}`} defaultValue={value?.[key] ?? ""} />
          )}
        </label>
      ))}
    </fieldset>
  );
}

/** The address in a form's values as the API takes it: blank parts null, and null (clear it) when every part is blank. */
export function addressInput(values: Record<string, string>): AddressValue | null {
  const address = Object.fromEntries(PARTS.map(([key]) => [key, values[`address.${key}`]?.trim() || null])) as unknown as AddressValue;
  return Object.values(address).some((part) => part !== null) ? address : null;
}
