/** Small helpers for option definitions, kept free of imports so that `dms --help` loads little. */

/** `job run`'s default price ceiling (micro-tokens): 1 token, above a devnet provider's ask. */
export const DEFAULT_MAX_PRICE = 1_000_000

/** Commander's reducer for a repeatable option. */
export const collect = (v: string, all: string[] = []): string[] => [...all, v]
