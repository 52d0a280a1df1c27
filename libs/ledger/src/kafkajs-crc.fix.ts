/**
 * kafkajs 2.2.4's CRC-32C (`protocol/recordBatch/crc32C`), replaced by a slicing-by-8 one that gives
 * the same checksum. kafkajs checksums every record batch it produces over all its bytes, one table
 * lookup per byte in a chain where each step waits for the previous one, then converts the result
 * through a one-element `Uint32Array.from`. At 2,000 decisions/s that loop was ≈ 10 % of the relay's
 * JavaScript time (a V8 CPU profile of relay-steady). Slicing-by-8 looks up eight bytes at once in
 * eight tables whose lookups do not depend on each other (the Intel "slicing-by-8" scheme, as in
 * zlib's crc32): same polynomial (Castagnoli, reflected 0x82F63B78), same result
 * (kafkajs-crc.fix.spec.ts compares both on random buffers of every length and alignment).
 */
import { replaceKafkajsModule } from './kafkajs-module.swap';

const PATCHED = Symbol.for('tally.kafkajs.crcFix');

type Crc = (buffer: Buffer) => number;

/** Castagnoli, bit-reflected. */
const POLY = 0x82f63b78;

/** TABLES[k * 256 + b]: the CRC of byte b followed by k zero bytes. */
const TABLES = (() => {
  const t = new Int32Array(8 * 256);
  for (let b = 0; b < 256; b++) {
    let c = b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[b] = c;
  }
  for (let b = 0; b < 256; b++) {
    let c = t[b];
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff] ^ (c >>> 8);
      t[k * 256 + b] = c;
    }
  }
  return t;
})();

/** CRC-32C of `buffer`, as an unsigned 32-bit number (what kafkajs's module answers). */
export function crc32c(buffer: Uint8Array): number {
  const t = TABLES;
  let crc = -1;
  let i = 0;
  const end8 = buffer.length - (buffer.length & 7);
  for (; i < end8; i += 8) {
    const lo = crc ^ (buffer[i] | (buffer[i + 1] << 8) | (buffer[i + 2] << 16) | (buffer[i + 3] << 24));
    crc =
      t[1792 + (lo & 0xff)] ^
      t[1536 + ((lo >>> 8) & 0xff)] ^
      t[1280 + ((lo >>> 16) & 0xff)] ^
      t[1024 + (lo >>> 24)] ^
      t[768 + buffer[i + 4]] ^
      t[512 + buffer[i + 5]] ^
      t[256 + buffer[i + 6]] ^
      t[buffer[i + 7]];
  }
  for (; i < buffer.length; i++) crc = t[(crc ^ buffer[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/**
 * Applied once per process, before kafkajs loads its record batch encoder (see createKafka).
 * Returns false when that encoder was loaded already (it holds the original): nothing is replaced.
 */
export function fixKafkajsCrc(): boolean {
  return replaceKafkajsModule<Crc>({
    module: 'kafkajs/src/protocol/recordBatch/crc32C',
    heldBy: 'kafkajs/src/protocol/recordBatch/v0',
    marker: PATCHED,
    replace: () => (buffer) => crc32c(buffer),
  });
}
