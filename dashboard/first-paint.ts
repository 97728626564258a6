/**
 * The server's summary of the node (specs/dashboard.md, "First paint") stays on screen until the
 * page's view has its data: a browser shows something useful from its first paint (a screenshot
 * taken at load, a slow machine), and never goes back to "Loading…" once it has.
 */
import { useEffect } from 'preact/hooks'

let first: HTMLElement | null = null
let app: HTMLElement | null = null

/** Hides the page's view behind the server's summary, if the page came with one; true if so. */
export function holdFirstPaint(view: HTMLElement): boolean {
  first = document.getElementById('first-paint')
  if (first === null || first.childElementCount === 0) return false
  app = view
  app.hidden = true
  return true
}

/** The view has its data (or an error to show): it takes the summary's place. */
export function painted(): void {
  first?.remove()
  first = null
  if (app !== null) app.hidden = false
}

/** `painted()` once `ready` (a view's data or error has come). */
export function usePainted(ready: boolean): void {
  useEffect(() => {
    if (ready) painted()
  }, [ready])
}
