package metadata

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestMergePrecedenceAndTypes(t *testing.T) {
	var file map[string]any
	if err := yaml.Unmarshal([]byte("Team: ops\nyear: 2024\nratio: 0.5\ntags: [a, 2]\nreviewed: 2024-05-01\ndraft: true\nnote: \"2024\"\n"), &file); err != nil {
		t.Fatal(err)
	}
	fm := Metadata{}
	for k, v := range file {
		val, err := FromAny(v)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		fm[k] = val
	}
	got, warnings := Merge(Sources{
		Tags:   map[string]string{"team": "legal", "strata-groups": "hr", "bad key": "x"},
		Object: map[string]string{"Team": "finance", "Region": "eu", "Created": "2023-01-02T03:04:05+02:00"},
		File:   fm,
	})
	want := map[string]string{
		"team": "string legal", "region": "string eu", "created": "date 2023-01-02T03:04:05+02:00",
		"year": "number 2024", "ratio": "number 0.5", "tags": "list a, 2", "reviewed": "date 2024-05-01",
		"draft": "string true",
		"note":  "string 2024", // a quoted YAML "2024" is text, never a number
	}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", got.Keys(), want)
	}
	for k, w := range want {
		if v, ok := got[k]; !ok || v.Kind.String()+" "+v.String() != w {
			t.Errorf("%s = %v %q, want %s", k, v.Kind, v.String(), w)
		}
	}
	if _, ok := got["strata-groups"]; ok {
		t.Error("the access tag became metadata")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"bad key"`) {
		t.Errorf("warnings %q, want one naming the bad key", warnings)
	}
	if got["created"].Date.Format(time.RFC3339) != "2023-01-02T01:04:05Z" {
		t.Errorf("created in UTC: %v", got["created"].Date)
	}
}

func TestMergeLimits(t *testing.T) {
	tags := map[string]string{"long": strings.Repeat("x", MaxValueBytes+1), "fine": "y"}
	object := map[string]string{}
	for i := range MaxKeys + 5 {
		object[fmt.Sprintf("k%03d", i)] = "v"
	}
	object[strings.Repeat("k", MaxKeyBytes+1)] = "v"
	got, warnings := Merge(Sources{Tags: tags, Object: object, File: Metadata{"list": {Kind: List, List: make([]string, MaxListItems+1)}}})
	if len(got) != MaxKeys {
		t.Errorf("%d keys kept, want %d", len(got), MaxKeys)
	}
	if _, ok := got["fine"]; !ok {
		t.Error("a valid key was dropped while others were over the limits")
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{`"long" dropped`, `"list" dropped`, "longer than 64 bytes", "keys dropped (at most 64 per document)"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings do not say %q:\n%s", w, joined)
		}
	}
}

func TestValueJSONRoundTrip(t *testing.T) {
	m := Metadata{"a": FromString("x"), "n": {Kind: Number, Number: 3.25}, "d": FromString("2024-02-29"), "l": {Kind: List, List: []string{"p", "q"}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a":"x","d":"2024-02-29","l":["p","q"],"n":3.25}` {
		t.Errorf("JSON %s", b)
	}
	var back Metadata
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if back[k].Kind != v.Kind || back[k].String() != v.String() {
			t.Errorf("%s: %v %q back as %v %q", k, v.Kind, v, back[k].Kind, back[k])
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	for raw, want := range map[string][]string{
		`[1]`:                                      {"must be an object"},
		`{"Dept": {"foo": 1}}`:                     {`key "dept"`, "foo", "unknown operator"},
		`{"dept": {"gte": "legal"}}`:               {`key "dept"`, "gte", "number or a date", `"legal"`},
		`{"dept": {"gte": true}}`:                  {`key "dept"`, "gte", "a boolean"},
		`{"dept": {"any": "x"}}`:                   {`key "dept"`, "any", "list"},
		`{"dept": {"any": [{"a": 1}]}}`:            {`key "dept"`, "any", "an object"},
		`{"dept": {"exists": "yes"}}`:              {`key "dept"`, "exists", "true or false"},
		`{"dept": {"exists": false, "gte": 1}}`:    {`key "dept"`, "exists false"},
		`{"dept": {"gte": 1, "lt": "2024-01-01"}}`: {`key "dept"`, "numbers or both dates"},
		`{"dept": [1, 2]}`:                         {`key "dept"`, `{"any"`},
		`{"dept": null}`:                           {`key "dept"`, "exists"},
		`{"dept": {}}`:                             {`key "dept"`, "empty object"},
		`{"a b": 1}`:                               {`"a b"`},
		`{"dept": 1, "DEPT": 2}`:                   {`"dept"`, "twice"},
	} {
		_, err := ParseFilter(json.RawMessage(raw))
		if err == nil {
			t.Errorf("%s: accepted", raw)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", raw, err, w)
			}
		}
	}
}

func TestCheckAgainstKnownKeys(t *testing.T) {
	known := map[string]Kinds{"dept": Kinds(0).Add(String), "year": Kinds(0).Add(Number), "mixed": Kinds(0).Add(List).Add(Date)}
	for raw, want := range map[string]string{
		`{"nope": 1}`:                       `unknown key "nope"`,
		`{"dept": 5}`:                       `key "dept" holds strings, not numbers (equality)`,
		`{"year": "2024"}`:                  `key "year" holds numbers, not strings (equality)`,
		`{"year": {"any": ["x"]}}`:          `key "year" holds numbers, not strings (any)`,
		`{"dept": {"gte": 1}}`:              `key "dept" holds strings: a range with numbers`,
		`{"mixed": {"lt": "2020-01-01"}}`:   "",
		`{"mixed": "x", "year": {"gt": 1}}`: "",
	} {
		f, err := ParseFilter(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		err = f.Check(known)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", raw, err, want)
		}
	}
}

func TestMatch(t *testing.T) {
	m := Metadata{"dept": FromString("Legal"), "tags": {Kind: List, List: []string{"A", "b"}}, "year": {Kind: Number, Number: 2024},
		"signed": FromString("2024-03-01")}
	for raw, want := range map[string]bool{
		`{"dept": "legal"}`:                                     true,
		`{"dept": "legal2"}`:                                    false,
		`{"tags": "a"}`:                                         true,
		`{"tags": {"any": ["c", "B"]}}`:                         true,
		`{"year": {"gte": 2024, "lt": 2025}}`:                   true,
		`{"year": {"gt": 2024}}`:                                false,
		`{"signed": {"gt": "2024-02-29T23:59:59Z"}}`:            true,
		`{"signed": {"lt": "2024-03-01"}}`:                      false,
		`{"signed": {"lte": "2024-03-01"}}`:                     true,
		`{"nope": {"exists": false}, "dept": {"exists": true}}`: true,
		`{"nope": {"exists": true}}`:                            false,
		`{"year": "2024"}`:                                      false, // a date is not the number
		`{"year": {"any": [2023, 2024]}}`:                       true,
	} {
		f, err := ParseFilter(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := f.Match(m); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}

func TestIndexSpelling(t *testing.T) {
	m := Metadata{"dept": FromString("Legal"), "tags": {Kind: List, List: []string{"A", "b"}}, "year": {Kind: Number, Number: 2024}}
	want := []string{"dept", "dept#text", "dept=legal", "tags", "tags#text", "tags=a", "tags=b", "year", "year#number"}
	if got := Tokens(m); !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
	seen := map[string]string{}
	for _, k := range []string{"a_b", "a.b", "a-b", "a__b", "a_2eb", "a_2db", "a_", "a-"} {
		for _, kind := range []Kind{Number, Date} {
			p := RangeProperty(k, kind)
			if other, ok := seen[p]; ok {
				t.Errorf("keys %q and %q share property %s", other, k, p)
			}
			seen[p] = k
			if !IsRangeProperty(p) {
				t.Errorf("%s is not recognised as a range property", p)
			}
		}
	}
}

// FuzzParseFilter: any JSON either parses into a filter whose conditions
// name valid keys and whose Match never panics, or is refused with an error.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `{"a": {"any": ["x", 2]}}`, `{"a": {"gte": "2024-01-01", "lt": "2025-01-01"}}`,
		`{"a": {"exists": false}}`, `{"a": [1]}`, `null`, `{"A.b-c_d": "X"}`} {
		f.Add(s)
	}
	m := Metadata{"a": FromString("x"), "n": {Kind: Number, Number: 1}, "d": FromString("2024-01-01"), "l": {Kind: List, List: []string{"x"}}}
	f.Fuzz(func(t *testing.T, raw string) {
		filter, err := ParseFilter(json.RawMessage(raw))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		for _, c := range filter {
			if k, err := NormalizeKey(c.Key); err != nil || k != c.Key {
				t.Fatalf("condition on key %q: %v", c.Key, err)
			}
		}
		filter.Match(m)
		_ = filter.Check(map[string]Kinds{"a": Kinds(0).Add(String)})
	})
}
