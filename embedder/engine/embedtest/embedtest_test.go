package embedtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const secret = "sk-SECRET-42"

// fake is a provider for the suite's own tests: a unit vector from a hash
// of each text. broken names the way it breaks the contract ("" for none).
type fake struct {
	broken string
	fail   bool          // every Embed fails
	delay  time.Duration // per text
}

const dims = 6

func (f fake) Model() string   { return "fake-model" }
func (f fake) Dimensions() int { return dims }

func (f fake) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		if f.broken == "empty batch is an error" {
			return nil, errors.New("no texts")
		}
		return [][]float32{}, nil
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		if err := ctx.Err(); err != nil && f.broken != "ignores the context" {
			return nil, fmt.Errorf("fake: %w", err)
		}
		time.Sleep(f.delay)
		v := make([]float32, dims)
		for d := range v {
			h := fnv.New32a()
			fmt.Fprintf(h, "%d %s", d, s)
			v[d] = float32(h.Sum32()%1000) - 500
		}
		switch {
		case f.broken == "batch changes vectors":
			v[0] += float32(len(texts))
		case f.broken == "same vector for all":
			v = []float32{1, 2, 3, 4, 5, 6}
		case f.broken == "wrong dimensions for long texts" && len(s) > 500:
			v = v[:dims-1]
		case f.broken == "NaN for the empty text" && s == "":
			v[0] = float32(math.NaN())
		case f.broken == "fails on long texts" && len(s) > 500:
			return nil, errors.New("too long")
		}
		if f.broken != "not normalised" {
			n := float32(norm(v))
			for d := range v {
				v[d] /= n
			}
		}
		out[i] = v
	}
	if f.broken == "scrambles the order" && len(out) > 3 {
		out[0], out[1] = out[1], out[0]
	}
	if f.fail {
		err := errors.New("server said no")
		switch f.broken {
		case "error with vectors":
			return out, err
		case "shows the secret":
			return nil, fmt.Errorf("%w (key %s)", err, secret)
		}
		return nil, err
	}
	return out, nil
}

func fakeHarness(broken string) Harness {
	return Harness{
		Provider:   fake{broken: broken},
		Texts:      []string{"hello", "world", "search engines"},
		Normalized: true,
		Exact:      true,
		Slow: func() (Provider, []string) {
			return fake{broken: broken, delay: 10 * time.Millisecond}, make([]string, 700)
		},
		Failures: []Failure{{Name: "no", Provider: fake{broken: broken, fail: true}, Contains: "said no"}},
		Secret:   secret,
	}
}

func TestRunConformance(t *testing.T) {
	RunConformance(t, fakeHarness(""))
}

// TestBrokenHelper runs the suite on a broken provider, in the child
// process TestSuiteFailsBrokenProviders starts.
func TestBrokenHelper(t *testing.T) {
	broken := os.Getenv("EMBEDTEST_BROKEN")
	if broken == "" {
		t.Skip("run by TestSuiteFailsBrokenProviders")
	}
	h := fakeHarness(broken)
	if known := os.Getenv("EMBEDTEST_KNOWN"); known != "" {
		h.Known = map[string]string{}
		for _, name := range strings.Split(known, ",") {
			h.Known[name] = "a known gap"
		}
	}
	RunConformance(t, h)
}

func child(t *testing.T, env ...string) ([]byte, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenHelper$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// TestSuiteFailsBrokenProviders: each way of breaking the contract fails
// the subtest that checks it (in a child process).
func TestSuiteFailsBrokenProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for broken, subtest := range map[string]string{
		"not normalised":                  "normalised",
		"batch changes vectors":           "batch equals one by one",
		"scrambles the order":             "order",
		"same vector for all":             "texts told apart",
		"wrong dimensions for long texts": "vectors",
		"NaN for the empty text":          "vectors",
		"empty batch is an error":         "empty batch",
		"fails on long texts":             "long text",
		"ignores the context":             "cancelled midway",
		"error with vectors":              "errors",
		"shows the secret":                "errors",
	} {
		t.Run(broken, func(t *testing.T) {
			out, err := child(t, "EMBEDTEST_BROKEN="+broken)
			if err == nil {
				t.Fatalf("the suite passed a provider whose %s:\n%s", broken, out)
			}
			want := "--- FAIL: TestBrokenHelper/" + strings.ReplaceAll(subtest, " ", "_") + " "
			if !bytes.Contains(out, []byte(want)) {
				t.Fatalf("no %q in:\n%s", want, out)
			}
		})
	}
}

// TestKnownGapsAreSkipped: checks listed in Known are skipped, with their
// reason, and the suite passes a provider whose only gaps they are.
func TestKnownGapsAreSkipped(t *testing.T) {
	out, err := child(t, "EMBEDTEST_BROKEN=not normalised", "EMBEDTEST_KNOWN=normalised")
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, want := range []string{"--- SKIP: TestBrokenHelper/normalised", "known gap: a known gap"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
