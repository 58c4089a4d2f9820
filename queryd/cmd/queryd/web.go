package main

// What browser and OAuth-capable MCP clients need around the endpoint: CORS
// with Origin validation (queryd/cors), OAuth protected-resource metadata
// with the 401 challenge that names it (queryd/oauthmeta), and optionally an
// issuer's JWT access tokens besides API keys (queryd/oauthjwt).

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/strata-kb/strata/queryd/cors"
	"github.com/strata-kb/strata/queryd/oauthjwt"
	"github.com/strata-kb/strata/queryd/oauthmeta"
	"github.com/strata-kb/strata/shared/config"
)

// webConfig configures the HTTP surface beyond the MCP transport.
type webConfig struct {
	CORSOrigins     string
	CORSAnyWithKeys bool
	PublicURL       string
	OAuthIssuer     string
	OAuthJWKS       string
	OAuthClaim      string
	OAuthGroups     string
	ResourcePage    int
}

func (c *webConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.CORSOrigins, "cors-origins", "", "origins of browser clients allowed to call queryd, comma-separated (https://app.example.com); \"*\" allows any page without keys; empty: none besides loopback origins when -addr is loopback (requests with another Origin get 403 on every endpoint)")
	fs.BoolVar(&c.CORSAnyWithKeys, "cors-any-origin-with-keys", false, "with -cors-origins \"*\": also let any page send API keys (any web site could then use a key a visitor's browser holds)")
	fs.StringVar(&c.PublicURL, "public-url", "", "the MCP endpoint's public URL (https://strata.example.com/mcp) named by OAuth metadata; empty: derived from each request")
	fs.StringVar(&c.OAuthIssuer, "oauth-issuer", "", "OAuth issuer whose JWT access tokens are accepted besides API keys, named in /.well-known/oauth-protected-resource (empty: API keys only); needs -public-url, the tokens' audience")
	fs.StringVar(&c.OAuthJWKS, "oauth-jwks-url", "", "the issuer's JWKS (empty: its jwks_uri from /.well-known/oauth-authorization-server or openid-configuration)")
	fs.StringVar(&c.OAuthClaim, "oauth-projects-claim", "strata_projects", "token claim listing the projects it may read (array, or space- or comma-separated; \"*\" = all)")
	fs.StringVar(&c.OAuthGroups, "oauth-groups-claim", "strata_groups", "token claim listing the groups it reads its projects with (array, or space- or comma-separated; \"*\" = every document); a token without it reads only documents without groups, one with an invalid group name is refused")
	fs.IntVar(&c.ResourcePage, "resources-page-size", 100, "MCP resources per resources/list answer")
}

func (c *webConfig) validate(p *config.Problems) {
	if _, err := cors.Parse(c.CORSOrigins, c.CORSAnyWithKeys); err != nil {
		p.Addf("cors-origins", "%v", err)
	}
	if err := c.oauth().Validate(); err != nil {
		p.Addf("public-url", "%v", err)
	}
	if c.OAuthIssuer != "" && c.PublicURL == "" {
		p.Addf("public-url", "required with -oauth-issuer: tokens must be issued for this endpoint (their aud)")
	}
	if c.ResourcePage < 1 || c.ResourcePage > 1000 {
		p.Addf("resources-page-size", "must be 1..1000, got %d", c.ResourcePage)
	}
}

func (c *webConfig) oauth() oauthmeta.Config {
	var issuers []string
	if c.OAuthIssuer != "" {
		issuers = []string{c.OAuthIssuer}
	}
	return oauthmeta.Config{Resource: c.PublicURL, EndpointPath: "/mcp", AuthorizationServers: issuers}
}

// authenticator is API keys, and with -oauth-issuer also the issuer's JWTs.
func (c *webConfig) authenticator(ctx context.Context, keys func(http.Handler) http.Handler) (func(http.Handler) http.Handler, error) {
	if c.OAuthIssuer == "" {
		return keys, nil
	}
	v, err := oauthjwt.New(ctx, oauthjwt.Config{Issuer: c.OAuthIssuer, JWKSURL: c.OAuthJWKS, Audience: c.PublicURL,
		ProjectsClaim: c.OAuthClaim, GroupsClaim: c.OAuthGroups, Leeway: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("oauth issuer %s (-oauth-issuer): %w", c.OAuthIssuer, err)
	}
	return v.Authenticate(keys), nil
}

// mount serves the MCP endpoint (authenticated by auth) and the OAuth
// metadata on mux. Origins are checked around the whole mux (guard).
func (c *webConfig) mount(mux *http.ServeMux, mcp http.Handler, auth func(http.Handler) http.Handler) {
	meta := c.oauth()
	meta.Register(mux)
	mux.Handle("/mcp", meta.Challenge(auth(mcp)))
}

// guard validates the Origin of every request to every endpoint (MCP,
// metadata, metrics, health, profiles) before anything else runs, so a page
// that may not call learns nothing, not even whether its key is valid: the
// origins of -cors-origins, and loopback origins when queryd listens on
// loopback (addr).
func (c *webConfig) guard(h http.Handler, addr string) http.Handler {
	policy, _ := cors.Parse(c.CORSOrigins, c.CORSAnyWithKeys) // validated
	return policy.AllowLoopback(addr).Middleware(h)
}
