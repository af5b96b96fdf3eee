import { checkOperations } from '../check-operations.ts';
import type { Operation } from '../define-operation.ts';
import { agentsList } from './agents.ts';
import { buildsDigest, buildsRecent } from './builds.ts';
import { diskLatest, diskList } from './disk.ts';
import { diskRange } from './disk-range.ts';
import { estateLogs } from './estate-logs.ts';
import { estateStatusGet } from './estate-status.ts';
import { eventsList } from './events.ts';
import { forgeIssuesOp, forgeReposOp } from './forge.ts';
import { gardenGet } from './garden.ts';
import { ingestCreate } from './ingest.ts';
import { nodesList } from './nodes.ts';
import { notifyDeliveries, notifyTest } from './notify.ts';
import { providersList } from './providers.ts';
import { publishingBySite, publishingByType, publishingGet, publishingLatest, publishingRegister } from './publishing.ts';
import { pulseList, pulseStatusOp } from './pulse.ts';
import { reposList } from './repos.ts';
import { schedulesList } from './schedules.ts';
import { stateAll, stateOne } from './state.ts';
import { statsGet } from './stats.ts';
import { summaryGet } from './summary.ts';
import { apiRoot, health, healthz, readyz } from './system.ts';
import { trainingDelete, trainingGet, trainingList, trainingStart } from './training.ts';
import { trendsLatest, trendsList } from './trends.ts';
import { trendsRange } from './trends-range.ts';
import { workComplete, workFeedOp } from './work.ts';
import { workStart } from './work-start.ts';

/** Every operation of the API, in the order the docs and `estate --help` list them. */
export const operations: readonly Operation[] = checkOperations([
  apiRoot,
  healthz,
  readyz,
  health,
  trendsList,
  trendsLatest,
  trendsRange,
  diskList,
  diskLatest,
  diskRange,
  pulseList,
  pulseStatusOp,
  buildsDigest,
  buildsRecent,
  eventsList,
  ingestCreate,
  nodesList,
  stateAll,
  stateOne,
  trainingStart,
  trainingList,
  trainingGet,
  trainingDelete,
  statsGet,
  providersList,
  reposList,
  forgeReposOp,
  forgeIssuesOp,
  summaryGet,
  agentsList,
  estateStatusGet,
  gardenGet,
  workStart,
  workComplete,
  workFeedOp,
  schedulesList,
  notifyDeliveries,
  notifyTest,
  estateLogs,
  // /publishing/latest and /publishing/by-… before /publishing/{entry_id}: routes match in this order.
  publishingRegister,
  publishingLatest,
  publishingBySite,
  publishingByType,
  publishingGet,
]);
