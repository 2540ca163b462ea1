/** What the demo seed creates: two client accounts in Paris, one per environment. */
import type { PlaceColumns } from "../places/places.repository.ts";
import type { ZoneValues } from "../zones/zones.repository.ts";

export interface DemoPackageType {
  name: string;
  volume_dm3: number;
  weight_kg: number;
  fragility: "not_fragile" | "fragile" | "very_fragile" | null;
  temperature: "ambient" | "chilled" | "frozen" | null;
  is_size_category: boolean;
}

export interface DemoAccountData {
  company_name: string;
  environment: "production" | "test";
  email: string;
  user_name: string;
  package_types: DemoPackageType[];
  zones: ZoneValues[];
  default_place: PlaceColumns;
  /** Saved addresses are found again by their label. */
  saved_addresses: Array<PlaceColumns & { label: string }>;
}

const PACKAGE_TYPES: DemoPackageType[] = [
  {
    name: "Parcel",
    volume_dm3: 10,
    weight_kg: 2,
    fragility: "not_fragile",
    temperature: "ambient",
    is_size_category: false,
  },
  {
    name: "Cool box",
    volume_dm3: 20,
    weight_kg: 6,
    fragility: "fragile",
    temperature: "chilled",
    is_size_category: false,
  },
  { name: "Size M", volume_dm3: 40, weight_kg: 10, fragility: null, temperature: null, is_size_category: true },
];

/** Central Paris postal codes with approximate centroids. */
const ZONES: ZoneValues[] = [
  { postal_code: "75001", latitude: 48.8625, longitude: 2.3364 },
  { postal_code: "75002", latitude: 48.8683, longitude: 2.3428 },
  { postal_code: "75003", latitude: 48.863, longitude: 2.3601 },
  { postal_code: "75004", latitude: 48.8543, longitude: 2.3576 },
  { postal_code: "75011", latitude: 48.8591, longitude: 2.3801 },
];

const place = (company: string): PlaceColumns => ({
  label: "Warehouse",
  recipient_name: "Warehouse Team",
  recipient_phone: "+33 1 23 45 67 89",
  recipient_email: null,
  company_name: company,
  address: "10 Rue de Rivoli",
  postal_code: "75004",
  city: "Paris",
  address_instructions: "Loading bay, Rue du Roi de Sicile side",
  latitude: 48.8556,
  longitude: 2.3582,
});

const customer = {
  label: "Regular customer",
  recipient_name: "Jeanne Martin",
  recipient_phone: "+33 6 12 34 56 78",
  recipient_email: "jeanne.martin@example.com",
  company_name: null,
  address: "3 Rue du Louvre",
  postal_code: "75001",
  city: "Paris",
  address_instructions: "Code 1234A, 3rd floor, left",
  latitude: 48.8609,
  longitude: 2.3412,
};

export const DEMO_ACCOUNTS: DemoAccountData[] = [
  {
    company_name: "Demo Shop",
    environment: "production",
    email: "integrator@demo-shop.example",
    user_name: "Demo Integrator",
    package_types: PACKAGE_TYPES,
    zones: ZONES,
    default_place: place("Demo Shop"),
    saved_addresses: [customer],
  },
  {
    company_name: "Demo Shop Test",
    environment: "test",
    email: "integrator@demo-shop-test.example",
    user_name: "Demo Integrator (test)",
    package_types: PACKAGE_TYPES,
    zones: ZONES,
    default_place: place("Demo Shop Test"),
    saved_addresses: [customer],
  },
];

/** The demo's courier; found again by name among the operator's (not simulated) messengers. */
export const DEMO_MESSENGER = { name: "Demo Courier", phone: "+33 6 98 76 54 32" };

export interface DemoVehicleData {
  external_id: string;
  provider: string;
  label: string;
  /** In an active round of the demo courier, so geo-ingest stores its positions. */
  in_active_round: boolean;
}

/** Two trackers of the provider "demo-tracker": one on the road, one parked (positions not stored). */
export const DEMO_VEHICLES: DemoVehicleData[] = [
  { external_id: "DEMO-VAN-1", provider: "demo-tracker", label: "Demo van (on a round)", in_active_round: true },
  { external_id: "DEMO-VAN-2", provider: "demo-tracker", label: "Demo van (parked)", in_active_round: false },
];

/**
 * The demo's staff, one per role, found again by e-mail: the console's demo seed gives them
 * their credentials, so each role can be signed in as.
 */
export const DEMO_STAFF: Array<{ email: string; name: string; role: "admin" | "dispatcher" | "read_only" }> = [
  { email: "admin@operator.example", name: "Demo Admin", role: "admin" },
  { email: "dispatcher@operator.example", name: "Demo Dispatcher", role: "dispatcher" },
  { email: "viewer@operator.example", name: "Demo Viewer", role: "read_only" },
];
