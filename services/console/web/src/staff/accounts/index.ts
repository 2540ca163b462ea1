/** The accounts' pages: one chunk, loaded when a staff person first opens one (staff-pages.tsx). */
export { AccountGeneralPage } from "./account-general.tsx";
export { AccountPackageTypesPage } from "./account-package-types.tsx";
export { AccountPlacesPage } from "./account-places.tsx";
export { AccountTariffsPage } from "./account-tariffs.tsx";
export { AccountZonesPage } from "./account-zones.tsx";
export { AccountsPage, NewAccountPage } from "./accounts-list.tsx";
