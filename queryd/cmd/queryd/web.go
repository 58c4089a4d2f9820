package main

// What browser and OAuth-capable MCP clients need around the endpoint: CORS
// with Origin validation (queryd/cors) and OAuth protected-resource
// metadata with the 401 challenge that names it (queryd/oauthmeta).

import (
	"flag"
	"net/http"
	"strings"

	"github.com/strata-kb/strata/queryd/cors"
	"github.com/strata-kb/strata/queryd/oauthmeta"
	"github.com/strata-kb/strata/shared/config"
)

// webConfig configures the HTTP surface beyond the MCP transport.
type webConfig struct {
	CORSOrigins     string
	CORSAnyWithKeys bool
	PublicURL       string
	OAuthIssuers    string
	ResourcePage    int
}

func (c *webConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.CORSOrigins, "cors-origins", "", "origins of browser clients allowed to call /mcp, comma-separated (https://app.example.com); \"*\" allows any page without keys; empty: none (requests with another Origin get 403)")
	fs.BoolVar(&c.CORSAnyWithKeys, "cors-any-origin-with-keys", false, "with -cors-origins \"*\": also let any page send API keys (any web site could then use a key a visitor's browser holds)")
	fs.StringVar(&c.PublicURL, "public-url", "", "the MCP endpoint's public URL (https://strata.example.com/mcp) named by OAuth metadata; empty: derived from each request")
	fs.StringVar(&c.OAuthIssuers, "oauth-authorization-servers", "", "OAuth issuers named in /.well-known/oauth-protected-resource, comma-separated (empty: API keys only)")
	fs.IntVar(&c.ResourcePage, "resources-page-size", 100, "MCP resources per resources/list answer")
}

func (c *webConfig) validate(p *config.Problems) {
	if _, err := cors.Parse(c.CORSOrigins, c.CORSAnyWithKeys); err != nil {
		p.Addf("cors-origins", "%v", err)
	}
	if err := c.oauth().Validate(); err != nil {
		p.Addf("public-url", "%v", err)
	}
	if c.ResourcePage < 1 || c.ResourcePage > 1000 {
		p.Addf("resources-page-size", "must be 1..1000, got %d", c.ResourcePage)
	}
}

func (c *webConfig) oauth() oauthmeta.Config {
	var issuers []string
	for _, s := range strings.Split(c.OAuthIssuers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			issuers = append(issuers, s)
		}
	}
	return oauthmeta.Config{Resource: c.PublicURL, EndpointPath: "/mcp", AuthorizationServers: issuers}
}

// mount serves the MCP endpoint (authenticated by auth) and the OAuth
// metadata on mux. Origins are checked first, so a page that may not call
// learns nothing, not even whether its key is valid.
func (c *webConfig) mount(mux *http.ServeMux, mcp http.Handler, auth func(http.Handler) http.Handler) {
	policy, _ := cors.Parse(c.CORSOrigins, c.CORSAnyWithKeys) // validated
	meta := c.oauth()
	meta.Register(mux)
	mux.Handle("/mcp", policy.Middleware(meta.Challenge(auth(mcp))))
}
