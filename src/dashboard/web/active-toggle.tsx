// The Retire / Reactivate link of records that are switched off rather than deleted (plans, payment links).
import type { TypedDocumentNode } from "@urql/core";
import { useMutation } from "@urql/preact";
import { ErrorNote } from "./ui.js";

/** Switches a record off (`off` names it: "Retire") or on again with `mutation`($id, $active); `onChange` reads it again. */
export function ActiveToggle(props: {
  mutation: TypedDocumentNode<unknown, { id: string; active: boolean }>;
  id: string;
  active: boolean;
  off: string;
  onChange: () => void;
}) {
  const { id, active, onChange } = props;
  const [result, set] = useMutation(props.mutation);
  return (
    <>
      <button
        type="button"
        class={active ? "link danger" : "link"}
        disabled={result.fetching}
        onClick={() => set({ id, active: !active }).then((r) => !r.error && onChange())}
      >
        {active ? props.off : "Reactivate"}
      </button>
      <ErrorNote error={result.error} />
    </>
  );
}
