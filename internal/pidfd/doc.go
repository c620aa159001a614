// Package pidfd holds the PIDFD_GET_INFO ioctl (Linux 6.13+) as
// golang.org/x/sys/unix has it since v0.48.0 (PidfdInfo, IoctlPidfdInfo).
// That x/sys requires Go 1.26 in its go.mod, and a dependency's go line
// becomes every importer's minimum; this copy of one struct and one ioctl
// keeps tether's go line lower (issue 12). When the go line reaches 1.26,
// use x/sys's again and delete this package.
package pidfd
