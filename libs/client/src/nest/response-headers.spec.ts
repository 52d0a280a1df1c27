import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { setResponseHeaders } from './response-headers';

describe(setResponseHeaders.name, () => {
  const headers = { 'ratelimit-limit': '10', 'retry-after': '3' };

  it('uses header(name, value) where the framework has it (a Fastify reply)', () => {
    const set: Record<string, string> = {};
    const reply = { header: (name: string, value: string) => (set[name] = value) };

    setResponseHeaders(reply, headers);

    expect(set).toEqual(headers);
  });

  it('falls back to setHeader on a bare ServerResponse', () => {
    const sut = new ServerResponse(new IncomingMessage(new Socket()));

    setResponseHeaders(sut, headers);

    expect(sut.getHeaders()).toEqual(headers);
  });
});
