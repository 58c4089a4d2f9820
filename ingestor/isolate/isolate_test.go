package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// The children of these tests are this test binary, run with ChildEnv set:
// a reader whose behaviour each file's name picks.
func TestMain(m *testing.M) {
	if os.Getenv(ChildEnv) == "1" {
		if err := Serve(context.Background(), namedReader{}, extract.DefaultLimits(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// namedReader does what a file's name says: "ok.md" reads it, "box.zip"
// reads it as a container with members (a member's member too),
// "unsupported" and "corrupt" fail as readers do, "panic" panics, "exit"
// exits 3, "hog" holds memory until killed, "sleep" never answers.
type namedReader struct{}

var hog [][]byte

func (namedReader) Extract(ctx context.Context, data []byte, name string, _ extract.Limits) (*extract.Document, error) {
	switch name {
	case "unsupported":
		return nil, fmt.Errorf("%w: a %s", extract.ErrUnsupported, "sound file")
	case "corrupt":
		return nil, fmt.Errorf("zip: %w", extract.ErrCorrupt)
	case "panic":
		panic("reader bug on " + name)
	case "exit":
		os.Exit(3)
	case "hog":
		for {
			b := make([]byte, 16<<20)
			for i := range b {
				b[i] = 1
			}
			hog = append(hog, b)
		}
	case "sleep":
		time.Sleep(time.Hour)
	}
	if name == "box.zip" {
		return boxOf(data), nil
	}
	b := extract.NewBuilder("markdown")
	b.Add(extract.Heading, 1, 0, "Title")
	b.Add(extract.Paragraph, 0, 0, string(data))
	b.AddImage(extract.Image{Name: "a.png", MIME: "image/png", Data: []byte{1, 2, 3}, Page: 1}, "a picture")
	b.Warn("one warning")
	doc := b.Doc()
	doc.Metadata = metadata.Metadata{"author": {Kind: metadata.String, Text: "Ada"}}
	return doc, nil
}

// boxOf is a container's document: a.md and inner.zip, which holds
// deep.txt; each member with its own text, blocks, warnings and metadata.
func boxOf(data []byte) *extract.Document {
	doc := func(format, text string) *extract.Document {
		b := extract.NewBuilder(format)
		b.Add(extract.Heading, 1, 0, format+" title")
		b.Add(extract.Paragraph, 0, 0, text)
		return b.Doc()
	}
	deep := doc("text", "deep words")
	deep.Warnings = []string{"a warning of the deepest member"}
	inner := extract.NewBuilder("zip")
	inner.Add(extract.Heading, 1, 0, "inner.zip")
	inner.AddMember("deep.txt", deep)
	a := doc("markdown", string(data))
	a.Metadata = metadata.Metadata{"author": {Kind: metadata.String, Text: "Ada"}}
	box := extract.NewBuilder("zip")
	box.Add(extract.Heading, 1, 0, "box.zip")
	box.AddMember("a.md", a)
	box.AddMember("inner.zip", inner.Doc())
	return box.Doc()
}

func testChild(ctx context.Context) *exec.Cmd {
	return exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
}

func quickLimits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.Timeout, lim.OCRTimeout = 2*time.Second, 0
	return lim
}

// TestAnIsolatedReadEqualsTheReadInProcess: the document comes back from
// the child as the reader made it, a container's members (and theirs)
// included.
func TestAnIsolatedReadEqualsTheReadInProcess(t *testing.T) {
	iso := New(Config{Command: testChild, MemoryBytes: 512 << 20})
	for _, name := range []string{"ok.md", "box.zip"} {
		got, err := iso.Extract(context.Background(), []byte("hello world"), name, quickLimits())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := namedReader{}.Extract(context.Background(), []byte("hello world"), name, quickLimits())
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: isolated read:\n%+v\nin process:\n%+v", name, got, want)
		}
		if name == "box.zip" && (len(got.Members) != 2 || len(got.Members[1].Doc.Members) != 1 || got.Members[1].Doc.Members[0].Doc.Text != "text title\n\ndeep words") {
			t.Fatalf("%s: members %+v", name, got.Members)
		}
	}
}

func TestReadersErrorsKeepTheirKind(t *testing.T) {
	iso := New(Config{Command: testChild})
	for name, kind := range map[string]error{"unsupported": extract.ErrUnsupported, "corrupt": extract.ErrCorrupt} {
		_, err := iso.Extract(context.Background(), []byte("x"), name, quickLimits())
		if !errors.Is(err, kind) || errors.Is(err, extract.ErrReaderDied) {
			t.Errorf("%s: %v, want an error that is %v", name, err, kind)
		}
	}
}

// TestAReaderThatDiesIsTheFilesFault: a panic, an exit, a reader over its
// memory budget and one that never answers each fail the file with the
// cause a user can read.
func TestAReaderThatDiesIsTheFilesFault(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   error
		reason string
	}{
		{"panic", extract.ErrReaderDied, "panic: reader bug on panic"},
		{"exit", extract.ErrReaderDied, "exit status 3"},
		{"hog", extract.ErrReaderDied, "over the 128 MiB memory budget"},
		{"sleep", extract.ErrTimeout, "no answer within 3s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iso := New(Config{Command: testChild, MemoryBytes: 128 << 20, Grace: time.Second})
			_, err := iso.Extract(context.Background(), []byte("x"), tc.name, quickLimits())
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.reason) || errors.Is(err, extract.ErrInterrupted) {
				t.Fatalf("got %v, want %v saying %q", err, tc.kind, tc.reason)
			}
		})
	}
}

// TestAReadStoppedFromOutsideIsNotTheFilesFault: shutdown, or a reader
// that cannot start, leaves the file to be read again.
func TestAReadStoppedFromOutsideIsNotTheFilesFault(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	iso := New(Config{Command: testChild})
	if _, err := iso.Extract(ctx, []byte("x"), "sleep", quickLimits()); !errors.Is(err, extract.ErrInterrupted) {
		t.Fatalf("cancelled: %v", err)
	}
	missing := New(Config{Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, "/nonexistent/strata-ingestor")
	}})
	if _, err := missing.Extract(context.Background(), []byte("x"), "ok.md", quickLimits()); !errors.Is(err, extract.ErrInterrupted) {
		t.Fatalf("no reader: %v", err)
	}
	// A reader whose start-up fails (its flags, a missing tool) ends before
	// it says it is ready: not the file's doing either.
	broken := New(Config{Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, "sh", "-c", "echo 'ingestor: -poppler-dir: pdftotext not found' >&2; exit 2")
	}})
	if _, err := broken.Extract(context.Background(), []byte("x"), "ok.md", quickLimits()); !errors.Is(err, extract.ErrInterrupted) || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("a reader that did not start: %v", err)
	}
}

// TestOneIsolatedReadAtATime: a second read waits for the first.
func TestOneIsolatedReadAtATime(t *testing.T) {
	iso := New(Config{Command: testChild, Grace: time.Second})
	done := make(chan error, 1)
	go func() {
		_, err := iso.Extract(context.Background(), []byte("x"), "sleep", quickLimits())
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := iso.Extract(ctx, []byte("x"), "ok.md", quickLimits()); !errors.Is(err, extract.ErrInterrupted) || !strings.Contains(err.Error(), "waiting") {
		t.Fatalf("a second read ran beside the first: %v", err)
	}
	<-done
}

func TestLastWords(t *testing.T) {
	stderr := `{"level":"INFO","msg":"x"}
runtime: goroutine stack exceeds 1000000000-byte limit
fatal error: stack overflow

goroutine 1 [running]:
`
	if got := lastWords(stderr); got != "runtime: goroutine stack exceeds 1000000000-byte limit" {
		t.Fatalf("%q", got)
	}
	var tl tail
	tl.max = 8
	_, _ = tl.Write([]byte("fatal error: x\n"))
	_, _ = tl.Write([]byte(strings.Repeat("frame\n", 100) + "end\n"))
	if s := tl.String(); !strings.HasPrefix(s, "fatal er") || !strings.HasSuffix(s, "e\nend\n") {
		t.Fatalf("tail kept %q", s)
	}
}
