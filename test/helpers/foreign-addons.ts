/**
 * For the Node.js LTS unit run of scripts/test.sh only (NODE_OPTIONS there). node_modules was
 * installed by this machine's Node, which compiled the optional native addons for its own ABI;
 * the LTS build is another major version. Node refuses such an addon only after loading it, and
 * on some systems that load corrupts the heap: on Debian 13 the run ended with "Segmentation
 * fault" (exit 139) after every test had passed. This refuses, before loading, an addon whose
 * node-gyp build says it was compiled for another ABI, with the error Node itself would give. The
 * two in the tree (ssh2's crypto binding and cpu-features, for docker-modem's ssh transport, which
 * DMS never uses) are optional: ssh2 catches the error and uses its JavaScript code.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** The ABI (`process.versions.modules`) a node-gyp addon was built for, from build/config.gypi. */
function builtFor(file: string): string | undefined {
  let dir = dirname(file)
  for (let up = 0; up < 3; up++, dir = dirname(dir)) {
    const gypi = join(dir, 'config.gypi')
    if (existsSync(gypi)) return /"node_module_version": (\d+)/.exec(readFileSync(gypi, 'utf8'))?.[1]
  }
  return undefined
}

const dlopen = process.dlopen.bind(process)
process.dlopen = (...args: Parameters<typeof process.dlopen>): void => {
  const filename = args[1]
  const abi = builtFor(filename)
  if (abi !== undefined && abi !== process.versions.modules)
    throw Object.assign(
      new Error(
        `The module '${filename}' was compiled against a different Node.js version using NODE_MODULE_VERSION ${abi}. This version of Node.js requires NODE_MODULE_VERSION ${process.versions.modules}. (Refused before loading: test/helpers/foreign-addons.ts.)`,
      ),
      { code: 'ERR_DLOPEN_FAILED' },
    )
  dlopen(...args) // as called: an explicit undefined `flags` is refused
}
