/**
 * One change a staff page makes through the operator API: a mutation whose refusals become the
 * messages the form shows (beside the fields they name, the rest in an alert), and whose success
 * refreshes the lists it touched.
 */
import { type QueryKey, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "../bff.ts";

export function useChange<TVariables = void, TData = unknown>(
  mutationFn: (variables: TVariables) => Promise<TData>,
  options: { invalidate?: QueryKey[]; onSuccess?: (data: TData, variables: TVariables) => void } = {},
) {
  const queryClient = useQueryClient();
  const [errors, setErrors] = useState<string[]>([]);
  const mutation = useMutation({
    mutationFn,
    onMutate: () => setErrors([]),
    onSuccess: async (data, variables) => {
      options.onSuccess?.(data, variables);
      await Promise.all((options.invalidate ?? []).map((queryKey) => queryClient.invalidateQueries({ queryKey })));
    },
    onError: (error) =>
      setErrors(error instanceof ApiError ? error.errors : ["the console cannot be reached, try again"]),
  });
  return { ...mutation, errors, clearErrors: () => setErrors([]) };
}

/** A form's text field, trimmed; undefined when blank (the API then says whether it is required). */
export function textOf(form: FormData, name: string): string | undefined {
  const value = String(form.get(name) ?? "").trim();
  return value === "" ? undefined : value;
}

/**
 * A form's number field; undefined when blank. A field the browser could not read as a number
 * (type="number" gives "" then) is blank too, and the API names it as required.
 */
export function numberOf(form: FormData, name: string): number | undefined {
  const text = String(form.get(name) ?? "").trim();
  if (text === "") return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}
