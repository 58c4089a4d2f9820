package config

import (
	"net"
	"strings"
)

// WeaviateHostUsage is the help text of every service's -weaviate-host.
const WeaviateHostUsage = "Weaviate HTTP host:port; the nodes of one cluster comma-separated: reads are hedged and retried across them and an unreachable node is skipped, so losing any one node is survived"

// ValidateWeaviateHosts records a -weaviate-host value that is not one or
// more host:port, comma-separated.
func ValidateWeaviateHosts(p *Problems, flagName, value string) {
	n := 0
	for _, h := range strings.Split(value, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		n++
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			p.Addf(flagName, "want host:port, several comma-separated; %q is not", h)
		}
	}
	if n == 0 {
		p.Addf(flagName, "required")
	}
}
