/**
 * The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, or of the whole key without one,
 * mod 16384), as Redis and ioredis compute it. The engine needs it to tell which node a step goes
 * to (its circuit breaker) without asking the server.
 */
export const CLUSTER_SLOTS = 16384;

const TABLE = ((): Uint16Array => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16/XMODEM (polynomial 0x1021, init 0) of the key's UTF-8 bytes. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc;
}

/** The slot of `key`: only the hash tag counts when the key has a non-empty one (`{…}`). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % CLUSTER_SLOTS;
}
