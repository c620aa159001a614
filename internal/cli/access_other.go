//go:build !unix

package cli

// dirWritable cannot be checked ahead of time here; writing will tell.
func dirWritable(dir string) bool { return true }
