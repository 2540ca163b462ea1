/** The fleet's pages: one chunk, loaded when a staff person first opens one (staff-pages.tsx). */
export { MessengersPage } from "./messengers.tsx";
export { VehiclePage } from "./vehicle-page.tsx";
export { VehiclesPage } from "./vehicles.tsx";
