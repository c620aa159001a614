package contain

// PID is the member's process id.
func (m *Member) PID() int { return m.token.PID }

// Token is the member's identity as receipts write it: boot id, pid and
// start time ("linux:BOOT:PID:START"), what `tether exec --json` reports.
func (m *Member) Token() string { return m.token.String() }
