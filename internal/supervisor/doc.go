// Package supervisor is a session's supervisor: the small process, started
// by session.Client.Start with Args' command line and entered through Main
// (session.MaybeSupervise), that owns one session's containment (a
// contain.Cmd) from its spec to its receipt. It captures the command's
// output to the session's log, serves `tether exec`, turns stop requests
// and its owner's death into the stop protocol, and keeps the session's
// record in the registry so that a supervisor killed at any point leaves
// something `tether reap` can act on.
package supervisor
