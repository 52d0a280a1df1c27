/**
 * Sets headers on the framework's response object: Fastify's reply and Express's response both have
 * `header(name, value)`; a bare `ServerResponse` has `setHeader`. Headers set here survive the
 * exception filter that writes a 429, since both frameworks keep them on the response until it is sent.
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
