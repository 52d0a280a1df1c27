export interface HostPort {
  readonly host: string;
  readonly port: number;
}

// A bracketed IPv6 literal or a DNS name / IPv4 address; no scheme, no path.
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?::(\d{1,5}))?$/;

/** `host:port` (or `host` when `defaultPort` is given) → parts; `undefined` when malformed. */
export function parseHostPort(text: string, defaultPort?: number): HostPort | undefined {
  const match = HOST_PORT.exec(text.trim());
  if (!match) return undefined;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port === undefined || port < 1 || port > 65_535) return undefined;
  return { host: match[1], port };
}
