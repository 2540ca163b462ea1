/**
 * Every error the delivery operations answer, declared once. Builders returning HttpError are
 * thrown; builders returning text are messages collected while a body is checked, so a caller
 * learns every problem of a request at once.
 */
import { HttpError, notFound, unprocessable } from "@dos/service-kit";

export const deliveryNotFound = (id: string | number) => notFound(`delivery ${id}`);
/** latest found nothing (for that reference, when one was given). */
export const noLatestDelivery = (reference: string | undefined) =>
  notFound(reference === undefined ? "delivery" : `delivery with client_order_reference ${reference}`);

export const cannotUpdate = (id: number, status: string) =>
  unprocessable(`delivery ${id} cannot be updated once ${status}; only saved or scheduled deliveries can`);
export const cannotCancel = (id: number, status: string) =>
  unprocessable(
    status === "cancelled"
      ? `delivery ${id} is already cancelled`
      : `delivery ${id} cannot be cancelled once ${status}; only saved or scheduled deliveries can`,
  );
export const redeliveryNeedsFailed = (id: number, status: string) =>
  unprocessable(`original delivery ${id} must be failed to be redelivered; it is ${status}`);
export const alreadyRedelivered = (id: number, redeliveryId: number) =>
  unprocessable(`original delivery ${id} already has redelivery ${redeliveryId}`);
/** A list filter's range whose last day is before its first. */
export const rangeEndBeforeStart = (from: string, to: string) =>
  unprocessable(`querystring.${to} must not be before querystring.${from}`);
export const notACalendarDay = (parameter: string) => unprocessable(`querystring.${parameter} is not a real date`);
export const cancelTakesNoBody = () => unprocessable("body must be empty: cancel takes no fields");
/** Another request changed the delivery while this one was being priced, three times in a row. */
export const concurrentChange = (id: number) =>
  new HttpError(409, `delivery ${id} was changed by another request at the same time; retry`);

/** Messages of the business rules, collected into one 422. */
export const ruleMessages = {
  taskRequired: () => "dropoff or pickup is required",
  noSlotGiven: () => "dropoff or pickup must be given as an object with slot_starting_at, slot_ending_at and place",
  notADate: (label: string) => `${label} is not a real date`,
  endNotAfterStart: (label: string) => `${label}.slot_ending_at must be after ${label}.slot_starting_at`,
  alreadyStarted: (label: string) => `${label}.slot_starting_at has already started; slots must start in the future`,
  dropoffBeforePickup: () => "dropoff.slot_ending_at must be after pickup.slot_starting_at",
  noTimeForDefaultPickup: (gapMinutes: number) =>
    `dropoff.slot_starting_at is too soon: the pickup at the default place must end ${gapMinutes} minutes before it`,
  noDefaultPlace: (kind: string) => `${kind} is required: this account has no default place to fill it in`,
  atDefaultPlace: (kind: string) =>
    `${kind} is the task at the account's default place; it is filled in automatically and cannot be changed`,
  unknownSavedAddress: (kind: string, id: number) => `${kind} ${id} is not a saved address of this account`,
  blank: (label: string) => `${label} must not be blank`,
  phoneRequired: (label: string) => `${label} is required`,
  addressHasExtras: (label: string) =>
    `${label} must hold only the street number and street name; put any other information ` +
    `(building, floor, apartment, access code...) in ${label.replace(/address$/, "address_instructions")}`,
  outsideZones: (label: string, postalCode: string) => `${label} ${postalCode} is not in a delivered zone`,
  unknownPackageType: (index: number, id: number) =>
    `packages[${index}].package_type_id ${id} is an unknown package type`,
  sizeCategoryAlone: (typeName: string) =>
    `packages must hold exactly one package, with amount 1, when the size category ${typeName} is used`,
};
