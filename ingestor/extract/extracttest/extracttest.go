// Package extracttest is the conformance suite every extractor runs, in
// the style of go-cloud's drivertest: a format's tests describe their
// extractor in a Harness (the extractor, what its format promises, valid
// files of the format and hostile ones) and call RunConformance, which
// holds it to what the rest of Strata relies on:
//
//   - every document keeps the invariants of Check: block offsets map back
//     to Document.Text, blocks are in order and hold all the text, heading
//     levels, pages, images, title and metadata are well-formed;
//   - chunked as the ingestor chunks it, sections nest and token counts
//     add up (CheckSections), titles and heading-path entries are at most
//     extract.MaxTitleBytes and the file version's message is at most 3x
//     its text + 64 KiB (CheckMessage);
//   - extraction is deterministic, safe for concurrent use and leaves its
//     input alone (every extraction the suite makes checks that);
//   - the Limits hold: more text than MaxTextBytes is ErrTooLarge, image and
//     page limits bound what is kept, zero limits are not zero budgets; a
//     container's members (extract.Document.Members, documents of their
//     own) count against its text and budget;
//   - a cancelled or expired context ends the extraction with ErrTimeout
//     (Limits.Timeout itself is applied through the context, by
//     detect.Registry);
//   - hostile input (empty, truncated, flipped bits, random bytes, the
//     format's own bombs and deep nesting, odd file names) gives a valid
//     document or an error callers can classify (ErrCorrupt, ErrTooLarge,
//     ...), never a panic, a hang or a document with an error.
//
// The checks are exported (Check, CheckLimits, CheckSections, Verify) so a
// format's own tests and fuzzers hold their documents to the same
// invariants.
package extracttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Harness describes an extractor to the suite.
type Harness struct {
	Extractor extract.Extractor
	Profile   Profile
	// Samples are valid files of the format: each extracts without error
	// into at least one block. Include files with headings, and, for
	// formats that have them, pages, images and metadata.
	Samples []Sample
	// Big is a valid file with a lot of text (tens of kilobytes or more),
	// for the limits; nil uses the sample with the most text.
	Big *Sample
	// Hostile are the format's own hostile files (bombs, deep nesting,
	// encrypted or legacy variants); the suite adds generic ones made from
	// the samples. Want, when set, is the error one must fail with.
	Hostile []Sample
	// Limits are the limits samples are extracted under; zero uses
	// extract.DefaultLimits.
	Limits extract.Limits
	// Container: the format is an archive, which MaxUncompressed bounds.
	Container bool
	// CutsMembers: the format is a container that records a member over
	// what it has left of MaxTextBytes, MaxFileBytes or MaxUncompressed as
	// not read (a warning with "not read" and the limit's name, on the
	// container or on a member that is a container itself) and reads the
	// rest. Under those limits its document may then be one with less (its
	// members' text and what they hold counted), never one over the limit
	// or one that does not say what it left out and why.
	CutsMembers bool
	// Known lists the checks (subtest names, e.g. "cancelled") the
	// extractor does not pass yet, with the reason. They are skipped with
	// that reason, so a gap stays visible instead of silently unchecked.
	Known map[string]string
}

// Sample is one input file.
type Sample struct {
	Name string // the file name Extract is given
	Data []byte
	// Want is, for a hostile input, the error it must fail with
	// (errors.Is); nil accepts a valid document or any classified error.
	Want error
}

// Errors are the errors callers classify (extract's sentinels); every
// failure of an extractor wraps one of them.
var Errors = []error{extract.ErrUnsupported, extract.ErrEncrypted, extract.ErrCorrupt, extract.ErrTooLarge, extract.ErrTimeout, extract.ErrNoOCR}

// Classified reports whether err wraps one of Errors.
func Classified(err error) bool {
	return slices.ContainsFunc(Errors, func(e error) bool { return errors.Is(err, e) })
}

// hostileBudget bounds one hostile extraction: the Limits.Timeout the suite
// gives it, and the grace after it.
const (
	hostileTimeout = 10 * time.Second
	hostileGrace   = 10 * time.Second
	// hostileOCRTimeout bounds OCR of a hostile file (Limits.OCRTimeout
	// comes besides Timeout): one whose pages are drawn slowly for it must
	// not hold the suite. Samples keep the harness's own budget, so that a
	// loaded machine never changes their text.
	hostileOCRTimeout = 3 * time.Second
)

// RunConformance runs the suite on h.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if len(h.Samples) == 0 {
		t.Fatal("extracttest: the harness has no samples")
	}
	if h.Limits == (extract.Limits{}) {
		h.Limits = extract.DefaultLimits()
	}
	r := &runner{h: h}
	r.run(t, "samples", r.samples)
	r.run(t, "sections and tokens", r.sections)
	r.run(t, "message size", r.messageSize)
	r.run(t, "deterministic", r.deterministic)
	r.run(t, "concurrent", r.concurrent)
	r.run(t, "odd names", r.oddNames)
	r.run(t, "MaxTextBytes", r.maxTextBytes)
	r.run(t, "MaxFileBytes", r.maxFileBytes)
	r.run(t, "MaxImages", r.maxImages)
	r.run(t, "MaxImageBytes", r.maxImageBytes)
	r.run(t, "MaxPages", r.maxPages)
	r.run(t, "MaxUncompressed", r.maxUncompressed)
	r.run(t, "zero limits", r.zeroLimits)
	r.run(t, "cancelled", r.cancelled)
	r.run(t, "deadline", r.deadline)
	r.run(t, "hostile", r.hostile)
}

type runner struct {
	h Harness
	// docs are the samples' documents, extracted once by "samples".
	once sync.Once
	docs []*extract.Document
	errs []error
}

func (r *runner) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		if why, ok := r.h.Known[name]; ok {
			t.Skipf("known gap: %s", why)
		}
		f(t)
	})
}

// extract runs the extractor, turning a panic into a test failure that
// names the input.
func (r *runner) extract(t testing.TB, ctx context.Context, s Sample, lim extract.Limits) (doc *extract.Document, err error) {
	t.Helper()
	orig := bytes.Clone(s.Data)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: Extract panicked: %v\n%s", s.Name, p, debug.Stack())
		}
		if !bytes.Equal(orig, s.Data) {
			t.Errorf("%s: Extract changed its input", s.Name)
		}
	}()
	return r.h.Extractor.Extract(ctx, s.Data, s.Name, lim)
}

// sampleDocs extracts every sample once.
func (r *runner) sampleDocs(t *testing.T) []*extract.Document {
	t.Helper()
	r.once.Do(func() {
		for _, s := range r.h.Samples {
			doc, err := r.extract(t, context.Background(), s, r.h.Limits)
			r.docs, r.errs = append(r.docs, doc), append(r.errs, err)
		}
	})
	for i, err := range r.errs {
		if err != nil {
			t.Fatalf("sample %s: %v", r.h.Samples[i].Name, err)
		}
	}
	return r.docs
}

func (r *runner) samples(t *testing.T) {
	docs := r.sampleDocs(t)
	for i, doc := range docs {
		s := r.h.Samples[i]
		if err := Check(doc, s.Data, r.h.Profile); err != nil {
			t.Errorf("sample %s:\n%v", s.Name, err)
		}
		if err := CheckLimits(doc, r.h.Limits); err != nil {
			t.Errorf("sample %s is over its limits:\n%v", s.Name, err)
		}
		if len(doc.Blocks) == 0 {
			t.Errorf("sample %s: no blocks", s.Name)
		}
	}
}

func (r *runner) sections(t *testing.T) {
	for i, doc := range r.sampleDocs(t) {
		if Check(doc, nil, r.h.Profile) != nil {
			continue // "samples" says why
		}
		// Each member is a document of its own, chunked on its own.
		eachDoc(doc, func(path string, d *extract.Document) {
			for _, target := range []int{512, 24} {
				if err := CheckSections(d, target); err != nil {
					t.Errorf("sample %s%s: %v", r.h.Samples[i].Name, memberSuffix(path), err)
				}
			}
		})
	}
}

// messageSize: each sample's and each hostile input's document makes a
// message linear in its text, with bounded titles (CheckMessage); so does
// each of its members, a file version of its own.
func (r *runner) messageSize(t *testing.T) {
	check := func(name string, doc *extract.Document) {
		eachDoc(doc, func(path string, d *extract.Document) {
			if err := CheckMessage(d); err != nil {
				t.Errorf("%s%s: %v", name, memberSuffix(path), err)
			}
		})
	}
	for i, doc := range r.sampleDocs(t) {
		check("sample "+r.h.Samples[i].Name, doc)
	}
	if r.h.Big != nil {
		if doc, err := r.extract(t, context.Background(), *r.h.Big, r.h.Limits); err == nil {
			check(r.h.Big.Name, doc)
		}
	}
	for _, s := range r.h.Hostile {
		if doc, err := r.extract(t, context.Background(), s, r.hostileLimits()); err == nil {
			check("hostile "+s.Name, doc)
		}
	}
}

// memberSuffix names a member in a message: "" for the file itself.
func memberSuffix(path string) string {
	if path == "" {
		return ""
	}
	return ", member " + path
}

func (r *runner) deterministic(t *testing.T) {
	for i, doc := range r.sampleDocs(t) {
		s := r.h.Samples[i]
		again, err := r.extract(t, context.Background(), s, r.h.Limits)
		if err != nil {
			t.Fatalf("sample %s the second time: %v", s.Name, err)
		}
		if d := diff(doc, again); d != "" {
			t.Errorf("sample %s gives another document the second time: %s", s.Name, d)
		}
	}
}

func (r *runner) concurrent(t *testing.T) {
	docs := r.sampleDocs(t)
	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan error, workers*len(docs))
	for range workers {
		wg.Go(func() {
			for i, s := range r.h.Samples {
				doc, err := r.h.Extractor.Extract(context.Background(), s.Data, s.Name, r.h.Limits)
				if err != nil {
					errs <- fmt.Errorf("sample %s: %w", s.Name, err)
				} else if d := diff(docs[i], doc); d != "" {
					errs <- fmt.Errorf("sample %s, extracted concurrently: %s", s.Name, d)
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

// oddNames extracts each sample under names a user can give a file: in
// directories with invalid UTF-8, control characters, dots and backslashes,
// or long; with control and format characters in the name itself (a
// format told by its name, a Makefile, may then be unsupported).
func (r *runner) oddNames(t *testing.T) {
	docs := r.sampleDocs(t)
	for i, s := range r.h.Samples {
		for _, name := range []string{
			"dir\xff\x01/" + s.Name,
			"a/../..\\b/./" + s.Name,
			strings.Repeat("long-", 200) + "/" + s.Name,
			"\x01\x1b[31m \u202e" + s.Name,
		} {
			doc, err := r.extract(t, context.Background(), Sample{Name: name, Data: s.Data}, r.h.Limits)
			if errors.Is(err, extract.ErrUnsupported) && !strings.HasSuffix(name, "/"+s.Name) {
				continue
			}
			if err != nil {
				t.Errorf("sample %s named %q: %v", s.Name, name, err)
				continue
			}
			if err := Check(doc, s.Data, r.h.Profile); err != nil {
				t.Errorf("sample %s named %q:\n%v", s.Name, name, err)
			}
			if len(doc.Blocks) != len(docs[i].Blocks) {
				t.Errorf("sample %s named %q: %d blocks, %d under its own name", s.Name, name, len(doc.Blocks), len(docs[i].Blocks))
			}
		}
	}
}

// big is the sample the limits are tried on, and its document.
func (r *runner) big(t *testing.T) (Sample, *extract.Document) {
	t.Helper()
	if r.h.Big != nil {
		doc, err := r.extract(t, context.Background(), *r.h.Big, r.h.Limits)
		if err != nil {
			t.Fatalf("big sample %s: %v", r.h.Big.Name, err)
		}
		if err := Check(doc, r.h.Big.Data, r.h.Profile); err != nil {
			t.Fatalf("big sample %s:\n%v", r.h.Big.Name, err)
		}
		return *r.h.Big, doc
	}
	docs := r.sampleDocs(t)
	best := 0
	for i, doc := range docs {
		if extract.TextWithMembers(doc) > extract.TextWithMembers(docs[best]) {
			best = i
		}
	}
	return r.h.Samples[best], docs[best]
}

// MaxFileBytes: a document that would hold more than the budget (text,
// blocks, images: extract.Held, its members' included) is ErrTooLarge, one
// that holds it exactly is the same document. Readers count as they add,
// so the budget stops a file while it is read.
func (r *runner) maxFileBytes(t *testing.T) {
	s, doc := r.big(t)
	held := extract.HeldWithMembers(doc)
	for _, budget := range []int64{held - 1, held / 2, 1} {
		lim := r.h.Limits
		lim.MaxFileBytes = budget
		got, err := r.extract(t, context.Background(), s, lim)
		if r.cut(got, err, "MaxFileBytes") && extract.HeldWithMembers(got) <= budget {
			continue
		}
		if !errors.Is(err, extract.ErrTooLarge) || got != nil {
			t.Errorf("%s: holds %d bytes, MaxFileBytes %d: got %v, %s; want ErrTooLarge and no document", s.Name, held, budget, err, describe(got))
		}
	}
	lim := r.h.Limits
	lim.MaxFileBytes = held
	got, err := r.extract(t, context.Background(), s, lim)
	if err != nil {
		t.Errorf("%s: holds %d bytes, MaxFileBytes %d (at the budget): %v", s.Name, held, held, err)
	} else if d := diff(doc, got); d != "" {
		t.Errorf("%s at the budget gives another document: %s", s.Name, d)
	}
}

// cut reports whether a container that cuts members (Harness.CutsMembers)
// gave a document that says it left a member out for limit (a warning
// with "not read" and the limit's name, its own or a member's).
func (r *runner) cut(doc *extract.Document, err error, limit string) bool {
	return r.h.CutsMembers && err == nil && doc != nil && Warned(doc, "not read", limit)
}

// MaxTextBytes: text over the limit is ErrTooLarge, text at it is not (a
// container's text with its members').
func (r *runner) maxTextBytes(t *testing.T) {
	s, doc := r.big(t)
	n := extract.TextWithMembers(doc)
	if n < 2 {
		t.Fatalf("sample %s has %d bytes of text; the limit needs more", s.Name, n)
	}
	for _, limit := range []int{n - 1, n / 2, 1} {
		lim := r.h.Limits
		lim.MaxTextBytes = limit
		got, err := r.extract(t, context.Background(), s, lim)
		if r.cut(got, err, "MaxTextBytes") && extract.TextWithMembers(got) <= limit {
			continue
		}
		if !errors.Is(err, extract.ErrTooLarge) || got != nil {
			t.Errorf("%s: %d bytes of text, MaxTextBytes %d: got %v, %s; want ErrTooLarge and no document", s.Name, n, limit, err, describe(got))
		}
	}
	lim := r.h.Limits
	lim.MaxTextBytes = n
	got, err := r.extract(t, context.Background(), s, lim)
	if err != nil {
		t.Errorf("%s: %d bytes of text, MaxTextBytes %d (at the limit): %v", s.Name, n, n, err)
	} else if d := diff(doc, got); d != "" {
		t.Errorf("%s at the text limit gives another document: %s", s.Name, d)
	}
}

// withImages returns a sample whose document has at least min images. The
// test is skipped for a format without images, and fails when no sample
// has that many.
func (r *runner) withImages(t *testing.T, min int) (Sample, *extract.Document) {
	if !r.h.Profile.Images {
		t.Skip("the format has no images")
	}
	for i, doc := range r.sampleDocs(t) {
		if len(doc.Images) >= min {
			return r.h.Samples[i], doc
		}
	}
	t.Fatalf("no sample has %d images or more", min)
	return Sample{}, nil
}

// MaxImages bounds the images kept (the rest are left out, or the file
// fails as too large).
func (r *runner) maxImages(t *testing.T) {
	s, doc := r.withImages(t, 2)
	for _, limit := range []int{1, len(doc.Images) - 1} {
		lim := r.h.Limits
		lim.MaxImages = limit
		r.limited(t, s, lim, fmt.Sprintf("%d images, MaxImages %d", len(doc.Images), limit))
	}
}

// MaxImageBytes bounds each image kept.
func (r *runner) maxImageBytes(t *testing.T) {
	s, doc := r.withImages(t, 1)
	smallest := len(doc.Images[0].Data)
	for _, img := range doc.Images {
		smallest = min(smallest, len(img.Data))
	}
	lim := r.h.Limits
	lim.MaxImageBytes = int64(smallest - 1)
	got := r.limited(t, s, lim, fmt.Sprintf("images of %d bytes or more, MaxImageBytes %d", smallest, smallest-1))
	if got != nil && len(got.Images) != 0 {
		t.Errorf("%s: %d images kept over MaxImageBytes", s.Name, len(got.Images))
	}
}

// MaxPages bounds the pages read.
func (r *runner) maxPages(t *testing.T) {
	if !r.h.Profile.Pages {
		t.Skip("the format has no pages")
	}
	for i, doc := range r.sampleDocs(t) {
		if doc.Pages < 2 {
			continue
		}
		lim := r.h.Limits
		lim.MaxPages = 1
		r.limited(t, r.h.Samples[i], lim, fmt.Sprintf("%d pages, MaxPages 1", doc.Pages))
		return
	}
	t.Fatal("no sample has two pages or more")
}

// limited extracts s under lim, which it exceeds: the result must be a
// document within lim (what is left out may be said in a warning) or
// ErrTooLarge.
func (r *runner) limited(t *testing.T, s Sample, lim extract.Limits, what string) *extract.Document {
	t.Helper()
	doc, err := r.extract(t, context.Background(), s, lim)
	switch {
	case errors.Is(err, extract.ErrTooLarge) && doc == nil:
		return nil
	case err != nil:
		t.Errorf("%s (%s): %v; want a document within the limit or ErrTooLarge", s.Name, what, err)
		return nil
	}
	if err := Check(doc, s.Data, r.h.Profile); err != nil {
		t.Errorf("%s (%s):\n%v", s.Name, what, err)
	}
	if err := CheckLimits(doc, lim); err != nil {
		t.Errorf("%s (%s): the document is over the limit:\n%v", s.Name, what, err)
	}
	return doc
}

// MaxUncompressed bounds what an archive may expand to.
func (r *runner) maxUncompressed(t *testing.T) {
	if !r.h.Container {
		t.Skip("the format is not an archive")
	}
	s, _ := r.big(t)
	lim := r.h.Limits
	lim.MaxUncompressed = 1
	if doc, err := r.extract(t, context.Background(), s, lim); !r.cut(doc, err, "MaxUncompressed") && (!errors.Is(err, extract.ErrTooLarge) || doc != nil) {
		t.Errorf("%s, MaxUncompressed 1: %v, %s; want ErrTooLarge", s.Name, err, describe(doc))
	}
}

// zero limits: a zero Limits field means no limit or a default, never a
// budget of nothing.
func (r *runner) zeroLimits(t *testing.T) {
	docs := r.sampleDocs(t)
	for i, s := range r.h.Samples {
		doc, err := r.extract(t, context.Background(), s, extract.Limits{})
		if err != nil {
			t.Errorf("sample %s with zero Limits: %v", s.Name, err)
			continue
		}
		if got, want := extract.TextWithMembers(doc), extract.TextWithMembers(docs[i]); got != want {
			t.Errorf("sample %s with zero Limits: %d bytes of text, %d under %+v", s.Name, got, want, r.h.Limits)
		}
	}
}

// cancelled: a cancelled context ends the extraction with ErrTimeout.
func (r *runner) cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.wantTimeout(t, ctx)
}

// deadline: an expired context ends the extraction with ErrTimeout.
func (r *runner) deadline(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	r.wantTimeout(t, ctx)
}

func (r *runner) wantTimeout(t *testing.T, ctx context.Context) {
	s, _ := r.big(t)
	start := time.Now()
	doc, err := r.extract(t, ctx, s, r.h.Limits)
	if !errors.Is(err, extract.ErrTimeout) || doc != nil {
		t.Errorf("%s with %v: got %v, %s; want ErrTimeout and no document", s.Name, context.Cause(ctx), err, describe(doc))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("%s with %v took %v", s.Name, context.Cause(ctx), d)
	}
}

func (r *runner) hostileLimits() extract.Limits {
	lim := r.h.Limits
	lim.Timeout = hostileTimeout
	lim.OCRTimeout = min(lim.OCRTimeout, hostileOCRTimeout)
	return lim
}

// hostile: every hostile input gives a valid document within the limits or
// a classified error, in time, without a panic.
func (r *runner) hostile(t *testing.T) {
	lim := r.hostileLimits()
	for _, s := range r.allInputs(t) {
		ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout+hostileGrace)
		start := time.Now()
		doc, err := r.extract(t, ctx, s, lim)
		took := time.Since(start)
		cancel()
		if took > hostileTimeout+hostileGrace/2 {
			t.Errorf("%s: took %v (Limits.Timeout %v)", s.Name, took, lim.Timeout)
		}
		switch {
		case s.Want != nil && !errors.Is(err, s.Want):
			t.Errorf("%s: got %v; want %v", s.Name, err, s.Want)
		case err != nil && doc != nil:
			t.Errorf("%s: a document and an error: %v", s.Name, err)
		case err != nil && !Classified(err):
			t.Errorf("%s: the error %q wraps none of the extract errors", s.Name, err)
		case err != nil && (!utf8.ValidString(err.Error()) || len(err.Error()) > 4096):
			t.Errorf("%s: the error is not a readable message: %q", s.Name, clip(err.Error()))
		case err == nil:
			if cerr := Check(doc, s.Data, r.h.Profile); cerr != nil {
				t.Errorf("%s:\n%v", s.Name, cerr)
			}
			if lerr := CheckLimits(doc, lim); lerr != nil {
				t.Errorf("%s is over its limits:\n%v", s.Name, lerr)
			}
		}
	}
}

// allInputs are the harness's hostile inputs and the generic ones made
// from the samples: empty, truncated, with flipped bytes, with control
// characters, doubled, with junk after, random bytes, NUL bytes, invalid
// UTF-8.
func (r *runner) allInputs(t *testing.T) []Sample {
	rng := rand.New(rand.NewPCG(38, 5))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	ext := ""
	if name := r.h.Samples[0].Name; strings.Contains(name, ".") {
		ext = name[strings.LastIndexByte(name, '.'):]
	}
	out := slices.Clone(r.h.Hostile)
	out = append(out,
		Sample{Name: "empty" + ext, Data: []byte{}},
		Sample{Name: "nil" + ext},
		Sample{Name: "random-1k" + ext, Data: random(1 << 10)},
		Sample{Name: "random-64k" + ext, Data: random(64 << 10)},
		Sample{Name: "nul" + ext, Data: make([]byte, 4096)},
		Sample{Name: "invalid-utf8" + ext, Data: bytes.Repeat([]byte{0xff, 0xfe, 'a', 0xc3}, 1024)},
	)
	for _, s := range r.h.Samples {
		n := len(s.Data)
		for _, cut := range []int{n / 3, n / 2, n - 1} {
			if cut > 0 && cut < n {
				out = append(out, Sample{Name: fmt.Sprintf("%s cut at %d of %d", s.Name, cut, n), Data: bytes.Clone(s.Data[:cut])})
			}
		}
		for round := range 3 {
			flipped := bytes.Clone(s.Data)
			for range 1 + n/512 {
				if n > 0 {
					flipped[rng.IntN(n)] ^= byte(1 + rng.IntN(255))
				}
			}
			out = append(out, Sample{Name: fmt.Sprintf("%s with flipped bytes (%d)", s.Name, round), Data: flipped})
		}
		if utf8.Valid(s.Data) {
			// Control and format characters a text may hold, in every line.
			odd := bytes.ReplaceAll(s.Data, []byte(" "), []byte(" \x01\x1b[31m\u0085\u200b\u202e"))
			out = append(out, Sample{Name: s.Name + " with control characters", Data: odd})
		}
		out = append(out,
			Sample{Name: s.Name + " twice", Data: append(bytes.Clone(s.Data), s.Data...)},
			Sample{Name: s.Name + " with junk after", Data: append(bytes.Clone(s.Data), random(300)...)},
		)
	}
	return out
}

// diff describes how two documents differ, or "".
func diff(a, b *extract.Document) string {
	switch {
	case a == nil || b == nil:
		return fmt.Sprintf("%s vs %s", describe(a), describe(b))
	case a.Text != b.Text:
		return fmt.Sprintf("text differs (%d vs %d bytes)", len(a.Text), len(b.Text))
	case !reflect.DeepEqual(a.Blocks, b.Blocks):
		return fmt.Sprintf("blocks differ (%d vs %d)", len(a.Blocks), len(b.Blocks))
	case !reflect.DeepEqual(a.Images, b.Images):
		return fmt.Sprintf("images differ (%d vs %d)", len(a.Images), len(b.Images))
	case !reflect.DeepEqual(a.Metadata, b.Metadata):
		return fmt.Sprintf("metadata differs: %v vs %v", a.Metadata, b.Metadata)
	case !reflect.DeepEqual(a.Warnings, b.Warnings):
		return fmt.Sprintf("warnings differ: %q vs %q", a.Warnings, b.Warnings)
	case a.Format != b.Format || a.Language != b.Language || a.Pages != b.Pages || a.Title != b.Title:
		return fmt.Sprintf("%s/%s/%d/%q vs %s/%s/%d/%q", a.Format, a.Language, a.Pages, a.Title, b.Format, b.Language, b.Pages, b.Title)
	case len(a.Members) != len(b.Members):
		return fmt.Sprintf("%d members vs %d", len(a.Members), len(b.Members))
	}
	for i, m := range a.Members {
		if m.Path != b.Members[i].Path {
			return fmt.Sprintf("member %d is at %q vs %q", i, m.Path, b.Members[i].Path)
		}
		if d := diff(m.Doc, b.Members[i].Doc); d != "" {
			return fmt.Sprintf("member %s: %s", m.Path, d)
		}
	}
	return ""
}

func describe(doc *extract.Document) string {
	if doc == nil {
		return "no document"
	}
	if len(doc.Members) > 0 {
		return fmt.Sprintf("a document of %d bytes in %d blocks, with %d members of %d bytes of text in all", len(doc.Text), len(doc.Blocks), len(doc.Members), extract.TextWithMembers(doc)-len(doc.Text))
	}
	return fmt.Sprintf("a document of %d bytes in %d blocks", len(doc.Text), len(doc.Blocks))
}
