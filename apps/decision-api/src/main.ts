import 'reflect-metadata';
import { runHttpApp } from '@tally/http';
import { DecisionApiModule } from './decision-api.module';
import { GrpcRlsServer } from './grpc-rls.server';

void runHttpApp({
  name: 'decision-api',
  port: (c) => c.httpPort,
  module: (c) => DecisionApiModule.forRoot(c),
  workers: (c) => c.workers,
  afterListen: async (app, config, logger) => {
    const port = await app.get(GrpcRlsServer).start(config.host, config.grpcPort);
    logger.log(`decision-api Envoy rate-limit gRPC listening on ${config.host}:${port}`);
  },
});
