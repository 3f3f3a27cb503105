// The Retire / Reactivate link of records that are switched off rather than deleted (plans, payment links).
import type { TypedDocumentNode } from "@urql/core";
import { useMutation } from "@urql/preact";
import { Confirm, ErrorNote } from "./ui.js";

/**
 * Switches a record off (`off` names it: "Retire") after `question` (what stops working), or on again
 * at once, with `mutation`($id, $active); `onChange` reads it again.
 */
export function ActiveToggle(props: {
  mutation: TypedDocumentNode<unknown, { id: string; active: boolean }>;
  id: string;
  active: boolean;
  off: string;
  question: string;
  onChange: () => void;
}) {
  const { id, active, onChange } = props;
  const [result, set] = useMutation(props.mutation);
  const toggle = () => set({ id, active: !active }).then((r) => !r.error && onChange());
  return (
    <>
      {active ? (
        <Confirm label={props.off} question={props.question} confirm={`Yes, ${props.off.toLowerCase()} it`} disabled={result.fetching} onConfirm={toggle} />
      ) : (
        <button type="button" class="link" disabled={result.fetching} onClick={toggle}>
          Reactivate
        </button>
      )}
      <ErrorNote error={result.error} />
    </>
  );
}
