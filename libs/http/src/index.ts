export { HttpModule } from './http.module';
export type { HttpOptions } from './http.options';
export { RequireAccess, type Access } from './access.decorator';
export { ApiError, type ErrorBody, type FieldError } from './api-error';
export { strictValidationPipe, fieldErrors, validateAs, type Validated } from './validation';
export { installOverloadShedding } from './overload';
export { HTTP_OPTIONS } from './http.constants';
export { createHttpApp, type HttpAppOptions } from './create-http-app';
export { runHttpApp, type HttpAppSpec } from './run-http-app';
