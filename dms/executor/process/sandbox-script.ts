/**
 * The two POSIX shell scripts the process engine runs (specs/executor.md, "The process engine"),
 * and the argv that joins them. Every value reaches them as an argument, never spliced into the
 * script text, so nothing a job names is ever parsed by a shell.
 *
 * - The runner (detached, its own session, outside the allocation's cgroup) writes its pid,
 *   captures stdout and stderr through FIFOs into files capped at `maxLogBytes` (the rest is read
 *   and dropped, so the workload never blocks on a full pipe; `dd`, not `head`, as it writes each
 *   read at once where head buffers, and the engine follows the files live), starts the sandbox in the cgroup
 *   and writes the exit code. It outlives the provider that started it.
 * - The init runs as pid 1 of the new pid namespace, in fresh mount, network, ipc and uts
 *   namespaces: builds the root from read-only binds on a tmpfs, pivots into it, makes it read-only,
 *   and execs the command through `setpriv` as the workload's user with no capabilities and no
 *   new privileges, in an environment of only what the job gave.
 */

/** Runner: `$1` run folder, `$2` max log bytes, then `n cgroup-dir...`, then the sandbox's argv. */
export const RUNNER = `set -u
d=$1; max=$2; shift 2
echo $$ > "$d/pid.tmp" && mv "$d/pid.tmp" "$d/pid"
mkfifo "$d/out.fifo" "$d/err.fifo"
cap() { dd iflag=count_bytes count="$max" bs=65536 status=none > "$1"; cat > /dev/null; }
cap "$d/stdout" < "$d/out.fifo" &
cap "$d/stderr" < "$d/err.fifo" &
sh -c 'n=$1; shift
while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n - 1)); done
exec "$@"' join "$@" > "$d/out.fifo" 2> "$d/err.fifo" < /dev/null
code=$?
wait
rm -f "$d/out.fifo" "$d/err.fifo"
echo "$code" > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
`

/**
 * Init: `$1` the empty folder the root is built on, `$2` uid, `$3` gid, `$4` host /outputs, `$5`
 * host /inputs or `-`, `$6` working directory, `$7` the cgroup's CPU quota file, `$8` its value,
 * then the host paths bound read-only, `--`, the device nodes bound into `/dev` by their names
 * (the GPUs'), `--`, then `NAME=value`... and the command (for `env -i`).
 */
export const INIT = `set -u
fail() { echo "dms sandbox: $*" >&2; exit 126; }
R=$1; uid=$2; gid=$3; outputs=$4; inputs=$5; workdir=$6; cpufile=$7; cpu=$8; shift 8
mount --make-rprivate / || fail "cannot make the mounts private"
mount -t tmpfs -o size=1m,mode=755 dms-root "$R" || fail "cannot mount the root"
robind() {
  mount --bind "$1" "$2" && mount -o remount,bind,ro,nosuid,nodev "$2" || fail "cannot bind $1"
}
while [ "$1" != -- ]; do
  b=$1; shift
  if [ -L "$b" ]; then
    mkdir -p "$R\${b%/*}" && ln -s "$(readlink "$b")" "$R$b" || fail "cannot link $b"
  elif [ -d "$b" ]; then
    mkdir -p "$R$b" && robind "$b" "$R$b"
  elif [ -f "$b" ]; then
    mkdir -p "$R\${b%/*}" && touch "$R$b" && robind "$b" "$R$b"
  fi
done
shift
mkdir -p "$R/outputs" "$R/inputs" "$R/tmp" "$R/proc" "$R/dev" "$R/.old" || fail "cannot make the root"
mount --bind "$outputs" "$R/outputs" && mount -o remount,bind,nosuid,nodev "$R/outputs" || fail "cannot bind /outputs"
if [ "$inputs" != - ]; then robind "$inputs" "$R/inputs"; fi
mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev dms-tmp "$R/tmp" || fail "cannot mount /tmp"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc" || fail "cannot mount /proc"
mount -t tmpfs -o size=64k,mode=755,nosuid,noexec dms-dev "$R/dev" || fail "cannot mount /dev"
for n in null zero full random urandom; do
  touch "$R/dev/$n" && mount --bind "/dev/$n" "$R/dev/$n" || fail "cannot bind /dev/$n"
done
while [ "$1" != -- ]; do
  n=\${1##*/}
  touch "$R/dev/$n" && mount --bind "$1" "$R/dev/$n" && mount -o remount,bind,nosuid,noexec "$R/dev/$n" || fail "cannot bind $1"
  shift
done
shift
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
echo "$cpu" > "$cpufile" || fail "cannot limit the CPU"
cd "$R" && pivot_root . .old || fail "cannot pivot into the root"
umount -l /.old && rmdir /.old || fail "cannot leave the host's root"
mount -o remount,bind,ro,nosuid,nodev / || fail "cannot make the root read-only"
cd "$workdir" || fail "no working directory $workdir"
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs \\
  --inh-caps=-all --bounding-set=-all -- env -i "$@"
`

export interface SandboxArgv {
  runDir: string
  maxLogBytes: number
  cgroupDirs: string[]
  /** Empty folder the root is mounted on (only inside the sandbox's mount namespace). */
  rootDir: string
  uid: number
  gid: number
  outputsDir: string
  inputsDir?: string
  workdir: string
  /** The CPU quota, written once the root is built (`Cgroup.cpuLimit`). */
  cpuLimit: { file: string; value: string }
  /** Host paths bound read-only at the same place. */
  binds: string[]
  /** Host device nodes bound read-write into the sandbox's `/dev` under their own names. @default none */
  devices?: string[]
  env: Record<string, string>
  command: string[]
}

/** The argv of `/bin/sh` that runs the runner, which runs the sandbox. */
export function sandboxArgv(a: SandboxArgv): string[] {
  return [
    '-c',
    RUNNER,
    'dms-runner',
    a.runDir,
    String(a.maxLogBytes),
    String(a.cgroupDirs.length),
    ...a.cgroupDirs,
    'unshare',
    '--pid',
    '--fork',
    '--kill-child',
    '--mount',
    '--net',
    '--ipc',
    '--uts',
    '--',
    '/bin/sh',
    '-c',
    INIT,
    'dms-init',
    a.rootDir,
    String(a.uid),
    String(a.gid),
    a.outputsDir,
    a.inputsDir ?? '-',
    a.workdir,
    a.cpuLimit.file,
    a.cpuLimit.value,
    ...a.binds,
    '--',
    ...(a.devices ?? []),
    '--',
    ...Object.entries(a.env).map(([k, v]) => `${k}=${v}`),
    ...a.command,
  ]
}
