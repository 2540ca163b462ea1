/**
 * Form pieces shared by the console's forms: a labelled field that shows, beside itself, the
 * API's messages naming it (the error shape's messages start with the field's dotted path), and
 * the list of the messages no field claims.
 */
import { type ReactNode, useId } from "react";

/** The messages naming this field (`dropoff.place.postal_code is not in a delivered zone`). */
const messagesFor = (errors: string[], path: string) => errors.filter((e) => e.startsWith(`${path} `));

export function Field(props: {
  label: string;
  name: string;
  path?: string;
  errors?: string[];
  type?: string;
  autoComplete?: string;
  minLength?: number;
  maxLength?: number;
  inputMode?: "numeric" | "text" | "email";
  /** For type="number": "any" lets decimals through without the browser's own complaint. */
  step?: string;
  required?: boolean;
  defaultValue?: string;
  children?: (id: string, describedBy: string | undefined) => ReactNode;
}) {
  const id = useId();
  const own = props.path ? messagesFor(props.errors ?? [], props.path) : [];
  const describedBy = own.length > 0 ? `${id}-errors` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children ? (
        props.children(id, describedBy)
      ) : (
        <input
          id={id}
          name={props.name}
          type={props.type ?? "text"}
          autoComplete={props.autoComplete ?? "off"}
          minLength={props.minLength}
          maxLength={props.maxLength}
          inputMode={props.inputMode}
          step={props.step}
          required={props.required ?? false}
          defaultValue={props.defaultValue}
          aria-invalid={own.length > 0 || undefined}
          aria-describedby={describedBy}
        />
      )}
      {own.length > 0 && (
        <p className="field-error" id={describedBy}>
          {own.join("; ")}
        </p>
      )}
    </div>
  );
}

/** Messages that no field of the form claims (or all of them, when no path is given). */
export function Errors({ errors, claimed = [] }: { errors: string[]; claimed?: string[] }) {
  const rest = errors.filter((e) => !claimed.some((path) => e.startsWith(`${path} `)));
  if (rest.length === 0) return null;
  return (
    <div className="errors" role="alert">
      {rest.map((error) => (
        <p key={error}>{error}</p>
      ))}
    </div>
  );
}
