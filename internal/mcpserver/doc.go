// Package mcpserver is `tether mcp`: tether as tools an agent calls over
// the Model Context Protocol (stdio), built on the official Go SDK.
//
// Every tool returns within a bounded time (MaxCall, or less when the
// call asks) and bounded output (MaxOutput bytes of text, the tail kept
// and what was dropped said). Sessions started through the server belong
// to it — their owner is the server's process — so that when its client
// goes away (stdin closed, the server killed) they are stopped by their
// supervisors, with receipts; a session started with keep has no owner
// and lives until it ends, its ttl, or a stop. A command run with `run`
// is a session too: a run that outlives the call goes on as one the
// agent can poll (status, logs, wait) and stop.
//
// Errors an agent can act on are tool results (isError, with the reason
// and what to do), never a failed server.
package mcpserver
