'use strict';
// CRC16-CCITT (XMODEM), as Redis Cluster computes key slots (cluster.c keyHashSlot).

const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let c = i << 8;
  for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
  TABLE[i] = c;
}

function crc16(buf) {
  let crc = 0;
  for (let i = 0; i < buf.length; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ buf[i]) & 0xff];
  return crc;
}

// The slot of a key: only the part between the first '{' and the next '}' is
// hashed when that part is non-empty (the hash tag), else the whole key.
function keySlot(key) {
  const buf = Buffer.isBuffer(key) ? key : Buffer.from(String(key), 'utf8');
  const open = buf.indexOf(0x7b); // '{'
  if (open >= 0) {
    const close = buf.indexOf(0x7d, open + 1); // '}'
    if (close > open + 1) return crc16(buf.subarray(open + 1, close)) & 16383;
  }
  return crc16(buf) & 16383;
}

module.exports = { crc16, keySlot };
