/**
 * delivery-api with a real webhook-dispatcher on its NATS namespace, a real receiver and two
 * accounts: what the client's and the operator's webhook tests both start from.
 */
import {
  type Receiver,
  startReceiver,
  startTestDispatcher,
  type TestDispatcher,
} from "@dos/webhook-dispatcher/testing";
import { createTestAccount, startTestApi, type TestAccount, type TestApi } from "./fixtures.ts";

export interface WebhooksTestbed {
  api: TestApi;
  dispatcher: TestDispatcher;
  receiver: Receiver;
  shop: TestAccount;
  other: TestAccount;
  close(): Promise<void>;
}

export async function startWebhooksTestbed(): Promise<WebhooksTestbed> {
  const api = await startTestApi();
  const dispatcher = await startTestDispatcher({ namespace: api.config.NATS_NAMESPACE });
  const receiver = await startReceiver();
  return {
    api,
    dispatcher,
    receiver,
    shop: await createTestAccount(api.db),
    other: await createTestAccount(api.db),
    async close() {
      await dispatcher.close();
      await api.close();
      await receiver.close();
    },
  };
}
