// The postal address fields of the customer forms and of the seller's business details, and the API
// input they make. The country is picked by name from the API's own list (`countries`) and sent as
// its ISO 3166-1 code: what is saved is the country chosen, never a guess from typed letters.
import type { CombinedError } from "@urql/core";
import { useQuery } from "@urql/preact";
import { useMemo } from "preact/hooks";
import { graphql } from "./graphql.js";
import { errorParam, FieldError } from "./ui.js";

/** An address as the API shows it; every part may be null. */
export interface AddressValue {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
}

const Countries = graphql(`
  query Countries {
    countries {
      code
      name
    }
  }
`);

const PARTS = [
  ["line1", "Street and number"],
  ["line2", "Apartment, suite, building"],
  ["postalCode", "Postal code"],
  ["city", "City"],
  ["state", "State or region"],
  ["country", "Country"],
] as const;

/** The address fields' labels by the API's names (`address.city`), for the messages about them. */
export const ADDRESS_LABELS: Readonly<Record<string, string>> = Object.fromEntries(PARTS.map(([key, label]) => [`address.${key}`, label]));

/** Whether an error is about an address part: shown beside that part rather than under the form. */
export const addressParam = (param: string) => param.startsWith("address.");

/**
 * The six parts of an address, named `address.line1` … for `addressInput`; `idPrefix` keeps the ids of
 * two address forms on one page apart. The API's error about a part shows under that part.
 */
export function AddressFields(props: { value?: AddressValue | null; legend?: string; error?: CombinedError | null; idPrefix?: string }) {
  const { value, legend = "Address", error } = props;
  const invalid = errorParam(error);
  const ids = props.idPrefix ?? "address";
  return (
    <fieldset class="line">
      <legend>{legend}</legend>
      {PARTS.map(([key, label]) => {
        const name = `address.${key}`;
        const errorId = `${ids}-${key}-error`;
        const described = invalid === name ? { "aria-invalid": true, "aria-describedby": errorId } : {};
        // The select is named by its label's text alone: a label's own name would include every option.
        return (
          <label key={key} class="grow">
            {key === "country" ? <span id={`${ids}-country-label`}>{label}</span> : label}
            {key === "country" ? (
              <CountrySelect name={name} value={value?.country ?? null} aria-labelledby={`${ids}-country-label`} {...described} />
            ) : (
              <input name={name} defaultValue={value?.[key] ?? ""} {...described} />
            )}
            <FieldError error={error} name={name} id={errorId} labels={ADDRESS_LABELS} />
          </label>
        );
      })}
    </fieldset>
  );
}

/** A select of country names (the API's list, sorted by name) whose value is the ISO code; "None" sends no country. */
function CountrySelect(props: { name: string; value: string | null; "aria-labelledby": string; "aria-invalid"?: boolean; "aria-describedby"?: string }) {
  const [{ data, error }] = useQuery({ query: Countries });
  const sorted = useMemo(() => [...(data?.countries ?? [])].sort((a, b) => a.name.localeCompare(b.name, "en")), [data]);
  const { value, ...rest } = props;
  // A stored code the list lacks (none should) stays selectable rather than being lost on save.
  const known = value === null || sorted.some((c) => c.code === value);
  return (
    <select {...rest} key={sorted.length}>
      <option value="">{data ? "None" : error ? "None (the list of countries could not be loaded)" : "Loading countries…"}</option>
      {!known && (
        <option value={value} selected>
          {value}
        </option>
      )}
      {sorted.map((c) => (
        <option key={c.code} value={c.code} selected={c.code === value}>
          {c.name}
        </option>
      ))}
    </select>
  );
}

/** The address in a form's values as the API takes it: blank parts null, and null (clear it) when every part is blank. */
export function addressInput(values: Record<string, string>): AddressValue | null {
  const address = Object.fromEntries(PARTS.map(([key]) => [key, values[`address.${key}`]?.trim() || null])) as unknown as AddressValue;
  return Object.values(address).some((part) => part !== null) ? address : null;
}
