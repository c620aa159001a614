// Command goexec is the smallest Go program that runs a command and passes
// its exit code on: the floor any Go wrapper pays before doing real work.
// BenchmarkStartToExit builds it to separate Go's own start-up cost from
// tether's.
package main

import (
	"os"
	"os/exec"
)

func main() {
	c := exec.Command(os.Args[1], os.Args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		os.Exit(c.ProcessState.ExitCode())
	}
}
