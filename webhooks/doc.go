// Package webhooks is the webhooks module: it tells a game's own backend
// what happened (a new #1, a settled tournament, a board made or
// deleted) by POSTing signed JSON events to endpoints that admins
// register.
//
// Events are written to an outbox in the same transaction as the change
// that caused them (the module is an engine.EventSink and PartMaker), so
// an acknowledged change always has its event and a rolled-back one never
// does; each event's id is derived from what caused it, equal on every
// node, and stored once. A worker, off the write path and on one node at
// a time under a lease, delivers them at least once, in event order per
// endpoint, signed as Standard Webhooks says (sign.go), to destinations
// that pass the SSRF guard at dial time (guard.go), retrying with
// exponential backoff and jitter for up to a day (backoff.go).
package webhooks
