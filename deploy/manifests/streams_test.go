package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

// shellWords splits one shell line into words, honouring single and double
// quotes (enough for the set-up scripts here, which use no expansions).
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// natsCommand is one `nats stream add`, `nats kv add` or `nats object add`
// found in a script.
type natsCommand struct {
	what  string // "stream", "kv" or "object"
	name  string
	flags map[string][]string
}

// natsAdds finds every `nats stream add NAME ...` and `nats kv add NAME ...`
// in script, wherever it sits on a line (after `||`, for instance).
func natsAdds(script string) []natsCommand {
	var out []natsCommand
	for _, line := range strings.Split(script, "\n") {
		w := shellWords(line)
		for i := 0; i+3 < len(w); i++ {
			if w[i] != "nats" || w[i+2] != "add" || (w[i+1] != "stream" && w[i+1] != "kv" && w[i+1] != "object") {
				continue
			}
			c := natsCommand{what: w[i+1], name: w[i+3], flags: map[string][]string{}}
			for j := i + 4; j < len(w); j++ {
				a := w[j]
				if a == "||" || a == "&&" || a == ";" {
					break
				}
				if !strings.HasPrefix(a, "--") {
					continue
				}
				name, val, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !ok {
					if j+1 < len(w) && !strings.HasPrefix(w[j+1], "--") {
						val = w[j+1]
						j++
					}
				}
				c.flags[name] = append(c.flags[name], val)
			}
			out = append(out, c)
		}
	}
	return out
}

// natsDuration parses the nats CLI's durations, which add d (days).
func natsDuration(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		return time.Duration(n) * 24 * time.Hour, err
	}
	return time.ParseDuration(s)
}

// checkStreamCommands checks that script creates exactly the streams of
// shared/pipeline.StreamConfigs(replicas), with their subjects, storage,
// retention, duplicate window and age, and that every KV bucket it creates
// has the same replica count.
func checkStreamCommands(script string, replicas int) []error {
	var errs []error
	got := map[string]natsCommand{}
	objects := map[string]natsCommand{}
	for _, c := range natsAdds(script) {
		if c.what == "object" {
			objects[c.name] = c
			continue
		}
		if c.what == "kv" {
			if r := c.flags["replicas"]; len(r) != 1 || r[0] != strconv.Itoa(replicas) {
				errs = append(errs, fmt.Errorf("kv %s: --replicas %v, want %d", c.name, r, replicas))
			}
			continue
		}
		got[c.name] = c
	}
	want := pipeline.StreamConfigs(replicas)
	for _, cfg := range want {
		c, ok := got[cfg.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("stream %s (shared/pipeline) is not created", cfg.Name))
			continue
		}
		delete(got, cfg.Name)
		subj := slices.Clone(c.flags["subjects"])
		wantSubj := slices.Clone(cfg.Subjects)
		sort.Strings(subj)
		sort.Strings(wantSubj)
		if !slices.Equal(subj, wantSubj) {
			errs = append(errs, fmt.Errorf("stream %s: subjects %v, want %v", cfg.Name, subj, wantSubj))
		}
		one := func(flag string) string {
			if v := c.flags[flag]; len(v) == 1 {
				return v[0]
			}
			return ""
		}
		if r := one("replicas"); r != strconv.Itoa(cfg.Replicas) {
			errs = append(errs, fmt.Errorf("stream %s: --replicas %q, want %d", cfg.Name, r, cfg.Replicas))
		}
		wantStorage := map[jetstream.StorageType]string{jetstream.FileStorage: "file", jetstream.MemoryStorage: "memory"}[cfg.Storage]
		if s := one("storage"); s != wantStorage {
			errs = append(errs, fmt.Errorf("stream %s: --storage %q, want %q", cfg.Name, s, wantStorage))
		}
		wantRetention := map[jetstream.RetentionPolicy]string{jetstream.LimitsPolicy: "limits", jetstream.InterestPolicy: "interest", jetstream.WorkQueuePolicy: "work"}[cfg.Retention]
		if r := one("retention"); r != wantRetention {
			errs = append(errs, fmt.Errorf("stream %s: --retention %q, want %q", cfg.Name, r, wantRetention))
		}
		for flag, want := range map[string]time.Duration{"dupe-window": cfg.Duplicates, "max-age": cfg.MaxAge} {
			if d, err := natsDuration(one(flag)); err != nil || d != want {
				errs = append(errs, fmt.Errorf("stream %s: --%s %q, want %v", cfg.Name, flag, one(flag), want))
			}
		}
		if _, ok := c.flags["defaults"]; !ok {
			errs = append(errs, fmt.Errorf("stream %s: without --defaults the nats CLI prompts (no terminal in a Job)", cfg.Name))
		}
	}
	for name := range got {
		errs = append(errs, fmt.Errorf("stream %s is created but is not one of shared/pipeline's", name))
	}
	// The object store of bodies sent by reference, as EnsureStreams makes it.
	bodies := pipeline.BodiesConfig(replicas)
	c, ok := objects[bodies.Bucket]
	switch {
	case !ok:
		errs = append(errs, fmt.Errorf("object store %s (shared/pipeline.BodiesConfig) is not created: a message over the message limit could not be sent", bodies.Bucket))
	case len(c.flags["storage"]) != 1 || c.flags["storage"][0] != "file":
		errs = append(errs, fmt.Errorf("object store %s: --storage %v, want file", bodies.Bucket, c.flags["storage"]))
	case len(c.flags["replicas"]) != 1 || c.flags["replicas"][0] != strconv.Itoa(bodies.Replicas):
		errs = append(errs, fmt.Errorf("object store %s: --replicas %v, want %d", bodies.Bucket, c.flags["replicas"], bodies.Replicas))
	default:
		if ttl := c.flags["ttl"]; len(ttl) != 1 {
			errs = append(errs, fmt.Errorf("object store %s: --ttl %v, want %v (the streams' age)", bodies.Bucket, ttl, bodies.TTL))
		} else if d, err := natsDuration(ttl[0]); err != nil || d != bodies.TTL {
			errs = append(errs, fmt.Errorf("object store %s: --ttl %q, want %v (the streams' age)", bodies.Bucket, ttl[0], bodies.TTL))
		}
	}
	return errs
}
