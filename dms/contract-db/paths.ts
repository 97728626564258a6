/** Where a contract-db keeps its operator socket in its data dir (a leaf: the CLI imports it cheaply). */
export const CONTRACT_DB_SOCKET = 'contract-db.sock'
