/** The dispatch board and the round page: one chunk, loaded when a staff person first opens one (staff-pages.tsx). */
export { DispatchBoardPage } from "./board.tsx";
export { RoundPage } from "./round-page.tsx";
