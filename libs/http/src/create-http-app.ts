import { type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { installOverloadShedding } from './overload';
import { strictValidationPipe } from './validation';

export interface HttpAppOptions {
  readonly logger: LoggerService;
  /** Largest accepted body; larger is 413 `request.too_large` before any parsing. */
  readonly bodyLimit: number;
  readonly maxInflight: number;
}

/**
 * Every Tally HTTP app runs on Fastify (measured ≈ 4× Express on these machines), with the same
 * validation, error contract and overload shedding.
 */
export async function createHttpApp(
  module: unknown,
  options: HttpAppOptions,
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimit,
    logger: false,
    return503OnClosing: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: options.logger,
    bufferLogs: false,
  });
  installOverloadShedding(app.getHttpAdapter().getInstance(), options.maxInflight);
  app.useGlobalPipes(strictValidationPipe());
  return app;
}
