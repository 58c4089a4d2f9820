package schema_test

import (
	"testing"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// writer returns a writer's client of the package's shared weaviate-server,
// stopped when the test ends; it skips the test with -short.
func writer(t *testing.T) *weaviate.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real weaviate-server; skipped with -short")
	}
	st := serverstest.StartShared(t)
	t.Cleanup(serverstest.StopShared)
	wv, err := schema.NewClient(st.WeaviateHost, st.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		t.Fatal(err)
	}
	return wv
}
