// Prints the error-code rows of docs/decision-api.md from the vocabulary (libs/errors/src/error-codes.ts),
// for pasting between that doc's error-codes markers; libs/errors/src/error-codes.spec.ts holds the two equal.
// Run with the project's Node (24 strips the file's types): ./dev npm exec -- node scripts/error-table.mjs
const { ERROR_CODES } = await import('../libs/errors/src/error-codes.ts');
for (const [code, { statuses, meaning }] of Object.entries(ERROR_CODES)) {
  process.stdout.write(`| \`${code}\` | ${statuses.join(', ')} | ${meaning} |\n`);
}
