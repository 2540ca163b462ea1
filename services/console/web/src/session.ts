/** Who is signed in: one cached query, which sign-in and sign-out refresh. */
import { bff } from "./bff.ts";

export const sessionQuery = { queryKey: ["session"], queryFn: bff.session };
