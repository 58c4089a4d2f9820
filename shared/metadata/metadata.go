// Package metadata is what a document says about itself and what its
// uploader says about it: typed key/value pairs from S3 object tags, S3 user
// metadata and the file's own properties (front matter, HTML <meta>, DOCX
// core properties, PDF document info), merged into one map per document.
//
// Keys are lower-case; values are strings, numbers, dates or lists of
// strings. The index stores each document's metadata on its chunks (Tokens,
// RangeProperty) so a Filter is applied inside Weaviate.
package metadata

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Limits of one document's metadata. Beyond them the document keeps the
// rest and the merge says what it dropped (a warning on the document).
const (
	MaxKeys       = 64   // keys per document
	MaxKeyBytes   = 64   // bytes of one key
	MaxValueBytes = 1024 // bytes of one string value or list item
	MaxListItems  = 64   // items of one list
)

// Kind is a value's type.
type Kind uint8

// The kinds of value. A string and a list of strings are both matched as
// text; a number or a date also supports ranges.
const (
	String Kind = iota + 1
	Number
	Date
	List
)

func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Number:
		return "number"
	case Date:
		return "date"
	case List:
		return "list"
	}
	return "unknown"
}

// Value is one typed metadata value.
type Value struct {
	Kind Kind
	// Text is a string's value, or a date as it was written.
	Text   string
	Number float64
	Date   time.Time
	List   []string
}

// Metadata is one document's metadata by key.
type Metadata map[string]Value

// ReservedKey is the access tag (package access), never metadata.
const ReservedKey = "strata-groups"

var keyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// NormalizeKey lower-cases k and checks it: 1-64 bytes of a-z, 0-9, '_',
// '.', '-', starting with a letter or digit.
func NormalizeKey(k string) (string, error) {
	k = strings.ToLower(strings.TrimSpace(k))
	switch {
	case k == "":
		return "", fmt.Errorf("metadata key is empty")
	case len(k) > MaxKeyBytes:
		return "", fmt.Errorf("metadata key %.20q...: longer than %d bytes", k, MaxKeyBytes)
	case !keyPattern.MatchString(k):
		return "", fmt.Errorf("metadata key %q: use a-z, 0-9, '_', '.' and '-', starting with a letter or digit", k)
	}
	return k, nil
}

// ParseDate reads an RFC 3339 time or a YYYY-MM-DD date (midnight UTC).
func ParseDate(s string) (time.Time, bool) {
	if len(s) == len("2006-01-02") {
		t, err := time.Parse(time.DateOnly, s)
		return t, err == nil
	}
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > 40 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err == nil
}

// FromString types a value given as text (tags, S3 metadata, HTML and
// document properties): a date when it reads as one, else a string. Text is
// never a number: "2024" in a tag stays a string.
func FromString(s string) Value {
	s = strings.TrimSpace(s)
	if t, ok := ParseDate(s); ok {
		return Value{Kind: Date, Text: s, Date: t}
	}
	return Value{Kind: String, Text: s}
}

// FromAny types a value decoded from YAML or JSON: numbers are numbers,
// strings as FromString, a time (YAML's dates) a date, a list a list of
// strings. Objects are not supported.
func FromAny(v any) (Value, error) {
	switch x := v.(type) {
	case string:
		return FromString(x), nil
	case bool:
		return Value{Kind: String, Text: strconv.FormatBool(x)}, nil
	case int:
		return Value{Kind: Number, Number: float64(x)}, nil
	case int64:
		return Value{Kind: Number, Number: float64(x)}, nil
	case uint64:
		return Value{Kind: Number, Number: float64(x)}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Value{}, fmt.Errorf("number %v is not finite", x)
		}
		return Value{Kind: Number, Number: x}, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return Value{}, fmt.Errorf("number %s: %w", x, err)
		}
		return FromAny(f)
	case time.Time:
		text := x.UTC().Format(time.RFC3339Nano)
		if x.Equal(x.Truncate(24 * time.Hour)) {
			text = x.UTC().Format(time.DateOnly)
		}
		return Value{Kind: Date, Text: text, Date: x.UTC()}, nil
	case []any:
		out := Value{Kind: List, List: []string{}}
		for _, item := range x {
			iv, err := FromAny(item)
			if err != nil || iv.Kind == List {
				return Value{}, fmt.Errorf("a list holds strings, numbers or dates")
			}
			out.List = append(out.List, iv.String())
		}
		return out, nil
	case []string:
		return Value{Kind: List, List: append([]string{}, x...)}, nil
	case nil:
		return Value{}, fmt.Errorf("value is empty")
	}
	return Value{}, fmt.Errorf("a value is a string, number, date or list, not %T", v)
}

// String is v as text: a number in its shortest form, a date as written.
func (v Value) String() string {
	switch v.Kind {
	case Number:
		return strconv.FormatFloat(v.Number, 'g', -1, 64)
	case List:
		return strings.Join(v.List, ", ")
	}
	return v.Text
}

// MarshalJSON writes v as the plain JSON value an agent reads: a string, a
// number, a date as written, or an array of strings.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Kind {
	case Number:
		return json.Marshal(v.Number)
	case List:
		return json.Marshal(v.List)
	}
	return json.Marshal(v.Text)
}

// UnmarshalJSON reads what MarshalJSON wrote (a date string is a date again).
func (v *Value) UnmarshalJSON(b []byte) error {
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	got, err := FromAny(x)
	if err != nil {
		return err
	}
	*v = got
	return nil
}

// check is why v exceeds the limits, or nil.
func (v Value) check() error {
	switch {
	case v.Kind == List && len(v.List) > MaxListItems:
		return fmt.Errorf("list of %d items (at most %d)", len(v.List), MaxListItems)
	case v.Kind == List:
		for _, item := range v.List {
			if len(item) > MaxValueBytes {
				return fmt.Errorf("list item longer than %d bytes", MaxValueBytes)
			}
		}
	case len(v.Text) > MaxValueBytes:
		return fmt.Errorf("value longer than %d bytes", MaxValueBytes)
	}
	return nil
}

// Sources are a document's metadata as each source gave it.
type Sources struct {
	// Tags are the S3 object tags, Object the S3 user metadata (x-amz-meta-*
	// without the prefix), both as sent: Merge normalises them.
	Tags   map[string]string `json:"tags,omitempty"`
	Object map[string]string `json:"object,omitempty"`
	// File is what the file says about itself (typed by its extractor).
	File Metadata `json:"file,omitempty"`
}

// Merge is the document's metadata: on a clash a tag wins over S3 metadata,
// which wins over the file. Keys are lower-cased; the access tag is left
// out; an invalid key or a value beyond the limits is dropped, and so are
// keys beyond MaxKeys (the last in key order), each with a warning.
func Merge(s Sources) (Metadata, []string) {
	out := Metadata{}
	var warnings []string
	add := func(source, key string, v Value) {
		k, err := NormalizeKey(key)
		if err != nil {
			warnings = append(warnings, source+" "+err.Error())
			return
		}
		if k == ReservedKey {
			return
		}
		if err := v.check(); err != nil {
			warnings = append(warnings, fmt.Sprintf("%s metadata key %q dropped: %v", source, k, err))
			return
		}
		out[k] = v
	}
	for _, k := range sortedKeys(s.File) {
		add("file", k, s.File[k])
	}
	for _, k := range sortedKeys(s.Object) {
		add("S3", k, FromString(s.Object[k]))
	}
	for _, k := range sortedKeys(s.Tags) {
		add("tag", k, FromString(s.Tags[k]))
	}
	if len(out) > MaxKeys {
		keys := sortedKeys(out)
		for _, k := range keys[MaxKeys:] {
			delete(out, k)
		}
		warnings = append(warnings, fmt.Sprintf("%d metadata keys dropped (at most %d per document): %s", len(keys)-MaxKeys, MaxKeys, strings.Join(keys[MaxKeys:], ", ")))
	}
	return out, warnings
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Keys is m's keys in order.
func (m Metadata) Keys() []string { return sortedKeys(m) }
