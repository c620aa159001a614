//go:build !unix

package cli

// survivePipes does nothing: this system raises no SIGPIPE.
func survivePipes() {}
