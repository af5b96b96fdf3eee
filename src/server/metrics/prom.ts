// prom-client, the parts estate uses, each from its own file: the package's
// index also loads the Summary (with two packages of its own), the
// Pushgateway and the cluster aggregator, 19 KB of bundle estate never runs.
import collectDefaultMetrics from 'prom-client/lib/defaultMetrics.js';
import Counter from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import Histogram from 'prom-client/lib/histogram.js';
import Registry from 'prom-client/lib/registry.js';

export type { RegistryContentType } from 'prom-client';
export { collectDefaultMetrics, Counter, Gauge, Histogram, Registry };
