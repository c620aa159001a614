//go:build go1.26

// A main module's go line also picks its binary's GODEBUG defaults, and
// go.mod's is the oldest Go that builds tether (issue 12): at 1.24 the
// tether binary would size GOMAXPROCS without regard to its cgroup's CPU
// limit (containermaxprocs, Go 1.25), among others. Built with Go 1.26 or
// later it keeps Go 1.26's defaults, as when the go line said 1.26.8.
// go.mod's godebug directive cannot say this: a toolchain older than the
// version it names refuses the whole module. The build constraint keeps
// older toolchains from reading the directive at all.
//go:debug default=go1.26

package main
