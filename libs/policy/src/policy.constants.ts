/** DI token of the `PolicyModuleOptions` the module was configured with. */
export const POLICY_MODULE_OPTIONS = Symbol('POLICY_MODULE_OPTIONS');
