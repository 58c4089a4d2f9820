package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func joinErrs(errs []error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return b.String()
}

// TestKubernetesManifests builds every kustomization (base and overlays)
// from disk and checks the invariants.
func TestKubernetesManifests(t *testing.T) {
	root := repoRoot(t)
	flags := newFlagChecker(t)
	for _, dir := range []string{"deploy/k8s/base", "deploy/k8s/overlays/local"} {
		t.Run(dir, func(t *testing.T) {
			objs, err := build(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) < 20 {
				t.Fatalf("only %d objects built", len(objs))
			}
			if errs := checkCluster(objs, flags); len(errs) > 0 {
				t.Errorf("%d problems:%s", len(errs), joinErrs(errs))
			}
		})
	}
}

// TestBaseIsHighlyAvailable checks what only the clustered base promises:
// two or more replicas of every Strata service, all in namespace strata.
func TestBaseIsHighlyAvailable(t *testing.T) {
	objs, err := build(filesys.MakeFsOnDisk(), filepath.Join(repoRoot(t), "deploy/k8s/base"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all[*autoscalingv2.HorizontalPodAutoscaler](objs) {
		if *h.Spec.MinReplicas < 2 {
			t.Errorf("HorizontalPodAutoscaler %s: minReplicas %d, want 2 or more", h.Name, *h.Spec.MinReplicas)
		}
	}
	q, ok := find[*appsv1.Deployment](objs, "queryd")
	if !ok || q.Spec.Replicas == nil || *q.Spec.Replicas < 2 {
		t.Error("Deployment queryd: want 2 or more replicas")
	}
	for name, want := range map[string]int32{"nats": 3, "minio": 4, "weaviate": 3} {
		st, ok := find[*appsv1.StatefulSet](objs, name)
		if !ok || st.Spec.Replicas == nil || *st.Spec.Replicas != want {
			t.Errorf("StatefulSet %s: want %d replicas", name, want)
		}
	}
	for _, o := range objs {
		if o.Kind == "Namespace" {
			continue
		}
		if ns := o.Obj.(interface{ GetNamespace() string }).GetNamespace(); ns != "strata" {
			t.Errorf("%s %s: namespace %q, want strata (the DNS names in nats.conf, MinIO and Weaviate assume it)", o.Kind, o.Name, ns)
		}
	}
}

// inMemoryK8s copies deploy/k8s into an in-memory file system, so a test
// can break one manifest without touching the repository.
func inMemoryK8s(t *testing.T) filesys.FileSystem {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	src := filepath.Join(repoRoot(t), "deploy", "k8s")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return mem.WriteFile(filepath.Join("/k8s", rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// removeBlock deletes the YAML key line matching header (with its exact
// indentation) and everything indented below it.
func removeBlock(text, header string) string {
	lines := strings.Split(text, "\n")
	var out []string
	indent := len(header) - len(strings.TrimLeft(header, " "))
	skipping := false
	for _, l := range lines {
		if skipping {
			trimmed := strings.TrimLeft(l, " ")
			if trimmed == "" || len(l)-len(trimmed) > indent {
				continue
			}
			skipping = false
		}
		if l == header {
			skipping = true
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestCheckerCatchesBrokenManifests breaks the manifests one way at a time,
// in memory, and expects the checks to say so: they are only worth running
// if removing a probe or a PodDisruptionBudget makes them fail.
func TestCheckerCatchesBrokenManifests(t *testing.T) {
	flags := newFlagChecker(t)
	tests := []struct {
		name, file string
		mutate     func(string) string
		want       string // regexp matched against the errors
	}{
		{"missing readiness probe", "ingestor.yaml",
			func(s string) string { return removeBlock(s, "          readinessProbe:") },
			`Deployment ingestor container ingestor: readinessProbe is required`},
		{"missing liveness probe on a StatefulSet", "nats.yaml",
			func(s string) string { return removeBlock(s, "          livenessProbe:") },
			`StatefulSet nats container nats: livenessProbe is required`},
		{"misspelled field", "embedder.yaml",
			func(s string) string { return strings.Replace(s, "livenessProbe:", "livenesProbe:", 1) },
			`unknown field "spec.template.spec.containers\[0\].livenesProbe"`},
		{"field in the wrong case", "queryd.yaml",
			func(s string) string { return strings.Replace(s, "readinessProbe:", "ReadinessProbe:", 1) },
			`ReadinessProbe`},
		{"missing PodDisruptionBudget", "indexer.yaml",
			func(s string) string {
				i := strings.Index(s, "apiVersion: policy/v1")
				j := strings.Index(s[i:], "\n---\n")
				return s[:i] + s[i+j+len("\n---\n"):]
			},
			`Deployment indexer: want exactly one PodDisruptionBudget selecting it, got \[\]`},
		{"PodDisruptionBudget selecting nothing", "weaviate.yaml",
			func(s string) string {
				i := strings.LastIndex(s, "app.kubernetes.io/name: weaviate")
				return s[:i] + "app.kubernetes.io/name: weaviat" + s[i+len("app.kubernetes.io/name: weaviate"):]
			},
			`StatefulSet weaviate: want exactly one PodDisruptionBudget`},
		{"runs as root", "queryd.yaml",
			func(s string) string { return strings.Replace(s, "runAsNonRoot: true", "runAsNonRoot: false", 1) },
			`Deployment queryd: pod securityContext.runAsNonRoot must be true`},
		{"no resource requests", "weaviate.yaml",
			func(s string) string { return removeBlock(s, "            requests:") },
			`StatefulSet weaviate container weaviate: resources.requests needs cpu and memory`},
		{"two NATS servers", "nats.yaml",
			func(s string) string { return strings.Replace(s, "replicas: 3", "replicas: 2", 1) },
			`StatefulSet nats: want 3 replicas`},
		{"stream with one replica", "nats-streams.yaml",
			func(s string) string {
				return strings.Replace(s, "nats stream add CHUNKS --subjects 'strata.chunks.>' --storage file --retention limits --discard old --replicas 3",
					"nats stream add CHUNKS --subjects 'strata.chunks.>' --storage file --retention limits --discard old --replicas 1", 1)
			},
			`stream CHUNKS: --replicas "1", want 3`},
		{"stream missing", "nats-streams.yaml",
			func(s string) string {
				return removeBlock(s, strings.Split(s[strings.Index(s, "              nats stream info DEADLETTER"):], "\n")[0])
			},
			`stream DEADLETTER \(shared/pipeline\) is not created`},
		{"variable that is no flag", "ingestor.yaml",
			func(s string) string { return strings.Replace(s, "STRATA_ASSETS_BUCKET", "STRATA_ASSET_BUCKET", 1) },
			`\[STRATA_ASSET_BUCKET\] are not flags of ingestor`},
		{"probe on the wrong port", "indexer.yaml",
			func(s string) string { return strings.Replace(s, "value: 0.0.0.0:8083", "value: 0.0.0.0:9999", 1) },
			`probe /readyz on port 8083, but the service listens on 9999`},
		{"unpinned image", "embedder.yaml",
			func(s string) string {
				return strings.Replace(s, "natsio/nats-box:0.19.7-nonroot", "natsio/nats-box:latest", 1)
			},
			`image "natsio/nats-box:latest" is not pinned`},
		{"missing secret key", "queryd.yaml",
			func(s string) string { return strings.Replace(s, "key: cursor-secret", "key: cursor-secrets", 1) },
			`Secret strata-credentials-\w+ has no key cursor-secrets`},
		{"unknown kind", "queryd.yaml",
			func(s string) string {
				return s + "\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: queryd\nspec: {}\n"
			},
			`networking.k8s.io/v1/Ingress queryd: kind not allowed here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := inMemoryK8s(t)
			path := filepath.Join("/k8s/base", tt.file)
			b, err := mem.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			broken := tt.mutate(string(b))
			if broken == string(b) {
				t.Fatal("the mutation changed nothing")
			}
			if err := mem.WriteFile(path, []byte(broken)); err != nil {
				t.Fatal(err)
			}
			objs, err := build(mem, "/k8s/base")
			var errs []error
			if err != nil {
				errs = append(errs, err)
			} else {
				errs = checkCluster(objs, flags)
			}
			if len(errs) == 0 {
				t.Fatalf("no problem found, want %q", tt.want)
			}
			if !regexp.MustCompile(tt.want).MatchString(joinErrs(errs)) {
				t.Errorf("want a problem matching %q, got:%s", tt.want, joinErrs(errs))
			}
		})
	}
	// And the unbroken copy passes, so the failures above are the mutations'.
	objs, err := build(inMemoryK8s(t), "/k8s/base")
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkCluster(objs, flags); len(errs) > 0 {
		t.Errorf("unmodified in-memory copy:%s", joinErrs(errs))
	}
}

func composePath(t *testing.T) (string, []byte) {
	path := filepath.Join(repoRoot(t), "deploy", "compose", "compose.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

func TestComposeFile(t *testing.T) {
	path, content := composePath(t)
	p, err := loadCompose(path, content)
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkCompose(p, repoRoot(t), newFlagChecker(t)); len(errs) > 0 {
		t.Errorf("%d problems:%s", len(errs), joinErrs(errs))
	}
}

func TestComposeCheckerCatchesBrokenFiles(t *testing.T) {
	path, content := composePath(t)
	flags := newFlagChecker(t)
	tests := []struct {
		name    string
		mutate  func(string) string
		want    string
		loadErr bool
	}{
		{"latest tag", func(s string) string { return strings.Replace(s, "nats:2.15.2-alpine", "nats:latest", 1) }, `service nats: image "nats:latest" is not pinned`, false},
		{"no tag", func(s string) string {
			return strings.Replace(s, "semitechnologies/weaviate:1.35.2", "semitechnologies/weaviate", 1)
		}, `service weaviate: image "semitechnologies/weaviate" is not pinned`, false},
		{"variable that is no flag", func(s string) string {
			return strings.Replace(s, "STRATA_WEAVIATE_GRPC", "STRATA_WEAVIATE_GRPC_HOST", 1)
		}, `not flags of indexer`, false},
		{"missing Dockerfile", func(s string) string {
			return strings.Replace(s, "dockerfile: deploy/docker/queryd.Dockerfile", "dockerfile: deploy/docker/queryd.dockerfile", 1)
		}, `service queryd: dockerfile`, false},
		{"no health check", func(s string) string {
			i := strings.Index(s, "  embedder:")
			return s[:i] + removeBlock(s[i:], "    healthcheck:")
		}, `service embedder: needs the healthcheck`, false},
		{"stream replicas", func(s string) string { return strings.Replace(s, "--replicas 1", "--replicas 3", 1) }, `stream OBJECTS: --replicas "3", want 1`, false},
		{"notification subject", func(s string) string {
			return strings.Replace(s, "MINIO_NOTIFY_NATS_SUBJECT_strata: strata.objects.events", "MINIO_NOTIFY_NATS_SUBJECT_strata: strata.objects", 1)
		}, `MINIO_NOTIFY_NATS_SUBJECT_strata="strata.objects"`, false},
		{"schema violation", func(s string) string {
			return strings.Replace(s, "    image: nats:2.15.2-alpine\n", "    image: nats:2.15.2-alpine\n    readonly: true\n", 1)
		}, `readonly`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			broken := tt.mutate(string(content))
			if broken == string(content) {
				t.Fatal("the mutation changed nothing")
			}
			p, err := loadCompose(path, []byte(broken))
			var msg string
			switch {
			case err != nil && tt.loadErr:
				msg = err.Error()
			case err != nil:
				t.Fatalf("load: %v", err)
			case tt.loadErr:
				t.Fatal("the broken file loaded")
			default:
				errs := checkCompose(p, repoRoot(t), flags)
				msg = joinErrs(errs)
			}
			if !regexp.MustCompile(tt.want).MatchString(msg) {
				t.Errorf("want a problem matching %q, got: %s", tt.want, msg)
			}
		})
	}
}

func goWorkVersion(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.work has no go directive")
	}
	return string(m[1])
}

func readDockerfile(t *testing.T, service string) (name string, content, ignore []byte) {
	dir := filepath.Join(repoRoot(t), "deploy", "docker")
	name = service + ".Dockerfile"
	content, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	ignore, err = os.ReadFile(filepath.Join(dir, name+".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	return name, content, ignore
}

func TestDockerfiles(t *testing.T) {
	root, gover, flags := repoRoot(t), goWorkVersion(t), newFlagChecker(t)
	for _, s := range services {
		t.Run(s, func(t *testing.T) {
			name, content, ignore := readDockerfile(t, s)
			if errs := checkDockerfile(name, content, ignore, root, s, gover, flags); len(errs) > 0 {
				t.Errorf("%d problems:%s", len(errs), joinErrs(errs))
			}
		})
	}
}

func TestDockerfileCheckerCatchesBrokenFiles(t *testing.T) {
	root, gover, flags := repoRoot(t), goWorkVersion(t), newFlagChecker(t)
	tests := []struct {
		service, name string
		mutate        func(string) string
		want          string
	}{
		{"indexer", "root user", func(s string) string { return strings.Replace(s, "USER 65532:65532", "USER 0", 1) }, `USER 0: want a numeric non-root uid`},
		{"indexer", "no user", func(s string) string { return strings.Replace(s, "USER 65532:65532\n", "", 1) }, `the final stage sets no USER`},
		{"ingestor", "unpinned base", func(s string) string { return strings.Replace(s, "FROM debian:12.13-slim", "FROM debian", 1) }, `base image "debian" is not pinned`},
		{"queryd", "single stage", func(s string) string { return s[strings.LastIndex(s, "FROM "):] }, `want a multi-stage build`},
		{"embedder", "workspace build", func(s string) string { return strings.Replace(s, "GOWORK=off ", "", 1) }, `GOWORK=off`},
		{"embedder", "model unchecked", func(s string) string { return strings.Replace(s, "sha256sum -c", "true", 1) }, `model stage lacks "sha256sum -c"`},
		{"ingestor", "no poppler", func(s string) string { return strings.Replace(s, "poppler-utils ", "", 1) }, `needs poppler-utils`},
		{"queryd", "wrong Go", func(s string) string {
			return strings.Replace(s, "golang:"+gover+"-bookworm", "golang:1.22-bookworm", 1)
		}, `does not match go.work`},
		{"indexer", "file outside the context", func(s string) string {
			return strings.Replace(s, "COPY shared/ shared/", "COPY shared/ shared/\nCOPY go.work go.work", 1)
		}, `COPY go.work: not in the build context`},
		{"indexer", "JSON v1", func(s string) string { return strings.Replace(s, " GOEXPERIMENT=jsonv2", "", 1) }, `GOEXPERIMENT=""`},
		{"embedder", "variable that is no flag", func(s string) string { return strings.Replace(s, "STRATA_LOG_FORMAT=json", "STRATA_LOG_FMT=json", 1) }, `\[STRATA_LOG_FMT\] are not flags of embedder`},
	}
	for _, tt := range tests {
		t.Run(tt.service+"/"+tt.name, func(t *testing.T) {
			name, content, ignore := readDockerfile(t, tt.service)
			broken := tt.mutate(string(content))
			if broken == string(content) {
				t.Fatal("the mutation changed nothing")
			}
			errs := checkDockerfile(name, []byte(broken), ignore, root, tt.service, gover, flags)
			if !regexp.MustCompile(tt.want).MatchString(joinErrs(errs)) {
				t.Errorf("want a problem matching %q, got:%s", tt.want, joinErrs(errs))
			}
		})
	}
}
