package htmltext

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// nested opens the same tag n times around text.
func nested(open, close string, n int, text string) string {
	return strings.Repeat(open, n) + text + strings.Repeat(close, n)
}

func TestDeepNesting(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  string // a block text that must survive
	}{
		{"100k divs", nested("<div>", "</div>", 100000, "deep text"), `paragraph 0 "deep text"`},
		{"100k unclosed divs", strings.Repeat("<div>", 100000) + "end", `paragraph 0 "end"`},
		{"100k spans", nested("<span>", "</span>", 100000, "inline text"), `paragraph 0 "inline text"`},
		{"formatting elements", nested("<b><i><u>", "</u></i></b>", 30000, "styled"), `paragraph 0 "styled"`},
		{"lists", nested("<ul><li>", "</li></ul>", 30000, "item"), `paragraph 0 "- item"`},
		{"tables", nested("<table><tr><td>", "</td></tr></table>", 20000, "cell"), `table 0 "cell"`},
		{"blockquotes with script", nested("<blockquote><script>x<y</script>", "</blockquote>", 20000, "quote"), `paragraph 0 "quote"`},
		{"headings in divs", nested("<div><h2>", "</h2></div>", 50000, "title"), `heading 2 "title"`},
		{"just under the parser limit", nested("<div>", "</div>", 500, "shallow"), `paragraph 0 "shallow"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			doc := mustExtract(t, []byte(tc.input), extract.DefaultLimits())
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if !contains(render(doc), tc.want) {
				t.Errorf("no block %s in %q", tc.want, render(doc))
			}
		})
	}
}

func TestFlattenedDocumentWarns(t *testing.T) {
	doc := mustExtract(t, []byte(nested("<div>", "</div>", 2000, "<p>a</p>")), extract.DefaultLimits())
	if len(doc.Warnings) != 1 {
		t.Errorf("warnings = %q, want one about flattening", doc.Warnings)
	}
	doc = mustExtract(t, []byte(nested("<div>", "</div>", 100, "<p>a</p>")), extract.DefaultLimits())
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings = %q for a page the parser accepts", doc.Warnings)
	}
}

func TestTooLarge(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1000
	cases := map[string]string{
		"many paragraphs": strings.Repeat("<p>lorem ipsum dolor</p>", 1000),
		"one paragraph":   "<p>" + strings.Repeat("lorem ipsum ", 1000) + "</p>",
		"pre":             "<pre>" + strings.Repeat("line\n", 1000) + "</pre>",
		"table":           "<table>" + strings.Repeat("<tr><td>a</td><td>b</td></tr>", 1000) + "</table>",
		"one cell":        "<table><tr><td>" + strings.Repeat("word ", 1000) + "</td></tr></table>",
		"list":            "<ol>" + strings.Repeat("<li>item</li>", 1000) + "</ol>",
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Extractor{}.Extract(context.Background(), []byte(input), "big.html", lim)
			if !errors.Is(err, extract.ErrTooLarge) {
				t.Errorf("err = %v, want ErrTooLarge", err)
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		doc := mustExtract(t, []byte("<p>"+strings.Repeat("x", 1000)+"</p>"), lim)
		if len(doc.Text) != 1000 {
			t.Errorf("text length %d, want 1000", len(doc.Text))
		}
	})
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Extractor{}.Extract(ctx, []byte("<p>hello</p>"), "x.html", extract.DefaultLimits())
	if !errors.Is(err, extract.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
}

// lateCancel is a context that reports cancellation from the n-th call of
// Err on, so the checks during the walk are exercised.
type lateCancel struct {
	context.Context
	calls atomic.Int64
	n     int64
}

func (c *lateCancel) Err() error {
	if c.calls.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

func TestCancelledDuringWalk(t *testing.T) {
	ctx := &lateCancel{Context: context.Background(), n: 3}
	input := strings.Repeat("<p>paragraph <b>text</b></p>", 20000)
	lim := extract.DefaultLimits()
	lim.Timeout = 0 // a derived context would not ask lateCancel
	_, err := Extractor{}.Extract(ctx, []byte(input), "x.html", lim)
	if !errors.Is(err, extract.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
}

func TestDeadline(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.Timeout = time.Nanosecond
	// Big enough that parsing alone outlasts the deadline, whenever the
	// timer fires.
	input := strings.Repeat("<p>x</p>", 50000)
	_, err := Extractor{}.Extract(context.Background(), []byte(input), "x.html", lim)
	if !errors.Is(err, extract.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
}

func TestJunk(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	inputs := map[string][]byte{
		"all bytes": allBytes(),
		"nuls":      make([]byte, 4096),
		"tag soup":  []byte(strings.Repeat("<<p></</a<b>>&#;&#x;&amp<!--<![CDATA[<table><td>", 500)),
		"unclosed":  []byte("<p>text<script>never closed <p>more"),
		"comment":   []byte("<!-- <p>inside a comment"),
		"plaintext": []byte("<plaintext><p>not a tag"),
	}
	for i := range 20 {
		b := make([]byte, 1+rng.Intn(8192))
		rng.Read(b)
		inputs["random "+string(rune('a'+i))] = b
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			mustExtract(t, data, extract.DefaultLimits())
		})
	}
}

func allBytes() []byte {
	b := make([]byte, 0, 512)
	for i := range 256 {
		b = append(b, byte(i), byte(255-i))
	}
	return b
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}
