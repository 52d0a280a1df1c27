/** Every problem of the environment at once, one line per problem, each starting with the variable. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `Invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}
