// Package budget applies a run's limits.Spec to the cgroups it is born
// into — the v2 leaf where the controller is available there, else a v1
// leaf beside it on hybrid hosts; on Windows to its Job Object — reads
// the outcome back for the receipt, and checks free space before a run
// (--require-free). Every value is written before anything starts, read
// back, and reported; a limit that cannot be applied is an error wrapping
// limits.ErrUnavailable unless the caller asked for best effort.
package budget
