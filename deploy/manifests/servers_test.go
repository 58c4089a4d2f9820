package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/strata-kb/strata/shared/testservers"
)

// minioImage is the image deploy/docker/minio.Dockerfile builds of the pin.
var minioImage = "strata/minio:" + testservers.MinIO.Version

// serverImageError says how image drifts from the server versions `go tool
// task up` and the tests run (shared/testservers), or nil. Images of other
// software are not its business.
func serverImageError(image string) error {
	repo, tag, _ := strings.Cut(image, ":")
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo, tag = image[:i], image[i+1:]
	}
	want := ""
	switch repo {
	case "nats", "docker.io/library/nats":
		want = strings.TrimPrefix(testservers.NATSServer.Version, "v")
		if tag == want || strings.HasPrefix(tag, want+"-") { // 2.15.2-alpine
			return nil
		}
	case "semitechnologies/weaviate", "cr.weaviate.io/semitechnologies/weaviate":
		want = strings.TrimPrefix(testservers.Weaviate.Version, "v")
	case "strata/minio":
		want = testservers.MinIO.Version
	case "minio/minio", "quay.io/minio/minio":
		return fmt.Errorf("image %s: MinIO publishes no image of the pinned source build %s; use %s (deploy/docker/minio.Dockerfile)",
			image, testservers.MinIO.Version, minioImage)
	default:
		return nil
	}
	if tag != want {
		return fmt.Errorf("image %s: shared/testservers pins %s, so want tag %s", image, repo, want)
	}
	return nil
}

// checkMinIODockerfile: the Dockerfile's default MINIO_VERSION is the pin
// and the build installs exactly that.
func checkMinIODockerfile(content []byte) []error {
	stages, err := parseDockerfile("minio.Dockerfile", content)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if want := "ARG MINIO_VERSION=" + testservers.MinIO.Version; !strings.Contains(string(content), "\n"+want+"\n") {
		errs = append(errs, fmt.Errorf("minio.Dockerfile: want %q (shared/testservers.MinIO)", want))
	}
	installs := false
	for _, s := range stages {
		for _, r := range s.instr("run") {
			if strings.Contains(r, "go install") && strings.Contains(r, testservers.MinIO.Package+"@${MINIO_VERSION}") {
				installs = true
			}
		}
	}
	if !installs {
		errs = append(errs, fmt.Errorf("minio.Dockerfile: no stage runs go install %s@${MINIO_VERSION}", testservers.MinIO.Package))
	}
	if last := stages[len(stages)-1]; len(last.instr("user")) == 0 || strings.HasPrefix(last.instr("user")[0], "0") {
		errs = append(errs, fmt.Errorf("minio.Dockerfile: the final stage must run as a non-root USER"))
	}
	return errs
}

// TestServerVersionsMatchThePins: compose, Kubernetes and the MinIO image
// run the servers at the versions `up` and the tests run.
func TestServerVersionsMatchThePins(t *testing.T) {
	root := repoRoot(t)
	path, content := composePath(t)
	p, err := loadCompose(path, content)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for name, s := range p.Services {
		if err := serverImageError(s.Image); err != nil {
			t.Errorf("compose service %s: %v", name, err)
		}
		seen[strings.Split(s.Image, ":")[0]] = true
	}
	for _, repo := range []string{"nats", "strata/minio", "semitechnologies/weaviate"} {
		if !seen[repo] {
			t.Errorf("compose runs no %s image", repo)
		}
	}
	if s, ok := p.Services["minio"]; !ok || s.Build == nil || s.Build.Args["MINIO_VERSION"] == nil || *s.Build.Args["MINIO_VERSION"] != testservers.MinIO.Version {
		t.Errorf("compose service minio: build arg MINIO_VERSION must be %s", testservers.MinIO.Version)
	}
	objs, err := build(filesys.MakeFsOnDisk(), filepath.Join(root, "deploy", "k8s", "base"))
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]bool{}
	for _, w := range workloads(objs) {
		for _, c := range append(w.Pod.InitContainers, w.Pod.Containers...) {
			images[c.Image] = true
			if err := serverImageError(c.Image); err != nil {
				t.Errorf("%s %s container %s: %v", w.Kind, w.Name, c.Name, err)
			}
		}
	}
	if !images[minioImage] {
		t.Errorf("deploy/k8s runs no %s", minioImage)
	}
	df, err := os.ReadFile(filepath.Join(root, "deploy", "docker", "minio.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkMinIODockerfile(df) {
		t.Error(err)
	}
}

// TestServerVersionCheckCatchesDrift: each way the versions drift apart is caught.
func TestServerVersionCheckCatchesDrift(t *testing.T) {
	for _, image := range []string{"nats:2.15.1-alpine", "nats:2.15.20", "semitechnologies/weaviate:1.35.1",
		"quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z", "strata/minio:v0.0.0-20250101000000-000000000000"} {
		if serverImageError(image) == nil {
			t.Errorf("%s passed", image)
		}
	}
	for _, image := range []string{"nats:" + strings.TrimPrefix(testservers.NATSServer.Version, "v") + "-alpine", minioImage,
		"semitechnologies/weaviate:" + strings.TrimPrefix(testservers.Weaviate.Version, "v"), "natsio/nats-box:0.19.7-nonroot", "strata/queryd:0.1.0"} {
		if err := serverImageError(image); err != nil {
			t.Errorf("%s: %v", image, err)
		}
	}
	df, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "docker", "minio.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mutate := range []func(string) string{
		func(s string) string {
			return strings.Replace(s, "ARG MINIO_VERSION="+testservers.MinIO.Version, "ARG MINIO_VERSION=v0.0.1", 1)
		},
		func(s string) string { return strings.Replace(s, "@${MINIO_VERSION}", "@latest", 1) },
		func(s string) string { return strings.Replace(s, "USER 65532:65532", "USER 0", 1) },
	} {
		if errs := checkMinIODockerfile([]byte(mutate(string(df)))); len(errs) == 0 {
			t.Errorf("a drifted Dockerfile passed:\n%s", mutate(string(df)))
		}
	}
}
