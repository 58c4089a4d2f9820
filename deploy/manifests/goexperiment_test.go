package manifests

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/strata-kb/strata/deploy/localstack"
)

// TestTaskfileGoExperiment: tests and benchmarks run on the JSON
// implementation the services are built with.
func TestTaskfileGoExperiment(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Env map[string]string `yaml:"env"`
	}
	if err := yaml.Unmarshal(b, &tf); err != nil {
		t.Fatalf("parse Taskfile.yml: %v", err)
	}
	if got := tf.Env["GOEXPERIMENT"]; got != localstack.GoExperiment {
		t.Errorf("Taskfile.yml env GOEXPERIMENT = %q, want %q (deploy/localstack.GoExperiment)", got, localstack.GoExperiment)
	}
}
