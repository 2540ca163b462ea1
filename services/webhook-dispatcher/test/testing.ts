/** What other packages' tests use to run a real webhook-dispatcher beside them (`@dos/webhook-dispatcher/testing`). */
export { createEndpoint, type StartOptions, startTestDispatcher, type TestDispatcher } from "./dispatcher.ts";
export { makeDelivery, makeEvent } from "./events.ts";
export { type Received, type Receiver, startReceiver } from "./receiver.ts";
