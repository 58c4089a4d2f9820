// Package embedtest is the conformance suite every embedding provider runs,
// in the style of go-cloud's drivertest: a provider's tests describe it in
// a Harness and call RunConformance, which holds it to the contract of
// engine.Provider and what the pipeline relies on:
//
//   - Model and Dimensions are stable; every text, whatever it holds
//     (empty, white space, control characters, invalid UTF-8, scripts and
//     emoji, longer than the model reads), gets one vector of exactly
//     Dimensions finite numbers, in the order of the texts;
//   - vectors have unit length when the provider promises it;
//   - a batch gives each text the vector it gets alone, in any order, from
//     any number of goroutines, every time; an empty batch is no error;
//   - a text over the provider's input limit is cut or refused as the
//     harness says;
//   - failures are errors (the provider's own, e.g. HTTP 500 or bad JSON
//     for a server), with no vectors and no secret in the message;
//   - a cancelled or expired context, before or during the work, returns
//     promptly with an error that wraps ctx.Err().
//
// It imports nothing of Strata's, so the provider packages, which
// embedder/engine imports, can use it.
package embedtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Provider is engine.Provider, restated: engine imports the providers.
type Provider interface {
	Model() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Harness describes a provider to the suite.
type Harness struct {
	Provider Provider
	// Texts are a few texts the model tells apart (words of its
	// vocabulary, for a test model); the suite adds its own edge cases.
	Texts []string
	// Normalized: every vector has unit L2 norm.
	Normalized bool
	// ZeroVectors: a text without a token the model knows (the empty text,
	// for one) embeds as all zeros, as model2vec's static models do.
	ZeroVectors bool
	// Exact: a text gets bit-identical vectors alone and in a batch;
	// otherwise they agree to a cosine of 1-1e-6.
	Exact bool
	// Long is a text over the provider's input limit. With LongErr nil it
	// must embed (cut to what the model reads); else Embed must fail with
	// LongErr (errors.Is). Empty: the suite uses 200,000 characters that
	// must embed.
	Long    string
	LongErr error
	// Slow returns a batch that takes the provider long enough (100 ms or
	// more) that cancelling it midway can be seen; nil skips that check.
	Slow func() (Provider, []string)
	// Failures are providers set up to fail, and how.
	Failures []Failure
	// Secret must never appear in an error (an API key).
	Secret string
	// Known lists checks (subtest names) the provider does not pass yet,
	// with the reason; they are skipped with it, visibly.
	Known map[string]string
}

// Failure is a provider that must fail to embed.
type Failure struct {
	Name     string
	Provider Provider
	Want     error  // errors.Is; nil accepts any error
	Contains string // the message must say this ("" for no check)
}

// edgeTexts are texts every provider must embed.
var edgeTexts = []string{
	"",
	" ",
	"\n\t\r\n",
	"Ünïcödé — 日本語, العربية, emoji 🎉👩‍👩‍👧",
	"control \x00\x01\x1b[31m characters\u200b\u202e",
	"invalid \xff\xfe UTF-8 \xc3",
	strings.Repeat("supercalifragilistic", 50),
	"a",
}

// RunConformance runs the suite on h.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if h.Provider == nil || len(h.Texts) < 2 {
		t.Fatal("embedtest: the harness needs a provider and at least two texts")
	}
	r := &runner{h: h}
	r.run(t, "model and dimensions", r.modelAndDimensions)
	r.run(t, "vectors", r.vectors)
	r.run(t, "normalised", r.normalised)
	r.run(t, "texts told apart", r.distinct)
	r.run(t, "batch equals one by one", r.batchEqualsAlone)
	r.run(t, "order", r.order)
	r.run(t, "large batch", r.largeBatch)
	r.run(t, "empty batch", r.emptyBatch)
	r.run(t, "long text", r.longText)
	r.run(t, "concurrent", r.concurrent)
	r.run(t, "errors", r.failures)
	r.run(t, "cancelled", r.cancelled)
	r.run(t, "deadline", r.deadline)
	r.run(t, "cancelled midway", r.cancelledMidway)
}

type runner struct {
	h    Harness
	once sync.Once
	all  []string
	want [][]float32 // each of all, embedded alone
	err  error
}

func (r *runner) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		if why, ok := r.h.Known[name]; ok {
			t.Skipf("known gap: %s", why)
		}
		f(t)
	})
}

// texts are the harness's texts and the edge cases.
func (r *runner) texts() []string { return append(slices.Clone(r.h.Texts), edgeTexts...) }

// alone embeds every text on its own, once.
func (r *runner) alone(t *testing.T) ([]string, [][]float32) {
	t.Helper()
	r.once.Do(func() {
		r.all = r.texts()
		for i, s := range r.all {
			v, err := r.h.Provider.Embed(context.Background(), []string{s})
			if err == nil && len(v) != 1 {
				err = fmt.Errorf("%d vectors for one text", len(v))
			}
			if err != nil {
				r.err = fmt.Errorf("text %d %q alone: %w", i, clip(s), err)
				return
			}
			r.want = append(r.want, v[0])
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.all, r.want
}

func (r *runner) modelAndDimensions(t *testing.T) {
	p := r.h.Provider
	m, d := p.Model(), p.Dimensions()
	if m == "" || strings.TrimSpace(m) != m {
		t.Errorf("Model() = %q", m)
	}
	if d < 1 {
		t.Errorf("Dimensions() = %d", d)
	}
	if _, err := p.Embed(context.Background(), r.h.Texts); err != nil {
		t.Fatal(err)
	}
	if p.Model() != m || p.Dimensions() != d {
		t.Errorf("Model/Dimensions changed after Embed: %q/%d, then %q/%d", m, d, p.Model(), p.Dimensions())
	}
}

// checkVectors: one vector per text, each of Dimensions finite numbers.
func (r *runner) checkVectors(t *testing.T, texts []string, vecs [][]float32) {
	t.Helper()
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	d := r.h.Provider.Dimensions()
	for i, v := range vecs {
		if len(v) != d {
			t.Errorf("text %d %q: %d dimensions, Dimensions() is %d", i, clip(texts[i]), len(v), d)
			continue
		}
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Errorf("text %d %q: element %d is %v", i, clip(texts[i]), j, x)
				break
			}
		}
	}
}

func (r *runner) vectors(t *testing.T) {
	texts := r.texts()
	vecs, err := r.h.Provider.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	r.checkVectors(t, texts, vecs)
}

func (r *runner) normalised(t *testing.T) {
	if !r.h.Normalized {
		t.Skip("the provider does not promise unit vectors")
	}
	texts, vecs := r.alone(t)
	for i, v := range vecs {
		n := norm(v)
		if n == 0 && r.h.ZeroVectors {
			continue
		}
		if math.Abs(n-1) > 1e-4 {
			t.Errorf("text %d %q: norm %.6f, want 1", i, clip(texts[i]), n)
		}
	}
	for i := range r.h.Texts {
		if norm(vecs[i]) == 0 {
			t.Errorf("text %d %q: a zero vector for a text the model knows", i, clip(texts[i]))
		}
	}
}

func (r *runner) distinct(t *testing.T) {
	_, vecs := r.alone(t)
	for i := range r.h.Texts {
		for j := i + 1; j < len(r.h.Texts); j++ {
			if r.h.Texts[i] != r.h.Texts[j] && cosine(vecs[i], vecs[j]) > 1-1e-6 {
				t.Errorf("texts %q and %q get the same vector", r.h.Texts[i], r.h.Texts[j])
			}
		}
	}
}

// same reports whether two vectors of one text agree.
func (r *runner) same(a, b []float32) bool {
	if r.h.Exact {
		return slices.Equal(a, b)
	}
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return na == nb
	}
	return cosine(a, b) >= 1-1e-6 && math.Abs(na-nb) <= 1e-4*max(na, nb)
}

func (r *runner) compare(t *testing.T, what string, texts []string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d vectors for %d texts", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if !r.same(got[i], want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%s: text %d %q gets another vector (cosine %.9f) than alone", what, i, clip(texts[i]), cosine(got[i], want[i]))
			}
		}
	}
}

func (r *runner) batchEqualsAlone(t *testing.T) {
	texts, want := r.alone(t)
	got, err := r.h.Provider.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	r.compare(t, "in one batch", texts, got, want)
	again, err := r.h.Provider.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	r.compare(t, "the same batch again", texts, again, want)
}

func (r *runner) order(t *testing.T) {
	texts, want := r.alone(t)
	rev, revWant := slices.Clone(texts), slices.Clone(want)
	slices.Reverse(rev)
	slices.Reverse(revWant)
	got, err := r.h.Provider.Embed(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	r.compare(t, "reversed", rev, got, revWant)
}

// largeBatch: a hundred and fifty texts (several batches for a provider
// that splits them) keep their order; duplicates get the same vector.
func (r *runner) largeBatch(t *testing.T) {
	texts, want := r.alone(t)
	var big []string
	var bigWant [][]float32
	for i := range 150 {
		k := (i * 7) % len(texts)
		big, bigWant = append(big, texts[k]), append(bigWant, want[k])
	}
	got, err := r.h.Provider.Embed(context.Background(), big)
	if err != nil {
		t.Fatal(err)
	}
	r.checkVectors(t, big, got)
	r.compare(t, "in a batch of 150", big, got, bigWant)
}

func (r *runner) emptyBatch(t *testing.T) {
	for _, in := range [][]string{nil, {}} {
		got, err := r.h.Provider.Embed(context.Background(), in)
		if err != nil || len(got) != 0 {
			t.Errorf("Embed(%#v) = %d vectors, %v; want none and no error", in, len(got), err)
		}
	}
}

func (r *runner) longText(t *testing.T) {
	long := r.h.Long
	if long == "" {
		long = strings.Repeat("a long text of many words, ", 200000/27)
	}
	got, err := r.h.Provider.Embed(context.Background(), []string{r.h.Texts[0], long})
	if r.h.LongErr != nil {
		if !errors.Is(err, r.h.LongErr) || got != nil {
			t.Fatalf("a text of %d bytes: %d vectors, %v; want %v", len(long), len(got), err, r.h.LongErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("a text of %d bytes: %v", len(long), err)
	}
	r.checkVectors(t, []string{r.h.Texts[0], long}, got)
}

func (r *runner) concurrent(t *testing.T) {
	texts, want := r.alone(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			// Each goroutine its own rotation of the texts.
			k := g % len(texts)
			in := append(slices.Clone(texts[k:]), texts[:k]...)
			got, err := r.h.Provider.Embed(context.Background(), in)
			if err != nil {
				errs <- err
				return
			}
			for i := range in {
				if len(got) != len(in) || !r.same(got[i], want[(i+k)%len(texts)]) {
					errs <- fmt.Errorf("goroutine %d: text %q gets another vector", g, clip(in[i]))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func (r *runner) failures(t *testing.T) {
	if len(r.h.Failures) == 0 {
		t.Skip("the provider has no failures to set up once it is loaded")
	}
	for _, f := range r.h.Failures {
		vecs, err := f.Provider.Embed(context.Background(), r.h.Texts)
		switch {
		case err == nil:
			t.Errorf("%s: no error (%d vectors)", f.Name, len(vecs))
		case vecs != nil:
			t.Errorf("%s: %d vectors with the error %v", f.Name, len(vecs), err)
		case f.Want != nil && !errors.Is(err, f.Want):
			t.Errorf("%s: %v; want %v", f.Name, err, f.Want)
		case !strings.Contains(err.Error(), f.Contains):
			t.Errorf("%s: %q does not say %q", f.Name, err, f.Contains)
		case r.h.Secret != "" && strings.Contains(err.Error(), r.h.Secret):
			t.Errorf("%s: the error shows the secret: %v", f.Name, err)
		}
	}
}

// quick is how soon a provider must notice a context that is done (a
// provider that ignores it takes the whole slow batch; loaded machines are
// slow).
const quick = 5 * time.Second

func (r *runner) cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.wantCtxErr(t, ctx, context.Canceled)
}

func (r *runner) deadline(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	r.wantCtxErr(t, ctx, context.DeadlineExceeded)
}

func (r *runner) wantCtxErr(t *testing.T, ctx context.Context, want error) {
	start := time.Now()
	vecs, err := r.h.Provider.Embed(ctx, r.texts())
	if !errors.Is(err, want) || vecs != nil {
		t.Errorf("Embed with %v: %d vectors, %v; want an error wrapping it", want, len(vecs), err)
	}
	if d := time.Since(start); d > quick {
		t.Errorf("Embed with %v took %v", want, d)
	}
}

// cancelledMidway cancels a slow batch once it is under way: Embed returns
// within quick of the cancel, with context.Canceled (or its vectors, if it
// was done before the cancel).
func (r *runner) cancelledMidway(t *testing.T) {
	if r.h.Slow == nil {
		t.Skip("the harness has no slow batch")
	}
	p, texts := r.h.Slow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at := make(chan time.Time, 1)
	timer := time.AfterFunc(50*time.Millisecond, func() { at <- time.Now(); cancel() })
	vecs, err := p.Embed(ctx, texts)
	done := time.Now()
	timer.Stop()
	var cancelled time.Time
	select {
	case cancelled = <-at:
	default:
	}
	if cancelled.IsZero() || err == nil && done.Sub(cancelled) < 10*time.Millisecond {
		if err != nil {
			t.Fatalf("failed before the cancel: %v", err)
		}
		t.Fatalf("the slow batch was done before it could be cancelled; make it slower")
	}
	if d := done.Sub(cancelled); d > quick {
		t.Errorf("Embed returned %v after the cancel", d)
	}
	if !errors.Is(err, context.Canceled) || vecs != nil {
		t.Errorf("cancelled midway: %d vectors, %v; want context.Canceled", len(vecs), err)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (na * nb)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
