/**
 * A round's page: its messenger, vehicle and state, started and ended by dispatchers and
 * administrators, and its tasks in order, each with where it is, its slot and how far it went.
 * Tasks move up and down (the whole new order goes to the API, which keeps started tasks in
 * place), start, complete (a drop-off with a proof photo, uploaded first) or fail with a reason.
 * The proof photos are shown through the console. Read again every few seconds: a messenger's
 * phone changes the same round.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, notFound, useParams } from "@tanstack/react-router";
import { type FormEvent, useId } from "react";
import { ApiError } from "../../bff.ts";
import { STATUS_LABELS, when } from "../../pages/display.tsx";
import { Errors, Field } from "../../pages/form-parts.tsx";
import { textOf, useChange } from "../change.ts";
import { answerOf, opsApi } from "../ops-api.ts";
import { useMayChange } from "../staff-access.ts";
import {
  DISPATCH,
  KINDS,
  ROUND_STATES,
  type Round,
  type RoundTask,
  TASK_STATES,
  taskName,
  uploadProofPicture,
} from "./dispatch-parts.ts";
import "./dispatch.css";

/** How often the round is read again: the messenger's phone reports progress too. */
const REFRESH_MS = 10_000;

export function RoundPage() {
  const { roundId } = useParams({ strict: false }) as { roundId?: string };
  const id = roundId ?? "";
  const round = useQuery({
    queryKey: [...DISPATCH, "round", id],
    refetchInterval: REFRESH_MS,
    queryFn: async (): Promise<Round | null> => {
      if (!/^\d{1,15}$/.test(id)) return null;
      try {
        return await answerOf(opsApi.GET("/ops/v1/rounds/{id}", { params: { path: { id } } }));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
  if (round.data === null) throw notFound();
  return (
    <>
      <p>
        <Link to="/staff/dispatch">Dispatch board</Link>
      </p>
      {round.error && <Errors errors={[round.error.message]} />}
      {!round.data && !round.error && <p>Loading the round…</p>}
      {round.data && <RoundView round={round.data} />}
    </>
  );
}

function RoundView({ round }: { round: Round }) {
  const mayChange = useMayChange("dispatch");
  const path = { params: { path: { id: String(round.id) } } };
  const reorder = useChange(
    (taskIds: number[]) => answerOf(opsApi.PUT("/ops/v1/rounds/{id}/tasks", { ...path, body: { task_ids: taskIds } })),
    { invalidate: [DISPATCH] },
  );
  const start = useChange(
    () => {
      clearListErrors();
      return answerOf(opsApi.POST("/ops/v1/rounds/{id}/start", path));
    },
    { invalidate: [DISPATCH] },
  );
  const end = useChange(
    () => {
      clearListErrors();
      return answerOf(opsApi.POST("/ops/v1/rounds/{id}/end", path));
    },
    { invalidate: [DISPATCH] },
  );
  const takeOut = useChange(
    (deliveryId: number) => {
      clearListErrors();
      return answerOf(
        opsApi.DELETE("/ops/v1/rounds/{id}/deliveries/{deliveryId}", {
          params: { path: { id: String(round.id), deliveryId: String(deliveryId) } },
        }),
      );
    },
    { invalidate: [DISPATCH] },
  );
  /** The task list's last refusal (an order, a delivery taken out) no longer applies once anything else is done. */
  function clearListErrors() {
    reorder.clearErrors();
    takeOut.clearErrors();
  }
  const move = (index: number, by: -1 | 1) => {
    clearListErrors();
    const order = round.tasks.map((t) => t.task_id);
    const [moved] = order.splice(index, 1);
    order.splice(index + by, 0, moved as number);
    reorder.mutate(order);
  };
  const open = round.status !== "ended";
  return (
    <>
      <h1>Round #{round.id}</h1>
      <dl className="facts">
        <dt>State</dt>
        <dd data-testid="round-state">
          <span className={`state round-${round.status}`}>{ROUND_STATES[round.status]}</span>
        </dd>
        <dt>Messenger</dt>
        <dd>{round.messenger.name}</dd>
        <dt>Vehicle</dt>
        <dd>
          {round.vehicle ? (
            <Link to="/staff/fleet/vehicles/$vehicleId" params={{ vehicleId: String(round.vehicle.id) }}>
              {round.vehicle.external_id}
            </Link>
          ) : (
            "none"
          )}
          {round.vehicle?.label ? ` (${round.vehicle.label})` : ""}
        </dd>
        <dt>Planned</dt>
        <dd>{when(round.created_at)}</dd>
        <dt>Started</dt>
        <dd>{when(round.started_at)}</dd>
        <dt>Ended</dt>
        <dd>{when(round.ended_at)}</dd>
      </dl>
      {mayChange && open && (
        <p className="actions">
          {round.status === "planned" && (
            <button type="button" disabled={start.isPending} onClick={() => start.mutate()}>
              Start round
            </button>
          )}
          {round.status === "active" && (
            <button type="button" disabled={end.isPending} onClick={() => end.mutate()}>
              End round
            </button>
          )}
        </p>
      )}
      <Errors errors={[...start.errors, ...end.errors]} />
      <h2 id="tasks-heading">Tasks</h2>
      {round.tasks.length === 0 && <p>No task yet: assign deliveries to this round on the dispatch board.</p>}
      <Errors errors={[...reorder.errors, ...takeOut.errors]} />
      {round.tasks.length > 0 && (
        <ol className="round-tasks" aria-labelledby="tasks-heading">
          {round.tasks.map((task, index) => (
            <TaskItem
              key={task.task_id}
              task={task}
              roundActive={round.status === "active"}
              onAction={clearListErrors}
              reorder={mayChange && open ? movesOf(round.tasks, index, move, reorder.isPending) : undefined}
              takeOut={mayChange && open && mayLeave(round.tasks, index) ? takeOut : undefined}
            />
          ))}
        </ol>
      )}
    </>
  );
}

/**
 * The moves of a task: a started task keeps its place, so a task not started moves past others not
 * started only; none when it can move neither way.
 */
function movesOf(tasks: RoundTask[], index: number, move: (index: number, by: -1 | 1) => void, pending: boolean) {
  if (tasks[index]?.state !== "to_do") return undefined;
  const up = tasks[index - 1]?.state === "to_do" ? () => move(index, -1) : undefined;
  const down = tasks[index + 1]?.state === "to_do" ? () => move(index, 1) : undefined;
  return up || down ? { up, down, pending } : undefined;
}

/** Whether this is the first task of its delivery on the round, and none of the delivery's tasks started: it may leave. */
function mayLeave(tasks: RoundTask[], index: number) {
  const deliveryId = tasks[index]?.delivery_id;
  const own = tasks.filter((t) => t.delivery_id === deliveryId);
  return own[0] === tasks[index] && own.every((t) => t.state === "to_do");
}

/** A delivery whose tasks may still start (the others are done with: delivered, failed, cancelled). */
const UNDER_WAY = ["scheduled", "picked_up"];

function TaskItem(props: {
  task: RoundTask;
  roundActive: boolean;
  /** Called when the task is acted on: the round's last refusal no longer applies. */
  onAction: () => void;
  reorder: { up: (() => void) | undefined; down: (() => void) | undefined; pending: boolean } | undefined;
  /** Takes the task's delivery out of the round (on its first task only). */
  takeOut: { mutate: (deliveryId: number) => void; isPending: boolean } | undefined;
}) {
  const { task } = props;
  const mayChange = useMayChange("dispatch");
  const name = taskName(task);
  const path = { params: { path: { id: String(task.task_id) } } };
  const start = useChange(
    () => {
      props.onAction();
      return answerOf(opsApi.POST("/ops/v1/tasks/{id}/start", path));
    },
    { invalidate: [DISPATCH] },
  );
  const complete = useChange(
    async (photo: File | undefined) => {
      props.onAction();
      if (photo) await uploadProofPicture(task.task_id, photo);
      return answerOf(opsApi.POST("/ops/v1/tasks/{id}/complete", { ...path, body: {} }));
    },
    { invalidate: [DISPATCH] },
  );
  const fail = useChange(
    (reason: string) => answerOf(opsApi.POST("/ops/v1/tasks/{id}/fail", { ...path, body: { failure_reason: reason } })),
    { invalidate: [DISPATCH] },
  );
  const onComplete = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const photo = new FormData(event.currentTarget).get("photo");
    complete.mutate(photo instanceof File && photo.size > 0 ? photo : undefined);
  };
  const onFail = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    fail.mutate(textOf(new FormData(event.currentTarget), "failure_reason") ?? "");
  };
  const hintId = useId();
  return (
    <li className={`round-task task-${task.state}`}>
      <p className="task-title">
        <strong>Delivery #{task.delivery_id}</strong> <span>{KINDS[task.kind]}</span>{" "}
        <span className={`state task-${task.state}`}>{TASK_STATES[task.state]}</span>{" "}
        <span className="muted">(delivery {STATUS_LABELS[task.delivery_status].toLowerCase()})</span>
      </p>
      <p>
        {task.recipient_name}
        {task.company_name ? `, ${task.company_name}` : ""}, {task.address}
      </p>
      <p className="muted">
        Slot {when(task.slot_starting_at)} – {when(task.slot_ending_at)}
        {task.eta ? `; ETA ${when(task.eta)}` : ""}
        {task.started_at ? `; started ${when(task.started_at)}` : ""}
        {task.completed_at ? `; ${task.state === "failed" ? "failed" : "completed"} ${when(task.completed_at)}` : ""}
      </p>
      {task.failure_reason && <p>Failure reason: {task.failure_reason}</p>}
      {task.proofs.length > 0 && (
        <ul className="proofs" aria-label={`Proof of ${name}`}>
          {task.proofs.map((proof, i) => (
            <li key={proof.media_id}>
              <img
                src={`/ops/v1/media/${encodeURIComponent(proof.media_id)}`}
                alt={`Proof ${proof.kind === "signature" ? "signature" : "photo"} ${i + 1} of ${name}`}
              />
            </li>
          ))}
        </ul>
      )}
      {mayChange && (props.reorder || props.roundActive || props.takeOut) && (
        <div className="task-actions">
          {props.reorder && (
            <>
              <button
                type="button"
                className="secondary"
                disabled={!props.reorder.up || props.reorder.pending}
                onClick={props.reorder.up}
              >
                Move up ({name})
              </button>
              <button
                type="button"
                className="secondary"
                disabled={!props.reorder.down || props.reorder.pending}
                onClick={props.reorder.down}
              >
                Move down ({name})
              </button>
            </>
          )}
          {props.takeOut && (
            <button
              type="button"
              className="secondary"
              disabled={props.takeOut.isPending}
              onClick={() => props.takeOut?.mutate(task.delivery_id)}
            >
              Take out of round (Delivery #{task.delivery_id})
            </button>
          )}
          {props.roundActive && task.state === "to_do" && UNDER_WAY.includes(task.delivery_status) && (
            <button type="button" disabled={start.isPending} onClick={() => start.mutate()}>
              Start task ({name})
            </button>
          )}
        </div>
      )}
      <Errors errors={start.errors} />
      {mayChange && props.roundActive && task.state === "started" && (
        <div className="task-forms">
          <form onSubmit={onComplete} noValidate aria-label={`Complete ${name}`}>
            {task.kind === "dropoff" ? (
              <Field label="Proof photo" name="photo">
                {(id) => (
                  <>
                    <input id={id} name="photo" type="file" accept="image/jpeg,image/png" aria-describedby={hintId} />
                    <span id={hintId} className="muted">
                      JPEG or PNG, 5 MB at most; uploaded before the task is completed.
                    </span>
                  </>
                )}
              </Field>
            ) : (
              <p className="muted">A pickup is completed without proof.</p>
            )}
            <button type="submit" disabled={complete.isPending}>
              Complete task ({name})
            </button>
          </form>
          <Errors errors={complete.errors} />
          <form onSubmit={onFail} noValidate aria-label={`Fail ${name}`}>
            <Field label="Failure reason" name="failure_reason" path="failure_reason" errors={fail.errors} />
            <button type="submit" className="secondary" disabled={fail.isPending}>
              Fail task ({name})
            </button>
          </form>
          <Errors errors={fail.errors} claimed={["failure_reason"]} />
        </div>
      )}
    </li>
  );
}
