//go:build linux || windows || darwin

package session

import (
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Receipt reads the receipt rec names, through the registry's checks (a
// FIFO, link or another user's file in its place is refused, not
// followed or waited on).
func (c *Client) Receipt(rec *registry.Record) (*receipt.Receipt, error) {
	return sessionctl.ReadReceipt(c.reg, rec)
}
