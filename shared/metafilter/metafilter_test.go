package metafilter

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/metadata"
)

func parse(t *testing.T, raw string) metadata.Filter {
	t.Helper()
	f, err := metadata.ParseFilter(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return f
}

// TestWhere: text equality and any-of are meta tokens, ranges compare the
// key's property with its kind token, existence is the key's token; every
// condition is ANDed. (queryd/store's TestMetadataFilterInWeaviate runs
// every form inside Weaviate.)
func TestWhere(t *testing.T) {
	for raw, want := range map[string][]string{
		`{"dept": "legal"}`:                                              {`"ContainsAny"`, `"meta"`, `"dept=legal"`},
		`{"year": {"gte": 2024}}`:                                        {`"year#number"`, `"meta_n_year"`, `"GreaterThanEqual"`, `2024`},
		`{"year": {"gt": 2020, "lte": 2024}}`:                            {`"GreaterThan"`, `"LessThanEqual"`, `2020`, `2024`, `"And"`},
		`{"reviewed": {"gte": "2024-11-20"}}`:                            {`"reviewed#date"`, `"meta_d_reviewed"`, `"GreaterThanEqual"`, `"2024-11-20T00:00:00Z"`},
		`{"dept": {"any": ["legal", "finance"]}, "year": {"gte": 2020}}`: {`"dept=legal"`, `"dept=finance"`, `"year#number"`, `"meta_n_year"`, `2020`, `"And"`},
		`{"year": {"any": [2023, "x"]}}`:                                 {`"Or"`, `"Equal"`, `"meta_n_year"`, `2023`, `"year=x"`},
		`{"signed": {"exists": true}}`:                                   {`"ContainsAny"`, `"meta"`},
		`{"signed": {"exists": false}}`:                                  {`"NotEqual"`, `"meta"`},
	} {
		w, err := Where(parse(t, raw), nil)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		b, err := json.Marshal(w.Build())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range want {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s: filter %s lacks %s", raw, b, s)
			}
		}
	}
	if w, err := Where(nil, nil); w != nil || err != nil {
		t.Errorf("empty filter: %v, %v; want nil", w, err)
	}
}

// TestWhereAsksForRanges: a range on a property the index lacks is
// ErrNoRanges, and hasRange's own failure is returned; text needs no range.
func TestWhereAsksForRanges(t *testing.T) {
	var asked []string
	has := func(ok bool, err error) HasRange {
		return func(prop string) (bool, error) { asked = append(asked, prop); return ok, err }
	}
	if _, err := Where(parse(t, `{"year": {"gte": 2024}}`), has(false, nil)); !errors.Is(err, ErrNoRanges) || !strings.Contains(err.Error(), `"year"`) {
		t.Errorf("no range property: %v, want ErrNoRanges naming the key", err)
	}
	boom := errors.New("schema unreadable")
	if _, err := Where(parse(t, `{"reviewed": "2024-01-02"}`), has(true, boom)); !errors.Is(err, boom) {
		t.Errorf("hasRange failing: %v", err)
	}
	if strings.Join(asked, ",") != "meta_n_year,meta_d_reviewed" {
		t.Errorf("asked for %q", asked)
	}
	asked = nil
	if w, err := Where(parse(t, `{"dept": "legal"}`), has(false, nil)); w == nil || err != nil || len(asked) > 0 {
		t.Errorf("text filter: %v, %v, asked %q", w, err, asked)
	}
}
