/**
 * Container image references: the one grammar the requester's API, the provider and the executor
 * all check (specs/job-spec.md, "Image references"). It is the grammar of the Docker
 * distribution project's `reference` package:
 *
 *     reference   := name [ ":" tag ] [ "@" digest ]
 *     name        := [ domain "/" ] path-component { "/" path-component }     (at most 255 chars)
 *     domain      := host [ ":" port ]      host: DNS labels joined by "." or "[" IPv6 "]"
 *     path-component := [a-z0-9]+ { separator [a-z0-9]+ }     separator := "." | "_" | "__" | "-"+
 *     tag         := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
 *     digest      := algorithm ":" hex      (sha256: 64, sha384: 96, sha512: 128 lowercase hex)
 *
 * The first component is the registry's domain when it holds a "." or ":", is `localhost`, or has
 * an upper-case letter (Docker's rule); otherwise the image is Docker Hub's (`docker.io`).
 *
 * Why it matters: the engine's API puts the reference in its URL (`GET /images/<ref>/json`). A
 * string with `..`, `//` or `/./` makes the engine answer with a redirect; anything the grammar
 * allows is a plain path with none of them.
 */
import { DmsError } from '../../actors/errors.js'

/** Longest reference accepted, all parts together. */
export const IMAGE_REF_MAX_LENGTH = 512
/** Longest name (registry and path, without tag and digest), as in distribution/reference. */
export const IMAGE_NAME_MAX_LENGTH = 255
/** The registry of references that name none. */
export const DEFAULT_REGISTRY = 'docker.io'

/** A reference split into its parts. */
export interface ImageRef {
  /** The registry, `docker.io` when the reference names none. */
  registry: string
  /** The repository path in that registry, e.g. `library/busybox`. */
  path: string
  tag?: string
  /** `algorithm:hex`. */
  digest?: string
  /**
   * The fully qualified form (`docker.io/library/busybox:latest`, `registry.example/app@sha256:…`):
   * two references that name the same image have the same `canonical`.
   */
  canonical: string
}

/** A string that is not an image reference; `problem` says which part is wrong. */
export class InvalidImageRefError extends DmsError {
  constructor(
    readonly ref: string,
    readonly problem: string,
  ) {
    super('INVALID_IMAGE_REF', `invalid image reference ${JSON.stringify(ref.slice(0, 80))}: ${problem}`)
  }
}

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const DOMAIN_LABEL = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/
const IPV6_HOST = /^\[[a-fA-F0-9:]+\]$/
const PORT = /^[0-9]{1,5}$/
const TAG = /^[\w][\w.-]{0,127}$/
const DIGEST_HEX: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 }

const FORM = 'expected [registry[:port]/]name[:tag][@sha256:<64 hex>], e.g. busybox:1.36'

/** Whether `first` (the text before the first "/") is a registry domain, by Docker's rule. */
const isDomain = (first: string) =>
  first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase()

function domainProblem(domain: string): string | undefined {
  const colon = domain.startsWith('[') ? domain.indexOf(']:') + 1 : domain.lastIndexOf(':')
  const host = colon > 0 ? domain.slice(0, colon) : domain
  const port = colon > 0 ? domain.slice(colon + 1) : undefined
  if (port !== undefined && (!PORT.test(port) || Number(port) > 65535))
    return `registry port ${JSON.stringify(port)} is not a port number`
  if (IPV6_HOST.test(host)) return undefined
  if (!host.split('.').every((label) => DOMAIN_LABEL.test(label)))
    return `registry ${JSON.stringify(host)} is not a host name`
  return undefined
}

function pathProblem(path: string): string | undefined {
  for (const c of path.split('/')) {
    if (c === '') return 'empty path component (no "//", and no "/" at either end)'
    if (PATH_COMPONENT.test(c)) continue
    if (c !== c.toLowerCase()) return `repository name must be lowercase: ${JSON.stringify(c)}`
    return `path component ${JSON.stringify(c.slice(0, 64))} must be letters a-z and digits, joined by single "." or "_", "__", or dashes`
  }
  return undefined
}

/**
 * Parses and checks a reference.
 * @throws InvalidImageRefError naming the part at fault.
 */
export function parseImageRef(input: string): ImageRef {
  const fail = (problem: string): never => {
    throw new InvalidImageRefError(input, problem)
  }
  if (input.length === 0) fail(`is empty; ${FORM}`)
  if (input.length > IMAGE_REF_MAX_LENGTH) fail(`longer than ${IMAGE_REF_MAX_LENGTH} characters`)
  let rest = input
  let digest: string | undefined
  const at = rest.indexOf('@')
  if (at >= 0) {
    digest = rest.slice(at + 1)
    rest = rest.slice(0, at)
    const [algorithm, hex, extra] = digest.split(':')
    const length = DIGEST_HEX[algorithm]
    if (hex === undefined || extra !== undefined)
      fail(`digest ${JSON.stringify(digest)} is not algorithm:hex`)
    if (length === undefined)
      fail(`digest algorithm ${JSON.stringify(algorithm)} is not sha256, sha384 or sha512`)
    if (!new RegExp(`^[a-f0-9]{${length}}$`).test(hex))
      fail(`${algorithm} digest must be ${length} lowercase hex`)
  }
  let tag: string | undefined
  const colon = rest.lastIndexOf(':')
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1)
    rest = rest.slice(0, colon)
    if (!TAG.test(tag))
      fail(
        `tag ${JSON.stringify(tag.slice(0, 64))} must be 1-128 of A-Z a-z 0-9 _ . - (not starting with . or -)`,
      )
  }
  const name = rest
  if (name.length === 0) fail(`has no name; ${FORM}`)
  if (name.length > IMAGE_NAME_MAX_LENGTH) fail(`name longer than ${IMAGE_NAME_MAX_LENGTH} characters`)
  const slash = name.indexOf('/')
  const first = slash < 0 ? name : name.slice(0, slash)
  let registry = DEFAULT_REGISTRY
  let path = name
  if (slash > 0 && isDomain(first)) {
    const problem = domainProblem(first)
    if (problem !== undefined) fail(problem)
    registry = first === 'index.docker.io' ? DEFAULT_REGISTRY : first
    path = name.slice(slash + 1)
  }
  const problem = pathProblem(path)
  if (problem !== undefined) fail(problem)
  if (registry === DEFAULT_REGISTRY && !path.includes('/')) path = `library/${path}`
  const canonical = `${registry}/${path}${digest === undefined ? `:${tag ?? 'latest'}` : `@${digest}`}`
  return {
    registry,
    path,
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
    canonical,
  }
}

/** Why `input` is not an image reference, or undefined when it is one. */
export function imageRefProblem(input: unknown): string | undefined {
  if (typeof input !== 'string') return 'must be a string'
  try {
    parseImageRef(input)
    return undefined
  } catch (err) {
    if (err instanceof InvalidImageRefError) return err.problem
    throw err
  }
}
