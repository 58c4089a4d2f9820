package testservers

import "testing"

// TestPackagesCountsWhatABuildCompiles: the total a build's progress counts
// towards, from `go list -deps` in the pinned module (downloaded if needed).
func TestPackagesCountsWhatABuildCompiles(t *testing.T) {
	n, err := NATSServer.Packages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// nats-server v2.15 and the standard library it uses: about 200 packages.
	if n < 100 || n > 1000 {
		t.Fatalf("nats-server compiles %d packages", n)
	}
	bad := Binary{Name: "x", Module: NATSServer.Module, Package: NATSServer.Module + "/no/such/pkg", Version: NATSServer.Version}
	if _, err := bad.Packages(t.Context()); err == nil {
		t.Fatal("a package that does not exist must be an error")
	}
}
