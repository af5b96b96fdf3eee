// Types of the parts of prom-client that prom.ts imports one by one: each
// file's export is the one of the same name in the package's index.
declare module 'prom-client/lib/registry.js' {
  import { Registry } from 'prom-client';
  export = Registry;
}
declare module 'prom-client/lib/counter.js' {
  import { Counter } from 'prom-client';
  export = Counter;
}
declare module 'prom-client/lib/gauge.js' {
  import { Gauge } from 'prom-client';
  export = Gauge;
}
declare module 'prom-client/lib/histogram.js' {
  import { Histogram } from 'prom-client';
  export = Histogram;
}
declare module 'prom-client/lib/defaultMetrics.js' {
  import { collectDefaultMetrics } from 'prom-client';
  export = collectDefaultMetrics;
}
