import { Ajv } from 'ajv';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventContractDocuments } from './event-contracts';

const DIR = resolve(__dirname, '../../../docs/contracts');

describe(eventContractDocuments.name, () => {
  // Compared as JSON, not as text: prettier formats the committed files.
  it.each(eventContractDocuments().map((d) => [d.file, d] as const))(
    '%s is committed as generated (TALLY_WRITE_CONTRACTS=1 rewrites it)',
    (file, document) => {
      const path = resolve(DIR, file);
      if (process.env.TALLY_WRITE_CONTRACTS === '1') {
        writeFileSync(path, `${JSON.stringify(document.schema, null, 2)}\n`);
      }
      expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(document.schema);
    },
  );

  it.each(eventContractDocuments().map((d) => [d.file, d] as const))(
    '%s is a JSON Schema a plain validator compiles',
    (_, document) => {
      const ajv = new Ajv({ strictRequired: false, validateFormats: false });
      expect(() => ajv.compile(document.schema)).not.toThrow();
    },
  );
});
