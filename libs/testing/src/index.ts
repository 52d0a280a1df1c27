export { testEnv, uniqueName } from './test-env';
