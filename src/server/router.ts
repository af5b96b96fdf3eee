/** `/state/{file_name}` → a regex with a named group per parameter. */
export function compilePath(path: string): RegExp {
  const source = path
    .split(/(\{[A-Za-z_][A-Za-z0-9_]*\})/)
    .map((part) => {
      const param = /^\{(.+)\}$/.exec(part);
      return param ? `(?<${param[1]}>[^/]+)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}

export type Match<T> =
  | { kind: 'found'; value: T; params: Record<string, string> }
  | { kind: 'wrong_method'; allowed: string[] }
  | { kind: 'not_found' };

interface Route<T> {
  method: string;
  pattern: RegExp;
  value: T;
}

/**
 * A small router: `add(method, path, value)` and `match(method, pathname)`.
 * Routes match in the order added; a path that matches with another method
 * answers `wrong_method` with the allowed methods (HEAD is allowed wherever GET is).
 */
export class Router<T> {
  readonly #routes: Route<T>[] = [];
  /** `METHOD path` of the routes without parameters that no route added before them shadows: found with one lookup. */
  readonly #exact = new Map<string, T>();

  add(method: string, path: string, value: T): this {
    const pattern = compilePath(path);
    const key = `${method} ${path}`;
    if (!path.includes('{') && !this.#exact.has(key) && !this.#routes.some((r) => r.method === method && r.pattern.test(path))) this.#exact.set(key, value);
    this.#routes.push({ method, pattern, value });
    return this;
  }

  match(method: string, pathname: string): Match<T> {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const exact = this.#exact.get(`${wanted} ${pathname}`);
    if (exact !== undefined) return { kind: 'found', value: exact, params: {} };
    const allowed = new Set<string>();
    for (const route of this.#routes) {
      const m = route.pattern.exec(pathname);
      if (!m) continue;
      if (route.method === wanted) return { kind: 'found', value: route.value, params: decodeParams(m.groups) };
      allowed.add(route.method);
      if (route.method === 'GET') allowed.add('HEAD');
    }
    return allowed.size ? { kind: 'wrong_method', allowed: [...allowed].sort() } : { kind: 'not_found' };
  }
}

function decodeParams(groups: Record<string, string> | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, raw] of Object.entries(groups ?? {})) {
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      params[name] = raw;
    }
  }
  return params;
}
