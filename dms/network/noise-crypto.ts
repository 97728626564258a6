/**
 * The cipher suite of the noise handshake and transport, all of it through node:crypto (OpenSSL).
 *
 * Noise's default sends frames under 1 200 bytes through a WebAssembly ChaCha20-Poly1305
 * (@chainsafe/as-chacha20poly1305), faster for small frames (about 10 µs against 25 µs for an
 * encrypt and a decrypt of 100 bytes, on a loaded 2-core machine), and larger ones through
 * node:crypto. The WebAssembly modules (that one and @chainsafe/as-sha256) cost a node 1.2-1.5 MB
 * of RSS as soon as they load. With this suite they are never called, and the bundled CLI
 * (scripts/build-cli.ts) replaces them with stand-ins that fail if called, so they do not load
 * (specs/benchmarks.md, "Idle memory"). The bytes on the wire are the same: a peer with noise's
 * default suite talks to this one (test/integration/network/noise-crypto.spec.ts).
 */
import type { ICryptoInterface } from '@chainsafe/libp2p-noise'
import { defaultCrypto, nodeCrypto } from '@chainsafe/libp2p-noise/crypto'

export const noiseCrypto: ICryptoInterface = {
  ...defaultCrypto,
  chaCha20Poly1305Encrypt: nodeCrypto.chaCha20Poly1305Encrypt,
  chaCha20Poly1305Decrypt: nodeCrypto.chaCha20Poly1305Decrypt,
}
