import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replaceKafkajsModule } from './kafkajs-module.swap';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs internals, as the seam reads them */
// A pair no fix replaces: the header encoder, held by the record encoder (`require('../../header/v0')`).
const HEADER = 'kafkajs/src/protocol/recordBatch/header/v0';
const RECORD = 'kafkajs/src/protocol/recordBatch/record/v0';
type HeaderEncoder = (header: { key: string; value: string }) => unknown;
type RecordEncoder = (args: object) => { buffer: Buffer };

/** Both modules out of Node's cache: the next require loads them from their files. */
function forget(): void {
  for (const path of [HEADER, RECORD]) delete require.cache[require.resolve(path)];
}

beforeEach(forget);
afterEach(forget);

describe(replaceKafkajsModule.name, () => {
  it('replaces the export the holding module loads afterwards, once', () => {
    // given: a replacement that counts the headers it encodes
    let encoded = 0;
    let replaced = 0;
    const swap = {
      module: HEADER,
      heldBy: RECORD,
      marker: Symbol('spec.header'),
      replace: (original: HeaderEncoder): HeaderEncoder => {
        replaced++;
        return (header) => {
          encoded++;
          return original(header);
        };
      },
    };
    // when: it is applied before the record encoder loads, then again
    const sut = [replaceKafkajsModule(swap), replaceKafkajsModule(swap)];
    const record = require(RECORD) as RecordEncoder;
    const bytes = record({ key: 'k', value: 'v', headers: { a: '1', b: '2' } }).buffer;
    // then: the record encoder calls the replacement, which was built once and writes the same bytes
    expect(sut).toEqual([true, true]);
    expect(replaced).toBe(1);
    expect(encoded).toBe(2);
    forget();
    const originalBytes = (require(RECORD) as RecordEncoder)({
      key: 'k',
      value: 'v',
      headers: { a: '1', b: '2' },
    }).buffer;
    expect(bytes.toString('hex')).toBe(originalBytes.toString('hex'));
  });

  it('replaces nothing once the holding module is loaded (it keeps the original)', () => {
    // given: the record encoder loaded, with the header encoder it holds
    require(RECORD);
    const held = require(HEADER) as HeaderEncoder;
    let replaced = 0;
    // when
    const sut = replaceKafkajsModule<HeaderEncoder>({
      module: HEADER,
      heldBy: RECORD,
      marker: Symbol('spec.late'),
      replace: (original) => {
        replaced++;
        return original;
      },
    });
    // then
    expect(sut).toBe(false);
    expect(replaced).toBe(0);
    expect(require(HEADER)).toBe(held);
  });
});
