// Command healthcheck is the HEALTHCHECK of Strata's container images: the
// runtime images (distroless, or Debian slim without curl) have no HTTP
// client, so this static binary asks the service's own readiness endpoint.
//
//	healthcheck                 GET http://127.0.0.1:<port>/readyz
//	healthcheck /healthz        another path on the same port
//	healthcheck http://host/x   an explicit URL
//
// The port comes from STRATA_HTTP_ADDR (ingestor, embedder, indexer) or
// STRATA_ADDR (queryd), the variables the services listen on, so the check
// follows the service when its address is changed. It exits 0 on a 2xx
// answer and 1 otherwise.
//
// It uses only the standard library and is built on its own in the image
// (see deploy/docker/*.Dockerfile), outside the deploy module's dependencies.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url, err := target(os.Args[1:], os.Getenv)
	if err == nil {
		err = check(url, 3*time.Second)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
		os.Exit(1)
	}
}

// target returns the URL to ask, from the arguments and the environment.
func target(args []string, getenv func(string) string) (string, error) {
	path := "/readyz"
	if len(args) > 0 {
		if strings.HasPrefix(args[0], "http://") || strings.HasPrefix(args[0], "https://") {
			return args[0], nil
		}
		path = args[0]
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
	}
	addr := getenv("STRATA_HTTP_ADDR")
	if addr == "" {
		addr = getenv("STRATA_ADDR")
	}
	if addr == "" {
		return "", fmt.Errorf("neither STRATA_HTTP_ADDR nor STRATA_ADDR is set; pass a URL")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// check asks url once and accepts any 2xx answer.
func check(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
