/**
 * The output archive's format: a deterministic tar (POSIX ustar) of regular files. The same files
 * always give the same bytes (sorted paths, mode 0644, uid/gid 0, mtime 0), so the archive's sha256
 * is a fingerprint of the outputs. Paths longer than ustar allows use a PAX `path` record.
 *
 * Archives are written and read as files, never whole in memory: `tar-writer.ts` streams files
 * into one, `tar-reader.ts` walks one's headers. This file holds the header encoding and the
 * checks both share. Reading is strict: anything but regular files (and PAX path records),
 * absolute paths and `..` components are refused, so an archive from a hostile provider cannot
 * write outside where it is unpacked.
 */
import { DmsError } from '../../actors/errors.js'

export const BLOCK = 512

/** The end-of-archive marker: two zero blocks. */
export const END_OF_ARCHIVE = Buffer.alloc(BLOCK * 2)

/** Largest PAX extended header read; a path record is far smaller (PATH_MAX is 4096). */
export const MAX_PAX_BYTES = 64 * 1024

export class TarFormatError extends DmsError {
  constructor(detail: string) {
    super('BAD_ARCHIVE', `bad output archive: ${detail}`)
  }
}

/** Relative, forward slashes, no empty, `.` or `..` components; throws TarFormatError otherwise. */
export function checkRelativePath(path: string): void {
  if (path === '' || path.startsWith('/') || path.includes('\0')) {
    throw new TarFormatError(`unsafe path ${JSON.stringify(path)}`)
  }
  for (const part of path.split('/')) {
    if (part === '' || part === '.' || part === '..')
      throw new TarFormatError(`unsafe path ${JSON.stringify(path)}`)
  }
}

/** Zero bytes after a body of `size` bytes, up to the next block. */
export function paddingOf(size: number): number {
  const rest = size % BLOCK
  return rest === 0 ? 0 : BLOCK - rest
}

/** The header block(s) of one regular file: a PAX `path` record first when the path needs it. */
export function fileHeader(path: string, size: number): Buffer {
  checkRelativePath(path)
  const name = Buffer.from(path, 'utf8')
  if (name.length <= 100) return header(path, size, '0')
  const record = paxRecord('path', path)
  return Buffer.concat([
    header('././@PaxHeader', record.length, 'x'),
    record,
    Buffer.alloc(paddingOf(record.length)),
    header(name.subarray(0, 100).toString('latin1'), size, '0', 'latin1'),
  ])
}

/**
 * The exact size of the archive of `files` (the writer's output is deterministic): each file's
 * header block(s), its body and padding, then the end marker. Throws TarFormatError on an unsafe
 * path, so a manifest can be judged before a byte of its archive is fetched.
 */
export function archiveSizeOf(files: ReadonlyArray<{ path: string; size: number }>): number {
  let total = END_OF_ARCHIVE.length
  for (const f of files) total += fileHeader(f.path, f.size).length + f.size + paddingOf(f.size)
  return total
}

function header(name: string, size: number, type: '0' | 'x', encoding: 'utf8' | 'latin1' = 'utf8'): Buffer {
  const h = Buffer.alloc(BLOCK)
  h.write(name, 0, 100, type === 'x' ? 'latin1' : encoding)
  h.write('0000644\0', 100, 'ascii') // mode
  h.write('0000000\0', 108, 'ascii') // uid
  h.write('0000000\0', 116, 'ascii') // gid
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii')
  h.write('00000000000\0', 136, 'ascii') // mtime
  h.write('        ', 148, 'ascii') // checksum placeholder
  h.write(type, 156, 'ascii')
  h.write('ustar\0' + '00', 257, 'ascii')
  h.write(`${checksum(h).toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
  return h
}

/** What one header block says. `end` is the end-of-archive marker (a zero block). */
export type ParsedHeader = { end: true } | { end: false; type: 'file' | 'pax'; size: number; path: string }

/** Parses one header block, refusing a bad checksum and any entry type but a file or a PAX record. */
export function parseHeader(h: Buffer, at: number): ParsedHeader {
  if (h.every((b) => b === 0)) return { end: true }
  if (checksum(h) !== octal(h, 148, 8)) throw new TarFormatError(`header checksum mismatch at byte ${at}`)
  const size = octal(h, 124, 12)
  const type = String.fromCharCode(h[156] ?? 0)
  if (type === 'x') return { end: false, type: 'pax', size, path: '' }
  if (type !== '0' && type !== '\0')
    throw new TarFormatError(`entry type ${JSON.stringify(type)} is not a file`)
  const prefix = cString(h, 345, 155)
  const name = cString(h, 0, 100)
  return { end: false, type: 'file', size, path: prefix !== '' ? `${prefix}/${name}` : name }
}

function checksum(h: Buffer): number {
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0)
  return sum
}

/** A PAX record `"<len> <key>=<value>\n"`, where len counts the whole record. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`
  const bodyLen = Buffer.byteLength(body)
  let len = bodyLen + 1
  while (String(len).length + bodyLen !== len) len = String(len).length + bodyLen
  return Buffer.from(`${len}${body}`, 'utf8')
}

/** The records of a PAX extended header. */
export function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {}
  let i = 0
  while (i < body.length) {
    const space = body.indexOf(0x20, i)
    const len = Number(body.subarray(i, space).toString('ascii'))
    if (space < 0 || !Number.isSafeInteger(len) || len <= 0 || i + len > body.length) {
      throw new TarFormatError('bad PAX record')
    }
    const record = body.subarray(space + 1, i + len - 1).toString('utf8')
    const eq = record.indexOf('=')
    if (eq < 0) throw new TarFormatError('bad PAX record')
    out[record.slice(0, eq)] = record.slice(eq + 1)
    i += len
  }
  return out
}

function octal(h: Buffer, at: number, len: number): number {
  const text = cString(h, at, len).trim()
  if (!/^[0-7]*$/.test(text)) throw new TarFormatError('bad number in header')
  return text === '' ? 0 : parseInt(text, 8)
}

function cString(h: Buffer, at: number, len: number): string {
  const field = h.subarray(at, at + len)
  const nul = field.indexOf(0)
  return field.subarray(0, nul < 0 ? len : nul).toString('utf8')
}
