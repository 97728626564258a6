/**
 * A deterministic tar (POSIX ustar) of regular files, for output archives: the same files always
 * give the same bytes (sorted paths, mode 0644, uid/gid 0, mtime 0), so the archive's sha256 is a
 * fingerprint of the outputs. Paths longer than ustar allows use a PAX `path` record.
 *
 * `readTar` parses such an archive back, strictly: it refuses anything but regular files (and
 * PAX path records), absolute paths and `..` components, so an archive from a hostile provider
 * cannot write outside where it is unpacked.
 */

const BLOCK = 512

export interface TarFile {
  path: string
  content: Uint8Array
}

export class TarFormatError extends Error {
  override name = 'TarFormatError'
  readonly code = 'BAD_ARCHIVE'
  constructor(detail: string) {
    super(`bad output archive: ${detail}`)
  }
}

/** Builds the archive. `files` need not be sorted; duplicate paths are refused. */
export function writeTar(files: TarFile[]): Buffer {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const parts: Buffer[] = []
  let previous: string | undefined
  for (const f of sorted) {
    checkRelativePath(f.path)
    if (f.path === previous) throw new TarFormatError(`duplicate path ${f.path}`)
    previous = f.path
    const name = Buffer.from(f.path, 'utf8')
    if (name.length > 100) {
      const record = paxRecord('path', f.path)
      parts.push(header('././@PaxHeader', record.length, 'x'), padded(record))
    }
    parts.push(
      header(name.length > 100 ? name.subarray(0, 100).toString('latin1') : f.path, f.content.length, '0'),
    )
    parts.push(padded(Buffer.from(f.content.buffer, f.content.byteOffset, f.content.length)))
  }
  parts.push(Buffer.alloc(BLOCK * 2))
  return Buffer.concat(parts)
}

/** Parses an archive made by `writeTar` (or any ustar of regular files). */
export function readTar(archive: Uint8Array): TarFile[] {
  const buf = Buffer.from(archive.buffer, archive.byteOffset, archive.length)
  const files: TarFile[] = []
  let offset = 0
  let paxPath: string | undefined
  while (offset + BLOCK <= buf.length) {
    const h = buf.subarray(offset, offset + BLOCK)
    if (h.every((b) => b === 0)) return files
    if (checksum(h) !== octal(h, 148, 8))
      throw new TarFormatError(`header checksum mismatch at byte ${offset}`)
    const size = octal(h, 124, 12)
    const type = String.fromCharCode(h[156] ?? 0)
    const start = offset + BLOCK
    const end = start + size
    if (end > buf.length) throw new TarFormatError(`entry at byte ${offset} runs past the end`)
    const body = buf.subarray(start, end)
    offset = start + Math.ceil(size / BLOCK) * BLOCK
    if (type === 'x') {
      paxPath = parsePax(body).path
      continue
    }
    if (type !== '0' && type !== '\0')
      throw new TarFormatError(`entry type ${JSON.stringify(type)} is not a file`)
    const prefix = cString(h, 345, 155)
    const path = paxPath ?? (prefix !== '' ? `${prefix}/${cString(h, 0, 100)}` : cString(h, 0, 100))
    paxPath = undefined
    checkRelativePath(path)
    files.push({ path, content: body })
  }
  throw new TarFormatError('no end-of-archive marker')
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

function header(name: string, size: number, type: '0' | 'x'): Buffer {
  const h = Buffer.alloc(BLOCK)
  h.write(name, 0, 100, type === 'x' ? 'latin1' : 'utf8')
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

function checksum(h: Buffer): number {
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0)
  return sum
}

function padded(data: Buffer): Buffer {
  const rest = data.length % BLOCK
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(BLOCK - rest)])
}

/** A PAX record `"<len> <key>=<value>\n"`, where len counts the whole record. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`
  const bodyLen = Buffer.byteLength(body)
  let len = bodyLen + 1
  while (String(len).length + bodyLen !== len) len = String(len).length + bodyLen
  return Buffer.from(`${len}${body}`, 'utf8')
}

function parsePax(body: Buffer): Record<string, string> {
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
