package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/testservers"
)

// keepLogs copies each service's whole log out of the stack's state
// directory, into a directory named for the test (subtests included).
func TestKeepLogsCopiesEveryServiceLog(t *testing.T) {
	state := t.TempDir()
	st := &localstack.Stack{Services: map[string]*testservers.Process{}}
	for _, name := range []string{"indexer", "queryd"} {
		log := filepath.Join(state, name+".log")
		if err := os.WriteFile(log, []byte(name+" said something\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		st.Services[name] = &testservers.Process{Name: name, LogFile: log}
	}
	root := t.TempDir()
	dir, err := keepLogs(root, "TestX/sub", st)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != root || filepath.Base(dir)[:10] != "TestX_sub-" {
		t.Fatalf("kept in %s, want a TestX_sub-<time> directory under %s", dir, root)
	}
	for _, name := range []string{"indexer", "queryd"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".log"))
		if err != nil || string(b) != name+" said something\n" {
			t.Errorf("%s log kept as %q, %v", name, b, err)
		}
	}
	st.Services["gone"] = &testservers.Process{Name: "gone", LogFile: filepath.Join(state, "missing.log")}
	if _, err := keepLogs(root, "TestY", st); err == nil {
		t.Error("a missing log was not reported")
	}
}
