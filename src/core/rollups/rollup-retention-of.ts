import type { EstateConfig } from '../../config.ts';
import { parseDuration } from '../duration.ts';
import { DEFAULT_ROLLUP_RETENTION, type RollupRetention } from './range-types.ts';

/** The rollups' retention of a config (`rollups.retention`, each tier over its default). */
export function rollupRetentionOf(config: EstateConfig | undefined): RollupRetention {
  const given = config?.rollups?.retention;
  return {
    '1m': given?.['1m'] === undefined ? DEFAULT_ROLLUP_RETENTION['1m'] : parseDuration(given['1m'], 'rollups.retention.1m'),
    '1h': given?.['1h'] === undefined ? DEFAULT_ROLLUP_RETENTION['1h'] : parseDuration(given['1h'], 'rollups.retention.1h'),
  };
}
