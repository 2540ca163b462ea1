/** What other packages' tests use to run a real geo-ingest beside them (`@dos/geo-ingest/testing`). */
export { type Harness as TestGeoIngest, postPosition, startHarness as startTestGeoIngest } from "./harness.ts";
