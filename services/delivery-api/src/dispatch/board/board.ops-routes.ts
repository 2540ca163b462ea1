/** The dispatch board's reads under /ops/v1 (see board.service.ts). */
import { DAY_PATTERN, isCalendarDay, MAX_ID } from "@dos/contracts";
import { unprocessable } from "@dos/service-kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { DB } from "../../db/database.ts";
import { createBoardService, DayRoundsPage, parseCursor, ToAssignPage } from "./board.service.ts";

/** Days the board answers for: a year beyond these is a typing slip, not a plan. */
const FIRST_DAY = "1900-01-01";
const LAST_DAY = "2199-12-31";

/** Letters first, then the characters of the tz database's names (Etc/GMT+5, America/Port-au-Prince). */
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

const DayParameters = {
  date: Type.String({
    pattern: DAY_PATTERN,
    maxLength: 10,
    examples: ["2030-06-02"],
    description: `The day, YYYY-MM-DD, from ${FIRST_DAY} to ${LAST_DAY}.`,
  }),
  time_zone: Type.String({
    minLength: 1,
    maxLength: 64,
    default: "UTC",
    examples: ["Europe/Paris"],
    description: "The time zone the day is of, an IANA name (UTC when not given).",
  }),
};

const ToAssignQuery = Type.Object(
  {
    ...DayParameters,
    after: Type.Optional(
      Type.String({
        pattern: "^[0-9]{1,15}-[0-9]{1,16}$",
        maxLength: 32,
        description: "The previous page's `next_after`.",
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 200, description: "Deliveries per page." }),
  },
  { additionalProperties: false },
);

const RoundsQuery = Type.Object(
  {
    ...DayParameters,
    after: Type.Integer({ minimum: 0, maximum: MAX_ID, default: 0, description: "The previous page's `next_after`." }),
    limit: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 50,
      description: "Rounds per page at most; a page also ends before its tasks pass 2,000.",
    }),
  },
  { additionalProperties: false },
);

/** The day and zone of a board query, or a 422 naming the parameter. */
function dayOf(query: { date: string; time_zone: string }) {
  // The range first: a day such as 0000-01-01 is outside it, which says more than "not a real date".
  if (query.date < FIRST_DAY || query.date > LAST_DAY) {
    throw unprocessable(`querystring.date must be from ${FIRST_DAY} to ${LAST_DAY}`);
  }
  if (!isCalendarDay(query.date)) throw unprocessable("querystring.date is not a real date");
  // An offset is refused: Intl reads "+05:00" as UTC+5, PostgreSQL (POSIX) as UTC-5.
  if (!IANA_NAME.test(query.time_zone)) {
    throw unprocessable("querystring.time_zone must be an IANA time zone name (e.g. Europe/Paris), not an offset");
  }
  try {
    // Throws a RangeError for a name the runtime's time zone database does not hold.
    new Intl.DateTimeFormat("en", { timeZone: query.time_zone });
  } catch {
    throw unprocessable(
      `querystring.time_zone ${query.time_zone} is not a known time zone (an IANA name, e.g. Europe/Paris)`,
    );
  }
  return { date: query.date, timeZone: query.time_zone };
}

export async function boardOpsRoutes(app: FastifyInstance, options: { db: Kysely<DB> }) {
  const board = createBoardService(options.db);

  app.get<{ Querystring: Static<typeof ToAssignQuery> }>(
    "/dispatch/to_assign",
    {
      schema: {
        operationId: "dispatch.to-assign",
        summary: "A day's deliveries still to assign (saved, on no round), by their slot",
        description:
          "The saved deliveries whose main task (the dropoff, or the pickup of an inbound delivery) has its " +
          "slot starting in the day, earliest first, in pages (`next_after`); `total` counts them all.",
        querystring: ToAssignQuery,
        response: { 200: ToAssignPage },
      },
    },
    (request) =>
      board.toAssign({
        ...dayOf(request.query),
        after: request.query.after === undefined ? undefined : parseCursor(request.query.after),
        limit: request.query.limit,
      }),
  );

  app.get<{ Querystring: Static<typeof RoundsQuery> }>(
    "/dispatch/rounds",
    {
      schema: {
        operationId: "dispatch.rounds",
        summary: "A day's rounds per messenger and vehicle, with their tasks in order",
        description:
          "The rounds holding a task whose slot starts in the day, and those created during it, by id, in " +
          "pages (`next_after`) of whole rounds: at most `limit`, and no more than 2,000 tasks unless one round " +
          "alone holds more.",
        querystring: RoundsQuery,
        response: { 200: DayRoundsPage },
      },
    },
    (request) => board.rounds({ ...dayOf(request.query), after: request.query.after, limit: request.query.limit }),
  );
}
