// Preloaded (`node --import`) into the cache-tests client by `scripts/cache-tests.sh --h2`: Node
// 20's fetch is undici, which speaks HTTP/2 over TLS when its Agent has `allowH2` (ALPN offers
// h2, then http/1.1). Node does not export undici's Agent, so its class is taken from the global
// dispatcher that the first fetch creates, and a new one with `allowH2` replaces it, before the
// suite's own code runs. The CA comes from NODE_EXTRA_CA_CERTS, as for HTTP/1.1 over TLS.
const key = Symbol.for('undici.globalDispatcher.1')
await fetch('http://127.0.0.1:1/').catch(() => {})
const Agent = globalThis[key]?.constructor
if (!Agent) throw new Error('cache-tests-h2: no undici global dispatcher to take the Agent class from')
globalThis[key] = new Agent({ allowH2: true })
