/** Loads a view's data, and loads it again on each event it names (never on a timer). */
import { useEffect, useState } from 'preact/hooks'
import { subscribe, type Events } from './api.js'

export function useLive<T>(
  load: () => Promise<T>,
  on: Array<keyof Events>,
): { data?: T; error?: string; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string }>({})
  const [reload, setReload] = useState<() => void>(() => () => {})
  useEffect(() => {
    let live = true
    // One load at a time: events that come during a load cause one more load after it.
    let running = false
    let again = false
    const run = () => {
      if (running) {
        again = true
        return
      }
      running = true
      load()
        .then((data) => live && setState({ data }))
        .catch((e: Error) => live && setState((s) => ({ ...s, error: e.message })))
        .finally(() => {
          running = false
          if (again && live) {
            again = false
            run()
          }
        })
    }
    run()
    setReload(() => run)
    const off = subscribe(Object.fromEntries(on.map((k) => [k, run])))
    return () => {
      live = false
      off()
    }
  }, [])
  return { ...state, reload }
}

/**
 * Runs `fn(key)` for each key triggered, one run per key at a time: triggers during a run cause
 * one more run after it, not one each (a burst of events is one or two fetches, never a storm).
 */
export function perKey(fn: (key: string) => Promise<unknown>): (key: string) => void {
  const running = new Set<string>()
  const again = new Set<string>()
  const run = (key: string): void => {
    if (running.has(key)) {
      again.add(key)
      return
    }
    running.add(key)
    void fn(key)
      .catch(() => undefined)
      .finally(() => {
        running.delete(key)
        if (again.delete(key)) run(key)
      })
  }
  return run
}
