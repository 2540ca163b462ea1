/**
 * The dispatch board: a day's deliveries still to assign and the day's rounds, per messenger and
 * vehicle. Dispatchers and administrators tick deliveries and assign them to a round, and plan a
 * new round; a round's own page has its tasks. The day is one of the browser's time zone, in the
 * URL (`?date=`); both lists come in the API's pages, with "Show more" where a page ends.
 */
import type { components } from "@dos/api-types/ops-v1";
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useSearch } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import { ApiError } from "../../bff.ts";
import { when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { useChange } from "../change.ts";
import { answerOf, opsApi, pageAnswerOf } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import { DISPATCH, KINDS, ROUND_STATES, roundLabel, TASK_STATES, timeZone, today } from "./dispatch-parts.ts";
import type { DispatchSearch } from "./dispatch-search.ts";
import "./dispatch.css";

/** Deliveries and rounds per page of the board (the API allows up to 1,000 and 100). */
const DELIVERIES_PER_PAGE = 100;
const ROUNDS_PER_PAGE = 25;
/** Messengers and vehicles offered for a new round: the API's largest page. */
const CREW_PER_PAGE = 500;

type ToAssignDelivery = components["schemas"]["DispatchDelivery"];
type DayRound = components["schemas"]["DispatchRound"];
/** What the board shows of a round: the day's, or one just created (the operator API's Round). */
type ShownRound = Pick<DayRound, "id" | "status" | "messenger" | "vehicle"> & {
  tasks: Array<Pick<DayRound["tasks"][number], "state">>;
};

export function DispatchBoardPage() {
  const search = useSearch({ strict: false }) as DispatchSearch;
  const date = search.date ?? today();
  const zone = timeZone();
  const day = { date, time_zone: zone };
  const toAssign = useInfiniteQuery({
    queryKey: [...DISPATCH, "to_assign", day],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      answerOf(
        opsApi.GET("/ops/v1/dispatch/to_assign", {
          params: { query: { ...day, limit: DELIVERIES_PER_PAGE, ...(pageParam ? { after: pageParam } : {}) } },
        }),
      ),
    getNextPageParam: (page) => page.next_after ?? undefined,
  });
  const rounds = useInfiniteQuery({
    queryKey: [...DISPATCH, "rounds", day],
    initialPageParam: 0,
    queryFn: ({ pageParam }) =>
      answerOf(
        opsApi.GET("/ops/v1/dispatch/rounds", {
          params: { query: { ...day, limit: ROUNDS_PER_PAGE, after: pageParam } },
        }),
      ),
    getNextPageParam: (page) => page.next_after ?? undefined,
  });
  // A round created here holds no task of the day yet, and was maybe created on another day: it
  // is listed (and offered for assignment) until the day's rounds hold it.
  const [created, setCreated] = useState<Array<{ date: string; round: ShownRound }>>([]);
  const listed: ShownRound[] = rounds.data?.pages.flatMap((page) => page.rounds) ?? [];
  const dayRounds = [
    ...listed,
    ...created.filter((c) => c.date === date && !listed.some((r) => r.id === c.round.id)).map((c) => c.round),
  ];
  // The first page's refusal of the day (out of range, not a real day) is shown beside the field.
  const dayErrors = [toAssign.error, rounds.error].flatMap((error) =>
    error instanceof ApiError ? error.errors : error ? [error.message] : [],
  );
  const uniqueDayErrors = [...new Set(dayErrors)];
  return (
    <>
      <h1>Dispatch</h1>
      <DayField date={date} zone={zone} errors={uniqueDayErrors} />
      <Errors errors={uniqueDayErrors} claimed={["querystring.date"]} />
      <ToAssign
        key={date}
        deliveries={toAssign.data?.pages.flatMap((page) => page.deliveries) ?? []}
        total={toAssign.data?.pages[0]?.total}
        loading={toAssign.isPending}
        more={toAssign.hasNextPage ? () => toAssign.fetchNextPage() : undefined}
        loadingMore={toAssign.isFetchingNextPage}
        rounds={dayRounds.filter((round) => round.status !== "ended")}
        justCreated={created.findLast((c) => c.date === date)?.round.id}
      />
      <NewRound onCreated={(round) => setCreated((before) => [...before, { date, round }])} />
      {/* No accessible name of these contains "round": the select labelled "Round" is the only one. */}
      <section>
        <h2>Rounds</h2>
        {rounds.isPending && <p>Loading the day's rounds…</p>}
        {rounds.data && dayRounds.length === 0 && <p>No round on this day yet.</p>}
        {dayRounds.length > 0 && (
          <ul className="day-rounds">
            {dayRounds.map((round) => {
              const done = round.tasks.filter((t) => t.state === "completed" || t.state === "failed").length;
              return (
                <li key={round.id} className="day-round">
                  <Link to="/staff/dispatch/rounds/$roundId" params={{ roundId: String(round.id) }}>
                    Round #{round.id}
                  </Link>{" "}
                  <span className={`state round-${round.status}`}>{ROUND_STATES[round.status]}</span>
                  <span>Messenger: {round.messenger.name}</span>
                  <span>
                    Vehicle: {round.vehicle ? round.vehicle.external_id : "none"}
                    {round.vehicle?.label ? ` (${round.vehicle.label})` : ""}
                  </span>
                  <span>
                    {round.tasks.length} {round.tasks.length === 1 ? "task" : "tasks"}, {done} done
                  </span>
                </li>
              );
            })}
          </ul>
        )}
        {rounds.hasNextPage && (
          <button type="button" disabled={rounds.isFetchingNextPage} onClick={() => rounds.fetchNextPage()}>
            Show more rounds
          </button>
        )}
      </section>
    </>
  );
}

function mainTask(delivery: ToAssignDelivery) {
  const kind = delivery.direction === "inbound" ? "pickup" : "dropoff";
  return delivery.tasks.find((t) => t.kind === kind) ?? delivery.tasks[0];
}

function ToAssign(props: {
  deliveries: ToAssignDelivery[];
  total: number | undefined;
  loading: boolean;
  more: (() => void) | undefined;
  loadingMore: boolean;
  rounds: ShownRound[];
  /** The round created last on this page: chosen until another is. */
  justCreated: number | undefined;
}) {
  const mayChange = useMayChange("dispatch");
  const queryClient = useQueryClient();
  const [checked, setChecked] = useState<Set<number>>(new Set());
  const [done, setDone] = useState<string | null>(null);
  const assign = useChange(
    async ({ roundId, deliveryIds }: { roundId: number; deliveryIds: number[] }) => {
      // One call per delivery, as the API takes them; the first refusal stops the rest and names its delivery.
      const assigned: number[] = [];
      for (const deliveryId of deliveryIds) {
        try {
          await answerOf(
            opsApi.POST("/ops/v1/rounds/{id}/deliveries", {
              params: { path: { id: String(roundId) } },
              body: { delivery_id: deliveryId },
            }),
          );
          assigned.push(deliveryId);
        } catch (error) {
          if (assigned.length > 0) {
            // Those assigned before the refusal are assigned: the board shows them so at once.
            setChecked((before) => new Set([...before].filter((id) => !assigned.includes(id))));
            await queryClient.invalidateQueries({ queryKey: DISPATCH });
          }
          if (!(error instanceof ApiError)) throw error;
          const before = assigned.length > 0 ? [`${assigned.map((id) => `#${id}`).join(", ")} assigned first.`] : [];
          throw new ApiError(error.status, [...error.errors.map((e) => `Delivery #${deliveryId}: ${e}`), ...before]);
        }
      }
      return { roundId, assigned };
    },
    {
      invalidate: [DISPATCH],
      onSuccess: ({ roundId, assigned }) => {
        setChecked(new Set());
        setDone(
          `${assigned.length} ${assigned.length === 1 ? "delivery" : "deliveries"} assigned to round #${roundId}.`,
        );
      },
    },
  );
  const [roundChoice, setRoundChoice] = useState<{ id: string; after: number | undefined }>();
  const offered = (id: string | undefined) => id !== undefined && props.rounds.some((r) => String(r.id) === id);
  // A choice made before the last round was created gives way to it.
  const chosen = roundChoice?.after === props.justCreated ? roundChoice?.id : undefined;
  const roundId = offered(chosen)
    ? (chosen as string)
    : offered(String(props.justCreated))
      ? String(props.justCreated)
      : String(props.rounds[0]?.id ?? "");
  const onAssign = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setDone(null);
    if (checked.size === 0) {
      assign.reset();
      assign.clearErrors();
      setDone("Tick the deliveries to assign first.");
      return;
    }
    assign.mutate({ roundId: Number(roundId), deliveryIds: [...checked] });
  };
  const toggle = (id: number, on: boolean) => {
    const next = new Set(checked);
    if (on) next.add(id);
    else next.delete(id);
    setChecked(next);
  };
  return (
    <section aria-labelledby="to-assign-heading">
      <h2 id="to-assign-heading">To assign</h2>
      {props.loading && <p>Loading the deliveries to assign…</p>}
      {props.total !== undefined && (
        <p>
          {props.total === 0
            ? "Nothing to assign on this day."
            : `${props.total} ${props.total === 1 ? "delivery" : "deliveries"} to assign, earliest slot first.`}
        </p>
      )}
      <form onSubmit={onAssign} noValidate>
        {props.deliveries.length > 0 && (
          <ul className="to-assign" aria-label="Deliveries to assign">
            {props.deliveries.map((delivery) => {
              const main = mainTask(delivery);
              const label = `Delivery #${delivery.id}, ${main ? `${KINDS[main.kind]}, ${main.address}` : "no task"}`;
              return (
                <li key={delivery.id}>
                  {mayChange ? (
                    <label className="pick">
                      <input
                        type="checkbox"
                        name="delivery"
                        value={delivery.id}
                        checked={checked.has(delivery.id)}
                        onChange={(event) => toggle(delivery.id, event.target.checked)}
                      />{" "}
                      {label}
                    </label>
                  ) : (
                    <span className="pick">{label}</span>
                  )}
                  <span className="muted">
                    {delivery.account.name}
                    {delivery.account.environment === "test" ? " (test)" : ""}
                    {delivery.client_order_reference ? `, ref. ${delivery.client_order_reference}` : ""}
                  </span>
                  <ul className="task-lines">
                    {delivery.tasks.map((task) => (
                      <li key={task.task_id}>
                        {KINDS[task.kind]}: {task.recipient_name}, {task.address}, slot {when(task.slot_starting_at)} –{" "}
                        {when(task.slot_ending_at)} ({TASK_STATES[task.state]})
                      </li>
                    ))}
                  </ul>
                </li>
              );
            })}
          </ul>
        )}
        {props.more && (
          <p>
            <button type="button" className="secondary" disabled={props.loadingMore} onClick={props.more}>
              Show more deliveries
            </button>
          </p>
        )}
        {mayChange && props.deliveries.length > 0 && (
          <div className="assign-bar">
            {props.rounds.length === 0 ? (
              <p>No round of this day takes deliveries: create one below.</p>
            ) : (
              <>
                <Field label="Round" name="round">
                  {(id) => (
                    <select
                      id={id}
                      name="round"
                      value={roundId}
                      onChange={(event) => setRoundChoice({ id: event.target.value, after: props.justCreated })}
                    >
                      {props.rounds.map((round) => (
                        <option key={round.id} value={round.id}>
                          {roundLabel(round)}
                        </option>
                      ))}
                    </select>
                  )}
                </Field>
                <button type="submit" disabled={assign.isPending}>
                  Assign selected
                </button>
                <span className="muted">{checked.size} selected</span>
              </>
            )}
          </div>
        )}
      </form>
      {done && <p role="status">{done}</p>}
      <Errors errors={assign.errors} />
    </section>
  );
}

/** A whole year from 1900 on: a date the field holds while its year is being typed (0002, 0020…) is not one to show. */
const TYPED_DAY = /^(19|2\d)\d\d-\d\d-\d\d$/;

/**
 * The day shown: a day typed in full (or picked) opens it; Enter opens whatever the field holds,
 * and the API's refusal of it is shown beside the field.
 */
function DayField({ date, zone, errors }: { date: string; zone: string; errors: string[] }) {
  const navigate = useNavigate();
  const [typed, setTyped] = useState(date);
  useEffect(() => setTyped(date), [date]);
  const open = (day: string) => navigate({ to: "/staff/dispatch", search: { date: day } });
  return (
    <form
      className="filters"
      onSubmit={(event) => {
        event.preventDefault();
        if (typed) open(typed);
      }}
    >
      <Field label="Day" name="date" path="querystring.date" errors={errors}>
        {(id, describedBy) => (
          <input
            id={id}
            name="date"
            type="date"
            value={typed}
            aria-describedby={describedBy}
            onChange={(event) => {
              setTyped(event.target.value);
              if (TYPED_DAY.test(event.target.value)) open(event.target.value);
            }}
          />
        )}
      </Field>
      <p className="muted">Days of the time zone {zone}.</p>
    </form>
  );
}

function NewRound({ onCreated }: { onCreated: (round: ShownRound) => void }) {
  const mayChange = useMayChange("dispatch");
  // The first page of each, as large as the API gives (a fleet beyond it is named below the form).
  const page = { params: { query: { page: 1, per_page: CREW_PER_PAGE } } };
  const messengerPage = useQuery({
    queryKey: [...DISPATCH, "messengers"],
    queryFn: () => pageAnswerOf(opsApi.GET("/ops/v1/messengers", page)),
    enabled: mayChange,
  });
  const vehiclePage = useQuery({
    queryKey: [...DISPATCH, "vehicles"],
    queryFn: () => pageAnswerOf(opsApi.GET("/ops/v1/vehicles", page)),
    enabled: mayChange,
  });
  const messengers = messengerPage.data?.items;
  const vehicles = vehiclePage.data?.items;
  const [created, setCreated] = useState<number | null>(null);
  const create = useChange(
    (body: { messenger_id: number; vehicle_id: number | null }) => answerOf(opsApi.POST("/ops/v1/rounds", { body })),
    {
      invalidate: [DISPATCH],
      onSuccess: (round) => {
        setCreated(round.id);
        onCreated(round);
      },
    },
  );
  if (!mayChange) return null;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setCreated(null);
    const vehicle = String(form.get("vehicle_id") ?? "");
    create.mutate({
      messenger_id: Number(form.get("messenger_id") ?? 0),
      vehicle_id: vehicle ? Number(vehicle) : null,
    });
  };
  return (
    <section>
      <form onSubmit={onSubmit} noValidate className="filters">
        <h2>New round</h2>
        <Field label="Messenger" name="messenger_id" path="messenger_id" errors={create.errors}>
          {(id, describedBy) => (
            <select id={id} name="messenger_id" aria-describedby={describedBy} required>
              {messengerPage.isPending && <option value="">Loading…</option>}
              {messengers?.length === 0 && <option value="">No messenger yet (Fleet)</option>}
              {messengers?.map((messenger) => (
                <option key={messenger.id} value={messenger.id}>
                  {messenger.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Vehicle" name="vehicle_id" path="vehicle_id" errors={create.errors}>
          {(id, describedBy) => (
            <select id={id} name="vehicle_id" aria-describedby={describedBy}>
              <option value="">No vehicle</option>
              {vehicles?.map((vehicle) => (
                <option key={vehicle.id} value={vehicle.id}>
                  {vehicle.external_id}
                  {vehicle.label ? ` (${vehicle.label})` : ""}
                  {vehicle.current_round ? `, on round #${vehicle.current_round.id}` : ""}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" disabled={create.isPending}>
          Create round
        </button>
      </form>
      {created !== null && (
        <p role="status">Round #{created} created: it is listed under Rounds, and takes deliveries above.</p>
      )}
      {(messengerPage.data?.hasNext || vehiclePage.data?.hasNext) && (
        <p className="muted">The first {CREW_PER_PAGE} messengers and vehicles are offered.</p>
      )}
      <Errors errors={create.errors} claimed={["messenger_id", "vehicle_id"]} />
      {(messengerPage.error || vehiclePage.error) && (
        <Errors errors={[messengerPage.error, vehiclePage.error].flatMap((e) => (e ? [e.message] : []))} />
      )}
    </section>
  );
}
