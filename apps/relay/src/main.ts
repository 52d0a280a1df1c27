import 'reflect-metadata';
import { runHttpApp } from '@tally/http';
import { RelayModule } from './relay.module';

void runHttpApp({ name: 'relay', port: (c) => c.relayPort, module: (c) => RelayModule.forRoot(c) });
