// Package sessionctl is what a session's client (package session) and its
// supervisor (internal/supervisor) say to each other through the registry
// and the session's runtime dir, and the control both sides use: the spec
// a client writes and the supervisor runs (Spec), the supervisor's one
// report (ReadyReport), stop requests and the wake-up that makes a
// supervisor read them (StopRequest, Wake), the stop's progress, exec's
// wire, and the stop of many sessions at once (StopMany, StopFamily),
// which a client asks for and a stopping supervisor does to the sessions
// it owns. None of it is API: the client and the supervisor of the same
// tether build speak it.
package sessionctl
