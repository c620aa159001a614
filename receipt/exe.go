package receipt

// Executable identifies a program file: where it was found, which file
// it was (device and inode, on Unix), and a digest of its bytes, so that
// a receipt says what ran, not only what it was called.
type Executable struct {
	// Path is the file: for a main process, the command's program as
	// tether resolved it on PATH.
	Path string `json:"path"`
	// Via says how the file is known to be what ran: "proc", the very
	// file the main process was executing (Linux: /proc/PID/exe is the
	// same device and inode); "path", the file at Path when it was read —
	// a script (the process executes its interpreter), a process that had
	// already exited or exec'd again, or a system that cannot tell; "self",
	// the running program's own file.
	Via    string `json:"via"`
	Device uint64 `json:"device,omitempty"`
	Inode  uint64 `json:"inode,omitempty"`
	Size   int64  `json:"size"`
	// SHA256 is the hex digest of the file's bytes, hashed while the run
	// went on; empty when it was not hashed, SHA256Skipped then says why
	// (over the size bound, unreadable).
	SHA256        string `json:"sha256,omitempty"`
	SHA256Skipped string `json:"sha256_skipped,omitempty"`
}
