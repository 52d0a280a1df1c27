/**
 * Sets headers on the framework's response object: Fastify's reply has `header(name, value)`, a bare
 * `ServerResponse` has `setHeader`. Headers set here survive the exception filter that writes a 429,
 * since Fastify keeps them on the reply until it is sent (tested on Fastify only).
 */
export function setResponseHeaders(response: unknown, headers: Readonly<Record<string, string>>): void {
  const target = response as {
    header?: (name: string, value: string) => unknown;
    setHeader?: (name: string, value: string) => unknown;
  };
  for (const [name, value] of Object.entries(headers)) {
    if (typeof target.header === 'function') target.header(name, value);
    else if (typeof target.setHeader === 'function') target.setHeader(name, value);
  }
}
