package e2e

import "testing"

// TestStrataTools exercises Strata's own tools through a real MCP client.
func TestStrataTools(t *testing.T) {
	h := start(t)
	h.put("acme/broken.pdf", "%PDF-1.7 this is not really a PDF")
	h.waitEmbedded(1)
}
