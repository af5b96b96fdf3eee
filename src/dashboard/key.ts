// The API key of this tab: typed once, kept in sessionStorage (gone when the
// tab closes, never in a URL, a cookie or localStorage), sent as X-API-Key.

const NAME = 'estate.api_key';

export function storedKey(): string | undefined {
  try {
    return sessionStorage.getItem(NAME) || undefined;
  } catch {
    return undefined;
  }
}

export function storeKey(key: string): void {
  try {
    sessionStorage.setItem(NAME, key);
  } catch {
    // Storage refused (a private window's quota): the key lasts until the page reloads.
  }
  memory = key;
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(NAME);
  } catch {}
  memory = undefined;
}

let memory: string | undefined;

/** The key to send: the stored one, else one typed since the page loaded. */
export function currentKey(): string | undefined {
  return storedKey() ?? memory;
}
