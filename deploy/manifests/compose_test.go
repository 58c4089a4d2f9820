package manifests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/strata-kb/strata/shared/testservers"
)

// loadCompose loads and schema-validates compose file content offline as
// if it were at path, with an empty environment (so the file's own defaults
// apply).
func loadCompose(path string, content []byte) (*types.Project, error) {
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: content}},
		Environment: types.Mapping{},
	}
	return loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("strata", true)
		o.ResolvePaths = true
	})
}

// checkCompose checks the single-host compose project.
func checkCompose(p *types.Project, root string, flags *flagChecker) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	names := p.ServiceNames()
	sort.Strings(names)
	for _, name := range names {
		s := p.Services[name]
		if !pinned(s.Image) {
			add("service %s: image %q is not pinned to a tag or digest (or is :latest)", name, s.Image)
		}
		svc, isStrata := strataService(s.Image)
		if !isStrata {
			// MinIO is built from its pinned source (servers_test.go); nothing else is.
			if s.Build != nil && !(name == "minio" && s.Build.Dockerfile == "deploy/docker/minio.Dockerfile") {
				add("service %s: only Strata's services and MinIO are built here", name)
			}
			continue
		}
		if svc != name {
			add("service %s: runs the %s image", name, svc)
		}
		if s.Build == nil {
			add("service %s: no build section", name)
		} else {
			ctx, _ := filepath.Abs(s.Build.Context)
			if ctx != root {
				add("service %s: build context %s, want the repository root %s", name, ctx, root)
			}
			df := s.Build.Dockerfile
			if !filepath.IsAbs(df) {
				df = filepath.Join(ctx, df)
			}
			if want := filepath.Join(root, "deploy", "docker", svc+".Dockerfile"); df != want {
				add("service %s: dockerfile %s, want %s", name, df, want)
			} else if _, err := os.Stat(df); err != nil {
				add("service %s: %v", name, err)
			}
		}
		var vars []string
		for k, v := range s.Environment {
			vars = append(vars, k)
			if v == nil {
				add("service %s: %s has no value", name, k)
			}
		}
		if bad := flags.check(svc, vars); len(bad) > 0 {
			add("service %s: %v are not flags of %s", name, bad, svc)
		}
		if s.HealthCheck == nil || len(s.HealthCheck.Test) < 2 || s.HealthCheck.Test[1] != "/usr/local/bin/healthcheck" {
			add("service %s: needs the healthcheck CMD /usr/local/bin/healthcheck", name)
		}
		if !s.ReadOnly {
			add("service %s: read_only root filesystem expected", name)
		}
		if svc != "queryd" {
			if d, ok := s.DependsOn["nats-init"]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
				add("service %s: must wait for nats-init (service_completed_successfully): it exits when its stream is missing", name)
			}
		}
	}
	for _, want := range []string{"nats", "nats-init", "minio", "minio-init", "weaviate", "ingestor", "embedder", "indexer", "queryd"} {
		if _, ok := p.Services[want]; !ok {
			add("service %s is missing", want)
		}
	}
	if s, ok := p.Services["nats-init"]; ok {
		errs = append(errs, checkStreamCommands(strings.Join(s.Command, "\n"), 1)...)
	}
	if s, ok := p.Services["minio"]; ok {
		env := map[string]string{}
		for k, v := range s.Environment {
			if v != nil {
				env[k] = *v
			}
		}
		errs = append(errs, checkMinIONotify(env, func(dir string) bool {
			for _, v := range s.Volumes {
				if v.Target == dir && v.Type == types.VolumeTypeVolume {
					return true
				}
			}
			return false
		})...)
		if env["MINIO_ROOT_USER"] != testservers.LocalS3AccessKey || env["MINIO_ROOT_PASSWORD"] != testservers.LocalS3SecretKey {
			add("minio: the default credentials should be the local stack's (shared/testservers)")
		}
		if d, ok := s.DependsOn["nats-init"]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
			add("minio: must start after nats-init (the stream must exist before events flow)")
		}
	}
	if s, ok := p.Services["minio-init"]; ok {
		errs = append(errs, checkBucketScript(strings.Join(s.Command, "\n"))...)
	}
	return errs
}
