import { checkOperations } from '../check-operations.ts';
import type { Operation } from '../define-operation.ts';
import { buildsDigest, buildsRecent } from './builds.ts';
import { diskLatest, diskList } from './disk.ts';
import { eventsList } from './events.ts';
import { pulseList, pulseStatusOp } from './pulse.ts';
import { stateAll, stateOne } from './state.ts';
import { apiRoot, health, healthz } from './system.ts';
import { trendsLatest, trendsList } from './trends.ts';

/** Every operation of the API, in the order the docs and `estate --help` list them. */
export const operations: readonly Operation[] = checkOperations([
  apiRoot,
  healthz,
  health,
  trendsList,
  trendsLatest,
  diskList,
  diskLatest,
  pulseList,
  pulseStatusOp,
  buildsDigest,
  buildsRecent,
  eventsList,
  stateAll,
  stateOne,
]);
