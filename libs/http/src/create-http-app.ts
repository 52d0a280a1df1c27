import { type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadTlsFiles, type TallyConfig } from '@tally/config';
import { installLeanBind } from './async-resource-bind';
import { BearerTokens } from '@tally/auth';
import { answerServerEvents } from './connection-errors';
import { installJsonBody } from './json-body';
import { installRequestIdEcho, requestIdOptions } from './request-id.hook';
import { installRouteGate } from './route-gate';
import { serverOptions, type TransportOptions } from './server-options';
import { strictValidationPipe } from './validation';

export interface HttpAppOptions extends TransportOptions {
  readonly logger: LoggerService;
  /** Largest accepted body; larger is 413 `request.too_large` before any parsing. */
  readonly bodyLimit: number;
  readonly maxInflight: number;
}

/**
 * The options of an app from its configuration. Reads the TLS files when TLS is on: throws a
 * `ConfigError` naming the setting when they are unreadable or do not match.
 */
export function httpAppOptions(config: TallyConfig, logger: LoggerService): HttpAppOptions {
  return {
    logger,
    bodyLimit: config.bodyLimitBytes,
    maxInflight: config.maxInflight,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    tls: loadTlsFiles(config),
  };
}

/**
 * Every Tally HTTP app runs on Fastify (measured ≈ 4× Express on these machines), with the same
 * deadlines, validation, error contract, authentication before the body and overload shedding.
 * The module must import `HttpModule` (its `BearerTokens` authenticate every route).
 */
export async function createHttpApp(
  module: unknown,
  options: HttpAppOptions,
): Promise<NestFastifyApplication> {
  // Before any request: Fastify binds one function per request body (see async-resource-bind.ts).
  installLeanBind();
  const adapter = new FastifyAdapter({
    ...serverOptions(options),
    ...requestIdOptions,
    bodyLimit: options.bodyLimit,
    logger: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: options.logger,
    bufferLogs: false,
    // Nest's parsers would accept forms and answer bad JSON without a stable code: see json-body.ts.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  answerServerEvents(fastify.server);
  installJsonBody(fastify, options.bodyLimit);
  installRequestIdEcho(fastify);
  // Before any route exists: routes get their gate as Nest (and the hot routes) register them, at init.
  installRouteGate(fastify, { tokens: app.get(BearerTokens), maxInflight: options.maxInflight });
  app.useGlobalPipes(strictValidationPipe());
  return app;
}
