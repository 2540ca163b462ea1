/** The dispatch board's URL (`/staff/dispatch?date=2030-06-02`): read before its page's code is loaded. */

export interface DispatchSearch {
  /** The day shown, YYYY-MM-DD; today (in the browser's time zone) when absent. */
  date?: string;
}

/** Keeps a `date` that is a day as the date field writes it; the API judges the rest (its range, a real day). */
export function dispatchSearchOf(search: Record<string, unknown>): DispatchSearch {
  return typeof search.date === "string" && /^\d{4}-\d{2}-\d{2}$/.test(search.date) ? { date: search.date } : {};
}
